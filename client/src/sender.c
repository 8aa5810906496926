/* sender.c: the client's background thread. Each pass it (re)connects when
 * due, reports drops (DROPPED), interns call sites new to the connection
 * (INTERN), turns the staged records of every thread into RECORDS frames and
 * writes them with one send() per batch (conn.c). It wakes on a producer's
 * batch-full or flush-level signal, on ls_flush/ls_close, and every flush
 * interval. */
#define _GNU_SOURCE
#include "sender.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "logsink/proto/braces.h"
#include "logsink/proto/frame_encode.h"
#include "shm.h"
#include "site.h"

/* The longest the sender sleeps while a daemon may push levels: it reads
 * them between passes (the socket is not watched while it sleeps). */
#define LS__LEVELS_POLL_MS 50u
#define LS__FRAME_LIMIT (64u << 10) /* RECORDS frames stay below this (daemon max 256 KiB) */
#define LS__OUT_FLUSH (192u << 10)  /* send once the buffer holds this much */
/* Largest INTERN frame: fmt (4096) and file (1024) plus the varints. */
#define LS__INTERN_MAX (LS_FRAME_HDR + 4096u + 1024u + 5u * LS_VARINT_MAX)

static int ls__send(ls_client *c) {
  return ls__conn_send(&c->conn, atomic_load(&c->close_deadline_ns));
}

/* Appends what an encoder wrote at the end of out. The callers reserve the
 * worst case first, so a failure would only lose this frame. */
static int ls__put(ls__conn *k, ptrdiff_t n) {
  if (n < 0) return 0;
  k->out_len += (size_t)n;
  return 1;
}

/* Records dropped so far, from every source. Caller holds c->mu. */
static uint64_t ls__dropped_total(ls_client *c) {
  uint64_t n = c->conn.dropped_sender + c->conn.dropped_gone +
               atomic_load_explicit(&c->dropped_noring, memory_order_relaxed) +
               atomic_load_explicit(&c->dropped_reentered, memory_order_relaxed);
  for (ls__ring *r = c->rings; r; r = r->next)
    n += atomic_load_explicit(&r->dropped, memory_order_relaxed);
  return n;
}

/* The printf format a daemon without LS_CAP_BRACES is sent for the brace
 * format fmt (valid: the site was built from it): its text with every '%'
 * doubled, cut on a character boundary so that the rest fits, then " %conv"
 * per argument, then its field list as it is. Returns the bytes written. */
/* The printf conversion a daemon without LS_CAP_BRACES is sent for a
 * brace format's type letter (PROTOCOL.md, "Brace formats"): at most
 * LS__BRACE_CONV_MAX bytes, the space before it included. */
#define LS__BRACE_CONV_MAX 5u
static const char *ls__brace_conv(char t) {
  switch (t) {
    case 'i':
      return " %lld";
    case 'u':
    case 'b':
      return " %llu";
    case 'c':
      return " %c";
    case 'f':
    case 'F':
      return " %g";
    case 's':
      return " %s";
    default:
      return " %p";
  }
}

/* The printf format a daemon without LS_CAP_BRACES is sent for the brace
 * format fmt (valid: the site was built from it): its text with every '%'
 * doubled, cut on a character boundary so that the rest fits `cap`, then
 * one conversion per argument, then its field list as it is. Returns the
 * bytes written. */
