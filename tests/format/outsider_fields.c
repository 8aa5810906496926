/* outsider_fields.c: records with named, typed fields (LS_FIELDS; FORMAT.md
 * "Fields") for outsider_test.sh, logged through liblogsink to a real
 * logsinkd, so that the rings hold sites with FIELDS (in the string table,
 * or inline once it is full) for outsider_reader and logctl to agree on.
 *
 *   outsider_fields SOCKET SEED [late]
 *
 * Every field type (signed, unsigned, double with the non-finite values,
 * bool, character, string, pointer), length modifiers, names with every
 * allowed character, a message with and without its own arguments, a
 * run-time format (ls_log) and a value long enough to be cut (TRUNC). */
#include <errno.h>
#include <limits.h>
#include <logsink/logsink.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static unsigned long long next(unsigned long long *s) { /* splitmix64 */
  unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The records. Every expansion of RECORDS is a set of sites of its own
 * (the line of the expansion). */
#define RECORDS(c, seed)                                                                          \
  do {                                                                                            \
    static const char *users[] = {                                                                \
        "alice", "bob",  "h\xc3\xa9l\xc3\xa8ne \xe2\x98\x83", "quote\" back\\ nl\n tab\t",        \
        "",      "u=v w"};                                                                        \
    static const double odd[] = {0.5, -0.0, 1e300, 5e-324, 1e20, 0.1, 100, 1e-5};                 \
    for (int i = 0; i < 12; i++) {                                                                \
      const char *user = users[next(&seed) % 6];                                                  \
      unsigned long long req = next(&seed);                                                       \
      int ok = (int)(next(&seed) % 3); /* 0, 1, 2: a bool of 2 is true */                         \
      double ratio = (double)(next(&seed) % 1000000) / 7.0 - 50000;                               \
      if (i < 8) ratio = odd[i];                                                                  \
      int neg = -(int)(next(&seed) % 100000);                                                     \
      char ch = (char)('A' + next(&seed) % 26);                                                   \
      void *p = i == 0 ? NULL : (void *)(uintptr_t)(next(&seed) >> 16);                           \
      LS_LOG(c, LS_INFO,                                                                          \
             "disk %s full" LS_FIELDS("user=%s req=%llu ok:bool=%d ratio=%f neg=%d c=%c p=%p"),   \
             i % 2 ? "sda" : "nvme0n1", user, req, ok, ratio, neg, ch, p);                        \
    }                                                                                             \
    /* The non-finite doubles, the integer types at their ends, other                             \
     * conversions and names of every allowed character. */                                       \
    const double nf[] = {NAN, -NAN, INFINITY, -INFINITY};                                         \
    for (int i = 0; i < 4; i++) {                                                                 \
      errno = ENOENT;                                                                             \
      LS_LOG(c, LS_WARNING,                                                                       \
             "edge %d of %u" LS_FIELDS("v=%g big=%llu small=%lld hh=%hhd uh=%hu x=%x o=%o "       \
                                       "e=%e a=%a wide=%lc err=%m 9lives=%lu My.Name@host-1=%td " \
                                       "sure:bool=%llu never:bool=%hhu"),                         \
             i, 4u, nf[i], ULLONG_MAX - (unsigned long long)i, LLONG_MIN + i, (signed char)-i,    \
             (unsigned short)(65535 - i), 0xdeadbeefu, 0755u, 1.5e-300 * i, 0.1 * i,              \
             (wint_t)(i == 0   ? 0x2603                                                           \
                      : i == 1 ? 0xe9                                                             \
                      : i == 2 ? 0x1F600                                                          \
                               : 'z'),                                                            \
             (unsigned long)i << 40, (ptrdiff_t)-i, 1ull << 63, (unsigned char)0);                \
    }                                                                                             \
    /* A message without arguments of its own, one with %%, one field. */                         \
    LS_LOG(c, LS_ERR, "nothing to say" LS_FIELDS("only=%s"), "x");                                \
    LS_LOG(c, LS_NOTICE, "100%% done, %d left" LS_FIELDS("n=%i"), 0, -7);                         \
    /* A run-time format with fields (ls_log takes them too). */                                  \
    char fmt[64];                                                                                 \
    snprintf(fmt, sizeof fmt, "%s%s", "run-time %s",                                              \
             "\x1f"                                                                               \
             "k=%d");                                                                             \
    ls_log(c, LS_DEBUG, fmt, "format", 42);                                                       \
    /* A value too long for a block: the writer cuts it (TRUNC). */                               \
    size_t n = 20000;                                                                             \
    char *big = malloc(n + 1);                                                                    \
    if (!big) return 1;                                                                           \
    memset(big, 'y', n);                                                                          \
    big[n] = 0;                                                                                   \
    LS_LOG(c, LS_NOTICE, "long %d" LS_FIELDS("blob=%s after=%d"), 1, big, 2);                     \
    free(big);                                                                                    \
  } while (0)

static int early(ls_client *c, unsigned long long seed) {
  RECORDS(c, seed);
  return 0;
}

static int late(ls_client *c, unsigned long long seed) {
  RECORDS(c, seed);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "late"))) {
    fprintf(stderr, "usage: outsider_fields SOCKET SEED [late]\n");
    return 2;
  }
  unsigned long long seed = strtoull(argv[2], NULL, 10);
  ls_options opts;
  ls_options_init(&opts);
  ls_client *c = ls_open(argv[1], "fields", &opts);
  if (!c) {
    fprintf(stderr, "outsider_fields: ls_open: %s\n", strerror(errno));
    return 1;
  }
  /* "late": sites of their own, for when the string table is full (the
   * writer then stores them inline, FIELDS in bit 3 of the level byte). */
  if ((argc == 4 ? late(c, seed) : early(c, seed)) != 0) return 1;
  int rc = ls_flush(c);
  ls_stats st = {.size = sizeof st};
  ls_get_stats(c, &st);
  ls_close(c);
  if (rc != 0 || st.dropped != 0 || st.errors != 0) {
    fprintf(stderr, "outsider_fields: flush %d, %llu dropped, %llu errors\n", rc,
            (unsigned long long)st.dropped, (unsigned long long)st.errors);
    return 1;
  }
  return 0;
}
