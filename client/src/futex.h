/* futex.h: the two futex operations the library sleeps and wakes with
 * (process-private). Depends on nothing else of liblogsink. */
#ifndef LOGSINK_CLIENT_FUTEX_H
#define LOGSINK_CLIENT_FUTEX_H

#include <stdatomic.h>
#include <stdint.h>

#include "base.h"

/* Sleeps while *w == val, at most timeout_ns (spurious wake-ups happen:
 * callers re-check their condition). */
LS__HIDDEN void ls__futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns);
/* Wakes every sleeper of w. */
LS__HIDDEN void ls__futex_wake(_Atomic uint32_t *w);

#endif