static size_t ls__braces_as_printf(const char *fmt, size_t len, char *out, size_t cap) {
  ls_braces b;
  ls_braces_split(fmt, len, &b);
  const size_t tail = len - b.text - b.text_len; /* the field list */
  size_t convs = 0;
  for (size_t i = 0; i < b.ntypes; i++) convs += strlen(ls__brace_conv(fmt[b.types + i]));
  /* ls__prog_build refused a brace format longer than LS_INTERN_MAX_FMT -
   * LS__BRACE_CONV_MAX per argument: the conversions and the field list
   * always fit (checked again here). */
  if (convs + tail > cap) return 0;
  const size_t room = cap - convs - tail;
  size_t o = 0, i = 0;
  for (; i < b.text_len; i++) {
    const char ch = fmt[b.text + i];
    if (o + (ch == '%' ? 2 : 1) > room) break;
    out[o++] = ch;
    if (ch == '%') out[o++] = '%';
  }
  if (i < b.text_len && ((unsigned char)fmt[b.text + i] & 0xc0) == 0x80) {
    /* cut inside a character: drop the bytes of it that were copied */
    while (o > 0 && ((unsigned char)out[o - 1] & 0xc0) == 0x80) o--;
    if (o > 0) o--;
  }
  for (size_t k = 0; k < b.ntypes; k++) {
    const char *conv = ls__brace_conv(fmt[b.types + k]);
    const size_t n = strlen(conv);
    memcpy(out + o, conv, n);
    o += n;
  }
  memcpy(out + o, fmt + b.text + b.text_len, tail);
  return o + tail;
}

/* ls__intern_frame's rare case: the format rewritten for a daemon that
 * does not take brace formats or fields, in a buffer of its own (not on
 * the stack of every site's first call). */
static __attribute__((noinline)) ptrdiff_t ls__intern_frame_rewritten(const ls__conn *k,
                                                                      const ls__prog *p,
                                                                      ls_intern *in, uint8_t *buf,
                                                                      size_t cap) {
  char fmt[LS_INTERN_MAX_FMT];
  /* A brace format goes as it is to a daemon that takes them; to another,
   * as a printf format of the same signature: its text ('%' doubled, cut to
   * fit) and one conversion per argument ("took {:.3f}s for {} %g %s"): the
   * values are kept (PROTOCOL.md, "Brace formats"). */
  if (p->braces && !(k->caps & LS_CAP_BRACES)) {
    in->fmt_len = ls__braces_as_printf(in->fmt, in->fmt_len, fmt, sizeof fmt);
    in->fmt = fmt;
  }
  /* Fields go as fields to a daemon that takes them; to another, the field
   * list becomes the end of the message ("disk full user=alice"): the
   * values are kept, as text (PROTOCOL.md, "Fields"). */
  if (p->fields && (k->caps & LS_CAP_FIELDS)) {
    in->fields = 1;
  } else if (p->fields && in->fmt_len <= sizeof fmt) {
    if (in->fmt != fmt) memcpy(fmt, in->fmt, in->fmt_len);
    for (size_t i = 0; i < in->fmt_len; i++)
      if (fmt[i] == LS_FIELDS_SEP) fmt[i] = ' ';
    in->fmt = fmt;
  }
  return ls_intern_encode(buf, cap, in);
}

/* Site s's INTERN frame as the daemon of k takes it, at buf. */
static ptrdiff_t ls__intern_frame(const ls__conn *k, const ls_site *s, uint8_t *buf, size_t cap) {
  const ls__prog *p = s->ls__prog;
  const char *file = s->file ? s->file : "";
  size_t file_len = strlen(file);
  if (file_len > LS_INTERN_MAX_FILE) { /* keep the end of a long path, whole characters */
    const size_t start = ls_utf8_tail((const uint8_t *)file, file_len, LS_INTERN_MAX_FILE);
    file += start;
    file_len -= start;
  }
  ls_intern in = {p->id,
                  (uint8_t)s->level,
                  s->line > 0 ? (uint32_t)s->line : 0,
                  s->fmt,
                  strlen(s->fmt),
                  file,
                  file_len,
                  0};
  if ((p->braces && !(k->caps & LS_CAP_BRACES)) || (p->fields && !(k->caps & LS_CAP_FIELDS)))
    return ls__intern_frame_rewritten(k, p, &in, buf, cap);
  in.fields = p->fields ? 1 : 0;
  return ls_intern_encode(buf, cap, &in);
}

static void ls__put_intern(ls__conn *k, const ls_site *s) {
  if (ls__put(k, ls__intern_frame(k, s, k->out + k->out_len, k->out_cap - k->out_len))) {
    k->out_frames++;
    k->out_interns++;
  }
}

