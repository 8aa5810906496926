/* ring.c: staging rings' life cycle and the calling thread's list of them
 * (ring.h). */
#define _GNU_SOURCE
#include "ring.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm.h"

__thread ls__line *ls__tl_ring __attribute__((tls_model("initial-exec")));
/* All rings of this thread, one per client it logged to. */
static __thread ls__ring *ls__tl_list __attribute__((tls_model("initial-exec")));

static pthread_key_t ls__tl_key;
static pthread_once_t ls__tl_once = PTHREAD_ONCE_INIT;

void ls__ring_free(ls__ring *r) {
  if (r->region)
    ls__shm_slot_free(r->region, r->slot); /* a fork child's: only forgotten */
  else
    free(r->line);
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
  for (ls__ring *r = ls__tl_list; r; r = r->tnext) {
    r->tmark = on;
    /* A fork child: the region of each of its rings is not mapped here.
     * The child handler forgets the regions of the clients it resets; a
     * closed client's ring, kept in this list until the thread's next
     * call, is reachable only here, and its release would otherwise unmap
     * whatever the child has at that address by then. */
    if (on && r->region) r->region->forgotten = 1;
  }
  /* A fork child's lines in shared slots are not mapped there: the next
   * call finds its ring through the list, which the child handler marked
   * dead, and never through this cache. */
  if (on) ls__tl_ring = NULL;
}

ls__ring *ls__ring_find(const struct ls_client *owner, uint32_t uid) {
  ls__ring **pp = &ls__tl_list, *r;
  while ((r = *pp) != NULL) {
    /* Only the ring of the client called: another client's may be in
     * ls_close, which settles its successors without this thread. */
    if (r->owner == owner && r->owner_uid == uid &&
        atomic_load_explicit(&r->retire, memory_order_acquire) &&
        !atomic_load_explicit(&r->owner_dead, memory_order_acquire)) {
      ls__ring_move(r); /* its successor is at *pp now */
      continue;
    }
    if (atomic_load_explicit(&r->owner_dead, memory_order_acquire)) {
      *pp = r->tnext;
      if (ls__tl_ring == r->line) ls__tl_ring = NULL;
      atomic_store_explicit(&r->thread_gone, 1, memory_order_release);
      ls__ring_release(r);
      continue;
    }
    if (r->owner == owner && r->owner_uid == uid) {
      ls__tl_ring = r->line;
      return r;
    }
    pp = &r->tnext;
  }
  return NULL;
}

void ls__ring_settle(ls__ring *r) {
  ls__ring *s = r->successor;
  if (!s || !atomic_load_explicit(&r->thread_gone, memory_order_acquire)) return;
  if (!atomic_load_explicit(&s->adopted, memory_order_acquire) &&
      !atomic_exchange_explicit(&s->thread_gone, 1, memory_order_acq_rel))
    ls__ring_release(s); /* the reference of a thread that never came */
  r->successor = NULL;
}

void ls__ring_move(ls__ring *r) {
  ls__ring *s = r->successor; /* stored before retire (release) */
  for (ls__ring **pp = &ls__tl_list; *pp; pp = &(*pp)->tnext)
    if (*pp == r) {
      if (s) {
        s->tnext = r->tnext;
        *pp = s;
      } else {
        *pp = r->tnext;
      }
      break;
    }
  if (ls__tl_ring == r->line) ls__tl_ring = s ? s->line : NULL;
  /* adopted before thread_gone: the sender, seeing r gone, knows whether
   * the successor has a thread. */
  if (s) atomic_store_explicit(&s->adopted, 1, memory_order_release);
  /* The thread's reference before thread_gone: the sender's list
   * reference, dropped only once it sees thread_gone, is then the last,
   * so the free (and a region's munmap) never runs here, where a signal
   * handler may be the caller. */
  ls__ring_release(r);
  atomic_store_explicit(&r->thread_gone, 1, memory_order_release);
}

ls__ring *ls__ring_new(struct ls_client *owner, uint32_t owner_uid, size_t bytes, ls__line *line,
                       struct ls__shm *region, int slot, uint64_t base, uint64_t tid) {
  pthread_once(&ls__tl_once, ls__tl_key_init);
  ls__ring *r = aligned_alloc(LS__CACHELINE, sizeof *r);
  if (!line) line = aligned_alloc(LS__CACHELINE, sizeof *line + bytes);
  if (!r || !line) {
    free(r);
    if (!region) free(line);
    return NULL;
  }
  memset(r, 0, sizeof *r);
  r->line = line;
  r->region = region;
  r->slot = slot;
  r->owner = owner;
  r->owner_uid = owner_uid;
  r->tid = tid;
  atomic_init(&r->refs, 2);
  atomic_init(&r->tail, base);
  /* The slot's tid before any head that covers a record of this thread
   * (PROTOCOL.md); head itself is where the slot's last ring left it. */
  line->tid = r->tid;
  line->cached_tail = base;
  atomic_store_explicit(&line->wake_pos, base, memory_order_relaxed);
  atomic_store_explicit(&line->logged, 0, memory_order_relaxed);
  atomic_store_explicit(&line->truncated, 0, memory_order_relaxed);
  line->ring = r;
  line->mask = (uint32_t)(bytes - 1);
  line->owner_uid = owner_uid;
  atomic_store_explicit(&line->head, base, memory_order_release);
  return r;
}

void ls__ring_adopt(ls__ring *r) {
  /* Any non-NULL value makes the key's destructor run at thread exit. */
  (void)pthread_setspecific(ls__tl_key, (void *)1);
  r->tnext = ls__tl_list;
  ls__tl_list = r;
  ls__tl_ring = r->line;
}
