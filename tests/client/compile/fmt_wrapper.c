/* fmt_wrapper.c: must compile (C and C++) with -Wall -Werror: the logger
 * wrapper every code base writes, with a run-time level and format, and
 * callers checked by -Wformat through the wrapper's format attribute. */
#include <stdarg.h>

#include "logsink/logsink.h"

void my_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void my_log(int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  (void)ls_vlog(NULL, level, fmt, ap);
  va_end(ap);
}

void use(int level, const char *disk, int pct) {
  my_log(level, "disk %s at %d%%", disk, pct);
  (void)ls_log(NULL, level, "plain %d", pct);
}
