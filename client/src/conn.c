/* conn.c: the sender's connection to logsinkd (conn.h). */
#define _GNU_SOURCE
#include "conn.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "logsink/proto/frame_encode.h"
#include "logsink/proto/paths.h"

/* One frame of what the daemon sends a client: the largest is LEVELS. */
#define LS__IN_CAP (LS_FRAME_HDR + LS_VARINT_MAX + LS_LEVELS_TEXT_MAX + 16u)

int ls__conn_init(ls__conn *k, const ls__conn_cfg *cfg, size_t out_cap) {
  memset(k, 0, sizeof *k);
  k->cfg = *cfg;
  k->out = malloc(out_cap);
  k->in = malloc(LS__IN_CAP);
  k->levels = malloc(LS_LEVELS_TEXT_MAX + 1);
  if (!k->out || !k->in || !k->levels) return -ENOMEM; /* ls__conn_free frees */
  k->out_cap = out_cap;
  k->fd = -1;
  k->shm_fd = -1;
  ls__conn_reset(k);
  return 0;
}

void ls__conn_free(ls__conn *k) {
  ls__conn_close(k); /* the region's descriptor too */
  free(k->out);
  free(k->in);
  free(k->levels);
  free(k->marks);
  free(k->resend);
}

/* The region's records go on the client's next connection: the daemon
 * must not read them too (PROTOCOL.md, "Letting go"). A send given up
 * while closing clears `released` first (ls__conn_send): that region is
 * the daemon's to read. */
static void ls__conn_let_go(ls__conn *k) {
  if (k->released) __atomic_store_n(k->released, (uint64_t)1, __ATOMIC_RELEASE);
}

int ls__conn_check(ls__conn *k) {
  if (k->fd < 0) return 0;
  struct stat st;
  if (fstat(k->fd, &st) == 0 && S_ISSOCK(st.st_mode) && (uint64_t)st.st_dev == k->fd_dev &&
      (uint64_t)st.st_ino == k->fd_ino)
    return 1;
  k->fd = -1;
  k->lost_ns = 0; /* not a restart: the application took the number */
  /* The stream ended when the number was taken; the records staged since
   * go on the next connection. */
  ls__conn_let_go(k);
  atomic_store_explicit(&k->st_link, LS__LINK_DOWN, memory_order_relaxed);
  atomic_fetch_add_explicit(&k->st_disconnects, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&k->st_fd_lost, 1, memory_order_relaxed);
  k->next_connect_ns = 0;
  return 0;
}

/* Closes k->fd if it is still the socket k connected (ls__conn_check). */
static void ls__conn_drop(ls__conn *k) {
  if (ls__conn_check(k)) close(k->fd);
  k->fd = -1;
}

void ls__conn_reset(ls__conn *k) {
  ls__conn_drop(k);
  if (k->shm_fd >= 0) close(k->shm_fd);
  /* Only the calling thread uses k here (ls_open, or the fork child, which
   * has no other thread), so plain stores are enough, atomics included. */
  size_t keep = offsetof(ls__conn, fd);
  memset((char *)k + keep, 0, sizeof *k - keep);
  k->fd = -1;
  k->shm_fd = -1;
  k->backoff_ms = k->cfg.reconnect_min_ms;
}

void ls__conn_close(ls__conn *k) {
  ls__conn_drop(k);
  if (k->shm_fd >= 0) close(k->shm_fd); /* a region never mapped */
  k->shm_fd = -1;
  atomic_store(&k->st_link, LS__LINK_DOWN);
}

void ls__conn_mark(ls__conn *k, size_t start, uint64_t records, int dropped_frame) {
  if (k->marks_len == k->marks_cap) {
    size_t cap = k->marks_cap ? 2 * k->marks_cap : 64;
    void *p = realloc(k->marks, cap * sizeof *k->marks);
    if (!p) return; /* its records then count as lost if a send fails half-way */
    k->marks = p;
    k->marks_cap = cap;
  }
  k->marks[k->marks_len].start = start;
  k->marks[k->marks_len].end = k->out_len;
  k->marks[k->marks_len].records = records;
  k->marks[k->marks_len].dropped_frame = dropped_frame;
  k->marks[k->marks_len].tag = NULL;
  k->marks_len++;
}