void ls__sender_log_site(ls_client *c, const ls_site *s) {
  size_t room;
  uint8_t *at = ls__shm_log_end(c->shm, &room);
  const ptrdiff_t n = ls__intern_frame(&c->conn, s, at, room);
  ls__shm_log_commit(c->shm, n > 0 ? (size_t)n : 0);
}

static void ls__put_dropped(ls__conn *k, uint64_t count, uint64_t now) {
  if (!k->drop_since_ns) k->drop_since_ns = now;
  ls_dropped d = {count, k->drop_since_ns, now};
  size_t start = k->out_len;
  if (ls__put(k, ls_dropped_encode(k->out + k->out_len, k->out_cap - k->out_len, &d))) {
    ls__conn_mark(k, start, 0, 1);
    k->out_frames++;
    k->out_dropped_report = count;
  }
}

/* The bytes of one census site in a CENSUS frame (its file cut as INTERN
 * cuts it), or 0 for a site the daemon would refuse (never sent). */
static size_t ls__census_size(const ls_site *s, const char **file, size_t *file_len) {
  if (!s->fmt || s->level < 0 || s->level > 7 || s->line < 0) return 0;
  const size_t fmt_len = strlen(s->fmt);
  if (fmt_len > LS_INTERN_MAX_FMT) return 0;
  *file = s->file ? s->file : "";
  *file_len = strlen(*file);
  if (*file_len > LS_INTERN_MAX_FILE) {
    const size_t start = ls_utf8_tail((const uint8_t *)*file, *file_len, LS_INTERN_MAX_FILE);
    *file += start;
    *file_len -= start;
  }
  return 1 + ls_varint_len((uint64_t)s->line) + ls_varint_len(fmt_len) + fmt_len +
         ls_varint_len(*file_len) + *file_len;
}

/* The census (PROTOCOL.md, "The census of call sites"): every call site
 * compiled into the process's modules registered since the last pass, in
 * CENSUS frames of at most LS__FRAME_LIMIT bytes, sent before this pass's
 * records. Sites whose level, format or file the daemon would refuse are
 * left out. */
static void ls__put_census(ls_client *c) {
  ls__conn *k = &c->conn;
  while (k->census_sent < ls__census_count()) {
    ls__census_range r;
    /* Held while its sites are read: a library unloaded meanwhile waits. */
    if (!ls__census_hold(k->census_sent, &r)) { /* unloaded */
      k->census_sent++;
      k->census_off = 0;
      continue;
    }
    ls_site *const *p = r.start + k->census_off;
    if (p >= r.stop) {
      ls__census_release();
      k->census_sent++;
      k->census_off = 0;
      continue;
    }
    /* One frame: as many sites as fit LS__FRAME_LIMIT, counted first. */
    size_t bytes = 0, count = 0;
    ls_site *const *q = p;
    for (; q < r.stop; q++) {
      const char *file;
      size_t file_len;
      const size_t sz = *q ? ls__census_size(*q, &file, &file_len) : 0;
      if (bytes + sz > LS__FRAME_LIMIT - LS_FRAME_HDR - LS_VARINT_MAX) break;
      bytes += sz;
      count += sz != 0;
    }
    if (q == p) q++; /* cannot happen: a site is at most ~5 KiB */
    if (k->out_len + LS_FRAME_HDR + LS_VARINT_MAX + bytes > k->out_cap) {
      ls__census_release();
      if (ls__send(c) < 0 || k->fd < 0) return;
      continue;
    }
    if (count) {
      const size_t start = k->out_len;
      size_t at = start + LS_FRAME_HDR;
      k->out[start + 4] = LS_F_CENSUS;
      at += ls_put_varint(k->out + at, count);
      for (ls_site *const *s = p; s < q; s++) {
        const char *file;
        size_t file_len;
        if (!*s || !ls__census_size(*s, &file, &file_len)) continue;
        const ls_census_site w = {(uint8_t)(*s)->level,
                                  (uint32_t)(*s)->line,
                                  (*s)->fmt,
                                  strlen((*s)->fmt),
                                  file,
                                  file_len};
        at += (size_t)ls_census_site_encode(k->out + at, k->out_cap - at, &w);
      }
      k->out_len = at;
      (void)ls_frame_close(k->out + start, k->out + at);
      ls__conn_mark(k, start, 0, 0);
      k->out_frames++;
    }
    k->census_off = (size_t)(q - r.start);
    ls__census_release();
  }
}

