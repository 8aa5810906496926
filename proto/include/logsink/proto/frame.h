/* frame.h: pure, bounded decoders of the wire protocol's frames and payloads
 * (proto/PROTOCOL.md). Input is (p, len) of untrusted bytes; output is fields
 * pointing into that input, or a negative errno: -EBADMSG for malformed
 * input, -E2BIG for a frame longer than allowed, -EPROTONOSUPPORT for a HELLO
 * of another protocol version. No allocation, no global state: logsinkd and
 * the fuzz targets call the same functions. Header-only C11, usable from C++. */
#ifndef LOGSINK_PROTO_FRAME_H
#define LOGSINK_PROTO_FRAME_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "logsink/proto/codec.h"
#include "logsink/proto/facility.h" /* LS_LEVEL_MAX */
#include "logsink/proto/fields.h"
#include "logsink/proto/format.h"
#include "logsink/proto/printf.h"
#include "logsink/proto/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LS_INTERN_MAX_FMT LS_ST_MAX_FMT   /* longest INTERN format string */
#define LS_INTERN_MAX_FILE LS_ST_MAX_FILE /* longest INTERN file name */

/* One frame found at the start of a byte stream. */
typedef struct ls_frame {
  uint8_t type;
  const uint8_t *payload; /* points into the input */
  size_t len;             /* payload bytes */
} ls_frame;

/* Looks for a frame at the start of [p, p + avail). max_frame bounds the u32
 * length field (type + payload bytes; values above LS_FRAME_MAX are refused
 * whatever max_frame says). Returns the frame's total size (header included,
 * > 0) and fills *f when it is complete, 0 when more bytes are needed,
 * -EBADMSG when the length is 0, -E2BIG when it exceeds max_frame. The length
 * is judged as soon as its 4 bytes are there, before the rest arrives. */
static inline ptrdiff_t ls_frame_parse(const uint8_t *p, size_t avail, uint32_t max_frame,
                                       ls_frame *f) {
  uint32_t len;
  if (avail < 4) return 0;
  len = ls_get_u32(p);
  if (len == 0) return -EBADMSG;
  if (len > max_frame || len > LS_FRAME_MAX) return -E2BIG;
  if (avail < 4 + (size_t)len) return 0;
  f->type = p[4];
  f->payload = p + LS_FRAME_HDR;
  f->len = (size_t)len - 1;
  return (ptrdiff_t)(4 + (size_t)len);
}

/* Reads `str := varint len | bytes` from [*pp, end), bounded by max. Returns 0
 * and advances *pp, or -EBADMSG. */
static inline int ls__get_str(const uint8_t **pp, const uint8_t *end, size_t max, const char **s,
                              size_t *n) {
  uint64_t v;
  size_t k = ls_get_varint(*pp, end, &v);
  if (!k || v > max || v > (uint64_t)(end - *pp - (ptrdiff_t)k)) return -EBADMSG;
  *s = (const char *)(*pp + k);
  *n = (size_t)v;
  *pp += k + (size_t)v;
  return 0;
}

static inline int ls__get_var(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
  size_t k = ls_get_varint(*pp, end, v);
  if (!k) return -EBADMSG;
  *pp += k;
  return 0;
}

/* ---- HELLO: u32 version | u32 flags | str app [| u32 pid] [| fields] ------ */
/* flags 0: a frame connection. LS_HELLO_TEXT: after the HELLO frame the
 * connection carries lines of text, one record each (PROTOCOL.md, "Text
 * streams"); the other fields say how they are stored. LS_HELLO_RELAY: the
 * stream relays the output of the sender's child `pid` (a u32 after app),
 * which resends an unfinished line after a restart (PROTOCOL.md, "Relayed
 * streams"). LS_HELLO_FIELDS: after app (and pid) comes the stream's field
 * list, `varint n | n x (str name | str value)`, n 1..LS_TEXT_FIELDS_MAX,
 * names 1..LS_FIELD_NAME_MAX bytes, values at most LS_TEXT_FIELD_VALUE_MAX:
 * every line of the stream carries those fields (PROTOCOL.md, "Text
 * streams"). The decoder checks the list's shape; which names the daemon
 * takes is its own check (no '_', no repeat). */
