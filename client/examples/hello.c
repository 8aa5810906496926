/* hello.c: the smallest liblogsink program: one client, a few records, close.
 * Build against an installed liblogsink:
 *   cc hello.c $(pkg-config --cflags --libs logsink) -o hello
 * Run with logsinkd up (or not: records are then dropped and counted):
 *   ./hello [socket-path]                     then: logctl tail */
#include <errno.h>
#include <logsink/logsink.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
    printf("logsink_hello (liblogsink API %d.%d)\n", LS_VERSION_MAJOR, LS_VERSION_MINOR);
    return 0;
  }
  if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    printf(
        "usage: logsink_hello [SOCKET]\nLogs five records through liblogsink to SOCKET\n"
        "(default: $LOGSINK_SOCKET, else the default socket); see logsink_hello(1).\n");
    return 0;
  }
  ls_options opts;
  ls_options_init(&opts);
  opts.flush_interval_ms = 50; /* records wait at most 50 ms */

  /* NULL path: $LOGSINK_SOCKET, else the default socket. */
  ls_client *c = ls_open(argc > 1 ? argv[1] : NULL, "hello", &opts);
  if (!c) {
    fprintf(stderr, "hello: ls_open: %s\n", strerror(errno));
    return 1;
  }
  for (int i = 0; i < 3; i++) LS_LOG(c, LS_INFO, "hello %d from %s", i, "liblogsink");
  LS_LOG(c, LS_WARNING, "pi is about %.3f", 3.14159); /* sent at once: >= LS_WARNING */

  const char *dynamic = "text built at run time";
  ls_log_text(c, LS_NOTICE, dynamic, strlen(dynamic));

  int rc = ls_flush(c); /* 0 once the records are written to the socket */
  ls_stats st = {.size = sizeof st};
  ls_get_stats(c, &st);
  printf("hello: flush %s, %llu sent, %llu dropped\n", rc == 0 ? "ok" : strerror(-rc),
         (unsigned long long)st.sent, (unsigned long long)st.dropped);
  ls_close(c);
  return 0;
}
