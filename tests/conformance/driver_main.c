/* driver_main.c: the command loop of the drivers over liblogsink
 * (README.md, "The driver protocol"): opens one client with the options
 * the harness gave, reads a command per line on stdin and answers each
 * with one line on stdout once it is done. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static int usage(void) {
  fprintf(stderr, "usage: DRIVER --socket PATH --app NAME [--block-timeout-ms N]\n");
  return 2;
}

static void answer(const char *line) {
  fputs(line, stdout);
  fputc('\n', stdout);
  fflush(stdout);
}

static int counters(ls_client *c, ls_stats *s) {
  memset(s, 0, sizeof *s);
  s->size = sizeof *s;
  return ls_get_stats(c, s);
}

int conformance_main(int argc, char **argv, const conformance_calls *calls) {
  const char *socket = NULL, *app = NULL;
  ls_options o;
  ls_options_init(&o);
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) return usage();
    if (strcmp(argv[i], "--socket") == 0)
      socket = argv[i + 1];
    else if (strcmp(argv[i], "--app") == 0)
      app = argv[i + 1];
    else if (strcmp(argv[i], "--block-timeout-ms") == 0)
      o.block_timeout_ms = (unsigned)strtoul(argv[i + 1], NULL, 10);
    else
      return usage();
  }
  if (!socket || !app) return usage();
  ls_client *c = ls_open(socket, app, &o);
  if (!c) {
    perror("ls_open");
    return 1;
  }
  char line[256], tag[64];
  int a, b;
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    if (strcmp(line, "catalogue") == 0) {
      calls->catalogue(c);
      answer("ok");
    } else if (strcmp(line, "levels") == 0) {
      for (int i = 0; i < 8; i++) calls->level(c, i);
      answer("ok");
    } else if (sscanf(line, "probe %d", &a) == 1 && a >= 0 && a <= 7) {
      ls_stats before, after;
      counters(c, &before);
      calls->probe(c, a);
      counters(c, &after);
      answer(after.logged != before.logged ? "ok 1" : "ok 0");
    } else if (strcmp(line, "fields") == 0) {
      calls->fields(c);
      answer("ok");
    } else if (sscanf(line, "burst %63s %d", tag, &b) == 2 && b >= 0) {
      for (int i = 0; i < b; i++) calls->numbered(c, tag, i);
      answer("ok");
    } else if (strcmp(line, "flush") == 0) {
      int rc = ls_flush(c);
      char out[128];
      snprintf(out, sizeof out, "error flush: %s", strerror(-rc));
      answer(rc == 0 ? "ok" : out);
    } else if (strcmp(line, "stats") == 0) {
      ls_stats s;
      char out[128];
      counters(c, &s);
      snprintf(out, sizeof out, "ok %llu %llu %llu", (unsigned long long)s.logged,
               (unsigned long long)s.dropped, (unsigned long long)s.disconnects);
      answer(out);
    } else if (strcmp(line, "close") == 0) {
      ls_close(c);
      answer("ok");
      return 0;
    } else {
      char out[320];
      snprintf(out, sizeof out, "error unknown command: %s", line);
      answer(out);
    }
  }
  ls_close(c);
  return 0;
}