#define LS_HELLO_TEXT 0x1u            /* the rest of the connection is text lines */
#define LS_HELLO_PRIO_PREFIX 0x2u     /* a line's leading "<N>" (0..191) sets its priority */
#define LS_HELLO_CONFIRM 0x4u         /* answer the HELLO at once (STATS "accepted" = 1) */
#define LS_HELLO_RELAY 0x8u           /* relayed output of the child pid that follows app */
#define LS_HELLO_FIELDS 0x10u         /* a field list follows app (and pid) */
#define LS_TEXT_FIELDS_MAX 32u        /* fields in a text stream's list */
#define LS_TEXT_FIELD_NAME_MAX 64u    /* bytes of a name (fields.h's LS_FIELD_NAME_MAX) */
#define LS_TEXT_FIELD_VALUE_MAX 1024u /* bytes of a value */
#define LS_HELLO_LEVEL_SHIFT 8        /* bits 8-10: level of lines without a prefix */
#define LS_HELLO_FACILITY_SHIFT 16    /* bits 16-20: facility (0..23) */
#define LS_HELLO_STREAM_SHIFT 24      /* bits 24-25: 0 text, 1 stdout, 2 stderr */
#define LS_HELLO_STREAM_TEXT 0u
#define LS_HELLO_STREAM_STDOUT 1u
#define LS_HELLO_STREAM_STDERR 2u

static inline uint32_t ls_hello_text_flags(unsigned level, unsigned facility, unsigned stream,
                                           int prio_prefix) {
  return LS_HELLO_TEXT | (prio_prefix ? LS_HELLO_PRIO_PREFIX : 0u) |
         (uint32_t)(level & 7u) << LS_HELLO_LEVEL_SHIFT |
         (uint32_t)(facility & 31u) << LS_HELLO_FACILITY_SHIFT |
         (uint32_t)(stream & 3u) << LS_HELLO_STREAM_SHIFT;
}

/* Whether flags is 0 or a valid text-stream HELLO (no unknown bit, facility
 * at most 23, stream at most 2). */
static inline int ls_hello_flags_valid(uint32_t flags) {
  const uint32_t known = LS_HELLO_TEXT | LS_HELLO_PRIO_PREFIX | LS_HELLO_CONFIRM | LS_HELLO_RELAY |
                         LS_HELLO_FIELDS | 7u << LS_HELLO_LEVEL_SHIFT |
                         31u << LS_HELLO_FACILITY_SHIFT | 3u << LS_HELLO_STREAM_SHIFT;
  if (flags == 0) return 1;
  if (!(flags & LS_HELLO_TEXT) || (flags & ~known)) return 0;
  return (flags >> LS_HELLO_FACILITY_SHIFT & 31u) <= 23u &&
         (flags >> LS_HELLO_STREAM_SHIFT & 3u) <= LS_HELLO_STREAM_STDERR;
}

typedef struct ls_hello {
  uint32_t version;
  uint32_t flags;
  const char *app; /* not NUL-terminated; bounded only by the frame */
  size_t app_len;
  uint32_t pid; /* with LS_HELLO_RELAY: the child whose output this is (not 0); else 0 */
  /* Version 2 only (0 and empty in version 1): the capabilities the
   * client has (LS_CAP_*; bits the daemon does not know are ignored), and
   * the client's own level rules (level_rules.h's text, as $LOGSINK_LEVEL
   * or its options set them; at most LS_LEVELS_TEXT_MAX bytes), shown by
   * `logctl level`. */
  uint32_t caps;
  const char *levels;
  size_t levels_len;
  /* With LS_HELLO_FIELDS: the field list's bytes as on the wire (varint n |
   * n x (str name | str value), on the wire between app/pid and caps), read
   * with ls_hello_field_next; else NULL and 0. Last, so that initializers
   * written before it leave it empty. */
  const uint8_t *fields;
  size_t fields_len;
} ls_hello;

/* The next (name, value) of a text stream's field list (the bytes after its
 * count), from *pp. Returns 1, or -EBADMSG for a name of 0 or more than
 * LS_TEXT_FIELD_NAME_MAX bytes, a value over LS_TEXT_FIELD_VALUE_MAX, or
 * bytes that end early. */
static inline int ls_hello_field_next(const uint8_t **pp, const uint8_t *end, const char **name,
                                      size_t *name_len, const char **value, size_t *value_len) {
  if (ls__get_str(pp, end, LS_TEXT_FIELD_NAME_MAX, name, name_len) < 0 || *name_len == 0 ||
      ls__get_str(pp, end, LS_TEXT_FIELD_VALUE_MAX, value, value_len) < 0)
    return -EBADMSG;
  return 1;
}

/* The length of the field list at p (at most len bytes): varint n, n from
 * 1 to LS_TEXT_FIELDS_MAX, and n well-formed pairs; -EBADMSG otherwise. */
static inline ptrdiff_t ls_hello_fields_shape(const uint8_t *p, size_t len) {
  const uint8_t *at = p, *end = p + len;
  uint64_t n;
  if (ls__get_var(&at, end, &n) < 0 || n == 0 || n > LS_TEXT_FIELDS_MAX) return -EBADMSG;
  for (uint64_t i = 0; i < n; i++) {
    const char *k, *v;
    size_t kl, vl;
    if (ls_hello_field_next(&at, end, &k, &kl, &v, &vl) < 0) return -EBADMSG;
  }
  return at - p;
}

