/* frame_encode.h: bounded encoders of the wire protocol's frames
 * (proto/PROTOCOL.md), the mirror of frame.h's decoders and fed with the same
 * structs. Every encoder takes (buf, cap) and returns the bytes it wrote
 * (> 0), -ENOBUFS when they do not fit (nothing useful is left in buf then),
 * or -EINVAL for a value its decoder would refuse, so whatever it writes
 * decodes. Header-only C11, usable from C++; the client, logsinkd and logctl
 * all encode through it (tests/proto/wire_encoder.h stays independent on
 * purpose: it checks this codec against the spec). */
#ifndef LOGSINK_PROTO_FRAME_ENCODE_H
#define LOGSINK_PROTO_FRAME_ENCODE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "logsink/proto/codec.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- building blocks ------------------------------------------------------ */

/* Appends a varint. Returns its bytes or -ENOBUFS. */
static inline ptrdiff_t ls_varint_encode(uint8_t *buf, size_t cap, uint64_t v) {
  if (cap < ls_varint_len(v)) return -ENOBUFS;
  return (ptrdiff_t)ls_put_varint(buf, v);
}

/* Appends `str := varint len | bytes`. Returns its bytes or -ENOBUFS. */
static inline ptrdiff_t ls_str_encode(uint8_t *buf, size_t cap, const char *s, size_t n) {
  size_t k = ls_varint_len(n);
  if (cap < k || cap - k < n) return -ENOBUFS;
  ls_put_varint(buf, n);
  if (n) memcpy(buf + k, s, n);
  return (ptrdiff_t)(k + n);
}

/* Starts a frame of `type` at buf: writes the header with its length left
 * open for ls_frame_close. Returns LS_FRAME_HDR or -ENOBUFS. */
static inline ptrdiff_t ls_frame_open(uint8_t *buf, size_t cap, uint8_t type) {
  if (cap < LS_FRAME_HDR) return -ENOBUFS;
  buf[4] = type;
  return LS_FRAME_HDR;
}

/* Closes the frame opened at `frame` whose payload ends at `end` (the bytes
 * in between were written by the encoders below). Returns the frame's total
 * size, or -E2BIG when it exceeds the protocol's LS_FRAME_MAX. */
static inline ptrdiff_t ls_frame_close(uint8_t *frame, const uint8_t *end) {
  size_t total = (size_t)(end - frame);
  if (total < LS_FRAME_HDR) return -EINVAL;
  if (total - 4 > LS_FRAME_MAX) return -E2BIG;
  ls_put_u32(frame, (uint32_t)(total - 4));
  return (ptrdiff_t)total;
}

/* Appends the result of one encoder step to a frame under construction:
 * `at` is the write offset, `rc` what the step returned. Returns 0 or rc. */
static inline int ls__enc_step(size_t *at, ptrdiff_t rc) {
  if (rc < 0) return (int)rc;
  *at += (size_t)rc;
  return 0;
}

/* Opens a frame of `type` whose payload starts with the varint v (RECORDS'
 * tid, STATS' count). Returns the bytes written or -ENOBUFS. */
static inline ptrdiff_t ls__frame_open_varint(uint8_t *buf, size_t cap, uint8_t type, uint64_t v) {
  size_t at = 0;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, type)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, v)) < 0)
    return -ENOBUFS;
  return (ptrdiff_t)at;
}

/* ---- HELLO: u32 version | u32 flags | str app [| u32 pid] [| fields]
 *             [version 2: | u32 caps | str levels] ------------------------
 * With LS_HELLO_FIELDS, h->fields holds the list's bytes as on the wire
 * (ls_hello_fields_shape must take all of them); without it they are not
 * read. */
static inline ptrdiff_t ls_hello_encode(uint8_t *buf, size_t cap, const ls_hello *h) {
  size_t at = 0;
  const int relay = (h->flags & LS_HELLO_RELAY) != 0;
  if (!ls_hello_flags_valid(h->flags) || h->app_len > LS_APP_MAX || (relay && h->pid == 0) ||
      h->version < LS_PROTO_VERSION_MIN || h->version > LS_PROTO_VERSION ||
      (h->version == 1 && (h->caps || h->levels_len)) || h->levels_len > LS_LEVELS_TEXT_MAX)
    return -EINVAL;
  const int fields = (h->flags & LS_HELLO_FIELDS) != 0;
  if (fields && ls_hello_fields_shape(h->fields, h->fields_len) != (ptrdiff_t)h->fields_len)
    return -EINVAL;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_HELLO)) < 0 || cap - at < 8) return -ENOBUFS;
  ls_put_u32(buf + at, h->version);
  ls_put_u32(buf + at + 4, h->flags);
  at += 8;
  if (ls__enc_step(&at, ls_str_encode(buf + at, cap - at, h->app, h->app_len)) < 0) return -ENOBUFS;
  if (relay) {
    if (cap - at < 4) return -ENOBUFS;
    ls_put_u32(buf + at, h->pid);
    at += 4;
  }
  if (fields) {
    if (cap - at < h->fields_len) return -ENOBUFS;
    memcpy(buf + at, h->fields, h->fields_len);
    at += h->fields_len;
  }
  if (h->version >= 2) {
    if (cap - at < 4) return -ENOBUFS;
    ls_put_u32(buf + at, h->caps);
    at += 4;
    if (ls__enc_step(&at, ls_str_encode(buf + at, cap - at, h->levels, h->levels_len)) < 0)
      return -ENOBUFS;
  }
  return ls_frame_close(buf, buf + at);
}