void ls__conn_mark_at(ls__conn *k, size_t start, uint64_t records, void *tag, uint64_t end) {
  const size_t n = k->marks_len;
  ls__conn_mark(k, start, records, 0);
  if (k->marks_len == n) {
    /* No memory for the mark: the bytes are freed at once, so a kill
     * before this send would find them overwritten (only when the
     * process is out of memory). */
    k->cfg.on_sent(k->cfg.on_sent_arg, tag, end);
    return;
  }
  k->marks[n].tag = tag;
  k->marks[n].tag_end = end;
}

/* Writes [out, out + out_len) before the deadline. Returns 0 or -errno and
 * the bytes that reached the socket in *done. */
static int ls__conn_write(ls__conn *k, uint64_t deadline, size_t *done) {
  while (*done < k->out_len) {
    ssize_t n = send(k->fd, k->out + *done, k->out_len - *done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      *done += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      uint64_t now = ls__now_mono_ns();
      if (now >= deadline) return -ETIMEDOUT;
      struct pollfd pfd = {k->fd, POLLOUT, 0};
      int ms = (int)((deadline - now + 999999) / 1000000);
      (void)poll(&pfd, 1, ms);
      continue;
    }
    return n < 0 ? -errno : -EPIPE;
  }
  return 0;
}

/* Appends frame m of out to resend. 0 when it does not fit (or the buffer
 * cannot be had): its records are then dropped. */
static int ls__keep(ls__conn *k, const ls__mark *m) {
  const uint8_t *frame = k->out + m->start;
  size_t len = m->end - m->start;
  /* A RECORDS_AT frame's slot belongs to this connection's region: the
   * next connection gets its records as RECORDS (the same payload without
   * `slot` and `end`). */
  uint8_t hdr[LS_FRAME_HDR];
  const uint8_t *body = frame + LS_FRAME_HDR;
  size_t body_len = len - LS_FRAME_HDR;
  if (frame[4] == LS_F_RECORDS_AT) {
    uint64_t slot, end;
    const uint8_t *records;
    size_t rec_len;
    if (ls_records_at_decode(body, body_len, &slot, &end, &records, &rec_len) < 0) return 0;
    body = records;
    body_len = rec_len;
  }
  ls_put_u32(hdr, (uint32_t)(body_len + 1));
  hdr[4] = LS_F_RECORDS;
  len = LS_FRAME_HDR + body_len;
  if (!k->resend) {
    k->resend = malloc(2 * k->out_cap);
    if (!k->resend) return 0;
    k->resend_cap = 2 * k->out_cap;
  }
  if (k->resend_cap - k->resend_len < 12 + len) return 0;
  uint8_t *p = k->resend + k->resend_len;
  ls_put_u64(p, m->records);
  ls_put_u32(p + 8, (uint32_t)len);
  memcpy(p + 12, hdr, LS_FRAME_HDR);
  memcpy(p + 12 + LS_FRAME_HDR, body, body_len);
  k->resend_len += 12 + len;
  k->resend_records += m->records;
  return 1;
}

void ls__conn_tick(ls__conn *k, uint64_t now) {
  if (!ls__restarting(k) || now - k->lost_ns < (uint64_t)k->cfg.reconnect_window_ms * 1000000u)
    return;
  ls__conn_drop_kept(k);
  k->lost_ns = 0;
  k->window_spent = 1;
  atomic_store_explicit(&k->st_link, LS__LINK_DOWN, memory_order_relaxed);
}

void ls__conn_drop_kept(ls__conn *k) {
  k->dropped_sender += k->resend_records;
  if (k->resend_records) k->pass_lost = 1;
  k->resend_len = 0;
  k->resend_records = 0;
}

void ls__conn_queue_resend(ls__conn *k, uint64_t close_by) {
  if (!k->resend_len || k->fd < 0) return;
  /* The kept frames came from one out buffer, so they fit an empty one. */
  size_t frames = k->resend_len;
  for (size_t at = 0; at < k->resend_len; at += 12 + ls_get_u32(k->resend + at + 8)) frames -= 12;
  if (k->out_len + frames > k->out_cap && ls__conn_send(k, close_by) < 0) return;
  if (k->out_len + frames > k->out_cap) return; /* cannot happen: see above */
  for (size_t at = 0; at < k->resend_len;) {
    uint64_t records = ls_get_u64(k->resend + at);
    uint32_t len = ls_get_u32(k->resend + at + 8);
    size_t start = k->out_len;
    memcpy(k->out + start, k->resend + at + 12, len);
    k->out_len += len;
    ls__conn_mark(k, start, records, 0);
    k->out_records += records;
    k->out_frames++;
    at += 12 + len;
  }
  k->resend_len = 0;
  k->resend_records = 0;
}

