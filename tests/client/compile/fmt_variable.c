/* fmt_variable.c: must NOT compile (C and C++): LS_LOG with a run-time
 * format. A call site keeps the first format it saw, so a variable format
 * would log later records with the wrong format. */
#include "logsink/logsink.h"

void log_it(const char *fmt, int n) { LS_LOG(NULL, LS_INFO, fmt, n); }
