/* log.c: the hot path (LS_LOG, ls_log_text): stages one record in the
 * calling thread's ring (ring.h) of the client. A call touches only its call
 * site, the client's read-only line, the sender's wake-up line (read; written
 * once per batch and around quiet spells) and its own thread's ring: no lock,
 * no syscall except a futex wake-up once per batch or for the first record
 * after a quiet spell. A thread's first call to a client (and a site's first
 * call) takes a slow path into client.c; nothing here starts threads. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "encode.h"
#include "logsink/proto/codec.h"
#include "site.h"

static uint64_t ls__ring_room(const ls__line *r, uint64_t head) {
  return (uint64_t)r->mask + 1 - (head - r->cached_tail);
}

/* Waits until `need` bytes are free: wakes the sender and sleeps on its
 * space signal, at most block_timeout_ms. LS_BLOCK_WHILE_DRAINING does not
 * wait without a connection (once one was tried), nor while the client is
 * marked stalled (a wait timed out and the sender has moved no byte since);
 * a timeout marks it. 1 when the space is there. */
static int ls__ring_wait(ls_client *c, ls__line *r, uint64_t head, uint64_t need) {
  const int draining = c->blocking == LS_BLOCK_WHILE_DRAINING;
  ls__conn *k = &c->conn;
  /* No sender (its thread could not be started in a fork child): nobody
   * will free space, so do not wait for it. */
  if (draining) {
    if (!__atomic_load_n(&c->sender_running, __ATOMIC_RELAXED) || ls__no_daemon(k)) return 0;
    uint64_t moved = atomic_load_explicit(&k->st_bytes, memory_order_relaxed);
    if (atomic_load_explicit(&c->stall_mark, memory_order_relaxed) == moved + 1) return 0;
  }
  uint64_t deadline = ls__now_mono_ns() + (uint64_t)c->block_timeout_ms * 1000000u;
  int ok = 0;
  /* Dekker pairing with the sender's ls__drain (sender.c): announce the
   * waiter (seq_cst), then read space_seq, then re-read tail. The sender
   * stores tail (seq_cst), then reads space_waiters: one of the two sees the
   * other's store, so either this thread sees the space or the sender bumps
   * space_seq, and the bump after our read of seq makes futex_wait return at
   * once. Reading seq after tail would lose a wake-up in between. */
  atomic_fetch_add(&c->space_waiters, 1);
  for (;;) {
    uint32_t seq = atomic_load(&c->space_seq);
    r->cached_tail = atomic_load_explicit(&r->ring->tail, memory_order_acquire);
    if (ls__ring_room(r, head) >= need) {
      ok = 1;
      break;
    }
    if (draining && ls__no_daemon(k)) break;
    uint64_t now = ls__now_mono_ns();
    if (now >= deadline) {
      if (draining)
        atomic_store_explicit(&c->stall_mark,
                              atomic_load_explicit(&k->st_bytes, memory_order_relaxed) + 1,
                              memory_order_relaxed);
      break;
    }
    ls__wake(c);
    uint64_t wait = deadline - now < 10000000u ? deadline - now : 10000000u;
    ls__futex_wait(&c->space_seq, seq, wait);
  }
  atomic_fetch_sub(&c->space_waiters, 1);
  return ok;
}

/* A record at flush_level or more severe was staged: wait (futex) until the
 * sender has written it, and everything this thread staged before it, into
 * the socket (an ls_flush bounded by block_timeout_ms), so a crash or kill
 * right after the call cannot lose it. Without a connection (once one was
 * tried, ls__no_daemon), or while the
 * daemon is not draining (stall_mark, see ls__ring_wait), only wake the
 * sender: no thread waits on a daemon that does not read. */