/* Closes the RECORDS frame opened at `frame` holding `records` records;
 * with `at` (a ring in the connection's region) the RECORDS_AT frame of r
 * whose records end at slot position `end`: r's space up to there is
 * freed once the frame was sent (ls__sender_ring_sent). */
static void ls__records_close(ls__conn *k, size_t frame, uint64_t records, ls__ring *at,
                              uint64_t end) {
  if (at) ls_records_at_set_end(k->out + frame, end);
  (void)ls_frame_close(k->out + frame, k->out + k->out_len);
  if (at)
    ls__conn_mark_at(k, frame, records, at, end);
  else
    ls__conn_mark(k, frame, records, 0);
}

/* Frees r's space up to `end`, and wakes producers waiting for space.
 *
 * Dekker pairing with the producer's ls__ring_wait (log.c): this thread
 * stores tail, then loads space_waiters; a blocked producer increments
 * space_waiters, then loads tail. Both sides are seq_cst, so at least one
 * sees the other's store: either the producer sees the freed space, or
 * this thread sees the waiter and bumps space_seq. The producer read
 * space_seq before it re-checked tail, so a bump between its check and its
 * futex_wait makes the wait return at once: no lost wake-up. With weaker
 * orders both loads could miss and the producer would sleep until its
 * timeout with space available. */
static void ls__ring_free_to(ls_client *c, ls__ring *r, uint64_t end) {
  atomic_store_explicit(&r->tail, end, memory_order_seq_cst);
  if (atomic_load(&c->space_waiters)) {
    atomic_fetch_add(&c->space_seq, 1);
    ls__futex_wake(&c->space_seq);
  }
}

/* conn.c's on_sent: a RECORDS_AT frame of ring `tag` was sent (or given
 * up): its slot's bytes up to `end` may be written again. */
void ls__sender_ring_sent(void *arg, void *tag, uint64_t end) { ls__ring_free_to(arg, tag, end); }

/* Arguments longer than this cannot come from the producer (max_record_bytes
 * is at most 64 KiB); the bound keeps a record's worst case inside out. */
#define LS__ARGS_LIMIT (LS__OUT_FLUSH / 2)

/* The ring's bytes are not trusted: they are written by the application's
 * threads, which a bug or a misused signal handler can leave half-written.
 * A head, a padding mark or a length that cannot be right discards what the
 * ring holds up to its head now, counted as dropped: logged - consumed
 * records. The producer stores logged before it publishes head, so this
 * counts every record up to that head; a record published at the same moment
 * may be counted both as dropped and, later, as sent (at most one). */
static uint64_t ls__discard(ls_client *c, ls__ring *r) {
  uint64_t head = atomic_load_explicit(&r->line->head, memory_order_acquire);
  uint64_t logged = atomic_load_explicit(&r->line->logged, memory_order_relaxed);
  c->conn.dropped_sender += logged > r->consumed ? logged - r->consumed : 1;
  c->conn.pass_lost = 1;
  r->consumed = logged;
  return head;
}

/* Converts [tail, head) of r into RECORDS frames (or drops it when there is no
 * connection) and releases the space. Every length read from the ring is
 * checked against the ring before it is used.
 *
 * One function of over 100 lines on purpose: it runs once per record in the
 * sender. Measured with callgrind (200,000 records of the client benchmark's
 * two messages, no drops): split into named steps (taking a record from the
 * ring, making room in the output for it) as always_inline helpers, the
 * sender's ls__pass executed 186.2 instructions per record instead of 168.1
 * (+11%): the compiled loop kept more of its state on the stack (143
 * stack accesses in ls__pass instead of 104). The loop body reads top to
 * bottom: check the record, drop it without a connection, close the frame
 * or send when full, open a frame, encode. */
