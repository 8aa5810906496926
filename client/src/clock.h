/* clock.h: timestamps. Producers stamp records with ls__stamp (raw TSC ticks
 * or CLOCK_REALTIME ns, see clock.c); the sender converts stamps to ns with
 * an ls__cal. Depends on nothing else of liblogsink. */
#ifndef LOGSINK_CLIENT_CLOCK_H
#define LOGSINK_CLIENT_CLOCK_H

#include <stdint.h>

#include "base.h"

extern int ls__tsc_mode LS__HIDDEN; /* 1: stamps are raw TSC ticks; 0: CLOCK_REALTIME ns */
LS__HIDDEN void ls__clock_init(void);
LS__HIDDEN uint64_t ls__realtime_ns(void);
LS__HIDDEN uint64_t ls__now_mono_ns(void); /* CLOCK_MONOTONIC, for deadlines */

static inline uint64_t ls__stamp(void) {
#if defined(__x86_64__) || defined(__i386__)
  if (LS__LIKELY(ls__tsc_mode)) return __builtin_ia32_rdtsc();
#endif
  return ls__realtime_ns();
}

/* Sender-side conversion of stamps to CLOCK_REALTIME ns (one per sender). */
typedef struct ls__cal {
  uint64_t tsc, ns;     /* latest sample */
  uint64_t a_tsc, a_ns; /* anchor of the rate estimate */
  double ns_per_tick;
  int valid;
} ls__cal;
LS__HIDDEN void ls__cal_update(ls__cal *k);
LS__HIDDEN uint64_t ls__cal_ns(const ls__cal *k, uint64_t stamp);

#endif