static __attribute__((noinline, cold)) void ls__flush_wait(ls_client *c) {
  ls__conn *k = &c->conn;
  uint64_t moved = atomic_load_explicit(&k->st_bytes, memory_order_relaxed);
  if (!__atomic_load_n(&c->sender_running, __ATOMIC_RELAXED) || ls__no_daemon(k) ||
      atomic_load_explicit(&c->stall_mark, memory_order_relaxed) == moved + 1) {
    ls__wake(c);
    return;
  }
  /* head was published (release) before this request: the sender's pass
   * for it snapshots the ring after reading the request, so it sees the record. */
  uint32_t req = atomic_fetch_add(&c->flush_req, 1) + 1;
  ls__wake(c);
  uint64_t deadline = ls__now_mono_ns() + (uint64_t)c->block_timeout_ms * 1000000u;
  for (;;) {
    uint32_t done = atomic_load(&c->flush_done);
    if ((int32_t)(done - req) >= 0) return;
    if (ls__no_daemon(k)) return;
    uint64_t now = ls__now_mono_ns();
    if (now >= deadline) {
      atomic_store_explicit(&c->stall_mark,
                            atomic_load_explicit(&k->st_bytes, memory_order_relaxed) + 1,
                            memory_order_relaxed);
      return;
    }
    uint64_t wait = deadline - now < 10000000u ? deadline - now : 10000000u;
    ls__futex_wait(&c->flush_done, done, wait);
  }
}

/* Makes room for one record of at most `budget` argument bytes in r:
 * returns where its header goes (*headp the ring's head before it), or
 * NULL when it was dropped (*rc set). */
