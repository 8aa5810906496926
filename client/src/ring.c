/* ring.c: staging rings' life cycle and the calling thread's list of them
 * (ring.h). */
#define _GNU_SOURCE
#include "ring.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

__thread ls__ring *ls__tl_ring __attribute__((tls_model("initial-exec")));
/* All rings of this thread, one per client it logged to. */
static __thread ls__ring *ls__tl_list __attribute__((tls_model("initial-exec")));

static pthread_key_t ls__tl_key;
static pthread_once_t ls__tl_once = PTHREAD_ONCE_INIT;

void ls__ring_free(ls__ring *r) {
  free(r->buf);
  free(r);
}

void ls__ring_release(ls__ring *r) {
  if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) ls__ring_free(r);
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

void ls__ring_mark_mine(int on) {
  for (ls__ring *r = ls__tl_list; r; r = r->tnext) r->tmark = on;
}

ls__ring *ls__ring_find(const struct ls_client *owner, uint32_t uid) {
  ls__ring **pp = &ls__tl_list, *r;
  while ((r = *pp) != NULL) {
    if (atomic_load_explicit(&r->owner_dead, memory_order_acquire)) {
      *pp = r->tnext;
      if (ls__tl_ring == r) ls__tl_ring = NULL;
      atomic_store_explicit(&r->thread_gone, 1, memory_order_release);
      ls__ring_release(r);
      continue;
    }
    if (r->owner == owner && r->owner_uid == uid) {
      ls__tl_ring = r;
      return r;
    }
    pp = &r->tnext;
  }
  return NULL;
}

ls__ring *ls__ring_new(struct ls_client *owner, uint32_t owner_uid, size_t bytes) {
  pthread_once(&ls__tl_once, ls__tl_key_init);
  ls__ring *r = calloc(1, sizeof *r);
  uint8_t *buf = aligned_alloc(LS__CACHELINE, bytes);
  if (!r || !buf) {
    free(r);
    free(buf);
    return NULL;
  }
  r->buf = buf;
  r->mask = (uint32_t)(bytes - 1);
  r->owner = owner;
  r->owner_uid = owner_uid;
  r->tid = (uint64_t)gettid();
  atomic_init(&r->refs, 2);
  return r;
}

void ls__ring_adopt(ls__ring *r) {
  /* Any non-NULL value makes the key's destructor run at thread exit. */
  (void)pthread_setspecific(ls__tl_key, (void *)1);
  r->tnext = ls__tl_list;
  ls__tl_list = r;
  ls__tl_ring = r;
}
