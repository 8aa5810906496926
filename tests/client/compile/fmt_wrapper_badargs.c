/* fmt_wrapper_badargs.c: must NOT compile with -Wall -Werror: a wrapper's
 * caller passes an int for %s, which -Wformat catches through the
 * attribute (the control is fmt_wrapper.c). */
#include <stdarg.h>

#include "logsink/logsink.h"

void my_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void use(int level, int pct) { my_log(level, "disk %s at %d%%", pct, pct); }
