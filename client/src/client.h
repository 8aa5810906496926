/* client.h: the client (struct ls_client) and what the hot path (log.c)
 * asks of it: the default client, registering a call site, attaching a ring
 * for the calling thread, and waking the sender. Implemented in client.c;
 * the sender thread (sender.c) works on the same struct. */
#ifndef LOGSINK_CLIENT_CLIENT_H
#define LOGSINK_CLIENT_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "clock.h"
#include "conn.h"
#include "futex.h"
#include "logsink/logsink.h"
#include "logsink/proto/level_rules.h"
#include "registry.h"
#include "ring.h"
#include "shm.h"

/* A client's levels as producers read them: immutable once published.
 * When the daemon pushes rules (PROTOCOL.md, "Levels at run time") the
 * sender publishes a new one; the one it replaced stays allocated until
 * ls_close, since a producer may be reading it (a change is an operator's
 * act: a few hundred bytes each). */
typedef struct ls__lv {
  struct ls__lv *older; /* replaced ones, freed by ls_close */
  uint32_t gen;         /* unique per published rules, 31 bits, never 0 */
  ls_level_rules rules; /* allocated for rules.n FILE rules only */
} ls__lv;

struct ls_client {
  /* Read on every call by logging threads; written rarely (open, fork). */
  _Alignas(LS__CACHELINE) uint32_t uid;
  int flush_level;
  int blocking;
  unsigned block_timeout_ms;
  size_t batch_bytes;
  size_t max_record_bytes;
  size_t ring_bytes;
  /* Levels at the source: every site at or below level_all produces; one
   * above it asks its cache (ls_site.ls__gate), valid when it holds lv's
   * gen, else lv's rules. Both change when the daemon pushes rules: read
   * with ls__level_all and ls__lv. */
  int level_all;
  ls__lv *lv;

  /* Wake-up word of the sender (futex), bumped by producers once per batch. */
  _Alignas(LS__CACHELINE) _Atomic uint32_t wake_seq;
  /* 1 while the sender sleeps after a pass that found nothing (and
   * send_delay_ms is not 0): the next record wakes it (log.c). Written by
   * the sender when that changes and by the producer that wakes it, so it
   * shares wake_seq's line, not the read-mostly one above. */
  _Atomic int sender_idle;
  _Atomic uint32_t flush_req;  /* ls_flush requests */
  _Atomic uint32_t flush_done; /* last request fully handled (futex) */
  _Atomic int flush_rc;
  _Atomic int stop;
  _Atomic uint32_t space_seq; /* bumped by the sender after freeing ring space (futex) */
  _Atomic int space_waiters;  /* producers waiting for space (blocking mode) */
  /* LS_BLOCK_WHILE_DRAINING: 1 + the sender's byte count (conn.st_bytes)
   * when a wait for space timed out; while the count stays there the daemon
   * is not draining and calls drop at once. 0: not stalled. */
  _Atomic uint64_t stall_mark;
  _Atomic uint64_t errors; /* refused records (hot-path failures only) */
  _Atomic uint64_t dropped_noring;
  _Atomic uint64_t formatted; /* ls_vlog records rendered in the process (wrap.c) */
  /* Calls dropped because they interrupted a call of the same thread (a
   * signal handler's LS_LOG): fetch_add, a single instruction, so a handler
   * interrupting another handler's increment cannot lose a count. */
  _Atomic uint64_t dropped_reentered;

  /* Everything below is under mu or owned by the sender thread. */
  _Alignas(LS__CACHELINE) pthread_mutex_t mu;
  ls__ring *rings;
  size_t ring_total; /* bytes of all rings */
  ls__registry reg;  /* sites registered with this client */
  pthread_t sender;
  int sender_running;
  int sender_needed; /* fork child: start the sender on next use */
  ls_client *gnext;  /* global list of clients */
  int is_default;

  /* Sender state. */
  ls__conn conn;
  ls__cal cal;
  _Atomic uint64_t close_deadline_ns; /* set by ls_close / exit: sends give up by then */
  struct ls__snap {
    ls__ring *ring;
    uint64_t head;
  } * snap;
  size_t snap_cap;

  /* The shared region of the current connection (under mu), or NULL:
   * new rings take its slots. shm_conn: the connection it came with
   * (conn.st_connects then). */
  struct ls__shm *shm;
  uint64_t shm_conn;
  /* 0 until the sender's first connect attempt (and its region, if any) is
   * done (futex): a thread's first ring waits for it (ls__client_add_ring),
   * so that its first records are staged where a kill cannot lose them. */
  _Atomic uint32_t shm_ready;

  ls_options opts;
  /* The client's own rules ($LOGSINK_LEVEL, else the options), set at
   * open, and as text (HELLO). Pushed rules go on top of them. */
  ls_level_rules own;
  char *own_text;
};

static inline int ls__level_all(const ls_client *c) {
  return __atomic_load_n(&c->level_all, __ATOMIC_RELAXED);
}
static inline const ls__lv *ls__lv_of(const ls_client *c) {
  return __atomic_load_n(&c->lv, __ATOMIC_ACQUIRE);
}

/* The sender's: the daemon pushed `text` (level_rules.h's text; "" none):
 * c's levels become its own rules with these on top. A text that does not
 * parse changes nothing (returns -EINVAL). */
LS__HIDDEN int ls__client_push_levels(ls_client *c, const char *text);

/* The default client, opened on first use. NULL (errno set) on failure. */
LS__HIDDEN ls_client *ls__default_get(void);
/* The default client if it is open, else NULL; takes no lock (signal-safe). */
LS__HIDDEN ls_client *ls__default_peek(void);
/* Registers the prepared site s with c (and marks it so in s). 0 or -ENOMEM. */
LS__HIDDEN int ls__client_add_site(ls_client *c, ls_site *s);
/* A new ring of c for the calling thread, on c's list and the thread's.
 * NULL when c's buffer budget is spent or memory is short. */
LS__HIDDEN ls__ring *ls__client_add_ring(ls_client *c);

/* Whether site s produces records in client c (its level above
 * c->level_all): the cached answer, or the rules' (cached). log.c. */
LS__HIDDEN int ls__site_on(ls_client *c, ls_site *s);

/* ls_open's warning record: ls_log_text without its check of a call in
 * progress on the thread (log.c). */
LS__HIDDEN int ls__log_text_at_open(ls_client *c, int level, const char *msg, size_t len);

/* Wakes the sender (a producer's batch is full, a flush, a close). */
static inline void ls__wake(ls_client *c) {
  atomic_fetch_add_explicit(&c->wake_seq, 1, memory_order_release);
  ls__futex_wake(&c->wake_seq);
}

#endif
