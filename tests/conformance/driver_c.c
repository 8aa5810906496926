/* driver_c.c: the conformance driver of the C API (LS_LOG, LS_FIELDS),
 * built as C11. README.md lists what each call must produce. */
#include <limits.h>
#include <string.h>

#include "driver.h"

static void catalogue(ls_client *c) {
  char long_text[1001];
  memset(long_text, 'x', 1000);
  long_text[1000] = 0;
  LS_LOG(c, LS_INFO, "integers %d %u %llu %x %o %lld", -42, 42u, ULLONG_MAX, 255u, 0755u,
         LLONG_MIN);
  LS_LOG(c, LS_NOTICE, "floats %.3f %g %.1f %g %e", 3.14159, 1e6, -0.5, 2.5e-7, 12345.678);
  LS_LOG(c, LS_WARNING, "strings [%s] [%8s] [%-8s] [%.3s]", "h\xc3\xa9llo w\xc3\xb6rld", "right",
         "left", "truncate");
  LS_LOG(c, LS_ERR, "char %c and percent %d%%", 'x', 100);
  LS_LOG(c, LS_DEBUG, "empty [%s]", "");
  LS_LOG(c, LS_CRIT, "lines %s", "first\nsecond\ttab");
  LS_LOG(c, LS_INFO, "long %s", long_text);
  LS_LOG(c, LS_ALERT, "no arguments");
}

#define LEVEL_CASE(l, text) \
  case l:                   \
    LS_LOG(c, l, text, i);  \
    break;

static void level(ls_client *c, int i) {
  switch (i) {
    LEVEL_CASE(0, "level %d")
    LEVEL_CASE(1, "level %d")
    LEVEL_CASE(2, "level %d")
    LEVEL_CASE(3, "level %d")
    LEVEL_CASE(4, "level %d")
    LEVEL_CASE(5, "level %d")
    LEVEL_CASE(6, "level %d")
    LEVEL_CASE(7, "level %d")
  }
}

#define PROBE_CASE(l)      \
  case l:                  \
    LS_LOG(c, l, "probe"); \
    break;

static void probe(ls_client *c, int i) {
  switch (i) {
    PROBE_CASE(0)
    PROBE_CASE(1)
    PROBE_CASE(2)
    PROBE_CASE(3)
    PROBE_CASE(4)
    PROBE_CASE(5)
    PROBE_CASE(6)
    PROBE_CASE(7)
  }
}

static void fields(ls_client *c) {
  LS_LOG(c, LS_INFO, "login %s" LS_FIELDS("logger=%s user=%s n=%lld big=%llu ok:bool=%d ratio=%f"),
         "alice", "conformance", "alice", -7LL, ULLONG_MAX, 1, 0.5);
}

static void numbered(ls_client *c, const char *tag, int i) { LS_LOG(c, LS_INFO, "%s %d", tag, i); }

int main(int argc, char **argv) {
  static const conformance_calls calls = {catalogue, level, probe, fields, numbered};
  return conformance_main(argc, argv, &calls);
}
