/* read.h: the frames of a read through the daemon (proto/PROTOCOL.md,
 * "Reading through the daemon"): READ_REQ (client -> daemon) and the
 * answers READ_RECORD, READ_LOST and READ_END, with their bounded decoders
 * (untrusted bytes in, fields pointing into them out, or -EBADMSG) and
 * encoders ((buf, cap) in; bytes written, -ENOBUFS or -EINVAL out), as in
 * frame.h and frame_encode.h. Header-only C11, usable from C++. */
#ifndef LOGSINK_PROTO_READ_H
#define LOGSINK_PROTO_READ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/frame_encode.h"
#include "logsink/proto/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- READ_REQ: u8 from | varint arg | varint flags ------------------------ */
/* Where the read starts (arg's meaning): */
#define LS_READ_OLDEST 0u /* the oldest record present (arg 0) */
#define LS_READ_LAST 1u   /* the last arg records of the ring (of every uid) */
#define LS_READ_TIME 2u   /* the first record that may be at or after arg ns */
#define LS_READ_SEQ 3u    /* record sequence number arg (a cursor's position) */
#define LS_READ_END 4u    /* after the newest record present (arg 0) */
/* flags: */
#define LS_READ_FOLLOW 0x1u /* after READ_END, keep sending new records */
/* The reader takes LS_SITE_FIELDS in READ_RECORD's level byte (a site with
 * fields, fields.h); without it the bit is not sent and such a site reads
 * as a plain format. */
#define LS_READ_FIELDS 0x2u
#define LS_READ_FLAGS (LS_READ_FOLLOW | LS_READ_FIELDS)

typedef struct ls_read_req {
  uint8_t from;
  uint64_t arg;
  uint64_t flags;
} ls_read_req;

/* Returns 0 or -EBADMSG (an unknown `from`, a non-zero arg for OLDEST or
 * END, unknown flags, bytes left over). */
static inline int ls_read_req_decode(const uint8_t *p, size_t len, ls_read_req *r) {
  const uint8_t *end = p + len;
  if (len < 1) return -EBADMSG;
  r->from = *p++;
  if (ls__get_var(&p, end, &r->arg) < 0 || ls__get_var(&p, end, &r->flags) < 0) return -EBADMSG;
  if (r->from > LS_READ_END || (r->flags & ~(uint64_t)LS_READ_FLAGS)) return -EBADMSG;
  if ((r->from == LS_READ_OLDEST || r->from == LS_READ_END) && r->arg != 0) return -EBADMSG;
  return p == end ? 0 : -EBADMSG;
}

static inline ptrdiff_t ls_read_req_encode(uint8_t *buf, size_t cap, const ls_read_req *r) {
  size_t at = 0;
  if (r->from > LS_READ_END || (r->flags & ~(uint64_t)LS_READ_FLAGS) ||
      ((r->from == LS_READ_OLDEST || r->from == LS_READ_END) && r->arg != 0))
    return -EINVAL;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_READ_REQ)) < 0 || at == cap) return -ENOBUFS;
  buf[at++] = r->from;
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->arg)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->flags)) < 0)
    return -ENOBUFS;
  return ls_frame_close(buf, buf + at);
}

/* ---- READ_RECORD ----------------------------------------------------------
 * u8 kind | varint seq | varint block_seq | varint ts_ns | varint tid
 * | varint source_id | varint pid | varint uid | varint gid
 * | str app | str comm | str unit
 * | u8 level [| LS_SITE_FIELDS, only for LS_READ_FIELDS] | u8 site_known
 * | varint site_id | varint line | str fmt | str file
 * | str args | varint truncated | varint dropped_count | varint dropped_since_ns
 * | varint block_opened_ns | u8[16] boot_id | varint block_open_mono_ns
 * | varint block_open_real_ns
 * The fields of a record as the ring stores it (FORMAT.md): kind 0 a
 * record, 1 a DROPPED report. */
#define LS_READ_KIND_RECORD 0u
#define LS_READ_KIND_DROPPED 1u

