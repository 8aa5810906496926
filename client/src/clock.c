/* clock.c: record timestamps. On x86 hosts whose kernel clocksource is the TSC
 * (the kernel then vouches that it is invariant and synchronised across CPUs)
 * a call stamps the raw TSC (~10 ns instead of ~24 ns for clock_gettime) and
 * the sender thread converts stamps to CLOCK_REALTIME when it builds frames:
 *
 *   ns = sample.ns + (stamp - sample.tsc) * ns_per_tick
 *
 * where `sample` is a (TSC, CLOCK_REALTIME) pair the sender takes at the start
 * of every pass (so records are at most one flush interval away from it) and
 * ns_per_tick is measured over the longest baseline since the last clock step
 * (first over ~2 ms at the first ls_open, then from 10 ms on). Each pair is
 * read with the TSC on both sides and retried when they are more than ~1 us
 * apart (preemption). A step of CLOCK_REALTIME (settimeofday, NTP step) shows
 * as a baseline rate more than 1% off and restarts the baseline, so the
 * conversion follows CLOCK_REALTIME, slewing included; a record's error is
 * the rate error times its distance from the latest pair (one pass).
 * Fallback: other architectures, other clocksources, or LOGSINK_CLOCK=realtime
 * in the environment: every call reads clock_gettime(CLOCK_REALTIME). */
#define _GNU_SOURCE
#include "clock.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int ls__tsc_mode = 0;
static double ls__init_ns_per_tick = 1.0;
static pthread_once_t ls__clock_once = PTHREAD_ONCE_INIT;

static uint64_t ls__clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t ls__realtime_ns(void) { return ls__clock_ns(CLOCK_REALTIME); }

uint64_t ls__now_mono_ns(void) { return ls__clock_ns(CLOCK_MONOTONIC); }

#if defined(__x86_64__) || defined(__i386__)
/* A (TSC, CLOCK_REALTIME) pair. Retries when the thread was interrupted
 * between the reads, so the pair is exact to about a microsecond. */
static void ls__sample(uint64_t *tsc, uint64_t *ns) {
  uint64_t best = UINT64_MAX;
  *tsc = 0; /* always set below (the first pass wins); this tells the compiler */
  *ns = 0;
  for (int i = 0; i < 16; i++) {
    uint64_t t1 = __builtin_ia32_rdtsc();
    uint64_t n = ls__realtime_ns();
    uint64_t t2 = __builtin_ia32_rdtsc();
    if (t2 - t1 < best) {
      best = t2 - t1;
      *tsc = t1 + (t2 - t1) / 2;
      *ns = n;
    }
    if (best < 4000) break; /* about a microsecond or less */
  }
}

static int ls__kernel_uses_tsc(void) {
  char buf[32] = {0};
  FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
  if (!f) return 0;
  int ok = fgets(buf, sizeof buf, f) != NULL && strncmp(buf, "tsc\n", 4) == 0;
  fclose(f);
  return ok;
}
#endif

static void ls__clock_setup(void) {
#if defined(__x86_64__) || defined(__i386__)
  const char *env = secure_getenv("LOGSINK_CLOCK");
  if (env && strcmp(env, "realtime") == 0) return;
  if (!ls__kernel_uses_tsc()) return;
  /* A first rate over ~2 ms; the sender refines it over longer baselines. */
  uint64_t t0, n0, t1, n1;
  ls__sample(&t0, &n0);
  do ls__sample(&t1, &n1);
  while (n1 - n0 < 2000000 && n1 >= n0);
  if (n1 <= n0 || t1 <= t0) return;
  ls__init_ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
  ls__tsc_mode = 1;
#endif
}

void ls__clock_init(void) { pthread_once(&ls__clock_once, ls__clock_setup); }

void ls__cal_update(ls__cal *k) {
  if (!ls__tsc_mode) return;
#if defined(__x86_64__) || defined(__i386__)
  uint64_t tsc, ns;
  ls__sample(&tsc, &ns);
  if (!k->valid) {
    k->a_tsc = k->tsc = tsc;
    k->a_ns = k->ns = ns;
    k->ns_per_tick = ls__init_ns_per_tick;
    k->valid = 1;
    return;
  }
  /* The rate over the baseline since the anchor. Within 1% of the first
   * measurement it is taken (it follows NTP slewing, at most 0.05%); beyond
   * that CLOCK_REALTIME was stepped: start a new baseline, keep the rate. */
  if (ns > k->a_ns + 10000000 && tsc > k->a_tsc) { /* >= 10 ms of baseline */
    double rate = (double)(ns - k->a_ns) / (double)(tsc - k->a_tsc);
    if (rate > ls__init_ns_per_tick * 0.99 && rate < ls__init_ns_per_tick * 1.01) {
      k->ns_per_tick = rate;
    } else {
      k->a_tsc = tsc;
      k->a_ns = ns;
    }
  } else if (ns < k->ns) { /* stepped backwards */
    k->a_tsc = tsc;
    k->a_ns = ns;
  }
  k->tsc = tsc;
  k->ns = ns;
#endif
}

uint64_t ls__cal_ns(const ls__cal *k, uint64_t stamp) {
  if (!ls__tsc_mode) return stamp;
  return (uint64_t)((int64_t)k->ns + (int64_t)((double)(int64_t)(stamp - k->tsc) * k->ns_per_tick));
}