/* Whether a connection that failed now (closed: the daemon closed it)
 * starts or continues a reconnect window, so that its records wait for
 * the next daemon. A window starts at the first close, or again after a
 * connection that lasted longer than a window; else the one running goes
 * on, and once it ended (window_spent) none starts until a connection
 * outlives one: a daemon that accepts and closes at once gets no second
 * window. */
static int ls__conn_keep(ls__conn *k, int closed, uint64_t now) {
  const uint64_t window = (uint64_t)k->cfg.reconnect_window_ms * 1000000u;
  const int lasted = k->connected_ns && now - k->connected_ns >= window;
  if (lasted) k->window_spent = 0;
  return closed && window && !k->window_spent &&
         (!k->lost_ns || lasted || now - k->lost_ns < window);
}

/* Gives the failed connection up (keep: from ls__conn_keep). */
static void ls__conn_lost(ls__conn *k, int keep, uint64_t now) {
  const uint64_t window = (uint64_t)k->cfg.reconnect_window_ms * 1000000u;
  int link = LS__LINK_DOWN;
  if (keep) {
    if (!k->lost_ns || now - k->connected_ns >= window) k->lost_ns = now;
    link = LS__LINK_RESTARTING; /* one store: never "down" in between */
  } else {
    k->lost_ns = 0;
  }
  if (ls__conn_check(k)) { /* a lost number was counted and let go there */
    ls__conn_let_go(k);    /* this process lives on and sends them on the next one */
    close(k->fd);
    k->fd = -1;
    atomic_store_explicit(&k->st_link, link, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->st_disconnects, 1, memory_order_relaxed);
    /* Restarting: soon (a restarted daemon may already listen). */
    k->next_connect_ns =
        now + (uint64_t)(keep ? k->cfg.reconnect_min_ms : k->backoff_ms) * 1000000u;
  }
}

int ls__conn_send(ls__conn *k, uint64_t close_by) {
  if (!k->out_len) return 0;
  int rc = -ENOTCONN;
  size_t done = 0;
  /* Once per batch: never write to a number the application reused. The
   * check and the send are not atomic; an application closing the number
   * from another thread while a batch is written is beyond any check. */
  if (ls__conn_check(k)) {
    uint64_t deadline = ls__now_mono_ns() + (uint64_t)k->cfg.send_timeout_ms * 1000000u;
    if (close_by && close_by < deadline) deadline = close_by;
    rc = ls__conn_write(k, deadline, &done);
  }
  /* What reached the socket: everything, or the frames completed before the
   * failure (the daemon discards a trailing partial frame). When the daemon
   * closed the connection (EPIPE, ECONNRESET: logsinkd shuts the reading side
   * of every connection when it stops, and reads all that was written
   * before), the RECORDS frames it did not get are kept for the next one. */
  const int closed = rc == -EPIPE || rc == -ECONNRESET;
  const uint64_t now = ls__now_mono_ns();
  const int keep = ls__conn_keep(k, closed, now); /* closed only when rc != 0 */
  uint64_t delivered = 0, reported = 0, kept = 0;
  if (rc == 0) {
    delivered = k->out_records;
    reported = k->out_dropped_report;
    atomic_fetch_add_explicit(&k->st_frames, k->out_frames, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->st_interned, k->out_interns, memory_order_relaxed);
  } else {
    for (size_t i = 0; i < k->marks_len; i++) {
      const ls__mark *m = &k->marks[i];
      if (m->end <= done) {
        delivered += m->records;
        if (m->dropped_frame) reported = k->out_dropped_report;
      } else if (keep && !m->dropped_frame && m->records && ls__keep(k, m)) {
        kept += m->records;
      }
    }
    k->dropped_sender += k->out_records - delivered - kept;
    if (k->out_records > delivered + kept) k->pass_lost = 1;
    /* Closing (ls_close, exit; a pass begun before the close included),
     * what it gave up goes nowhere else: the region is the daemon's to
     * read, not let go (PROTOCOL.md, "What liblogsink does"). */
    if (!keep && k->released && atomic_load_explicit(&k->closing, memory_order_acquire)) {
      k->released = NULL;
      k->left_to_region = 1; /* and no other connection gets them (sender.c) */
    }
    ls__conn_lost(k, keep, now);
  }
  atomic_fetch_add_explicit(&k->st_sent, delivered, memory_order_relaxed);
  atomic_fetch_add_explicit(&k->st_bytes, done, memory_order_relaxed);
  atomic_fetch_add_explicit(&k->st_dropped_reported, reported, memory_order_relaxed);
  if (reported) k->drop_since_ns = 0;
  /* Sent or given up (counted, or kept as copies for the next daemon):
   * either way the staged bytes of these frames are free now. */
  for (size_t i = 0; i < k->marks_len; i++)
    if (k->marks[i].tag) k->cfg.on_sent(k->cfg.on_sent_arg, k->marks[i].tag, k->marks[i].tag_end);
  k->out_len = 0;
  k->out_records = k->out_frames = k->out_interns = k->out_dropped_report = 0;
  k->marks_len = 0;
  return rc;
}