/* Returns 0; -EPROTONOSUPPORT when the version is not one of
 * LS_PROTO_VERSION_MIN .. LS_PROTO_VERSION (the version field is filled,
 * the rest is not decoded); -EBADMSG when malformed, flags are not valid
 * (ls_hello_flags_valid), LS_HELLO_RELAY without a pid other than 0 after
 * app, LS_HELLO_FIELDS without a well-formed list (ls_hello_fields_shape), a
 * version 2 HELLO without caps and levels, or bytes are left over. */
static inline int ls_hello_decode(const uint8_t *p, size_t len, ls_hello *h) {
  const uint8_t *end = p + len;
  if (len < 4) return -EBADMSG;
  h->version = ls_get_u32(p);
  if (h->version < LS_PROTO_VERSION_MIN || h->version > LS_PROTO_VERSION) return -EPROTONOSUPPORT;
  if (len < 8) return -EBADMSG;
  h->flags = ls_get_u32(p + 4);
  if (!ls_hello_flags_valid(h->flags)) return -EBADMSG;
  p += 8;
  if (ls__get_str(&p, end, len, &h->app, &h->app_len) < 0) return -EBADMSG;
  h->pid = 0;
  if (h->flags & LS_HELLO_RELAY) {
    if (end - p < 4) return -EBADMSG;
    h->pid = ls_get_u32(p);
    p += 4;
    if (h->pid == 0) return -EBADMSG;
  }
  h->fields = NULL;
  h->fields_len = 0;
  if (h->flags & LS_HELLO_FIELDS) {
    const ptrdiff_t k = ls_hello_fields_shape(p, (size_t)(end - p));
    if (k < 0) return -EBADMSG;
    h->fields = p;
    h->fields_len = (size_t)k;
    p += k;
  }
  h->caps = 0;
  h->levels = "";
  h->levels_len = 0;
  if (h->version >= 2) {
    if (end - p < 4) return -EBADMSG;
    h->caps = ls_get_u32(p);
    p += 4;
    if (ls__get_str(&p, end, LS_LEVELS_TEXT_MAX, &h->levels, &h->levels_len) < 0) return -EBADMSG;
  }
  return p == end ? 0 : -EBADMSG;
}

/* ---- INTERN: varint site | u8 level | varint line | str fmt | str file ---- */
typedef struct ls_intern {
  uint32_t site; /* 1 .. LS_SITE_MAX */
  uint8_t level; /* 0 .. 7 */
  uint32_t line;
  const char *fmt;
  size_t fmt_len; /* <= LS_INTERN_MAX_FMT */
  const char *file;
  size_t file_len; /* <= LS_INTERN_MAX_FILE */
  uint8_t fields;  /* 1: LS_SITE_FIELDS, fmt carries fields (fields.h; LS_CAP_FIELDS only) */
} ls_intern;

/* Returns 0 or -EBADMSG (malformed, site/level/line out of range, strings too
 * long, bytes left over). The format itself is checked by ls_fmt_signature. */
static inline int ls_intern_decode(const uint8_t *p, size_t len, ls_intern *in) {
  const uint8_t *end = p + len;
  uint64_t site, line;
  if (ls__get_var(&p, end, &site) < 0 || site == 0 || site > LS_SITE_MAX) return -EBADMSG;
  if (p >= end || (*p & ~(unsigned)(LS_SITE_LEVEL_MASK | LS_SITE_FIELDS)) != 0) return -EBADMSG;
  in->level = *p & LS_SITE_LEVEL_MASK;
  in->fields = (*p++ & LS_SITE_FIELDS) != 0;
  if (ls__get_var(&p, end, &line) < 0 || line > UINT32_MAX) return -EBADMSG;
  if (ls__get_str(&p, end, LS_INTERN_MAX_FMT, &in->fmt, &in->fmt_len) < 0) return -EBADMSG;
  if (ls__get_str(&p, end, LS_INTERN_MAX_FILE, &in->file, &in->file_len) < 0) return -EBADMSG;
  in->site = (uint32_t)site;
  in->line = (uint32_t)line;
  return p == end ? 0 : -EBADMSG;
}

/* ---- RECORDS: varint tid | record* --------------------------------------- */
typedef struct ls_records {
  const uint8_t *p, *end; /* what is left of the payload */
  uint64_t tid;
  uint64_t ts; /* running timestamp: sum of the deltas so far */
} ls_records;

typedef struct ls_record {
  uint32_t site;      /* 1 .. LS_SITE_MAX */
  uint64_t truncated; /* bytes the client cut, 0 if not trunc */
  uint64_t ts_ns;     /* absolute timestamp */
  const uint8_t *args;
  size_t args_len; /* set by ls_records_args */
} ls_record;

/* Starts iterating a RECORDS payload. Returns 0 or -EBADMSG. */
static inline int ls_records_begin(const uint8_t *p, size_t len, ls_records *it) {
  it->end = p + len;
  it->p = p;
  it->ts = 0;
  return ls__get_var(&it->p, it->end, &it->tid);
}

