/* fmt_runtime_level.c: must NOT compile (C and C++): LS_LOG with a run-time
 * level, which the static call site cannot hold; the first error says so.
 * ls_log() is the way for a run-time level. */
#include "logsink/logsink.h"

void log_it(int level, int n) { LS_LOG(NULL, level, "n=%d", n); }