typedef struct ls_read_record {
  uint8_t kind, level, site_known;
  uint8_t fields; /* 1: the site carries fields (LS_SITE_FIELDS in the level byte) */
  uint64_t seq, block_seq, ts_ns, tid, source_id;
  uint32_t pid, uid, gid, site_id, line;
  const char *app, *comm, *unit, *fmt, *file, *args; /* not NUL-terminated */
  size_t app_len, comm_len, unit_len, fmt_len, file_len, args_len;
  uint64_t truncated, dropped_count, dropped_since_ns;
  uint64_t block_opened_ns, block_open_mono_ns, block_open_real_ns;
  const uint8_t *boot_id; /* LS_BOOT_ID_LEN bytes */
} ls_read_record;

static inline int ls__get_u32var(const uint8_t **pp, const uint8_t *end, uint32_t *v) {
  uint64_t x;
  if (ls__get_var(pp, end, &x) < 0 || x > 0xffffffffu) return -EBADMSG;
  *v = (uint32_t)x;
  return 0;
}

/* Returns 0 or -EBADMSG (short, a kind or level out of range, a 32-bit field
 * above 2^32 - 1, bytes left over). */
static inline int ls_read_record_decode(const uint8_t *p, size_t len, ls_read_record *r) {
  const uint8_t *end = p + len;
  const size_t any = (size_t)-1;
  if (len < 1) return -EBADMSG;
  r->kind = *p++;
  if (r->kind > LS_READ_KIND_DROPPED) return -EBADMSG;
  if (ls__get_var(&p, end, &r->seq) < 0 || ls__get_var(&p, end, &r->block_seq) < 0 ||
      ls__get_var(&p, end, &r->ts_ns) < 0 || ls__get_var(&p, end, &r->tid) < 0 ||
      ls__get_var(&p, end, &r->source_id) < 0 || ls__get_u32var(&p, end, &r->pid) < 0 ||
      ls__get_u32var(&p, end, &r->uid) < 0 || ls__get_u32var(&p, end, &r->gid) < 0 ||
      ls__get_str(&p, end, any, &r->app, &r->app_len) < 0 ||
      ls__get_str(&p, end, any, &r->comm, &r->comm_len) < 0 ||
      ls__get_str(&p, end, any, &r->unit, &r->unit_len) < 0 || end - p < 2)
    return -EBADMSG;
  if (*p & ~(unsigned)(LS_SITE_LEVEL_MASK | LS_SITE_FIELDS)) return -EBADMSG;
  r->level = *p & LS_SITE_LEVEL_MASK;
  r->fields = (*p++ & LS_SITE_FIELDS) != 0;
  r->site_known = *p++;
  if (r->site_known > 1) return -EBADMSG;
  if (ls__get_u32var(&p, end, &r->site_id) < 0 || ls__get_u32var(&p, end, &r->line) < 0 ||
      ls__get_str(&p, end, any, &r->fmt, &r->fmt_len) < 0 ||
      ls__get_str(&p, end, any, &r->file, &r->file_len) < 0 ||
      ls__get_str(&p, end, any, &r->args, &r->args_len) < 0 ||
      ls__get_var(&p, end, &r->truncated) < 0 || ls__get_var(&p, end, &r->dropped_count) < 0 ||
      ls__get_var(&p, end, &r->dropped_since_ns) < 0 ||
      ls__get_var(&p, end, &r->block_opened_ns) < 0 || end - p < (ptrdiff_t)LS_BOOT_ID_LEN)
    return -EBADMSG;
  r->boot_id = p;
  p += LS_BOOT_ID_LEN;
  if (ls__get_var(&p, end, &r->block_open_mono_ns) < 0 ||
      ls__get_var(&p, end, &r->block_open_real_ns) < 0)
    return -EBADMSG;
  return p == end ? 0 : -EBADMSG;
}