/* Reads the head of the next record (site, truncation, timestamp). Returns 1,
 * 0 at the end of the payload, or -EBADMSG. The caller must then consume the
 * arguments with ls_records_args before the next call. */
static inline int ls_records_next(ls_records *it, ls_record *r) {
  uint64_t v, d;
  if (it->p == it->end) return 0;
  if (ls__get_var(&it->p, it->end, &v) < 0) return -EBADMSG;
  if ((v >> 1) == 0 || (v >> 1) > LS_SITE_MAX) return -EBADMSG;
  r->site = (uint32_t)(v >> 1);
  r->truncated = 0;
  if (v & 1) {
    if (ls__get_var(&it->p, it->end, &r->truncated) < 0) return -EBADMSG;
  }
  if (ls__get_var(&it->p, it->end, &d) < 0) return -EBADMSG;
  it->ts += (uint64_t)ls_unzigzag(d); /* wraps like the client's subtraction */
  r->ts_ns = it->ts;
  r->args = it->p;
  r->args_len = 0;
  return 1;
}

/* Skips one varint; fast path for one byte. Returns bytes or 0. */
static inline size_t ls__skip_varint(const uint8_t *p, const uint8_t *end) {
  uint64_t v;
  if (p < end && *p < 0x80) return 1;
  return ls_get_varint(p, end, &v);
}

/* Returns how many bytes of [p, end) the arguments of sig take (>= 0), or
 * -EBADMSG when they are truncated or malformed. Unlike ls_args_check it
 * does not require that nothing follows. */
static inline ptrdiff_t ls_args_span(const char *sig, const uint8_t *p, const uint8_t *end) {
  const uint8_t *start = p;
  for (; *sig; sig++) {
    size_t n;
    uint64_t v;
    switch (*sig) {
      case LS_ARG_INT:
      case LS_ARG_UINT:
      case LS_ARG_CHAR:
      case LS_ARG_PTR:
        n = ls__skip_varint(p, end);
        break;
      case LS_ARG_DOUBLE:
        n = end - p >= 8 ? 8 : 0;
        break;
      case LS_ARG_STR:
        n = ls_get_varint(p, end, &v);
        if (n && v <= (uint64_t)(end - p - (ptrdiff_t)n))
          n += (size_t)v;
        else
          n = 0;
        break;
      default:
        n = 0;
    }
    if (!n) return -EBADMSG;
    p += n;
  }
  return p - start;
}

/* Consumes the current record's arguments by its site's signature (sig from
 * ls_fmt_signature). Returns 0 and sets r->args_len, or -EBADMSG. */
static inline int ls_records_args(ls_records *it, const char *sig, ls_record *r) {
  ptrdiff_t n = ls_args_span(sig, it->p, it->end);
  if (n < 0) return -EBADMSG;
  r->args = it->p;
  r->args_len = (size_t)n;
  it->p += n;
  return 0;
}

/* ---- DROPPED: varint count | varint since_ns | varint now_ns -------------- */
typedef struct ls_dropped {
  uint64_t count, since_ns, now_ns;
} ls_dropped;

static inline int ls_dropped_decode(const uint8_t *p, size_t len, ls_dropped *d) {
  const uint8_t *end = p + len;
  if (ls__get_var(&p, end, &d->count) < 0 || ls__get_var(&p, end, &d->since_ns) < 0 ||
      ls__get_var(&p, end, &d->now_ns) < 0)
    return -EBADMSG;
  return p == end ? 0 : -EBADMSG;
}

/* ---- STATS_REQ: empty ---------------------------------------------------- */
static inline int ls_stats_req_decode(const uint8_t *p, size_t len) {
  (void)p;
  return len == 0 ? 0 : -EBADMSG;
}

/* ---- REFUSE: u32 highest version | str reason ---------------------------- */
typedef struct ls_refuse {
  uint32_t version;
  const char *reason;
  size_t reason_len;
} ls_refuse;

static inline int ls_refuse_decode(const uint8_t *p, size_t len, ls_refuse *r) {
  const uint8_t *end = p + len;
  if (len < 4) return -EBADMSG;
  r->version = ls_get_u32(p);
  p += 4;
  if (ls__get_str(&p, end, len, &r->reason, &r->reason_len) < 0) return -EBADMSG;
  return p == end ? 0 : -EBADMSG;
}

/* ---- STATS: varint n | n * (str name | varint value) --------------------- */
/* Named ls_statsframe_* so it does not read as part of the client's public
 * ls_stats counters (logsink.h). */
#define LS_STATS_NAME_MAX 255u /* longest counter name */

typedef struct ls_statsframe_iter {
  const uint8_t *p, *end;
  uint64_t left; /* entries not read yet */
} ls_statsframe_iter;

