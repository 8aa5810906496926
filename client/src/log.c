/* log.c: the hot path (LS_LOG, ls_log_text) and the per-thread staging rings
 * it writes into. A call touches only its call site, the client's read-only
 * line and its own thread's ring: no lock, no syscall, no cache line written
 * by another thread, except a futex wake-up once per batch. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "encode.h"
#include "internal.h"
#include "logsink/proto/codec.h"

/* The ring of the client this thread used last, and all rings of this thread. */
static __thread ls__ring *ls__tl_ring __attribute__((tls_model("initial-exec")));
static __thread ls__ring *ls__tl_list __attribute__((tls_model("initial-exec")));

static pthread_key_t ls__tl_key;
static pthread_once_t ls__tl_once = PTHREAD_ONCE_INIT;

void ls__ring_release(ls__ring *r) {
  if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) {
    free(r->buf);
    free(r);
  }
}

/* Thread exit: hand every ring of this thread to its client's sender, which
 * drains and frees it. */
static void ls__tl_exit(void *unused) {
  (void)unused;
  ls__ring *r = ls__tl_list;
  ls__tl_list = NULL;
  ls__tl_ring = NULL;
  while (r) {
    ls__ring *next = r->tnext;
    atomic_store_explicit(&r->thread_gone, 1, memory_order_release);
    ls__ring_release(r);
    r = next;
  }
}

static void ls__tl_key_init(void) { (void)pthread_key_create(&ls__tl_key, ls__tl_exit); }

/* Marks the rings of the calling thread (used by the fork child handler). */
void ls__tl_mark(int on) {
  for (ls__ring *r = ls__tl_list; r; r = r->tnext) r->tmark = on;
}

static size_t ls__align8(size_t n) { return (n + 7) & ~(size_t)7; }

ls__ring *ls__ring_get(ls_client *c) {
  /* Drop rings of closed clients; reuse one that belongs to c. */
  ls__ring **pp = &ls__tl_list, *r;
  while ((r = *pp) != NULL) {
    if (atomic_load_explicit(&r->owner_dead, memory_order_acquire)) {
      *pp = r->tnext;
      if (ls__tl_ring == r) ls__tl_ring = NULL;
      atomic_store_explicit(&r->thread_gone, 1, memory_order_release);
      ls__ring_release(r);
      continue;
    }
    if (r->owner == c && r->owner_uid == c->uid) {
      ls__tl_ring = r;
      return r;
    }
    pp = &r->tnext;
  }
  pthread_once(&ls__tl_once, ls__tl_key_init);
  r = calloc(1, sizeof *r);
  uint8_t *buf = aligned_alloc(LS__CACHELINE, c->ring_bytes);
  if (!r || !buf) {
    free(r);
    free(buf);
    return NULL;
  }
  r->buf = buf;
  r->mask = (uint32_t)(c->ring_bytes - 1);
  r->owner = c;
  r->owner_uid = c->uid;
  r->tid = (uint64_t)gettid();
  atomic_init(&r->refs, 2);
  pthread_mutex_lock(&c->mu);
  if (c->ring_total + c->ring_bytes > c->opts.max_buffered_bytes || c->uid != r->owner_uid) {
    pthread_mutex_unlock(&c->mu);
    free(buf);
    free(r);
    return NULL;
  }
  if (c->sender_needed) (void)ls__sender_start(c);
  c->ring_total += c->ring_bytes;
  r->next = c->rings;
  c->rings = r;
  pthread_mutex_unlock(&c->mu);
  (void)pthread_setspecific(ls__tl_key, (void *)1);
  r->tnext = ls__tl_list;
  ls__tl_list = r;
  ls__tl_ring = r;
  return r;
}

void ls__wake(ls_client *c) {
  atomic_fetch_add_explicit(&c->wake_seq, 1, memory_order_release);
  ls__futex_wake(&c->wake_seq);
}

static uint64_t ls__ring_free(ls__ring *r, uint64_t head) {
  return (uint64_t)r->mask + 1 - (head - r->cached_tail);
}

/* Waits (blocking mode) until `need` bytes are free: wakes the sender and
 * sleeps on its space signal. 1 when the space is there. */
static int ls__ring_wait(ls_client *c, ls__ring *r, uint64_t head, uint64_t need) {
  uint64_t deadline = ls__now_mono_ns() + (uint64_t)c->block_timeout_ms * 1000000u;
  int ok = 0;
  atomic_fetch_add(&c->space_waiters, 1);
  for (;;) {
    uint32_t seq = atomic_load(&c->space_seq);
    r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (ls__ring_free(r, head) >= need) {
      ok = 1;
      break;
    }
    uint64_t now = ls__now_mono_ns();
    if (now >= deadline) break;
    ls__wake(c);
    uint64_t wait = deadline - now < 10000000u ? deadline - now : 10000000u;
    ls__futex_wait(&c->space_seq, seq, wait);
  }
  atomic_fetch_sub(&c->space_waiters, 1);
  return ok;
}

