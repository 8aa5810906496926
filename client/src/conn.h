/* conn.h: the sender's connection to logsinkd and all the state tied to it:
 * the socket and its reconnect backoff, the buffer of encoded frames waiting
 * for one send(), the marks that tell which records a half-completed send
 * delivered, the loss accounting, and the counters ls_get_stats reports.
 * One struct, so a fork child forgets the parent's connection with one call
 * (ls__conn_reset). Owned by the sender thread (the caller of these
 * functions); the st_* counters are also read by ls_get_stats. Frames are
 * encoded with proto's frame_encode.h. Depends on clock.h. */
#ifndef LOGSINK_CLIENT_CONN_H
#define LOGSINK_CLIENT_CONN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "logsink/proto/shm.h"
#include "logsink/proto/wire.h"

/* What a connection needs to know; set once by ls__conn_init. */
typedef struct ls__conn_cfg {
  char path[108];
  /* The per-user directory path lies in ("" otherwise): checked with
   * ls_user_dir_check() before every connect, a refusal counting as a
   * failed connect. */
  char user_dir[108];
  char app[LS_APP_MAX + 1];
  unsigned send_timeout_ms;
  unsigned reconnect_min_ms, reconnect_max_ms;
  /* After the daemon closed a connection (a restart): how long records wait
   * for the next daemon (the client's block_timeout_ms). */
  unsigned reconnect_window_ms;
  /* The client's own level rules as text (HELLO version 2; the client owns
   * the bytes, NUL-terminated). */
  const char *own_levels;
  /* Offer LS_CAP_SHM (ls_options.shared_buffers). */
  int shm;
  /* Called after a send for every frame marked with a tag (ls__conn_mark_at),
   * whether the frame reached the socket or was given up: the bytes it
   * came from may be reused. */
  void (*on_sent)(void *arg, void *tag, uint64_t end);
  void *on_sent_arg;
} ls__conn_cfg;

/* Where a RECORDS or DROPPED frame ends in out, so a send that fails half-way
 * counts exactly the records of the frames it did not complete. */
typedef struct ls__mark {
  size_t start, end;
  uint64_t records;
  int dropped_frame;
  void *tag; /* ls__conn_mark_at's */
  uint64_t tag_end;
} ls__mark;

typedef struct ls__conn {
  ls__conn_cfg cfg;
  /* Buffers: allocated once, kept by ls__conn_reset. */
  uint8_t *out;
  size_t out_cap;
  ls__mark *marks;
  size_t marks_cap;
  /* RECORDS frames a restarting daemon did not take, for the next one:
   * entries of u64 records | u32 length | the frame. Allocated at the first
   * restart (2 x out_cap: the frames of one out buffer and their prefixes). */
  uint8_t *resend;
  size_t resend_cap;
  /* What the daemon sends (version 2: LEVELS frames), read between passes:
   * in holds one frame at most (LS__IN_CAP); levels the last rules text
   * read, NUL-terminated (LS_LEVELS_TEXT_MAX + 1 bytes). */
  uint8_t *in;
  char *levels;

  /* Everything below is zeroed by ls__conn_reset (fd -1, backoff minimal). */
  int fd;
  /* Which socket fd is: st_dev/st_ino from fstat right after connect. The
   * application may close the number and open its own file on it (a
   * close-all-fds loop); each write and close re-checks these first. */
  uint64_t fd_dev, fd_ino;
  /* The capabilities the daemon uses on this connection (its WELCOME; 0
   * with a version 1 daemon). */
  uint32_t caps;
  size_t in_len;
  /* levels holds a text not applied yet; in_bad: the daemon sent what this
   * client cannot read, and nothing more is read from this connection;
   * welcome_pending: HELLO (version 2) went unanswered within the wait
   * (a daemon that is starting: the connection waits in its backlog), and
   * the answer is read between passes. */
  int levels_new, in_bad, welcome_pending;
  /* The region the daemon handed this connection (capability SHM): its
   * descriptor (-1 none; the sender maps it and closes it) and geometry
   * (shm_geom_ok: an SHM frame was read). */
  int shm_fd;
  int shm_geom_ok;
  ls_shm_geom shm_geom;
  /* The mapped region's `released` word while it is the connection's
   * (NULL otherwise): stored before the client gives the connection up
   * and lives on (PROTOCOL.md, "Letting go"). */
  uint64_t *released;
  /* Set by ls_close and the exit handler (any thread): what a send gives
   * up from then on goes nowhere else, so the region is not let go. */
  _Atomic int closing;
  /* A send given up while closing left what the region holds to the
   * daemon: no new connection gets those records too. */
  int left_to_region;
  size_t census_sent; /* census ranges (site.h) sent on this connection */
  size_t census_off;  /* sites of range census_sent sent so far */
  unsigned backoff_ms;
  uint64_t next_connect_ns;
  int ever_connected;
  size_t interned_n; /* registered sites interned on this connection */
  size_t out_len;
  size_t marks_len;
  uint64_t out_records, out_frames, out_interns;
  uint64_t out_dropped_report; /* drops reported by a DROPPED frame in out */
  int pass_lost;               /* the current pass dropped records */
  /* Records dropped by the sender. Written by the sender thread only, read
   * by ls_get_stats at any time: atomic (sequentially consistent ++ and +=,
   * a few per dropped batch at most). */
  _Atomic uint64_t dropped_sender;
  uint64_t dropped_gone; /* producer drops of freed rings */
  uint64_t logged_gone, truncated_gone;
  uint64_t drop_since_ns; /* first unreported drop */
  size_t resend_len;      /* bytes of resend in use */
  uint64_t resend_records;
  /* CLOCK_MONOTONIC when the daemon closed an established connection (EPIPE,
   * ECONNRESET: it is restarting, or gone): the start of the reconnect
   * window, 0 when none runs. While it runs and there is no connection
   * (st_link LS__LINK_RESTARTING), staged records wait for the next daemon
   * instead of being dropped, producers wait for space as if it were there,
   * and connects are retried every reconnect_min_ms without backoff. A new
   * window starts only after a connection that lasted longer than one: a
   * daemon that accepts and closes at once (a refusal) cannot keep records
   * waiting forever. */
  uint64_t lost_ns;
  uint64_t connected_ns; /* CLOCK_MONOTONIC of the last connect */
  /* A window ended (or the client is closing): no new one until a
   * connection lasts longer than a window. */
  int window_spent;
  _Atomic uint64_t st_sent, st_dropped_reported, st_bytes, st_frames, st_interned, st_connects,
      st_reconnects, st_disconnects, st_fd_lost;
  /* LS__LINK_*: one word, so a producer never sees "no daemon" between two
   * stores of a transition. */
  _Atomic int st_link;
  /* A connect was tried (ls__conn_connect ran once, whatever its outcome).
   * Until then "not connected" only means "not yet": producers wait for
   * space instead of dropping (log.c), so a burst right after ls_open lands. */
  _Atomic int st_attempted;
} ls__conn;