static inline __attribute__((always_inline)) uint8_t *ls__stage_room(ls_client *c, ls__line *r,
                                                                     size_t budget, uint64_t *headp,
                                                                     int *rc) {
  size_t need = ls__align8(LS__REC_HDR + budget + 8); /* + the cut-bytes word */
  uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  size_t cap = (size_t)r->mask + 1;
  size_t off = (size_t)(head & r->mask);
  size_t pad = cap - off < need ? cap - off : 0;
  if (LS__UNLIKELY(ls__ring_room(r, head) < pad + need)) {
    r->cached_tail = atomic_load_explicit(&r->ring->tail, memory_order_acquire);
    if (ls__ring_room(r, head) < pad + need) {
      int e = errno;
      int ok = c->blocking && ls__ring_wait(c, r, head, pad + need);
      errno = e;
      if (!ok) {
        atomic_store_explicit(&r->ring->dropped,
                              atomic_load_explicit(&r->ring->dropped, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        /* Make sure the sender hears about a full ring at least once. */
        if (head != atomic_load_explicit(&r->wake_pos, memory_order_relaxed)) {
          atomic_store_explicit(&r->wake_pos, head, memory_order_relaxed);
          ls__wake(c);
        }
        *rc = c->blocking == LS_BLOCK_ALWAYS ? -ETIMEDOUT : -EAGAIN;
        return NULL;
      }
    }
  }
  if (pad) {
    ls_put_u32(ls__line_data(r) + off, LS__PAD);
    head += pad;
    off = 0;
  }
  *headp = head;
  return ls__line_data(r) + off;
}

/* Publishes the record staged at rec (head: ls__stage_room's) with n
 * argument bytes, trunc of them cut, and wakes or waits for the sender as
 * the record's level and the batch say. */
static inline __attribute__((always_inline)) int ls__stage_publish(ls_client *c, ls__line *r,
                                                                   const ls__prog *p, int level,
                                                                   uint64_t stamp, uint8_t *rec,
                                                                   uint64_t head, size_t n,
                                                                   uint64_t trunc) {
  uint32_t site = p->id;
  size_t extra = 0;
  if (LS__UNLIKELY(trunc)) {
    site |= LS__TRUNC_BIT;
    ls_put_u64(rec + LS__REC_HDR + n, trunc);
    extra = 8;
    atomic_store_explicit(&r->truncated,
                          atomic_load_explicit(&r->truncated, memory_order_relaxed) + 1,
                          memory_order_relaxed);
  }
  ls_put_u32(rec, (uint32_t)n);
  ls_put_u32(rec + 4, site);
  ls_put_u64(rec + 8, stamp);
  head += ls__align8(LS__REC_HDR + n + extra);
  /* logged before head: a sender that reads head (acquire) and then logged
   * sees every record up to that head counted (its resync after a corrupt
   * ring, sender.c, relies on it). */
  atomic_store_explicit(&r->logged, atomic_load_explicit(&r->logged, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  atomic_store_explicit(&r->head, head, memory_order_release);
  /* wake_pos is the producer's, but the sender may move it far away to
   * send the thread through this branch once (a move, ring.h: retire);
   * relaxed loads and stores of it are plain ones. */
  const uint64_t wake_pos = atomic_load_explicit(&r->wake_pos, memory_order_relaxed);
  if (LS__UNLIKELY(head - wake_pos >= c->batch_bytes || level <= c->flush_level ||
                   atomic_load_explicit(&c->sender_idle, memory_order_relaxed))) {
    int e = errno;
    const int batch = head - wake_pos >= c->batch_bytes;
    atomic_store_explicit(&r->wake_pos, head, memory_order_relaxed);
    if (level <= c->flush_level)
      ls__flush_wait(c);
    else if (batch || atomic_exchange_explicit(&c->sender_idle, 0, memory_order_relaxed))
      ls__wake(c); /* a batch, or the first record after a quiet spell */
    /* The client got a shared region this ring is not in: the next call
     * takes a ring there (at a wake-up only, so the hot path pays nothing). */
    if (LS__UNLIKELY(atomic_load_explicit(&r->ring->retire, memory_order_acquire))) {
      /* The sender made this thread a ring in the new region (no lock, no
       * allocation here: a signal handler's call may be the one). */
      ls__ring_move(r->ring);
      /* What the left ring still holds is not in the region: sent now
       * (bounded like a flush_level record), so a kill right after cannot
       * lose it. Once per thread and connection. */
      if (c->blocking != LS_BLOCK_NEVER && level > c->flush_level) ls__flush_wait(c);
    }
    errno = e;
  }
  return 0;
}

/* Stages one record. ap NULL: `text` is the single string argument. */
static inline __attribute__((always_inline)) int ls__stage(ls_client *c, ls__line *r,
                                                           const ls__prog *p, int level,
                                                           uint64_t stamp, va_list *ap,
                                                           int saved_errno, const char *text,
                                                           size_t text_len) {
  size_t budget = p->has_str ? c->max_record_bytes : p->fixed_max;
  uint64_t head;
  int rc = 0;
  uint8_t *rec = ls__stage_room(c, r, budget, &head, &rc);
  if (!rec) return rc;
  uint64_t trunc = 0;
  size_t n;
  if (ap) {
    n = ls__encode(p, ap, saved_errno, rec + LS__REC_HDR, budget, &trunc);
  } else {
    size_t keep = text_len, hdr = ls_varint_len(text_len);
    if (hdr + keep > budget) {
      keep = budget - hdr;
      trunc = text_len - keep;
    }
    n = ls_put_varint(rec + LS__REC_HDR, keep);
    memcpy(rec + LS__REC_HDR + n, text, keep);
    n += keep;
  }
  return ls__stage_publish(c, r, p, level, stamp, rec, head, n, trunc);
}

/* Slow path of a call: prepares the site, registers it with c, finds the
 * thread's ring. Returns 0 or -errno; errno is preserved. */
static int ls__slow(ls_client *c, ls_site *s, const ls__prog **pp, ls__line **rp) {
  int e = errno, rc = 0;
  const ls__prog *p = ls__site_prog(s);
  if (!p) {
    atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
    rc = -EINVAL;
  } else if (__atomic_load_n(&s->ls__reg, __ATOMIC_ACQUIRE) != c->uid) {
    rc = ls__client_add_site(c, s);
    if (rc) atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
  }
  if (!rc) {
    ls__line *r = ls__tl_ring;
    if (!r || r->owner_uid != c->uid) {
      ls__ring *ring = ls__ring_find(c, c->uid);
      if (!ring) ring = ls__client_add_ring(c);
      r = ring ? ring->line : NULL;
    }
    if (!r) {
      atomic_fetch_add_explicit(&c->dropped_noring, 1, memory_order_relaxed);
      rc = -EAGAIN;
    }
    *rp = r;
  }
  *pp = p;
  errno = e;
  return rc;
}

/* Set while the calling thread is inside a call of this file: a signal
 * handler that interrupts the call and logs again on the same thread finds
 * it set and drops its record instead of staging over the half-written one
 * (the ring's head, its counters and the staged bytes belong to the outer
 * call until it returns). A plain thread-local: only the thread itself and
 * its own signal handlers touch it, and a handler runs to completion before
 * the interrupted code resumes, so the check-then-set needs no atomic, only
 * signal fences keeping the compiler from moving ring accesses across the
 * set or the clear. */
static __thread int ls__tl_busy __attribute__((tls_model("initial-exec")));

static inline void ls__busy_enter(void) {
  ls__tl_busy = 1;
  atomic_signal_fence(memory_order_seq_cst);
}

static inline void ls__busy_leave(void) {
  atomic_signal_fence(memory_order_seq_cst);
  ls__tl_busy = 0;
}

/* A call that interrupted another one of its thread: dropped and counted in
 * the client (the default one only if it is open: opening takes locks). */
static __attribute__((noinline)) int ls__reentered(ls_client *c) {
  if (!c) c = ls__default_peek();
  if (c) atomic_fetch_add_explicit(&c->dropped_reentered, 1, memory_order_relaxed);
  return -EAGAIN;
}

/* The first part of a call of site s (LS_LOG, ls_log, ls_vlog, LS_FMT):
 * its level, the thread's busy mark, the default client, the stamp, the
 * site's program and the thread's ring. 1: go on, the thread marked busy
 * and *cp the client; else the call's result, the thread not marked. */
static inline __attribute__((always_inline)) int ls__call_begin(ls_client **cp, ls_site *s,
                                                                uint64_t *stamp,
                                                                const ls__prog **pp,
                                                                ls__line **rp) {
  ls_client *c = *cp;
  /* Below its level a call produces nothing and counts nowhere, not even
   * as a call that interrupted another one (a pure check). */
  if (c && LS__UNLIKELY(s->level > ls__level_all(c)) && !ls__site_on(c, s)) return 0;
  if (LS__UNLIKELY(ls__tl_busy)) return ls__reentered(c);
  ls__busy_enter();
  int rc;
  if (LS__UNLIKELY(!c)) {
    c = ls__default_get();
    if (!c) {
      rc = -ENOMEM;
      goto out;
    }
    if (LS__UNLIKELY(s->level > ls__level_all(c)) && !ls__site_on(c, s)) {
      rc = 0; /* below its level: nothing produced */
      goto out;
    }
  }
  *stamp = ls__stamp();
  const ls__prog *p = __atomic_load_n(&s->ls__prog, __ATOMIC_ACQUIRE);
  ls__line *r = ls__tl_ring;
  /* A client's uid is unique in the process (fork children get new ones),
   * so it alone says whether the cached ring is this client's. */
  if (LS__UNLIKELY(__atomic_load_n(&s->ls__reg, __ATOMIC_ACQUIRE) != c->uid || !r ||
                   r->owner_uid != c->uid)) {
    rc = ls__slow(c, s, &p, &r);
    if (rc) goto out;
  }
  *cp = c;
  *pp = p;
  *rp = r;
  return 1;
out:
  ls__busy_leave();
  return rc;
}

/* One call of site s with its arguments in *ap (LS_LOG, ls_log, ls_vlog). */
static inline __attribute__((always_inline)) int ls__call(ls_client *c, ls_site *s, va_list *ap) {
  uint64_t stamp = 0; /* set when ls__call_begin returns 1 */
  const ls__prog *p = NULL;
  ls__line *r = NULL;
  int rc = ls__call_begin(&c, s, &stamp, &p, &r);
  if (rc != 1) return rc;
  int saved_errno = LS__UNLIKELY(p->has_errno) ? errno : 0;
  rc = ls__stage(c, r, p, s->level, stamp, ap, saved_errno, NULL, 0);
  ls__busy_leave();
  return rc;
}

/* The C++ API's call (logsink.hpp): as ls__call, but the caller encodes
 * the arguments into the staged record between the two calls (the thread
 * stays marked busy in between, so a signal handler's call is dropped). */
int ls__slot_open(ls_client *c, ls_site *s, size_t need, ls__slot *slot) {
  uint64_t stamp = 0; /* set when ls__call_begin returns 1 */
  const ls__prog *p = NULL;
  ls__line *r = NULL;
  int rc = ls__call_begin(&c, s, &stamp, &p, &r);
  if (rc != 1) return rc;
  size_t budget = need < c->max_record_bytes ? need : c->max_record_bytes;
  uint64_t head;
  uint8_t *rec = ls__stage_room(c, r, budget, &head, &rc);
  if (!rec) {
    ls__busy_leave();
    return rc;
  }
  slot->args = rec + LS__REC_HDR;
  slot->cap = budget;
  slot->ls__c = c;
  slot->ls__r = r;
  slot->ls__p = p;
  slot->ls__head = head;
  slot->ls__stamp = stamp;
  slot->ls__level = s->level;
  return 1;
}

int ls__slot_close(ls__slot *slot, size_t n, uint64_t trunc) {
  ls_client *c = slot->ls__c;
  int rc = ls__stage_publish(c, (ls__line *)slot->ls__r, (const ls__prog *)slot->ls__p,
                             slot->ls__level, slot->ls__stamp, slot->args - LS__REC_HDR,
                             slot->ls__head, n > slot->cap ? slot->cap : n, trunc);
  ls__busy_leave();
  return rc;
}

/* Not inlined: it runs for sites above the client's level_all only. */
__attribute__((noinline)) int ls__site_on(ls_client *c, ls_site *s) {
  if ((unsigned)s->level > 7u) return 1; /* not a level: refused by ls__slow, counted */
  const ls__lv *lv = ls__lv_of(c);
  const uint32_t want = lv->gen << 1;
  const uint32_t g = __atomic_load_n(&s->ls__gate, __ATOMIC_RELAXED);
  if ((g & ~1u) == want) return (int)(g & 1);
  const int on = s->level <= ls_level_rules_for(&lv->rules, s->file, (uint32_t)s->line);
  __atomic_store_n(&s->ls__gate, want | (uint32_t)on, __ATOMIC_RELAXED);
  return on;
}

int ls__log(ls_client *c, ls_site *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = ls__call(c, s, &ap);
  va_end(ap);
  return rc;
}

int ls__vlog_site(ls_client *c, ls_site *s, va_list *ap) { return ls__call(c, s, ap); }

/* One call site per level for ls_log_text: format "%s". */
static ls_site ls__text_sites[8] = {{"%s", "", 0, 0, 0, 0, 0}, {"%s", "", 0, 1, 0, 0, 0},
                                    {"%s", "", 0, 2, 0, 0, 0}, {"%s", "", 0, 3, 0, 0, 0},
                                    {"%s", "", 0, 4, 0, 0, 0}, {"%s", "", 0, 5, 0, 0, 0},
                                    {"%s", "", 0, 6, 0, 0, 0}, {"%s", "", 0, 7, 0, 0, 0}};

/* Stages `len` bytes of text at `level` in c (NULL: the default client)
 * for the calling thread, which is not inside a call of this file. */
static int ls__text(ls_client *c, int level, const char *msg, size_t len) {
  int rc = 0;
  if (!c) {
    c = ls__default_get();
    if (!c) return -ENOMEM;
  }
  ls_site *s = &ls__text_sites[level];
  if (LS__UNLIKELY(level > ls__level_all(c)) && !ls__site_on(c, s)) return 0;
  uint64_t stamp = ls__stamp();
  const ls__prog *p = __atomic_load_n(&s->ls__prog, __ATOMIC_ACQUIRE);
  ls__line *r = ls__tl_ring;
  if (__atomic_load_n(&s->ls__reg, __ATOMIC_ACQUIRE) != c->uid || !r || r->owner_uid != c->uid) {
    rc = ls__slow(c, s, &p, &r);
    if (rc) return rc;
  }
  return ls__stage(c, r, p, level, stamp, NULL, 0, msg ? msg : "", len);
}

int ls_log_text(ls_client *c, int level, const char *msg, size_t len) {
  if (level < 0 || level > 7 || (!msg && len)) return -EINVAL;
  if (c && LS__UNLIKELY(level > ls__level_all(c)) && !ls__site_on(c, &ls__text_sites[level]))
    return 0;
  if (LS__UNLIKELY(ls__tl_busy)) return ls__reentered(c);
  ls__busy_enter();
  int rc = ls__text(c, level, msg, len);
  ls__busy_leave();
  return rc;
}

/* ls_open's own warning record: staged whatever the calling thread is
 * doing, since opening (the default client on a first call) happens inside
 * a call of this file before it touched any ring. */
int ls__log_text_at_open(ls_client *c, int level, const char *msg, size_t len) {
  return ls__text(c, level, msg, len);
}