/* Stages one record. ap NULL: `text` is the single string argument. */
static inline __attribute__((always_inline)) int ls__stage(ls_client *c, ls__ring *r,
                                                           const ls__prog *p, int level,
                                                           uint64_t stamp, va_list *ap,
                                                           int saved_errno, const char *text,
                                                           size_t text_len) {
  size_t budget = p->has_str ? c->max_record_bytes : p->fixed_max;
  size_t need = ls__align8(LS__REC_HDR + budget + 8); /* + the cut-bytes word */
  uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  size_t cap = (size_t)r->mask + 1;
  size_t off = (size_t)(head & r->mask);
  size_t pad = cap - off < need ? cap - off : 0;
  if (LS__UNLIKELY(ls__ring_free(r, head) < pad + need)) {
    r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (ls__ring_free(r, head) < pad + need) {
      int e = errno;
      int ok = c->blocking && ls__ring_wait(c, r, head, pad + need);
      errno = e;
      if (!ok) {
        atomic_store_explicit(&r->dropped,
                              atomic_load_explicit(&r->dropped, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        /* Make sure the sender hears about a full ring at least once. */
        if (head != r->wake_pos) {
          r->wake_pos = head;
          ls__wake(c);
        }
        return c->blocking ? -ETIMEDOUT : -EAGAIN;
      }
    }
  }
  if (pad) {
    ls_put_u32(r->buf + off, LS__PAD);
    head += pad;
    off = 0;
  }
  uint8_t *rec = r->buf + off;
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
  atomic_store_explicit(&r->head, head, memory_order_release);
  atomic_store_explicit(&r->logged, atomic_load_explicit(&r->logged, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  if (LS__UNLIKELY(head - r->wake_pos >= c->batch_bytes || level <= c->flush_level)) {
    int e = errno;
    r->wake_pos = head;
    ls__wake(c);
    errno = e;
  }
  return 0;
}

/* Slow path of a call: prepares the site, registers it with c, finds the
 * thread's ring. Returns 0 or -errno; errno is preserved. */
static int ls__slow(ls_client *c, ls_site *s, const ls__prog **pp, ls__ring **rp) {
  int e = errno, rc = 0;
  const ls__prog *p = ls__site_prog(s);
  if (!p) {
    atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
    rc = -EINVAL;
  } else if (__atomic_load_n(&s->ls__reg, __ATOMIC_ACQUIRE) != c->uid) {
    rc = ls__register_site(c, s);
    if (rc) atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
  }
  if (!rc) {
    ls__ring *r = ls__tl_ring;
    if (!r || r->owner != c || r->owner_uid != c->uid) r = ls__ring_get(c);
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

int ls__log(ls_client *c, ls_site *s, const char *fmt, ...) {
  (void)fmt; /* only for the compiler's format check */
  uint64_t stamp = ls__stamp();
  if (LS__UNLIKELY(!c)) {
    c = ls__default_get();
    if (!c) return -ENOMEM;
    stamp = ls__stamp(); /* the first open may just have chosen the clock */
  }
  const ls__prog *p = __atomic_load_n(&s->ls__prog, __ATOMIC_ACQUIRE);
  ls__ring *r = ls__tl_ring;
  if (LS__UNLIKELY(__atomic_load_n(&s->ls__reg, __ATOMIC_ACQUIRE) != c->uid || !r ||
                   r->owner != c || r->owner_uid != c->uid)) {
    int rc = ls__slow(c, s, &p, &r);
    if (rc) return rc;
  }
  int saved_errno = LS__UNLIKELY(p->has_errno) ? errno : 0;
  va_list ap;
  va_start(ap, fmt);
  int rc = ls__stage(c, r, p, s->level, stamp, &ap, saved_errno, NULL, 0);
  va_end(ap);
  return rc;
}

/* One call site per level for ls_log_text: format "%s". */
static ls_site ls__text_sites[8] = {{"%s", "", 0, 0, 0, 0, 0}, {"%s", "", 0, 1, 0, 0, 0},
                                    {"%s", "", 0, 2, 0, 0, 0}, {"%s", "", 0, 3, 0, 0, 0},
                                    {"%s", "", 0, 4, 0, 0, 0}, {"%s", "", 0, 5, 0, 0, 0},
                                    {"%s", "", 0, 6, 0, 0, 0}, {"%s", "", 0, 7, 0, 0, 0}};

int ls_log_text(ls_client *c, int level, const char *msg, size_t len) {
  uint64_t stamp = ls__stamp();
  if (level < 0 || level > 7 || (!msg && len)) return -EINVAL;
  if (!c) {
    c = ls__default_get();
    if (!c) return -ENOMEM;
    stamp = ls__stamp();
  }
  ls_site *s = &ls__text_sites[level];
  const ls__prog *p = __atomic_load_n(&s->ls__prog, __ATOMIC_ACQUIRE);
  ls__ring *r = ls__tl_ring;
  if (__atomic_load_n(&s->ls__reg, __ATOMIC_ACQUIRE) != c->uid || !r || r->owner != c ||
      r->owner_uid != c->uid) {
    int rc = ls__slow(c, s, &p, &r);
    if (rc) return rc;
  }
  return ls__stage(c, r, p, level, stamp, NULL, 0, msg ? msg : "", len);
}
