/* crash.c: see crash.h. Everything the handler does is async-signal-safe:
 * atomics, futex and clock_gettime system calls, sigaction and raise. It
 * asks each client's sender thread for a flush and waits for it with a
 * deadline instead of sending itself: the sender owns the connection (a
 * frame half written when the crash came must not be interleaved with
 * another). A sender that cannot finish in time (the crashing thread holds
 * the lock it needs, the daemon does not read) costs the wait, nothing more. */
#define _GNU_SOURCE
#include "crash.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

/* Longest time a crashing process waits for its records to be sent. */
#define LS__CRASH_WAIT_NS 1000000000ull
/* Clients flushed concurrently; more are flushed one batch after another. */
#define LS__CRASH_BATCH 16

static const int ls__crash_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define LS__NSIGS (sizeof ls__crash_sigs / sizeof ls__crash_sigs[0])
static struct sigaction ls__crash_prev[LS__NSIGS];
static struct ls_client *const *ls__crash_head;
static atomic_int ls__crash_busy;
static pthread_once_t ls__crash_once = PTHREAD_ONCE_INIT;

/* Flushes up to LS__CRASH_BATCH clients from *c on; returns where it stopped. */
static ls_client *ls__crash_flush_batch(ls_client *c, uint64_t deadline) {
  ls_client *v[LS__CRASH_BATCH];
  uint32_t req[LS__CRASH_BATCH];
  size_t n = 0;
  for (; c && n < LS__CRASH_BATCH; c = __atomic_load_n(&c->gnext, __ATOMIC_ACQUIRE)) {
    if (!__atomic_load_n(&c->sender_running, __ATOMIC_RELAXED) || ls__no_daemon(&c->conn)) continue;
    v[n] = c;
    req[n] = atomic_fetch_add(&c->flush_req, 1) + 1;
    ls__wake(c);
    n++;
  }
  for (size_t i = 0; i < n; i++) {
    for (;;) {
      uint32_t done = atomic_load(&v[i]->flush_done);
      if ((int32_t)(done - req[i]) >= 0) break;
      uint64_t now = ls__now_mono_ns();
      if (now >= deadline) return NULL;
      ls__futex_wait(&v[i]->flush_done, done, deadline - now);
    }
  }
  return c;
}

static size_t ls__crash_index(int sig) {
  for (size_t i = 0; i < LS__NSIGS; i++)
    if (ls__crash_sigs[i] == sig) return i;
  return 0;
}

static void ls__crash_handler(int sig, siginfo_t *info, void *uctx) {
  int e = errno;
  /* Once per process: a second crashing thread (or a crash inside this
   * handler) goes straight on to the previous disposition. */
  if (!atomic_exchange(&ls__crash_busy, 1)) {
    uint64_t deadline = ls__now_mono_ns() + LS__CRASH_WAIT_NS;
    ls_client *c = __atomic_load_n(ls__crash_head, __ATOMIC_ACQUIRE);
    while (c) c = ls__crash_flush_batch(c, deadline);
  }
  /* Hand the signal on: to the handler that was there before us, or to the
   * default action (core dump): restored, the signal raised again is
   * delivered when this handler returns (it is blocked until then), and a
   * fault repeats when the faulting instruction runs again. */
  const struct sigaction *prev = &ls__crash_prev[ls__crash_index(sig)];
  errno = e;
  if (prev->sa_flags & SA_SIGINFO) {
    if (prev->sa_sigaction) {
      prev->sa_sigaction(sig, info, uctx);
      return;
    }
  } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
    prev->sa_handler(sig);
    return;
  }
  sigaction(sig, prev, NULL);
  if (sig == SIGABRT || (info && info->si_code <= 0)) raise(sig); /* sent, not a fault */
}

static void ls__crash_do_install(void) {
  const char *env = getenv("LOGSINK_CRASH_HANDLER");
  if (env && strcmp(env, "0") == 0) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = ls__crash_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < LS__NSIGS; i++) {
    /* A signal the application ignores stays ignored. */
    if (sigaction(ls__crash_sigs[i], NULL, &ls__crash_prev[i]) != 0) continue;
    if (!(ls__crash_prev[i].sa_flags & SA_SIGINFO) && ls__crash_prev[i].sa_handler == SIG_IGN)
      continue;
    sigaction(ls__crash_sigs[i], &sa, NULL);
  }
}

void ls__crash_install(struct ls_client *const *head) {
  ls__crash_head = head;
  pthread_once(&ls__crash_once, ls__crash_do_install);
}