/* ---- INTERN: varint site | u8 level | varint line | str fmt | str file ---- */
static inline ptrdiff_t ls_intern_encode(uint8_t *buf, size_t cap, const ls_intern *in) {
  size_t at = 0;
  if (in->site == 0 || in->site > LS_SITE_MAX || in->level > LS_LEVEL_MAX ||
      in->fmt_len > LS_INTERN_MAX_FMT || in->file_len > LS_INTERN_MAX_FILE)
    return -EINVAL;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_INTERN)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, in->site)) < 0 || at == cap)
    return -ENOBUFS;
  buf[at++] = (uint8_t)(in->level | (in->fields ? LS_SITE_FIELDS : 0u));
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, in->line)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, in->fmt, in->fmt_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, in->file, in->file_len)) < 0)
    return -ENOBUFS;
  return ls_frame_close(buf, buf + at);
}

/* ---- RECORDS: varint tid | record* --------------------------------------- */

/* Opens a RECORDS frame for thread tid; append records with ls_record_encode
 * and finish with ls_frame_close. Returns the bytes written or -ENOBUFS. */
static inline ptrdiff_t ls_records_open(uint8_t *buf, size_t cap, uint64_t tid) {
  return ls__frame_open_varint(buf, cap, LS_F_RECORDS, tid);
}

/* Worst-case bytes of a record with args_len bytes of arguments. */
#define LS_RECORD_MAX(args_len) (3u * LS_VARINT_MAX + (args_len))

/* Appends one record: r->site, r->truncated (0: not cut), r->ts_ns and the
 * already-encoded arguments [r->args, r->args + r->args_len). *prev_ts is the
 * previous record's timestamp in this frame (0 for the first) and is
 * advanced. Returns the bytes written, -ENOBUFS or -EINVAL (site range). */
static inline ptrdiff_t ls_record_encode(uint8_t *buf, size_t cap, const ls_record *r,
                                         uint64_t *prev_ts) {
  size_t at = 0;
  if (r->site == 0 || r->site > LS_SITE_MAX) return -EINVAL;
  uint64_t head = ((uint64_t)r->site << 1) | (r->truncated ? 1u : 0u);
  if (ls__enc_step(&at, ls_varint_encode(buf, cap, head)) < 0) return -ENOBUFS;
  if (r->truncated && ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->truncated)) < 0)
    return -ENOBUFS;
  /* the delta wraps like the decoder's running sum */
  uint64_t delta = ls_zigzag((int64_t)(r->ts_ns - *prev_ts));
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, delta)) < 0 || cap - at < r->args_len)
    return -ENOBUFS;
  if (r->args_len) memcpy(buf + at, r->args, r->args_len);
  *prev_ts = r->ts_ns;
  return (ptrdiff_t)(at + r->args_len);
}

/* ---- DROPPED: varint count | varint since_ns | varint now_ns -------------- */
static inline ptrdiff_t ls_dropped_encode(uint8_t *buf, size_t cap, const ls_dropped *d) {
  size_t at = 0;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_DROPPED)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, d->count)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, d->since_ns)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, d->now_ns)) < 0)
    return -ENOBUFS;
  return ls_frame_close(buf, buf + at);
}

/* ---- STATS_REQ: empty ---------------------------------------------------- */
static inline ptrdiff_t ls_stats_req_encode(uint8_t *buf, size_t cap) {
  if (ls_frame_open(buf, cap, LS_F_STATS_REQ) < 0) return -ENOBUFS;
  return ls_frame_close(buf, buf + LS_FRAME_HDR);
}

/* ---- REFUSE: u32 highest version | str reason ---------------------------- */
static inline ptrdiff_t ls_refuse_encode(uint8_t *buf, size_t cap, const ls_refuse *r) {
  size_t at = 0;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_REFUSE)) < 0 || cap - at < 4) return -ENOBUFS;
  ls_put_u32(buf + at, r->version);
  at += 4;
  if (ls__enc_step(&at, ls_str_encode(buf + at, cap - at, r->reason, r->reason_len)) < 0)
    return -ENOBUFS;
  return ls_frame_close(buf, buf + at);
}

