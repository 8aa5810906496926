/* ring.h: the staging rings. Every thread that logs to a client owns one
 * single-producer/single-consumer ring of that client: the thread appends
 * records (log.c), the client's sender consumes them (sender.c). This file
 * holds the ring, its record layout, its life cycle (two references: the
 * owning thread's and the client's list) and the calling thread's list of
 * rings. It knows the client only as an opaque owner pointer. */
#ifndef LOGSINK_CLIENT_RING_H
#define LOGSINK_CLIENT_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

struct ls_client;

/* A staged record, 8-byte aligned in the ring:
 *   u32 args_len | u32 site (bit 31: truncated) | u64 stamp | args | [u64 cut bytes]
 * A u32 of LS__PAD in args_len position means "skip to the ring's start". */
#define LS__REC_HDR 16u
#define LS__TRUNC_BIT 0x80000000u
#define LS__PAD 0xffffffffu

typedef struct ls__ring ls__ring;
struct ls__ring {
  /* Producer side: written by the owning thread only. */
  _Alignas(LS__CACHELINE) _Atomic uint64_t head; /* published end of staged records */
  uint64_t cached_tail;
  uint64_t wake_pos;        /* head when the sender was last woken */
  _Atomic uint64_t logged;  /* records staged */
  _Atomic uint64_t dropped; /* records dropped by the producer (ring full) */
  _Atomic uint64_t truncated;
  struct ls_client *owner;
  uint32_t owner_uid; /* owner->uid when the ring was made */
  uint32_t mask;      /* capacity - 1 */
  uint8_t *buf;
  /* Sender side. */
  _Alignas(LS__CACHELINE) _Atomic uint64_t tail; /* consumed up to here */
  uint64_t tid;
  uint64_t consumed;       /* records the sender took out (sent or dropped) */
  ls__ring *next;          /* owner's list (owner->mu) */
  ls__ring *tnext;         /* owning thread's list (thread-local) */
  _Atomic int refs;        /* owner's list + owning thread */
  _Atomic int thread_gone; /* the owning thread exited or dropped it */
  _Atomic int owner_dead;  /* the client was closed (or this is a fork child) */
  int tmark;               /* fork child handler: ring of the forking thread */
};

static inline size_t ls__align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Bytes a record with args_len argument bytes takes in a ring. */
static inline uint64_t ls__rec_size(uint32_t args_len, int cut) {
  return ls__align8(LS__REC_HDR + (size_t)args_len + (cut ? 8u : 0u));
}

/* The ring of the client this thread used last (the hot path's cache). */
extern __thread ls__ring *ls__tl_ring __attribute__((tls_model("initial-exec"))) LS__HIDDEN;

/* A new ring of `bytes` (a power of two) for the calling thread, with both
 * references taken; not yet on any list. NULL when out of memory. */
LS__HIDDEN ls__ring *ls__ring_new(struct ls_client *owner, uint32_t owner_uid, size_t bytes);
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
/* Marks (on = 1) or unmarks the calling thread's rings (fork child handler). */
LS__HIDDEN void ls__ring_mark_mine(int on);

#endif
