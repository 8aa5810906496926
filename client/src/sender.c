/* sender.c: the client's background thread. Each pass it (re)connects when
 * due, reports drops (DROPPED), interns call sites new to the connection
 * (INTERN), turns the staged records of every thread into RECORDS frames and
 * writes them with one send() per batch. It wakes on a producer's batch-full
 * or flush-level signal, on ls_flush/ls_close, and every flush interval. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/wire.h"

#define LS__FRAME_LIMIT (64u << 10) /* RECORDS frames stay below this (daemon max 256 KiB) */
#define LS__OUT_FLUSH (192u << 10)  /* send once the buffer holds this much */
/* Largest INTERN frame: fmt (4096) and file (1024) plus the varints. */
#define LS__INTERN_MAX (LS_FRAME_HDR + 4096u + 1024u + 5u * LS_VARINT_MAX)

uint64_t ls__now_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ls__futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns) {
  struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

void ls__futex_wake(_Atomic uint32_t *w) {
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* ---- frame building ---- */

static size_t ls__frame_begin(ls_client *c, uint8_t type) {
  size_t at = c->out_len;
  c->out[at + 4] = type;
  c->out_len += LS_FRAME_HDR;
  return at;
}

static void ls__frame_end(ls_client *c, size_t at) {
  ls_put_u32(c->out + at, (uint32_t)(c->out_len - at - 4));
}

/* Remembers where a RECORDS (records > 0) or DROPPED frame ends. */
static void ls__mark(ls_client *c, uint64_t records, int dropped_frame) {
  if (c->marks_len == c->marks_cap) {
    size_t cap = c->marks_cap ? 2 * c->marks_cap : 64;
    void *p = realloc(c->marks, cap * sizeof *c->marks);
    if (!p) return; /* its records then count as lost if a send fails half-way */
    c->marks = p;
    c->marks_cap = cap;
  }
  c->marks[c->marks_len].end = c->out_len;
  c->marks[c->marks_len].records = records;
  c->marks[c->marks_len].dropped_frame = dropped_frame;
  c->marks_len++;
}

static void ls__put_v(ls_client *c, uint64_t v) {
  c->out_len += ls_put_varint(c->out + c->out_len, v);
}

static void ls__put_s(ls_client *c, const char *s, size_t n) {
  ls__put_v(c, n);
  memcpy(c->out + c->out_len, s, n);
  c->out_len += n;
}

/* Writes all of out, waiting for a slow daemon until send_timeout (or the
 * close deadline). On failure the connection is given up, and the records
 * of the frames that did not reach the socket whole are counted as dropped. */
static int ls__send_out(ls_client *c) {
  if (!c->out_len) return 0;
  int rc = 0;
  size_t done = 0;
  if (c->fd < 0) {
    rc = -ENOTCONN;
  } else {
    uint64_t deadline = ls__now_mono_ns() + (uint64_t)c->opts.send_timeout_ms * 1000000u;
    uint64_t close_by = atomic_load(&c->close_deadline_ns);
    if (close_by && close_by < deadline) deadline = close_by;
    while (done < c->out_len) {
      ssize_t k = send(c->fd, c->out + done, c->out_len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k > 0) {
        done += (size_t)k;
        continue;
      }
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 && errno == EAGAIN) {
        uint64_t now = ls__now_mono_ns();
        if (now >= deadline) {
          rc = -ETIMEDOUT;
          break;
        }
        struct pollfd pfd = {c->fd, POLLOUT, 0};
        int ms = (int)((deadline - now + 999999) / 1000000);
        (void)poll(&pfd, 1, ms);
        continue;
      }
      rc = k < 0 ? -errno : -EPIPE;
      break;
    }
  }
  /* What reached the socket: everything, or the frames completed before the
   * failure (the daemon discards a trailing partial frame). */
  uint64_t delivered = 0, reported = 0;
  if (rc == 0) {
    delivered = c->out_records;
    reported = c->out_dropped_report;
    atomic_fetch_add_explicit(&c->st_frames, c->out_frames, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->st_interned, c->out_interns, memory_order_relaxed);
  } else {
    for (size_t i = 0; i < c->marks_len && c->marks[i].end <= done; i++) {
      delivered += c->marks[i].records;
      if (c->marks[i].dropped_frame) reported = c->out_dropped_report;
    }
    c->dropped_sender += c->out_records - delivered;
    c->pass_lost = 1;
    if (c->fd >= 0) {
      close(c->fd);
      c->fd = -1;
      atomic_store_explicit(&c->st_connected, 0, memory_order_relaxed);
      atomic_fetch_add_explicit(&c->st_disconnects, 1, memory_order_relaxed);
      c->next_connect_ns = ls__now_mono_ns() + (uint64_t)c->backoff_ms * 1000000u;
    }
  }
  atomic_fetch_add_explicit(&c->st_sent, delivered, memory_order_relaxed);
  atomic_fetch_add_explicit(&c->st_bytes, done, memory_order_relaxed);
  atomic_fetch_add_explicit(&c->st_dropped_reported, reported, memory_order_relaxed);
  if (reported) c->drop_since_ns = 0;
  c->out_len = 0;
  c->out_records = c->out_frames = c->out_interns = c->out_dropped_report = 0;
  c->marks_len = 0;
  return rc;
}

static void ls__connect(ls_client *c) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd >= 0) {
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, c->path, strlen(c->path));
    int r;
    do r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
      close(fd);
      fd = -1;
    }
  }
  if (fd < 0) {
    c->next_connect_ns = ls__now_mono_ns() + (uint64_t)c->backoff_ms * 1000000u;
    c->backoff_ms =
        c->backoff_ms * 2 > c->opts.reconnect_max_ms ? c->opts.reconnect_max_ms : c->backoff_ms * 2;
    return;
  }
  c->fd = fd;
  c->backoff_ms = c->opts.reconnect_min_ms;
  c->interned_n = 0;
  atomic_fetch_add_explicit(&c->st_connects, 1, memory_order_relaxed);
  if (c->ever_connected) atomic_fetch_add_explicit(&c->st_reconnects, 1, memory_order_relaxed);
  c->ever_connected = 1;
  atomic_store_explicit(&c->st_connected, 1, memory_order_relaxed);
  /* HELLO: u32 version | u32 flags | str app */
  size_t at = ls__frame_begin(c, LS_F_HELLO);
  ls_put_u32(c->out + c->out_len, LS_PROTO_VERSION);
  ls_put_u32(c->out + c->out_len + 4, 0);
  c->out_len += 8;
  ls__put_s(c, c->app, strlen(c->app));
  ls__frame_end(c, at);
  c->out_frames++;
}