static void ls__drain(ls_client *c, ls__ring *r, uint64_t head) {
  ls__conn *k = &c->conn;
  uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
  const uint64_t t0 = t;
  const uint8_t *buf = ls__line_data(r->line);
  const uint64_t mask = r->line->mask;
  size_t cap = (size_t)mask + 1;
  /* A ring in a slot of this connection's region: RECORDS_AT frames, and
   * its space is freed only once they were sent (ls__sender_ring_sent), so that
   * what the daemon reads after a kill is still there. */
  ls__ring *at = r->region && r->region == c->shm ? r : NULL;
  size_t frame = SIZE_MAX; /* offset of the open RECORDS frame */
  uint64_t prev_ns = 0, in_frame = 0;
  /* The daemon is restarting: the records wait here for the next one. */
  if (ls__restarting(k)) return;
  if (head - t > cap) { /* also catches head < t */
    t = ls__discard(c, r);
    head = t;
  }
  while (t < head) {
    size_t off = (size_t)(t & mask);
    uint64_t avail = head - t;
    if (off & 7) { /* records are 8-byte aligned: a corrupt head put t here */
      t = ls__discard(c, r);
      break;
    }
    const uint8_t *rec = buf + off;
    const uint64_t t_rec = t;
    uint32_t alen = ls_get_u32(rec);
    if (alen == LS__PAD) {
      if (off == 0 || cap - off > avail) { /* the producer pads only a tail it skips */
        t = ls__discard(c, r);
        break;
      }
      t += cap - off;
      continue;
    }
    /* A record never wraps, so it fits between off and the ring's end. */
    int cut_bit = cap - off >= LS__REC_HDR && (ls_get_u32(rec + 4) & LS__TRUNC_BIT) != 0;
    if (cap - off < LS__REC_HDR || alen > LS__ARGS_LIMIT ||
        ls__rec_size(alen, cut_bit) > (uint64_t)(cap - off) ||
        ls__rec_size(alen, cut_bit) > avail) {
      t = ls__discard(c, r);
      break;
    }
    r->consumed++;
    uint32_t site = ls_get_u32(rec + 4);
    int cut = (site & LS__TRUNC_BIT) != 0;
    ls_record out = {site & ~LS__TRUNC_BIT, cut ? ls_get_u64(rec + LS__REC_HDR + alen) : 0,
                     ls_get_u64(rec + 8), rec + LS__REC_HDR, alen};
    t += ls__rec_size(alen, cut);
    if (k->fd < 0) {
      k->dropped_sender++;
      k->pass_lost = 1;
      continue;
    }
    size_t worst = LS_RECORD_MAX(alen);
    if (frame != SIZE_MAX && k->out_len + worst - frame > LS__FRAME_LIMIT) {
      ls__records_close(k, frame, in_frame, at, t_rec);
      frame = SIZE_MAX;
    }
    if (k->out_len + worst + 4 * LS_VARINT_MAX + LS_FRAME_HDR > LS__OUT_FLUSH) {
      if (frame != SIZE_MAX) ls__records_close(k, frame, in_frame, at, t_rec);
      frame = SIZE_MAX;
      if (ls__send(c) < 0) {
        if (ls__restarting(k)) {
          r->consumed--; /* the daemon is restarting: this record and the rest wait */
          t = t_rec;
          break;
        }
        k->dropped_sender++; /* connection lost: this record is dropped too */
        continue;
      }
    }
    if (frame == SIZE_MAX) {
      frame = k->out_len;
      uint8_t *o = k->out + k->out_len;
      const size_t room = k->out_cap - k->out_len;
      if (!ls__put(k, at ? ls_records_at_open(o, room, (uint64_t)r->slot, r->tid)
                         : ls_records_open(o, room, r->tid))) {
        k->dropped_sender++; /* cannot happen: LS__OUT_FLUSH leaves room */
        frame = SIZE_MAX;
        continue;
      }
      k->out_frames++;
      prev_ns = 0;
      in_frame = 0;
    }
    out.ts_ns = ls__cal_ns(&c->cal, out.ts_ns);
    if (!ls__put(k,
                 ls_record_encode(k->out + k->out_len, k->out_cap - k->out_len, &out, &prev_ns))) {
      k->dropped_sender++; /* a corrupt site id; the reservation makes room */
      k->pass_lost = 1;
      continue;
    }
    k->out_records++;
    in_frame++;
  }
  if (at && k->fd >= 0 && frame == SIZE_MAX && t != t0) {
    /* The daemon's position for the slot follows every byte consumed
     * (pads and discarded bytes too): the last frame ends at t, or an
     * empty one says so. The space is freed once it was sent. */
    const size_t start = k->out_len;
    if (ls__put(
            k, ls_records_at_open(k->out + start, k->out_cap - start, (uint64_t)r->slot, r->tid))) {
      frame = start;
      in_frame = 0;
      k->out_frames++;
    }
  }
  if (frame != SIZE_MAX) ls__records_close(k, frame, in_frame, at && k->fd >= 0 ? at : NULL, t);
  if (!at || k->fd < 0) ls__ring_free_to(c, r, t);
}

