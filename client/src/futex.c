/* futex.c: futex wait and wake (see futex.h). */
#define _GNU_SOURCE
#include "futex.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void ls__futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns) {
  struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

void ls__futex_wake(_Atomic uint32_t *w) {
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
