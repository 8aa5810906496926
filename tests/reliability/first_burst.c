/* first_burst.c: a program's first burst, in a fresh process (burst_test runs
 * it): opens a client with default options but 8 KiB thread buffers, logs
 * N records at once, without waiting for the connection the client's sender
 * is still making, then flushes and prints its counters:
 *   "connected_at_first_call=C logged=L sent=S dropped=D"
 * A fresh process matters: in one that has not yet used sockets or the
 * client, the sender's first connect takes long enough for a small buffer to
 * fill before it.
 * usage: first_burst SOCKET N */
#include <logsink/logsink.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: first_burst SOCKET N\n");
    return 2;
  }
  long n = strtol(argv[2], NULL, 10);
  ls_options o;
  ls_options_init(&o);
  o.max_record_bytes = 1024;
  o.thread_buffer_bytes = 8192; /* the smallest: full after about 170 records */
  ls_client *c = ls_open(argv[1], "first-burst", &o);
  if (!c) return 3;
  ls_stats s = {0};
  s.size = sizeof s;
  ls_get_stats(c, &s);
  int connected = (int)s.connected;
  for (long i = 0; i < n; i++) LS_LOG(c, LS_INFO, "first burst %ld", i);
  if (ls_flush(c) != 0) return 4;
  ls_get_stats(c, &s);
  printf("connected_at_first_call=%d logged=%llu sent=%llu dropped=%llu\n", connected,
         (unsigned long long)s.logged, (unsigned long long)s.sent, (unsigned long long)s.dropped);
  ls_close(c);
  return 0;
}