static inline int ls_statsframe_begin(const uint8_t *p, size_t len, ls_statsframe_iter *it) {
  it->p = p;
  it->end = p + len;
  it->left = 0;
  if (ls__get_var(&it->p, it->end, &it->left) < 0) return -EBADMSG;
  /* each entry takes at least 2 bytes: refuse counts the payload cannot hold */
  return it->left <= (uint64_t)(it->end - it->p) / 2 ? 0 : -EBADMSG;
}

/* Returns 1 with the next counter, 0 after the last one (when nothing is left
 * over), or -EBADMSG. */
static inline int ls_statsframe_next(ls_statsframe_iter *it, const char **name, size_t *name_len,
                                     uint64_t *value) {
  if (it->left == 0) return it->p == it->end ? 0 : -EBADMSG;
  if (ls__get_str(&it->p, it->end, LS_STATS_NAME_MAX, name, name_len) < 0) return -EBADMSG;
  if (ls__get_var(&it->p, it->end, value) < 0) return -EBADMSG;
  it->left--;
  return 1;
}

/* ---- RING_REQ: empty ------------------------------------------------------ */
static inline int ls_ring_req_decode(const uint8_t *p, size_t len) {
  (void)p;
  return len == 0 ? 0 : -EBADMSG;
}

/* ---- RING: u8[16] ring_id | varint dev | varint ino | str path ----------- */
/* The ring file the daemon writes: its identity (FORMAT.md "Superblock"),
 * the file's st_dev and st_ino (a copy has the identity but not the inode)
 * and its absolute path, 1 .. LS_RING_PATH_MAX bytes without a NUL byte
 * (LS_RING_ID_LEN is format.h's). */
#define LS_RING_PATH_MAX 4095u

typedef struct ls_ring {
  const uint8_t *ring_id; /* LS_RING_ID_LEN bytes, points into the input */
  uint64_t dev, ino;      /* stat(2) of the file, as the daemon sees it */
  const char *path;       /* not NUL-terminated */
  size_t path_len;
} ls_ring;

/* Returns 0 or -EBADMSG (short, an empty or too long path, a NUL byte in
 * it, bytes left over). */
static inline int ls_ring_decode(const uint8_t *p, size_t len, ls_ring *r) {
  const uint8_t *end = p + len;
  size_t i;
  if (len < LS_RING_ID_LEN) return -EBADMSG;
  r->ring_id = p;
  p += LS_RING_ID_LEN;
  if (ls__get_var(&p, end, &r->dev) < 0 || ls__get_var(&p, end, &r->ino) < 0) return -EBADMSG;
  if (ls__get_str(&p, end, LS_RING_PATH_MAX, &r->path, &r->path_len) < 0 || r->path_len == 0)
    return -EBADMSG;
  for (i = 0; i < r->path_len; i++)
    if (r->path[i] == '\0') return -EBADMSG;
  return p == end ? 0 : -EBADMSG;
}

/* ---- WELCOME: u32 version | u32 caps | str levels ------------------------ */
/* The daemon's answer to a version 2 HELLO: the version it speaks on this
 * connection, the capabilities it will use (LS_CAP_*, only bits the client
 * offered), and the level rules in force for the client (empty without
 * LS_CAP_LEVELS). */
typedef struct ls_welcome {
  uint32_t version, caps;
  const char *levels;
  size_t levels_len;
} ls_welcome;

static inline int ls_welcome_decode(const uint8_t *p, size_t len, ls_welcome *w) {
  const uint8_t *end = p + len;
  if (len < 8) return -EBADMSG;
  w->version = ls_get_u32(p);
  w->caps = ls_get_u32(p + 4);
  p += 8;
  if (ls__get_str(&p, end, LS_LEVELS_TEXT_MAX, &w->levels, &w->levels_len) < 0) return -EBADMSG;
  return p == end ? 0 : -EBADMSG;
}

/* ---- LEVELS: str levels --------------------------------------------------- */
/* Sent to a client with LS_CAP_LEVELS whenever the rules for it change:
 * the whole text now in force (it replaces the previous one). */
static inline int ls_levels_decode(const uint8_t *p, size_t len, const char **text, size_t *n) {
  const uint8_t *end = p + len;
  if (ls__get_str(&p, end, LS_LEVELS_TEXT_MAX, text, n) < 0) return -EBADMSG;
  return p == end ? 0 : -EBADMSG;
}

/* ---- LEVEL_REQ: u8 op | rule ---------------------------------------------
 * rule := u8 which | str app | varint pid | str unit | varint uid
 *         | str file | varint line | u8 level
 * `which` says which selectors the rule has (LS_LSEL_*); an absent one is
 * empty or 0. A rule applies to the clients that match all its selectors
 * (none: every client) and says the level of every call site (without
 * LS_LSEL_SITE) or of those of `file` (a level_rules.h FILE glob, 1 ..
 * LS_LEVEL_FILE_MAX bytes) and, when line is not 0, that line. level:
 * 0..7, or LS_LEVEL_WIRE_OFF for "off". LIST carries an empty rule (which 0,
 * level 0); RESET names the rule to remove by its selectors and site (level
 * 0). */
