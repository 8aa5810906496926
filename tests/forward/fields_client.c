/* fields_client.c: the C program of forward_test's typed-fields case: one
 * record with a string, an integer, a bool and a double field, logged with
 * liblogsink's LS_FIELDS from C (the compiler checks the arguments against
 * the field list as -Wformat does for the message's). */
#include <logsink/logsink.h>
#include <stdbool.h>
#include <stddef.h>

int forward_log_typed_fields(const char *socket);

/* Logs "disk sda full" with user="alice", req=-7, ok=true, ratio=0.25 to
 * the daemon on socket and waits until it is written there: ls_flush's
 * answer (0), or -1 when no client could be made. */
int forward_log_typed_fields(const char *socket) {
  ls_client *c = ls_open(socket, "fielder", NULL);
  if (c == NULL) return -1;
  const bool ok = true;
  LS_LOG(c, LS_WARNING, "disk %s full" LS_FIELDS("user=%s req=%lld ok:bool=%d ratio=%f"), "sda",
         "alice", -7LL, ok, 0.25);
  const int rc = ls_flush(c);
  ls_close(c);
  return rc;
}