/* Records dropped so far, from every source. Caller holds c->mu. */
static uint64_t ls__dropped_total(ls_client *c) {
  uint64_t n = c->dropped_sender + c->dropped_gone +
               atomic_load_explicit(&c->dropped_noring, memory_order_relaxed);
  for (ls__ring *r = c->rings; r; r = r->next)
    n += atomic_load_explicit(&r->dropped, memory_order_relaxed);
  return n;
}

static void ls__put_intern(ls_client *c, const ls_site *s) {
  const ls__prog *p = s->ls__prog;
  size_t flen = strlen(s->fmt);
  const char *file = s->file ? s->file : "";
  size_t file_len = strlen(file);
  if (file_len > 1024) { /* keep the end of a long path */
    file += file_len - 1024;
    file_len = 1024;
  }
  size_t at = ls__frame_begin(c, LS_F_INTERN);
  ls__put_v(c, p->id);
  c->out[c->out_len++] = (uint8_t)s->level;
  ls__put_v(c, s->line > 0 ? (uint64_t)s->line : 0);
  ls__put_s(c, s->fmt, flen);
  ls__put_s(c, file, file_len);
  ls__frame_end(c, at);
  c->out_frames++;
  c->out_interns++;
}

/* Converts [tail, head) of r into RECORDS frames (or drops it when there is no
 * connection) and releases the space. */
static void ls__drain(ls_client *c, ls__ring *r, uint64_t head) {
  uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
  size_t cap = (size_t)r->mask + 1;
  size_t frame = SIZE_MAX; /* offset of the open RECORDS frame */
  uint64_t prev_ns = 0, in_frame = 0;
  while (t < head) {
    size_t off = (size_t)(t & r->mask);
    const uint8_t *rec = r->buf + off;
    uint32_t alen = ls_get_u32(rec);
    if (alen == LS__PAD) {
      t += cap - off;
      continue;
    }
    uint32_t site = ls_get_u32(rec + 4);
    uint64_t stamp = ls_get_u64(rec + 8);
    int cut = (site & LS__TRUNC_BIT) != 0;
    site &= ~LS__TRUNC_BIT;
    t += (LS__REC_HDR + alen + (cut ? 8u : 0u) + 7u) & ~(uint64_t)7;
    if (c->fd < 0) {
      c->dropped_sender++;
      c->pass_lost = 1;
      continue;
    }
    size_t worst = 3 * LS_VARINT_MAX + alen;
    if (frame != SIZE_MAX && c->out_len + worst - frame > LS__FRAME_LIMIT) {
      ls__frame_end(c, frame);
      ls__mark(c, in_frame, 0);
      frame = SIZE_MAX;
    }
    if (c->out_len + worst + 2 * LS_VARINT_MAX + LS_FRAME_HDR > LS__OUT_FLUSH) {
      if (frame != SIZE_MAX) {
        ls__frame_end(c, frame);
        ls__mark(c, in_frame, 0);
      }
      frame = SIZE_MAX;
      if (ls__send_out(c) < 0) { /* connection lost: this record is dropped too */
        c->dropped_sender++;
        continue;
      }
    }
    if (frame == SIZE_MAX) {
      frame = ls__frame_begin(c, LS_F_RECORDS);
      ls__put_v(c, r->tid);
      c->out_frames++;
      prev_ns = 0;
      in_frame = 0;
    }
    uint64_t ns = ls__cal_ns(&c->cal, stamp);
    ls__put_v(c, ((uint64_t)site << 1) | (uint64_t)cut);
    if (cut) ls__put_v(c, ls_get_u64(rec + LS__REC_HDR + alen));
    ls__put_v(c, ls_zigzag((int64_t)(ns - prev_ns)));
    prev_ns = ns;
    memcpy(c->out + c->out_len, rec + LS__REC_HDR, alen);
    c->out_len += alen;
    c->out_records++;
    in_frame++;
  }
  if (frame != SIZE_MAX) {
    ls__frame_end(c, frame);
    ls__mark(c, in_frame, 0);
  }
  atomic_store_explicit(&r->tail, t, memory_order_seq_cst);
  if (atomic_load(&c->space_waiters)) { /* blocking mode: a producer waits for this space */
    atomic_fetch_add(&c->space_seq, 1);
    ls__futex_wake(&c->space_seq);
  }
}

