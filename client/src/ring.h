/* ring.h: the staging rings. Every thread that logs to a client owns one
 * single-producer/single-consumer ring of that client: the thread appends
 * records (log.c), the client's sender consumes them (sender.c). A ring is
 * two parts: the producer's line (ls__line: 64 bytes, followed at once by
 * the ring's data), which is all the hot path touches and which may be a
 * slot of the shared region (shm.h), and the ring's control (ls__ring:
 * the sender's side and the life cycle, always in the process's own
 * memory). This file holds both, their record layout, their life cycle
 * (two references: the owning thread's and the client's list) and the
 * calling thread's list of rings. It knows the client only as an opaque
 * owner pointer. */
#ifndef LOGSINK_CLIENT_RING_H
#define LOGSINK_CLIENT_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

struct ls_client;
struct ls__shm;

/* A staged record, 8-byte aligned in the ring (the layout of a shared
 * slot's records, proto/shm.h, so a ring can live in a slot as it is):
 *   u32 args_len | u32 site (bit 31: truncated) | u64 stamp | args | [u64 cut bytes]
 * A u32 of LS__PAD in args_len position means "skip to the ring's start". */
#define LS__REC_HDR 16u
#define LS__TRUNC_BIT 0x80000000u
#define LS__PAD 0xffffffffu

typedef struct ls__ring ls__ring;

/* The producer's line, written by the owning thread only. In a shared slot
 * its first two words are the slot's `head` and `tid` (proto/shm.h, read by
 * the daemon); the rest is the slot header's unused bytes, the client's
 * own. The ring's data follows it (ls__line_data). */
typedef struct ls__line {
  _Alignas(LS__CACHELINE) _Atomic uint64_t head; /* published end of staged records */
  uint64_t tid;
  uint64_t cached_tail;
  _Atomic uint64_t wake_pos; /* head when the sender was last woken (see log.c) */
  _Atomic uint64_t logged;   /* records staged */
  _Atomic uint64_t truncated;
  ls__ring *ring;     /* its control */
  uint32_t mask;      /* capacity - 1 */
  uint32_t owner_uid; /* the client's uid when the ring was made */
} ls__line;
_Static_assert(sizeof(ls__line) == 64, "a slot header is 64 bytes");

static inline uint8_t *ls__line_data(ls__line *l) { return (uint8_t *)l + sizeof *l; }

struct ls__ring {
  /* Sender side. */
  _Alignas(LS__CACHELINE) _Atomic uint64_t tail; /* consumed (and, in a slot, sent) up to here */
  ls__line *line;
  uint64_t tid;
  uint64_t consumed; /* records the sender took out (sent or dropped) */
  /* Records dropped by the producer (ring full): rare, so not on its line. */
  _Atomic uint64_t dropped;
  struct ls_client *owner;
  uint32_t owner_uid;
  int slot;                /* the slot of `region` the line is, or -1 */
  struct ls__shm *region;  /* NULL: the line is the process's own memory */
  ls__ring *next;          /* owner's list (owner->mu) */
  ls__ring *tnext;         /* owning thread's list (thread-local) */
  _Atomic int refs;        /* owner's list + owning thread */
  _Atomic int thread_gone; /* the owning thread exited or dropped it */
  _Atomic int owner_dead;  /* the client was closed (or this is a fork child) */
  /* Set by the sender (release) when the client got a region this ring is
   * not in and it made the thread `successor`, a ring in one of its slots
   * (on the client's list already): the thread moves to it at its next
   * call (the sender moves wake_pos to send it through the branch that
   * looks, log.c) and sets the successor's `adopted`. A successor whose
   * thread is gone before it moved is let go by the sender. */
  _Atomic int retire;
  ls__ring *successor;
  _Atomic int adopted;
  int tmark; /* fork child handler: ring of the forking thread */
};

static inline size_t ls__align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Bytes a record with args_len argument bytes takes in a ring. */
static inline uint64_t ls__rec_size(uint32_t args_len, int cut) {
  return ls__align8(LS__REC_HDR + (size_t)args_len + (cut ? 8u : 0u));
}

/* The line of the client's ring this thread used last (the hot path's cache). */
extern __thread ls__line *ls__tl_ring __attribute__((tls_model("initial-exec"))) LS__HIDDEN;

/* A new ring for the calling thread with both references taken, not yet on
 * any list: its line is `line` (a slot of region, whose data is `bytes`
 * long, starting at position `base`), or, with line NULL, the process's own
 * memory of `bytes` (a power of two). NULL when out of memory. */
LS__HIDDEN ls__ring *ls__ring_new(struct ls_client *owner, uint32_t owner_uid, size_t bytes,
                                  ls__line *line, struct ls__shm *region, int slot, uint64_t base,
                                  uint64_t tid);
/* Drops one reference; the last one frees the ring. */
LS__HIDDEN void ls__ring_release(ls__ring *r);
/* Frees a ring whose thread does not exist (fork child), whatever its refs. */
LS__HIDDEN void ls__ring_free(ls__ring *r);

/* The calling thread's ring of (owner, uid), or NULL. Rings of closed
 * clients met on the way are dropped. Caches the result in ls__tl_ring. */
LS__HIDDEN ls__ring *ls__ring_find(const struct ls_client *owner, uint32_t uid);
/* Puts r on the calling thread's list (after the owner listed it). Its
 * thread's exit hands it to the sender: thread_gone, then one release. */
LS__HIDDEN void ls__ring_adopt(ls__ring *r);
/* The calling thread moves from r (retire) to r's successor: the successor
 * takes r's place in its list (and cache), r is handed to the sender as at
 * the thread's exit. Async-signal-safe: no lock, no allocation. */
LS__HIDDEN void ls__ring_move(ls__ring *r);
/* The owner's side (the sender, or ls_close with every thread done): once
 * r's thread is gone, a successor it never moved to loses the reference
 * kept for that thread, and r forgets it. Call for every ring of the list
 * before any of them is released: a successor may be freed with the
 * list's reference after this. */
LS__HIDDEN void ls__ring_settle(ls__ring *r);
/* Marks (on = 1) or unmarks the calling thread's rings (fork child handler);
 * marking also forgets their regions (shm.h: not mapped in the child). */
LS__HIDDEN void ls__ring_mark_mine(int on);

#endif
