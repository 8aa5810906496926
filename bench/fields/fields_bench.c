/* fields_bench.c: for bench/fields/run.sh. LS_LOG with two named fields
 * ("user login" LS_FIELDS("user=%s req=%d")) beside the same values in the
 * message ("user login user=%s req=%d"), into a running logsinkd.
 *
 *   fields_bench time SOCKET CALLS REPS
 *     per repetition both variants (order alternating), CALLS calls each,
 *     paced at one call per microsecond: bursts of 256 calls (16 KiB or so
 *     of a 256 KiB thread buffer) run back to back, timed in batches of 64
 *     with CLOCK_MONOTONIC (the cost of an empty timed region subtracted),
 *     then the thread sleeps, untimed, until the schedule catches up.
 *     Prints "rep R VARIANT NS" per repetition: the median batch mean, ns
 *     per call. Fails if the client dropped a record.
 *   fields_bench write SOCKET VARIANT K
 *     K calls of VARIANT (msg or fields) as fast as the default options
 *     allow (a full buffer waits), then ls_close; fails on drops. */
#define _POSIX_C_SOURCE 200809L
#include <logsink/logsink.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kBatch = 64, kBurst = 256 };
static const char *const kUsers[] = {"alice", "bob",   "carol", "dave",
                                     "erin",  "frank", "grace", "heidi"};

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
static void sleep_until(uint64_t t) {
  struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* One batch of kBatch calls of a variant; i counts calls. */
static void batch(ls_client *c, int fields, uint64_t *i) {
  if (fields) {
    for (int k = 0; k < kBatch; k++, (*i)++)
      LS_LOG(c, LS_INFO, "user login" LS_FIELDS("user=%s req=%d"), kUsers[*i & 7], (int)*i);
  } else {
    for (int k = 0; k < kBatch; k++, (*i)++)
      LS_LOG(c, LS_INFO, "user login user=%s req=%d", kUsers[*i & 7], (int)*i);
  }
}

/* Median ns per call of `calls` paced calls of a variant. */
static double timed(ls_client *c, int fields, uint64_t calls, double empty) {
  size_t nb = (size_t)(calls / kBatch), b = 0;
  double *means = malloc(nb * sizeof *means);
  uint64_t i = 0, next = now_ns();
  while (b < nb) {
    for (int k = 0; k < kBurst / kBatch && b < nb; k++, b++) {
      uint64_t t0 = now_ns();
      batch(c, fields, &i);
      means[b] = ((double)(now_ns() - t0) - empty) / kBatch;
    }
    next += kBurst * 1000u; /* 1 call per us */
    if (now_ns() < next) sleep_until(next);
  }
  double m = median(means, nb);
  free(means);
  return m;
}

static ls_client *open_client(const char *sock) {
  ls_client *c = ls_open(sock, "fields_bench", NULL);
  if (!c || ls_flush(c) != 0) {
    fprintf(stderr, "fields_bench: could not connect to %s\n", sock);
    exit(1);
  }
  return c;
}
static void check_drops(ls_client *c) {
  ls_stats s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  if (ls_get_stats(c, &s) != 0 || s.dropped || s.errors) {
    fprintf(stderr, "fields_bench: dropped %llu, errors %llu\n", (unsigned long long)s.dropped,
            (unsigned long long)s.errors);
    exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "time") == 0) {
    ls_client *c = open_client(argv[2]);
    uint64_t calls = strtoull(argv[3], NULL, 10);
    int reps = atoi(argv[4]);
    double e[1001];
    for (int k = 0; k < 1001; k++) {
      uint64_t t0 = now_ns();
      e[k] = (double)(now_ns() - t0);
    }
    double empty = median(e, 1001);
    timed(c, 1, calls / 4, empty); /* warm-up: sites interned, buffers touched */
    timed(c, 0, calls / 4, empty);
    for (int r = 1; r <= reps; r++) {
      for (int k = 0; k < 2; k++) {
        int fields = (r + k) % 2; /* alternate which goes first */
        double ns = timed(c, fields, calls, empty);
        ls_flush(c);
        printf("rep %d %s %.2f\n", r, fields ? "fields" : "msg", ns);
        fflush(stdout);
      }
    }
    check_drops(c);
    ls_close(c);
    return 0;
  }
  if (argc == 5 && strcmp(argv[1], "write") == 0) {
    ls_client *c = open_client(argv[2]);
    int fields = strcmp(argv[3], "fields") == 0;
    uint64_t k = strtoull(argv[4], NULL, 10) / kBatch * kBatch, i = 0;
    while (i < k) batch(c, fields, &i);
    if (ls_flush(c) != 0) fprintf(stderr, "fields_bench: flush failed\n");
    check_drops(c);
    ls_close(c);
    return 0;
  }
  fprintf(stderr, "usage: fields_bench time SOCKET CALLS REPS | write SOCKET msg|fields K\n");
  return 2;
}