#define LS__LINK_DOWN 0
#define LS__LINK_UP 1
#define LS__LINK_RESTARTING 2 /* the daemon closed: waiting for the next one */

/* The sender's view: the daemon closed and the reconnect window runs. */
static inline int ls__restarting(const ls__conn *k) { return k->fd < 0 && k->lost_ns != 0; }

/* No connection, and the sender has tried to make one: the daemon is not
 * there (before the first attempt, right after ls_open, it may well be).
 * Any thread. */
static inline int ls__no_daemon(ls__conn *k) {
  /* st_attempted first (acquire): the sender stores st_link before it
   * (and st_attempted with release or stronger), so a thread that sees the
   * attempt made also sees a connection it made. The other order could read
   * "not connected", then "attempted" from a successful connect in between. */
  if (!atomic_load_explicit(&k->st_attempted, memory_order_acquire)) return 0;
  return atomic_load_explicit(&k->st_link, memory_order_relaxed) == LS__LINK_DOWN;
}

/* Sets up k with an out buffer of out_cap bytes. 0 or -ENOMEM. */
LS__HIDDEN int ls__conn_init(ls__conn *k, const ls__conn_cfg *cfg, size_t out_cap);
LS__HIDDEN void ls__conn_free(ls__conn *k);
/* Closes the socket and forgets every frame, count and counter, keeping the
 * configuration and the buffers: the state of a fresh client. */
LS__HIDDEN void ls__conn_reset(ls__conn *k);
/* Closes the socket, if open (ls_close). */
LS__HIDDEN void ls__conn_close(ls__conn *k);

/* 1 when k->fd is still the socket k connected; else forgets it without
 * closing it (the number belongs to the application now), counts a lost
 * descriptor and a disconnect, and makes the next pass reconnect at once.
 * One fstat. */
LS__HIDDEN int ls__conn_check(ls__conn *k);

/* Connects (non-blocking) and says HELLO: version 2 first, and waits for
 * the daemon's WELCOME (its rules text then waits in k->levels) at most
 * send_timeout_ms or until close_by (CLOCK_MONOTONIC ns, 0: none); a daemon
 * that speaks only version 1 (REFUSE) gets a new connection with version
 * 1's HELLO, queued in out. Unanswered by then, the connection is used as
 * it is (welcome_pending: records follow the HELLO, as they did into a
 * starting daemon's backlog) and the answer is read later. On failure
 * schedules the next attempt with exponential backoff. */
LS__HIDDEN void ls__conn_connect(ls__conn *k, uint64_t close_by);
/* Reads what the daemon sent since (never waits): a LEVELS frame's text
 * (or a pending WELCOME's) goes to k->levels (levels_new); a pending
 * HELLO's REFUSE ends the connection (the next one asks again). Frames of
 * other types are skipped. */
LS__HIDDEN void ls__conn_read(ls__conn *k);
/* Sends all of out, waiting for a slow daemon until the send timeout or
 * close_by (CLOCK_MONOTONIC ns, 0: none). On failure the connection is given
 * up and the records of the frames that did not reach the socket whole are
 * counted as dropped. 0 or -errno. */
LS__HIDDEN int ls__conn_send(ls__conn *k, uint64_t close_by);
/* Remembers that a RECORDS (records > 0) or DROPPED frame spans [start,
 * out_len). */
LS__HIDDEN void ls__conn_mark(ls__conn *k, size_t start, uint64_t records, int dropped_frame);
/* As ls__conn_mark for a RECORDS_AT frame: cfg.on_sent(tag, end) follows
 * its send. */
LS__HIDDEN void ls__conn_mark_at(ls__conn *k, size_t start, uint64_t records, void *tag,
                                 uint64_t end);
/* Ends the reconnect window once it is over (now: CLOCK_MONOTONIC ns; ~0:
 * at once, at ls_close): the frames kept for the next daemon count as
 * dropped. */
LS__HIDDEN void ls__conn_tick(ls__conn *k, uint64_t now);
/* At the sender's end: kept frames nothing will send count as dropped. */
LS__HIDDEN void ls__conn_drop_kept(ls__conn *k);
/* Right after a connect (HELLO and the INTERNs in out): queues the RECORDS
 * frames kept from the previous connection, before anything newer; a send
 * it needs first waits at most until close_by (0: none). */
LS__HIDDEN void ls__conn_queue_resend(ls__conn *k, uint64_t close_by);

#endif