/* ---- STATS: varint n | n * (str name | varint value) --------------------- */

/* Worst-case bytes of one STATS entry. */
#define LS_STATSFRAME_ENTRY_MAX (1u + LS_STATS_NAME_MAX + LS_VARINT_MAX)

/* Opens a STATS frame that will carry n counters; append each with
 * ls_statsframe_add and finish with ls_frame_close. */
static inline ptrdiff_t ls_statsframe_open(uint8_t *buf, size_t cap, uint64_t n) {
  return ls__frame_open_varint(buf, cap, LS_F_STATS, n);
}

/* Appends one counter. Returns the bytes written, -ENOBUFS, or -EINVAL for a
 * name longer than LS_STATS_NAME_MAX. */
static inline ptrdiff_t ls_statsframe_add(uint8_t *buf, size_t cap, const char *name,
                                          size_t name_len, uint64_t value) {
  size_t at = 0;
  if (name_len > LS_STATS_NAME_MAX) return -EINVAL;
  if (ls__enc_step(&at, ls_str_encode(buf, cap, name, name_len)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, value)) < 0)
    return -ENOBUFS;
  return (ptrdiff_t)at;
}

/* ---- RING_REQ: empty ------------------------------------------------------ */
static inline ptrdiff_t ls_ring_req_encode(uint8_t *buf, size_t cap) {
  if (ls_frame_open(buf, cap, LS_F_RING_REQ) < 0) return -ENOBUFS;
  return ls_frame_close(buf, buf + LS_FRAME_HDR);
}

/* ---- RING: u8[16] ring_id | varint dev | varint ino | str path ----------- */
/* Worst-case bytes of a RING frame. */
#define LS_RING_FRAME_MAX (LS_FRAME_HDR + LS_RING_ID_LEN + 3u * LS_VARINT_MAX + LS_RING_PATH_MAX)

/* -EINVAL for an empty path, one longer than LS_RING_PATH_MAX or one with a
 * NUL byte. */
static inline ptrdiff_t ls_ring_encode(uint8_t *buf, size_t cap, const ls_ring *r) {
  size_t at = 0;
  if (r->path_len == 0 || r->path_len > LS_RING_PATH_MAX || memchr(r->path, 0, r->path_len))
    return -EINVAL;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_RING)) < 0 || cap - at < LS_RING_ID_LEN)
    return -ENOBUFS;
  memcpy(buf + at, r->ring_id, LS_RING_ID_LEN);
  at += LS_RING_ID_LEN;
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->dev)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->ino)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, r->path, r->path_len)) < 0)
    return -ENOBUFS;
  return ls_frame_close(buf, buf + at);
}

/* ---- WELCOME: u32 version | u32 caps | str levels ------------------------ */
static inline ptrdiff_t ls_welcome_encode(uint8_t *buf, size_t cap, const ls_welcome *w) {
  size_t at = 0;
  if (w->levels_len > LS_LEVELS_TEXT_MAX) return -EINVAL;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_WELCOME)) < 0 || cap - at < 8) return -ENOBUFS;
  ls_put_u32(buf + at, w->version);
  ls_put_u32(buf + at + 4, w->caps);
  at += 8;
  if (ls__enc_step(&at, ls_str_encode(buf + at, cap - at, w->levels, w->levels_len)) < 0)
    return -ENOBUFS;
  return ls_frame_close(buf, buf + at);
}

/* ---- LEVELS: str levels --------------------------------------------------- */
static inline ptrdiff_t ls_levels_encode(uint8_t *buf, size_t cap, const char *text, size_t n) {
  size_t at = 0;
  if (n > LS_LEVELS_TEXT_MAX) return -EINVAL;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_LEVELS)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, text, n)) < 0)
    return -ENOBUFS;
  return ls_frame_close(buf, buf + at);
}

/* A rule of LEVEL_REQ and LEVEL_ANSWER (frame.h); with `answer`, by_uid and
 * at_ns follow. Returns the bytes written, -ENOBUFS or -EINVAL. */