#define LS_LEVEL_OP_LIST 0u
#define LS_LEVEL_OP_SET 1u
#define LS_LEVEL_OP_RESET 2u
#define LS_LSEL_APP 0x01u
#define LS_LSEL_PID 0x02u
#define LS_LSEL_UNIT 0x04u
#define LS_LSEL_UID 0x08u
#define LS_LSEL_SITE 0x10u
#define LS_LSEL_ALL 0x1fu
#define LS_LEVEL_UNIT_MAX 256u
#define LS_LEVEL_WIRE_OFF 0xffu
#define LS_LEVEL_LINE_MAX 0x7fffffffu

typedef struct ls_level_sel {
  uint8_t which; /* LS_LSEL_* */
  const char *app;
  size_t app_len; /* <= LS_APP_MAX */
  uint32_t pid;
  const char *unit;
  size_t unit_len; /* <= LS_LEVEL_UNIT_MAX */
  uint32_t uid;
  const char *file;
  size_t file_len; /* with LS_LSEL_SITE: 1 .. LS_LEVEL_FILE_MAX (255) */
  uint32_t line;   /* 0: every line; <= LS_LEVEL_LINE_MAX */
  int level;       /* -1 (off) .. 7 */
  /* LEVEL_ANSWER's rules only: who set the rule and when (ns since the
   * epoch; 0 for a rule of the configuration). */
  uint32_t by_uid;
  uint64_t at_ns;
} ls_level_sel;

/* Reads a rule; with `answer`, its by_uid and at_ns too. */
static inline int ls__level_sel_get(const uint8_t **pp, const uint8_t *end, ls_level_sel *s,
                                    int answer) {
  uint64_t pid, uid, line, by = 0, at = 0;
  if (*pp == end) return -EBADMSG;
  s->which = *(*pp)++;
  if ((s->which & ~LS_LSEL_ALL) || ls__get_str(pp, end, LS_APP_MAX, &s->app, &s->app_len) < 0 ||
      ls__get_var(pp, end, &pid) < 0 ||
      ls__get_str(pp, end, LS_LEVEL_UNIT_MAX, &s->unit, &s->unit_len) < 0 ||
      ls__get_var(pp, end, &uid) < 0 || ls__get_str(pp, end, 255, &s->file, &s->file_len) < 0 ||
      ls__get_var(pp, end, &line) < 0 || *pp == end)
    return -EBADMSG;
  const uint8_t level = *(*pp)++;
  if (answer && (ls__get_var(pp, end, &by) < 0 || ls__get_var(pp, end, &at) < 0)) return -EBADMSG;
  if (pid > UINT32_MAX || uid > UINT32_MAX || by > UINT32_MAX || line > LS_LEVEL_LINE_MAX ||
      (level > LS_LEVEL_MAX && level != LS_LEVEL_WIRE_OFF))
    return -EBADMSG;
  /* An absent selector carries nothing; a present one something. */
  if (!(s->which & LS_LSEL_APP) != !s->app_len || (!(s->which & LS_LSEL_PID) && pid) ||
      !(s->which & LS_LSEL_UNIT) != !s->unit_len || (!(s->which & LS_LSEL_UID) && uid) ||
      !(s->which & LS_LSEL_SITE) != !s->file_len || (!(s->which & LS_LSEL_SITE) && line))
    return -EBADMSG;
  s->pid = (uint32_t)pid;
  s->uid = (uint32_t)uid;
  s->line = (uint32_t)line;
  s->level = level == LS_LEVEL_WIRE_OFF ? -1 : (int)level;
  s->by_uid = (uint32_t)by;
  s->at_ns = at;
  return 0;
}

typedef struct ls_level_req {
  uint8_t op; /* LS_LEVEL_OP_* */
  ls_level_sel rule;
} ls_level_req;

/* Returns 0 or -EBADMSG (unknown op, a malformed rule, LIST with a rule,
 * RESET with a level, bytes left over). */
static inline int ls_level_req_decode(const uint8_t *p, size_t len, ls_level_req *r) {
  const uint8_t *end = p + len;
  if (len < 1) return -EBADMSG;
  r->op = *p++;
  if (r->op > LS_LEVEL_OP_RESET || ls__level_sel_get(&p, end, &r->rule, 0) < 0) return -EBADMSG;
  if (r->op == LS_LEVEL_OP_LIST && (r->rule.which || r->rule.level != 0)) return -EBADMSG;
  if (r->op == LS_LEVEL_OP_RESET && r->rule.level != 0) return -EBADMSG;
  return p == end ? 0 : -EBADMSG;
}

