// fixture7.c: the C records of tests/data/format7 (its README.md), built
// against liblogsink of commit b49f01a (ring format 7) and run once:
// fixture7 SOCKET.
#include <stdbool.h>
#include <stdio.h>

#include "logsink/logsink.h"

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  ls_client *c = ls_open(argv[1], "fixture7", NULL);
  if (!c) return 1;
  const bool admin = true;
  LS_LOG(c, LS_WARNING, "login by %s" LS_FIELDS("user=%s uid=%u attempts=%d admin:bool=%d load=%f"),
         "carol", "carol", 1000u, -2, admin, 0.75);
  LS_LOG(c, LS_INFO, "plain record %d of %s", 42, "fixture7");
  // A run-time format and field list.
  const char *fmt = "job %s done" LS_FIELDS("job=%s secs=%llu failed:bool=%d");
  ls_log(c, LS_NOTICE, fmt, "backup", "backup", 12ULL, 0);
  const int rc = ls_flush(c);
  ls_close(c);
  if (rc != 0) {
    fprintf(stderr, "fixture7: ls_flush: %d\n", rc);
    return 1;
  }
  return 0;
}