static int ls__conn_socket(const char *path, const char *user_dir) {
  /* Checked at every connect, not once at ls_open: a directory missing then
   * may have been created by another user since. */
  if (user_dir[0] && ls_user_dir_check(user_dir, 0, NULL, 0) < 0) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  memcpy(sa.sun_path, path, strlen(path));
  int r;
  do r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
  while (r < 0 && errno == EINTR);
  if (r < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Takes the frames at the start of k->in: a LEVELS frame's text goes to
 * k->levels; the daemon's other frames to a client are skipped (a later
 * version may send more). Returns the bytes consumed, or -1 when the
 * daemon sent what this client cannot read. */
static ptrdiff_t ls__conn_take_in(ls__conn *k, ls_welcome *welcome, ls_refuse *refuse) {
  size_t at = 0;
  for (;;) {
    ls_frame f;
    ptrdiff_t n = ls_frame_parse(k->in + at, k->in_len - at, LS__IN_CAP - LS_FRAME_HDR + 1, &f);
    if (n < 0) return -1;
    if (n == 0) return (ptrdiff_t)at;
    const char *text = NULL;
    size_t len = 0;
    if (f.type == LS_F_LEVELS) {
      if (ls_levels_decode(f.payload, f.len, &text, &len) < 0) return -1;
    } else if (f.type == LS_F_WELCOME && welcome) {
      if (ls_welcome_decode(f.payload, f.len, welcome) < 0) return -1;
      text = welcome->levels;
      len = welcome->levels_len;
      welcome = NULL;
    } else if (f.type == LS_F_SHM) {
      k->shm_geom_ok = ls_shm_decode(f.payload, f.len, &k->shm_geom) == 0;
    } else if (f.type == LS_F_REFUSE && refuse) {
      if (ls_refuse_decode(f.payload, f.len, refuse) < 0) return -1;
      return (ptrdiff_t)(at + (size_t)n);
    }
    if (text) {
      memcpy(k->levels, text, len);
      k->levels[len] = 0;
      k->levels_new = 1;
    }
    at += (size_t)n;
  }
}

/* recv() into k->in that also takes a descriptor the daemon passes (the
 * region of capability SHM, in SCM_RIGHTS): kept in k->shm_fd, close on
 * exec. A second one replaces the first. */
static ssize_t ls__conn_recv(ls__conn *k, int fd) {
  struct iovec iov = {k->in + k->in_len, LS__IN_CAP - k->in_len};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } cm;
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = cm.buf;
  msg.msg_controllen = sizeof cm.buf;
  ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  for (struct cmsghdr *h = CMSG_FIRSTHDR(&msg); h; h = CMSG_NXTHDR(&msg, h)) {
    if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
    const size_t nfd = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < nfd; i++) {
      int got;
      memcpy(&got, CMSG_DATA(h) + i * sizeof(int), sizeof got);
      if (k->shm_fd >= 0) close(k->shm_fd);
      k->shm_fd = got;
    }
  }
  return n;
}

/* Keeps what is left of k->in after `used` bytes. */
static void ls__conn_shift_in(ls__conn *k, size_t used) {
  memmove(k->in, k->in + used, k->in_len - used);
  k->in_len -= used;
}

