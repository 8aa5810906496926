/* levels_clients.c: for bench/levels/run.sh: N liblogsink clients (one
 * connection each, apps c0 .. cN-1, level info) held open until stdin
 * closes; prints "ready" once every one has connected (its flush went
 * through: its HELLO was answered). */
#include <logsink/logsink.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: levels_clients N SOCKET\n");
    return 2;
  }
  const int n = atoi(argv[1]);
  ls_client **c = calloc((size_t)n, sizeof *c);
  if (n <= 0 || !c) return 2;
  for (int i = 0; i < n; i++) {
    ls_options o;
    ls_options_init(&o);
    o.level = LS_INFO;
    o.max_buffered_bytes = o.thread_buffer_bytes = 64u << 10;
    char app[32];
    snprintf(app, sizeof app, "c%d", i);
    c[i] = ls_open(argv[2], app, &o);
    if (!c[i] || ls_flush(c[i]) != 0) {
      fprintf(stderr, "levels_clients: client %d did not connect\n", i);
      return 1;
    }
  }
  printf("ready\n");
  fflush(stdout);
  char buf[64];
  while (read(0, buf, sizeof buf) > 0) {
  }
  for (int i = 0; i < n; i++) ls_close(c[i]);
  free(c);
  return 0;
}