/* ---- LEVEL_ANSWER ----------------------------------------------------------
 * varint status | str message | varint nrules | nrules * (rule | varint by_uid
 * | varint at_ns) | varint nclients | nclients * client
 * client := varint pid | varint uid | str app | str unit | varint caps
 *           | str own | str pushed
 * status 0, or the errno of the refusal (EPERM, EINVAL, ENOSPC, ENOENT);
 * message says what was done or why not (at most 1024 bytes). The rules are
 * every rule in force, oldest first; the clients every connection that said
 * HELLO with frames (not text streams): caps 0 for a version 1 client
 * (levels cannot be pushed to it), `own` its own rules (HELLO v2), `pushed`
 * the text last sent to it, each cut to its first LS_LEVEL_TEXT_SHOWN bytes
 * (a text of that length may have been longer: its rules are not known
 * from it). */
#define LS_LEVEL_MESSAGE_MAX 1024u
#define LS_LEVEL_TEXT_SHOWN 1024u

typedef struct ls_level_client {
  uint32_t pid, uid;
  const char *app;
  size_t app_len;
  const char *unit;
  size_t unit_len;
  uint32_t caps;
  const char *own;
  size_t own_len;
  const char *pushed;
  size_t pushed_len;
} ls_level_client;

typedef struct ls_level_answer {
  uint32_t status;
  const char *message;
  size_t message_len;
  /* iteration state */
  const uint8_t *p, *end;
  uint64_t rules_left, clients_left;
  int in_clients;
} ls_level_answer;

static inline int ls_level_answer_begin(const uint8_t *p, size_t len, ls_level_answer *a) {
  uint64_t status;
  a->p = p;
  a->end = p + len;
  a->in_clients = 0;
  a->clients_left = 0;
  if (ls__get_var(&a->p, a->end, &status) < 0 || status > 4095 ||
      ls__get_str(&a->p, a->end, LS_LEVEL_MESSAGE_MAX, &a->message, &a->message_len) < 0 ||
      ls__get_var(&a->p, a->end, &a->rules_left) < 0 ||
      a->rules_left > (uint64_t)(a->end - a->p) / 10) /* a rule takes >= 10 bytes */
    return -EBADMSG;
  a->status = (uint32_t)status;
  return 0;
}

/* Returns 1 with the next rule, 0 after the last (then call
 * ls_level_answer_client), or -EBADMSG. */
static inline int ls_level_answer_rule(ls_level_answer *a, ls_level_sel *s) {
  if (a->in_clients) return 0;
  if (a->rules_left == 0) {
    a->in_clients = 1;
    if (ls__get_var(&a->p, a->end, &a->clients_left) < 0 ||
        a->clients_left > (uint64_t)(a->end - a->p) / 7) /* a client takes >= 7 bytes */
      return -EBADMSG;
    return 0;
  }
  if (ls__level_sel_get(&a->p, a->end, s, 1) < 0) return -EBADMSG;
  a->rules_left--;
  return 1;
}

/* Returns 1 with the next client, 0 after the last one (when nothing is
 * left over), or -EBADMSG. Call after ls_level_answer_rule returned 0. */
static inline int ls_level_answer_client(ls_level_answer *a, ls_level_client *c) {
  uint64_t pid, uid, caps;
  if (!a->in_clients) return -EBADMSG;
  if (a->clients_left == 0) return a->p == a->end ? 0 : -EBADMSG;
  if (ls__get_var(&a->p, a->end, &pid) < 0 || ls__get_var(&a->p, a->end, &uid) < 0 ||
      ls__get_str(&a->p, a->end, LS_APP_MAX, &c->app, &c->app_len) < 0 ||
      ls__get_str(&a->p, a->end, LS_LEVEL_UNIT_MAX, &c->unit, &c->unit_len) < 0 ||
      ls__get_var(&a->p, a->end, &caps) < 0 ||
      ls__get_str(&a->p, a->end, LS_LEVELS_TEXT_MAX, &c->own, &c->own_len) < 0 ||
      ls__get_str(&a->p, a->end, LS_LEVELS_TEXT_MAX, &c->pushed, &c->pushed_len) < 0 ||
      pid > UINT32_MAX || uid > UINT32_MAX || caps > UINT32_MAX)
    return -EBADMSG;
  c->pid = (uint32_t)pid;
  c->uid = (uint32_t)uid;
  c->caps = (uint32_t)caps;
  a->clients_left--;
  return 1;
}

/* ---- CENSUS: varint n | n * site ------------------------------------------
 * site := u8 level | varint line | str fmt | str file
 * A client with LS_CAP_CENSUS sends every call site it has (compiled in,
 * fired or not) after WELCOME, in frames of any size up to max_frame; the
 * daemon keeps them while the connection lasts. CENSUS_ANSWER carries them
 * per connected client. */