/* One pass over everything buffered now. */
static void ls__pass(ls_client *c, int urgent) {
  c->pass_lost = 0;
  if (c->fd < 0 && (urgent || ls__now_mono_ns() >= c->next_connect_ns)) ls__connect(c);
  ls__cal_update(&c->cal);

  pthread_mutex_lock(&c->mu);
  /* Snapshot the rings and their heads; free the drained rings of exited threads. */
  size_t n = 0;
  for (ls__ring **pp = &c->rings, *r; (r = *pp) != NULL;) {
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (atomic_load_explicit(&r->thread_gone, memory_order_acquire) &&
        atomic_load_explicit(&r->tail, memory_order_relaxed) == head) {
      *pp = r->next;
      c->dropped_gone += atomic_load_explicit(&r->dropped, memory_order_relaxed);
      c->logged_gone += atomic_load_explicit(&r->logged, memory_order_relaxed);
      c->truncated_gone += atomic_load_explicit(&r->truncated, memory_order_relaxed);
      c->ring_total -= (size_t)r->mask + 1;
      ls__ring_release(r);
      continue;
    }
    if (n == c->snap_cap) {
      size_t cap = c->snap_cap ? 2 * c->snap_cap : 16;
      void *p = realloc(c->snap, cap * sizeof *c->snap);
      if (!p) break; /* the rest waits for the next pass */
      c->snap = p;
      c->snap_cap = cap;
    }
    c->snap[n].ring = r;
    c->snap[n].head = head;
    n++;
    pp = &r->next;
  }
  if (c->fd >= 0) {
    /* Drops first, so the daemon sees them before later records. */
    uint64_t unreported = ls__dropped_total(c) - atomic_load(&c->st_dropped_reported);
    if (unreported) {
      uint64_t now = ls__realtime_ns();
      if (!c->drop_since_ns) c->drop_since_ns = now;
      size_t at = ls__frame_begin(c, LS_F_DROPPED);
      ls__put_v(c, unreported);
      ls__put_v(c, c->drop_since_ns);
      ls__put_v(c, now);
      ls__frame_end(c, at);
      ls__mark(c, 0, 1);
      c->out_frames++;
      c->out_dropped_report = unreported;
    }
    /* Sites registered since the connection was made (all of them after a
     * reconnect). Registration happened before any record using it was
     * published, so every record of the snapshot has its INTERN before it. */
    for (; c->interned_n < c->reg_len; c->interned_n++) {
      if (c->out_len + LS__INTERN_MAX > c->out_cap) {
        pthread_mutex_unlock(&c->mu);
        (void)ls__send_out(c);
        pthread_mutex_lock(&c->mu);
        if (c->fd < 0) break;
      }
      ls__put_intern(c, c->reg[c->interned_n]);
    }
  } else if (ls__dropped_total(c) > atomic_load(&c->st_dropped_reported) && !c->drop_since_ns) {
    c->drop_since_ns = ls__realtime_ns();
  }
  pthread_mutex_unlock(&c->mu);

  /* Rings stay alive: only this thread unlinks them, and ls_close joins it. */
  for (size_t i = 0; i < n; i++) ls__drain(c, c->snap[i].ring, c->snap[i].head);
  (void)ls__send_out(c);
}

void *ls__sender_main(void *arg) {
  ls_client *c = arg;
  uint32_t handled = atomic_load(&c->flush_done);
  for (;;) {
    uint32_t seq = atomic_load_explicit(&c->wake_seq, memory_order_acquire);
    uint32_t req = atomic_load(&c->flush_req);
    int stop = atomic_load(&c->stop);
    int urgent = req != handled || stop;
    ls__pass(c, urgent);
    if (urgent) {
      atomic_store(&c->flush_rc, c->fd < 0 ? -ENOTCONN : c->pass_lost ? -EPIPE : 0);
      handled = req;
      atomic_store(&c->flush_done, req);
      ls__futex_wake(&c->flush_done);
    }
    if (stop) break;
    ls__futex_wait(&c->wake_seq, seq, (uint64_t)c->opts.flush_interval_ms * 1000000u);
  }
  return NULL;
}

int ls__sender_start(ls_client *c) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits: no app signal runs on it */
  int rc = pthread_create(&c->sender, NULL, ls__sender_main, c);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc) return -rc;
  pthread_setname_np(c->sender, "logsink-send");
  c->sender_running = 1;
  c->sender_needed = 0;
  return 0;
}
