/* fmt_literal.c: must compile (C and C++): LS_LOG with a string-literal
 * format. The control of fmt_variable.c, which must not. */
#include "logsink/logsink.h"

void log_it(int n) { LS_LOG(NULL, LS_INFO, "n=%d", n); }
