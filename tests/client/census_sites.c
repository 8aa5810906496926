/* census_sites.c: a call site compiled as C for client_runtime_level_test's
 * census test (g++ leaves C++ call sites out of the census: logsink.h),
 * never called by it. */
#include <logsink/logsink.h>

void census_debug_site(ls_client *c);
int census_debug_line(void);

void census_debug_site(ls_client *c) { LS_LOG(c, LS_DEBUG, "census debug %d", 1); }
int census_debug_line(void) { return __LINE__ - 1; }