void ls__conn_read(ls__conn *k) {
  if (k->fd < 0 || k->in_bad || !((k->caps & LS_CAP_LEVELS) || k->welcome_pending) ||
      !ls__conn_check(k))
    return;
  for (;;) {
    ssize_t n = ls__conn_recv(k, k->fd);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && !k->out_len) {
      /* The daemon closed (a stop, a restart): found now, not at the next
       * send, which a program whose levels leave nothing to send would
       * never make; the next daemon is connected to as after a failed
       * send, and its rules arrive with its WELCOME. */
      ls__conn_lost(k, ls__conn_keep(k, 1, ls__now_mono_ns()), ls__now_mono_ns());
      return;
    }
    if (n <= 0) return; /* nothing now (or the end, with frames to send: they find out) */
    k->in_len += (size_t)n;
    ls_welcome w = {0, UINT32_MAX, NULL, 0};
    ls_refuse r = {0, NULL, 0};
    const int pending = k->welcome_pending;
    ptrdiff_t used = ls__conn_take_in(k, pending ? &w : NULL, pending ? &r : NULL);
    if (used < 0) {
      k->in_bad = 1;
      return;
    }
    ls__conn_shift_in(k, (size_t)used);
    if (r.reason) {
      /* Refused after all (a daemon of version 1 that started late: what
       * followed the HELLO is lost to it). Given up as a closed connection;
       * the next connect asks again and falls back to version 1. */
      k->welcome_pending = 0;
      ls__conn_lost(k, ls__conn_keep(k, 1, ls__now_mono_ns()), ls__now_mono_ns());
      return;
    }
    if (w.caps != UINT32_MAX) {
      k->welcome_pending = 0;
      k->caps = w.caps & (LS_CAP_LEVELS | LS_CAP_CENSUS | LS_CAP_FIELDS | LS_CAP_BRACES |
                          (k->cfg.shm ? LS_CAP_SHM : 0));
    }
  }
}

/* Version 2's HELLO on fd, and the daemon's answer before the deadline.
 * Returns 2 (WELCOME: k->caps and k->levels set), 1 (the daemon speaks
 * version 1 only: it refused and closed), 0 (HELLO sent, no answer yet),
 * or -1 (HELLO not sent, refused otherwise, closed or gone). */
static int ls__conn_hello2(ls__conn *k, int fd, uint64_t deadline) {
  uint8_t
      hello[LS_FRAME_HDR + 8 + LS_VARINT_MAX + LS_APP_MAX + 4 + LS_VARINT_MAX + LS_LEVELS_TEXT_MAX];
  const char *own = k->cfg.own_levels ? k->cfg.own_levels : "";
  size_t own_len = strlen(own);
  if (own_len > LS_LEVELS_TEXT_MAX) own_len = 0; /* cannot happen: 32 rules fit */
  ls_hello h = {2,
                0,
                k->cfg.app,
                strlen(k->cfg.app),
                0,
                LS_CAP_LEVELS | LS_CAP_CENSUS | LS_CAP_FIELDS | LS_CAP_BRACES |
                    (k->cfg.shm ? LS_CAP_SHM : 0u),
                own,
                own_len,
                NULL,
                0};
  ptrdiff_t len = ls_hello_encode(hello, sizeof hello, &h);
  if (len < 0) return -1;
  size_t done = 0;
  k->in_len = 0;
  k->in_bad = 0;
  k->shm_geom_ok = 0;
  int welcomed = 0;
  /* A fresh socket takes the HELLO at once; its answer is waited for. */
  for (int first = 1;; first = 0) {
    const uint64_t now = ls__now_mono_ns();
    if (!first && now >= deadline) {
      if (done < (size_t)len) return -1;
      break; /* unanswered: pending */
    }
    if (!first) {
      struct pollfd pfd = {fd, done < (size_t)len ? POLLOUT : POLLIN, 0};
      if (poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000)) < 0 && errno != EINTR)
        return -1;
    }
    if (done < (size_t)len) {
      ssize_t n = send(fd, hello + done, (size_t)len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) done += (size_t)n;
      if (n < 0 && errno != EAGAIN && errno != EINTR) return -1;
      continue;
    }
    ssize_t n = ls__conn_recv(k, fd);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return -1;
    k->in_len += (size_t)n;
    ls_welcome w = {0, UINT32_MAX, NULL, 0};
    ls_refuse r = {0, NULL, 0};
    ptrdiff_t used = ls__conn_take_in(k, &w, &r);
    if (used < 0) return -1;
    ls__conn_shift_in(k, (size_t)used);
    if (r.reason) return r.version < 2 ? 1 : -1;
    if (w.caps != UINT32_MAX) {
      k->caps = w.caps & (LS_CAP_LEVELS | LS_CAP_CENSUS | LS_CAP_FIELDS | LS_CAP_BRACES |
                          (k->cfg.shm ? LS_CAP_SHM : 0));
      welcomed = 1;
    }
    /* With SHM the region's frame follows WELCOME, waited for like it; its
     * descriptor came with the first bytes, so once the frame is here the
     * descriptor is too, or will not come (MSG_CTRUNC: no room for it). */
    if (welcomed && (!(k->caps & LS_CAP_SHM) || k->shm_geom_ok)) break;
  }
  atomic_fetch_add_explicit(&k->st_frames, 1, memory_order_relaxed); /* the HELLO */
  atomic_fetch_add_explicit(&k->st_bytes, (uint64_t)len, memory_order_relaxed);
  return welcomed ? 2 : 0;
}