typedef struct ls_census_site {
  uint8_t level; /* 0..7 */
  uint32_t line;
  const char *fmt;
  size_t fmt_len; /* <= LS_INTERN_MAX_FMT */
  const char *file;
  size_t file_len; /* <= LS_INTERN_MAX_FILE */
} ls_census_site;

typedef struct ls_census_iter {
  const uint8_t *p, *end;
  uint64_t left;
} ls_census_iter;

/* Starts reading n sites at p (the count read by the caller). */
static inline int ls_census_sites(const uint8_t *p, const uint8_t *end, uint64_t n,
                                  ls_census_iter *it) {
  it->p = p;
  it->end = end;
  it->left = n;
  /* a site takes at least 4 bytes: refuse counts the bytes cannot hold */
  return n <= (uint64_t)(end - p) / 4 ? 0 : -EBADMSG;
}

/* Returns 1 with the next site, 0 after the last (it->p then past it), or
 * -EBADMSG. */
static inline int ls_census_next(ls_census_iter *it, ls_census_site *s) {
  uint64_t line;
  if (it->left == 0) return 0;
  if (it->p == it->end) return -EBADMSG;
  s->level = *it->p++;
  if (s->level > LS_LEVEL_MAX || ls__get_var(&it->p, it->end, &line) < 0 || line > UINT32_MAX ||
      ls__get_str(&it->p, it->end, LS_INTERN_MAX_FMT, &s->fmt, &s->fmt_len) < 0 ||
      ls__get_str(&it->p, it->end, LS_INTERN_MAX_FILE, &s->file, &s->file_len) < 0)
    return -EBADMSG;
  s->line = (uint32_t)line;
  it->left--;
  return 1;
}

/* A CENSUS frame's payload: its sites in *it; the caller reads them all
 * and then checks it->p == it->end (nothing after the last). */
static inline int ls_census_decode(const uint8_t *p, size_t len, ls_census_iter *it) {
  const uint8_t *end = p + len;
  uint64_t n;
  if (ls__get_var(&p, end, &n) < 0) return -EBADMSG;
  return ls_census_sites(p, end, n, it);
}

/* ---- CENSUS_REQ: empty; CENSUS_ANSWER ---------------------------------------
 * varint nclients | nclients * (varint pid | varint uid | str app | str unit
 *   | str own | str pushed | varint nsites | nsites * site)
 * own and pushed: the client's rules texts, as LEVEL_ANSWER's. */
typedef struct ls_census_client {
  uint32_t pid, uid;
  const char *app;
  size_t app_len;
  const char *unit;
  size_t unit_len;
  const char *own;
  size_t own_len;
  const char *pushed;
  size_t pushed_len;
  ls_census_iter sites; /* read them all before the next client */
} ls_census_client;

typedef struct ls_census_answer {
  const uint8_t *p, *end;
  uint64_t left;
} ls_census_answer;

static inline int ls_census_answer_begin(const uint8_t *p, size_t len, ls_census_answer *a) {
  a->p = p;
  a->end = p + len;
  if (ls__get_var(&a->p, a->end, &a->left) < 0 || a->left > (uint64_t)(a->end - a->p) / 7)
    return -EBADMSG;
  return 0;
}

/* Returns 1 with the next client (read its sites with ls_census_next, all
 * of them, before the next call), 0 after the last one (when nothing is
 * left over), or -EBADMSG. `prev` is the client returned last (NULL at the
 * first call): the answer goes on after its sites. */
static inline int ls_census_answer_client(ls_census_answer *a, const ls_census_client *prev,
                                          ls_census_client *c) {
  uint64_t pid, uid, n;
  if (prev) {
    if (prev->sites.left != 0) return -EBADMSG;
    a->p = prev->sites.p;
  }
  if (a->left == 0) return a->p == a->end ? 0 : -EBADMSG;
  if (ls__get_var(&a->p, a->end, &pid) < 0 || ls__get_var(&a->p, a->end, &uid) < 0 ||
      ls__get_str(&a->p, a->end, LS_APP_MAX, &c->app, &c->app_len) < 0 ||
      ls__get_str(&a->p, a->end, LS_LEVEL_UNIT_MAX, &c->unit, &c->unit_len) < 0 ||
      ls__get_str(&a->p, a->end, LS_LEVELS_TEXT_MAX, &c->own, &c->own_len) < 0 ||
      ls__get_str(&a->p, a->end, LS_LEVELS_TEXT_MAX, &c->pushed, &c->pushed_len) < 0 ||
      ls__get_var(&a->p, a->end, &n) < 0 || pid > UINT32_MAX || uid > UINT32_MAX ||
      ls_census_sites(a->p, a->end, n, &c->sites) < 0)
    return -EBADMSG;
  c->pid = (uint32_t)pid;
  c->uid = (uint32_t)uid;
  a->left--;
  return 1;
}

#ifdef __cplusplus
}
#endif
#endif