/* Worst-case bytes of a READ_RECORD frame for r's strings. */
static inline size_t ls_read_record_max(const ls_read_record *r) {
  return LS_FRAME_HDR + 3 + LS_BOOT_ID_LEN + 24u * LS_VARINT_MAX + r->app_len + r->comm_len +
         r->unit_len + r->fmt_len + r->file_len + r->args_len;
}

static inline ptrdiff_t ls_read_record_encode(uint8_t *buf, size_t cap, const ls_read_record *r) {
  size_t at = 0;
  if (r->kind > LS_READ_KIND_DROPPED || r->level > LS_LEVEL_MAX || r->site_known > 1)
    return -EINVAL;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_READ_RECORD)) < 0 || at == cap)
    return -ENOBUFS;
  buf[at++] = r->kind;
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->seq)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->block_seq)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->ts_ns)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->tid)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->source_id)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->pid)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->uid)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->gid)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, r->app, r->app_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, r->comm, r->comm_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, r->unit, r->unit_len)) < 0 ||
      cap - at < 2)
    return -ENOBUFS;
  buf[at++] = (uint8_t)(r->level | (r->fields ? LS_SITE_FIELDS : 0u));
  buf[at++] = r->site_known;
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->site_id)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->line)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, r->fmt, r->fmt_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, r->file, r->file_len)) < 0 ||
      ls__enc_step(&at, ls_str_encode(buf + at, cap - at, r->args, r->args_len)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->truncated)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->dropped_count)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->dropped_since_ns)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->block_opened_ns)) < 0 ||
      cap - at < LS_BOOT_ID_LEN)
    return -ENOBUFS;
  memcpy(buf + at, r->boot_id, LS_BOOT_ID_LEN);
  at += LS_BOOT_ID_LEN;
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->block_open_mono_ns)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, r->block_open_real_ns)) < 0)
    return -ENOBUFS;
  return ls_frame_close(buf, buf + at);
}

/* ---- READ_LOST: varint n -------------------------------------------------- */
static inline int ls_read_lost_decode(const uint8_t *p, size_t len, uint64_t *n) {
  const uint8_t *end = p + len;
  if (ls__get_var(&p, end, n) < 0 || *n == 0) return -EBADMSG;
  return p == end ? 0 : -EBADMSG;
}

static inline ptrdiff_t ls_read_lost_encode(uint8_t *buf, size_t cap, uint64_t n) {
  ptrdiff_t at;
  if (n == 0) return -EINVAL;
  at = ls__frame_open_varint(buf, cap, LS_F_READ_LOST, n);
  return at < 0 ? at : ls_frame_close(buf, buf + at);
}

/* ---- READ_END: u8[16] ring_id | varint examined | varint next_seq --------- */
typedef struct ls_read_end {
  const uint8_t *ring_id; /* LS_RING_ID_LEN bytes */
  uint64_t examined;      /* records of every uid the read passed over */
  uint64_t next_seq;      /* the sequence number the read examines next */
} ls_read_end;

static inline int ls_read_end_decode(const uint8_t *p, size_t len, ls_read_end *e) {
  const uint8_t *end = p + len;
  if (len < LS_RING_ID_LEN) return -EBADMSG;
  e->ring_id = p;
  p += LS_RING_ID_LEN;
  if (ls__get_var(&p, end, &e->examined) < 0 || ls__get_var(&p, end, &e->next_seq) < 0)
    return -EBADMSG;
  return p == end ? 0 : -EBADMSG;
}

static inline ptrdiff_t ls_read_end_encode(uint8_t *buf, size_t cap, const ls_read_end *e) {
  size_t at = 0;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_READ_END)) < 0 || cap - at < LS_RING_ID_LEN)
    return -ENOBUFS;
  memcpy(buf + at, e->ring_id, LS_RING_ID_LEN);
  at += LS_RING_ID_LEN;
  if (ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, e->examined)) < 0 ||
      ls__enc_step(&at, ls_varint_encode(buf + at, cap - at, e->next_seq)) < 0)
    return -ENOBUFS;
  return ls_frame_close(buf, buf + at);
}

#ifdef __cplusplus
}
#endif
#endif