static inline ptrdiff_t ls_level_sel_encode(uint8_t *buf, size_t cap, const ls_level_sel *s,
                                            int answer) {
  size_t at = 0;
  const uint8_t w = s->which;
  if ((w & ~LS_LSEL_ALL) || s->app_len > LS_APP_MAX || s->unit_len > LS_LEVEL_UNIT_MAX ||
      s->file_len > 255 || s->line > LS_LEVEL_LINE_MAX || s->level < -1 || s->level > 7 ||
      !(w & LS_LSEL_APP) != !s->app_len || (!(w & LS_LSEL_PID) && s->pid) ||
      !(w & LS_LSEL_UNIT) != !s->unit_len || (!(w & LS_LSEL_UID) && s->uid) ||
      !(w & LS_LSEL_SITE) != !s->file_len || (!(w & LS_LSEL_SITE) && s->line))
    return -EINVAL;
  if (cap < 1) return -ENOBUFS;
  buf[at++] = w;
  if (ls__enc_step(&at, ls_str_encode(buf + at, cap - at, s->app, s->app_len)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, s->pid)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, s->unit, s->unit_len)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, s->uid)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, s->file, s->file_len)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, s->line)) < 0 || at == cap)
    return -ENOBUFS;
  buf[at++] = s->level < 0 ? (uint8_t)LS_LEVEL_WIRE_OFF : (uint8_t)s->level;
  if (answer && (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, s->by_uid)) < 0 ||
                 ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, s->at_ns)) < 0))
    return -ENOBUFS;
  return (ptrdiff_t)at;
}

/* ---- LEVEL_REQ: u8 op | rule ---------------------------------------------- */
static inline ptrdiff_t ls_level_req_encode(uint8_t *buf, size_t cap, const ls_level_req *r) {
  size_t at = 0;
  if (r->op > LS_LEVEL_OP_RESET || (r->op == LS_LEVEL_OP_LIST && r->rule.which) ||
      (r->op != LS_LEVEL_OP_SET && r->rule.level != 0))
    return -EINVAL;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_LEVEL_REQ)) < 0 || at == cap) return -ENOBUFS;
  buf[at++] = r->op;
  ptrdiff_t n = ls_level_sel_encode(buf + at, cap - at, &r->rule, 0);
  if (n < 0) return n;
  at += (size_t)n;
  return ls_frame_close(buf, buf + at);
}

/* ---- LEVEL_ANSWER: built in steps -----------------------------------------
 * ls_level_answer_open(status, message, nrules), then nrules times
 * ls_level_sel_encode(.., 1), then ls_varint_encode(nclients), then
 * nclients times ls_level_client_encode, then ls_frame_close. */
static inline ptrdiff_t ls_level_answer_open(uint8_t *buf, size_t cap, uint32_t status,
                                             const char *msg, size_t msg_len, uint64_t nrules) {
  size_t at = 0;
  if (msg_len > LS_LEVEL_MESSAGE_MAX || status > 4095) return -EINVAL;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_LEVEL_ANSWER)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, status)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, msg, msg_len)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, nrules)) < 0)
    return -ENOBUFS;
  return (ptrdiff_t)at;
}

static inline ptrdiff_t ls_level_client_encode(uint8_t *buf, size_t cap, const ls_level_client *c) {
  size_t at = 0;
  if (c->app_len > LS_APP_MAX || c->unit_len > LS_LEVEL_UNIT_MAX ||
      c->own_len > LS_LEVELS_TEXT_MAX || c->pushed_len > LS_LEVELS_TEXT_MAX)
    return -EINVAL;
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, c->pid)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, c->uid)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, c->app, c->app_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, c->unit, c->unit_len)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, c->caps)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, c->own, c->own_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, c->pushed, c->pushed_len)) < 0)
    return -ENOBUFS;
  return (ptrdiff_t)at;
}

/* ---- CENSUS and CENSUS_ANSWER: sites --------------------------------------- */
static inline ptrdiff_t ls_census_site_encode(uint8_t *buf, size_t cap, const ls_census_site *s) {
  size_t at = 0;
  if (s->level > LS_LEVEL_MAX || s->fmt_len > LS_INTERN_MAX_FMT || s->file_len > LS_INTERN_MAX_FILE)
    return -EINVAL;
  if (cap < 1) return -ENOBUFS;
  buf[at++] = s->level;
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, s->line)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, s->fmt, s->fmt_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, s->file, s->file_len)) < 0)
    return -ENOBUFS;
  return (ptrdiff_t)at;
}

/* A census client's head (CENSUS_ANSWER), its nsites sites follow. */
static inline ptrdiff_t ls_census_client_encode(uint8_t *buf, size_t cap, const ls_census_client *c,
                                                uint64_t nsites) {
  size_t at = 0;
  if (c->app_len > LS_APP_MAX || c->unit_len > LS_LEVEL_UNIT_MAX ||
      c->own_len > LS_LEVELS_TEXT_MAX || c->pushed_len > LS_LEVELS_TEXT_MAX)
    return -EINVAL;
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, c->pid)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, c->uid)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, c->app, c->app_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, c->unit, c->unit_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, c->own, c->own_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, c->pushed, c->pushed_len)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, nsites)) < 0)
    return -ENOBUFS;
  return (ptrdiff_t)at;
}

#ifdef __cplusplus
}
#endif
#endif