/* Takes a snapshot of c's rings and their heads, and frees the drained rings
 * of exited threads. Caller holds c->mu. Returns the snapshot's length. */
static size_t ls__snapshot(ls_client *c) {
  size_t n = 0;
  /* First, before any ring is freed: rings whose thread is gone are done
   * with their successors (ring.h: retire). */
  for (ls__ring *r = c->rings; r; r = r->next) ls__ring_settle(r);
  for (ls__ring **pp = &c->rings, *r; (r = *pp) != NULL;) {
    /* thread_gone first: a head read after it holds every record its
     * thread published before it went (a move publishes, then goes). */
    const int gone = atomic_load_explicit(&r->thread_gone, memory_order_acquire);
    uint64_t head = atomic_load_explicit(&r->line->head, memory_order_acquire);
    if (gone && atomic_load_explicit(&r->tail, memory_order_relaxed) == head) {
      *pp = r->next;
      c->conn.dropped_gone += atomic_load_explicit(&r->dropped, memory_order_relaxed);
      c->conn.logged_gone += atomic_load_explicit(&r->line->logged, memory_order_relaxed);
      c->conn.truncated_gone += atomic_load_explicit(&r->line->truncated, memory_order_relaxed);
      c->ring_total -= (size_t)r->line->mask + 1;
      ls__ring_release(r);
      continue;
    }
    /* A move not taken yet: wake_pos far again (the producer's own store of
     * it, log.c, may have landed after ls__shm_sync's). */
    if (r->successor && !gone) {
      const uint64_t far = UINT64_C(1) << 63;
      if (head - atomic_load_explicit(&r->line->wake_pos, memory_order_relaxed) < far / 2)
        atomic_store_explicit(&r->line->wake_pos, head + far, memory_order_relaxed);
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
  return n;
}

/* Keeps c->shm the region of the connection now: lets go of the one of a
 * connection that ended, maps the one a new connection brought, writes
 * every site registered so far into its log and asks every ring not in it
 * to move (retire). Each step under c->mu, where producers take slots and
 * log sites. */
static void ls__shm_sync(ls_client *c) {
  ls__conn *k = &c->conn;
  const uint64_t conn = atomic_load_explicit(&k->st_connects, memory_order_relaxed);
  if (c->shm && (k->fd < 0 || c->shm_conn != conn)) {
    pthread_mutex_lock(&c->mu);
    ls__shm *m = c->shm;
    c->shm = NULL;
    k->released = NULL;
    pthread_mutex_unlock(&c->mu);
    ls__shm_put(m); /* rings still in its slots keep it mapped */
  }
  if (k->shm_fd < 0) return;
  if (k->fd < 0 || c->shm || !(k->caps & LS_CAP_SHM)) { /* not for this connection */
    close(k->shm_fd);
    k->shm_fd = -1;
    return;
  }
  if (!k->shm_geom_ok) return; /* its frame comes with a later read */
  const int fd = k->shm_fd;
  k->shm_fd = -1;
  ls__shm *m = ls__shm_map(fd, &k->shm_geom);
  if (!m) return; /* staged in the process's own memory, as without it */
  pthread_mutex_lock(&c->mu);
  c->shm = m;
  c->shm_conn = conn;
  k->released = (uint64_t *)(m->base + LS_SHM_RELEASED_OFF);
  for (size_t i = 0; i < c->reg.len; i++) ls__sender_log_site(c, c->reg.v[i]);
  /* Each live thread's ring that is not in this region gets a successor in
   * a free slot, made here (the thread only swaps pointers: its call may
   * be a signal handler's); without a slot or budget it stays where it is. */
  for (ls__ring *r = c->rings; r; r = r->next) {
    if (r->region == m || r->successor || atomic_load(&r->thread_gone) ||
        c->ring_total + m->g.slot_bytes > c->opts.max_buffered_bytes)
      continue;
    int slot;
    uint64_t base;
    ls__line *line = ls__shm_slot_take(m, c->ring_bytes, &slot, &base);
    if (!line) break; /* no slot free: the rest stay */
    ls__ring *s = ls__ring_new(c, r->owner_uid, m->g.slot_bytes, line, m, slot, base, r->tid);
    if (!s) {
      ls__shm_slot_free(m, slot);
      break;
    }
    s->next = r->next; /* right after r: drained after it (ls__pass) */
    r->next = s;
    c->ring_total += m->g.slot_bytes;
    r->successor = s;
    atomic_store_explicit(&r->retire, 1, memory_order_release);
    /* Far from head: the thread's next record takes its batch branch,
     * where it looks at retire (log.c). */
    const uint64_t head = atomic_load_explicit(&r->line->head, memory_order_relaxed);
    atomic_store_explicit(&r->line->wake_pos, head + (UINT64_C(1) << 63), memory_order_relaxed);
  }
  pthread_mutex_unlock(&c->mu);
}

/* One pass over everything buffered now. Returns whether it found records. */
static int ls__pass(ls_client *c, int urgent) {
  ls__conn *k = &c->conn;
  k->pass_lost = 0;
  /* A socket lost to the application is found before this pass encodes
   * anything for it; the pass then reconnects at once. */
  (void)ls__conn_check(k);
  ls__conn_tick(k, ls__now_mono_ns());
  ls__shm_sync(c); /* before a connect changes what the daemon takes */
  if (k->fd < 0 && !k->left_to_region &&
      (urgent || ls__now_mono_ns() >= k->next_connect_ns ||
       !atomic_load_explicit(&c->shm_ready, memory_order_relaxed)))
    ls__conn_connect(k, atomic_load(&c->close_deadline_ns));
  /* Rules the daemon pushed (its WELCOME's at a connect), before the
   * records of this pass are taken. */
  ls__conn_read(k);
  ls__shm_sync(c);
  if (!atomic_load_explicit(&c->shm_ready, memory_order_relaxed)) {
    /* The first attempt is done: threads waiting for their first ring go on. */
    atomic_store_explicit(&c->shm_ready, 1, memory_order_release);
    ls__futex_wake(&c->shm_ready);
  }
  if (k->levels_new) {
    k->levels_new = 0;
    (void)ls__client_push_levels(c, k->levels);
  }
  ls__cal_update(&c->cal);

  pthread_mutex_lock(&c->mu);
  size_t n = ls__snapshot(c);
  if (k->fd >= 0) {
    /* Drops first, so the daemon sees them before later records. */
    uint64_t unreported = ls__dropped_total(c) - atomic_load(&k->st_dropped_reported);
    if (unreported) ls__put_dropped(k, unreported, ls__realtime_ns());
    /* Sites registered since the connection was made (all of them after a
     * reconnect). Registration happened before any record using it was
     * published, so every record of the snapshot has its INTERN before it. */
    for (; k->interned_n < c->reg.len; k->interned_n++) {
      if (k->out_len + LS__INTERN_MAX > k->out_cap) {
        pthread_mutex_unlock(&c->mu);
        (void)ls__send(c);
        pthread_mutex_lock(&c->mu);
        if (k->fd < 0) break;
      }
      ls__put_intern(k, c->reg.v[k->interned_n]);
    }
    if (k->fd >= 0 && (k->caps & LS_CAP_CENSUS)) {
      pthread_mutex_unlock(&c->mu);
      ls__put_census(c);
      pthread_mutex_lock(&c->mu);
    }
  } else if (ls__dropped_total(c) > atomic_load(&k->st_dropped_reported) && !k->drop_since_ns) {
    k->drop_since_ns = ls__realtime_ns();
  }
  pthread_mutex_unlock(&c->mu);
  /* What the previous daemon did not take goes first (its sites are
   * interned above: after a reconnect, all of them). */
  ls__conn_queue_resend(k, atomic_load(&c->close_deadline_ns));

  /* Rings stay alive: only this thread unlinks them, and ls_close joins it.
   * In list order: a successor (ring.h: retire) is listed right after the
   * ring its thread left, whose records go first. */
  int found = 0;
  for (size_t i = 0; i < n; i++) {
    found |= atomic_load_explicit(&c->snap[i].ring->tail, memory_order_relaxed) != c->snap[i].head;
    ls__drain(c, c->snap[i].ring, c->snap[i].head);
  }
  (void)ls__send(c);
  return found;
}

static void *ls__sender_main(void *arg) {
  ls_client *c = arg;
  uint32_t handled = atomic_load(&c->flush_done);
  for (;;) {
    uint32_t seq = atomic_load_explicit(&c->wake_seq, memory_order_acquire);
    uint32_t req = atomic_load(&c->flush_req);
    int stop = atomic_load(&c->stop);
    int urgent = req != handled || stop;
    int found = ls__pass(c, urgent);
    if (urgent) {
      atomic_store(&c->flush_rc, c->conn.fd < 0 ? -ENOTCONN : c->conn.pass_lost ? -EPIPE : 0);
      handled = req;
      atomic_store(&c->flush_done, req);
      ls__futex_wake(&c->flush_done);
    }
    unsigned wait_ms = c->opts.flush_interval_ms;
    if (stop) {
      if (!ls__restarting(&c->conn)) break;
      /* ls_close or exit while the daemon restarts: what waits for it is
       * sent if one accepts before close_timeout_ms, else dropped and
       * counted like any record without a daemon. */
      uint64_t now = ls__now_mono_ns(), by = atomic_load(&c->close_deadline_ns);
      if (by > now) {
        uint64_t ns = (uint64_t)c->opts.reconnect_min_ms * 1000000u;
        ls__futex_wait(&c->wake_seq, seq, by - now < ns ? by - now : ns);
        continue;
      }
      ls__conn_tick(&c->conn, UINT64_MAX); /* also: no new window now */
      (void)ls__pass(c, 1);
      break;
    }
    /* A daemon that pushes levels is heard within LS__LEVELS_POLL_MS. */
    if ((c->conn.caps & LS_CAP_LEVELS) && wait_ms > LS__LEVELS_POLL_MS)
      wait_ms = LS__LEVELS_POLL_MS;
    if (ls__restarting(&c->conn)) {
      /* The daemon closed: try again every reconnect_min_ms. */
      if (c->opts.reconnect_min_ms < wait_ms) wait_ms = c->opts.reconnect_min_ms;
    } else if (c->opts.send_delay_ms) {
      /* send_delay_ms: while records come, pass again soon; after a pass
       * that found none, sleep until the next record wakes us (log.c) or
       * flush_interval_ms. A record published between this pass and the
       * store below is not seen as "the first after a quiet spell": it
       * waits for flush_interval_ms, as every record did before
       * send_delay_ms. */
      int idle = atomic_load_explicit(&c->sender_idle, memory_order_relaxed);
      if (found) {
        wait_ms = c->opts.send_delay_ms;
        if (idle) atomic_store_explicit(&c->sender_idle, 0, memory_order_relaxed);
      } else if (!idle) {
        atomic_store_explicit(&c->sender_idle, 1, memory_order_relaxed);
      }
    }
    ls__futex_wait(&c->wake_seq, seq, (uint64_t)wait_ms * 1000000u);
  }
  ls__conn_drop_kept(&c->conn); /* what no daemon took by now is lost: counted */
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