void ls__conn_connect(ls__conn *k, uint64_t close_by) {
  int fd = ls__conn_socket(k->cfg.path, k->cfg.user_dir);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) < 0) {
    close(fd);
    fd = -1;
  }
  /* Version 2 first; a daemon of version 1 only says so (REFUSE) and
   * closes, and is asked again with version 1, in a new connection. The
   * answer is waited for, so that the client's levels are the daemon's
   * before its first record, but not past the send timeout (nor the
   * close's deadline): a daemon that starts slowly, with this connection
   * in its listening socket's backlog, answers later (welcome_pending). */
  int version = 2;
  k->caps = 0;
  k->levels_new = 0;
  k->welcome_pending = 0;
  if (fd >= 0) {
    uint64_t deadline = ls__now_mono_ns() + (uint64_t)k->cfg.send_timeout_ms * 1000000u;
    if (close_by && close_by < deadline) deadline = close_by;
    version = ls__conn_hello2(k, fd, deadline);
    if (version == 0) {
      version = 2;
      k->welcome_pending = 1;
    }
    if (version != 2) {
      close(fd);
      fd = version == 1 ? ls__conn_socket(k->cfg.path, k->cfg.user_dir) : -1;
      if (fd >= 0 && fstat(fd, &st) < 0) {
        close(fd);
        fd = -1;
      }
    }
  }
  /* st_attempted is stored after st_link (on success, below), and read
   * before it (ls__no_daemon): a producer that sees the attempt made and no
   * connection has a daemon that is really not there. */
  if (fd < 0) {
    atomic_store(&k->st_attempted, 1);
    if (k->lost_ns) { /* restarting: the next daemon is expected any moment */
      k->next_connect_ns = ls__now_mono_ns() + (uint64_t)k->cfg.reconnect_min_ms * 1000000u;
      return;
    }
    k->next_connect_ns = ls__now_mono_ns() + (uint64_t)k->backoff_ms * 1000000u;
    k->backoff_ms =
        k->backoff_ms * 2 > k->cfg.reconnect_max_ms ? k->cfg.reconnect_max_ms : k->backoff_ms * 2;
    return;
  }
  k->fd = fd;
  k->connected_ns = ls__now_mono_ns(); /* lost_ns stays: see its comment */
  k->fd_dev = (uint64_t)st.st_dev;
  k->fd_ino = (uint64_t)st.st_ino;
  k->backoff_ms = k->cfg.reconnect_min_ms;
  k->interned_n = 0;
  k->census_sent = 0;
  k->census_off = 0;
  atomic_fetch_add_explicit(&k->st_connects, 1, memory_order_relaxed);
  if (k->ever_connected) atomic_fetch_add_explicit(&k->st_reconnects, 1, memory_order_relaxed);
  k->ever_connected = 1;
  atomic_store_explicit(&k->st_link, LS__LINK_UP, memory_order_relaxed);
  atomic_store(&k->st_attempted, 1);
  if (!k->welcome_pending && !(k->caps & LS_CAP_LEVELS)) {
    /* No rules from this daemon: those of an earlier one go. */
    k->levels[0] = 0;
    k->levels_new = 1;
  }
  if (version == 2) return; /* HELLO said (and WELCOME read, unless pending) */
  /* A connection is made at the start of a pass, when out is empty: HELLO
   * always fits. */
  ls_hello h = {1, 0, k->cfg.app, strlen(k->cfg.app), 0, 0, NULL, 0, NULL, 0};
  ptrdiff_t n = ls_hello_encode(k->out + k->out_len, k->out_cap - k->out_len, &h);
  if (n > 0) {
    k->out_len += (size_t)n;
    k->out_frames++;
  }
}
