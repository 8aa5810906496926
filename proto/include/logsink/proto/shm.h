/* shm.h: the shared buffers of the capability LS_CAP_SHM (PROTOCOL.md,
 * "Shared buffers"): the layout of the region the daemon hands a client,
 * the staged record the client writes into it, and the two frames that go
 * with it, SHM (daemon -> client, the region's geometry; the descriptor
 * rides along in SCM_RIGHTS) and RECORDS_AT (client -> daemon: RECORDS of
 * one slot, with the slot's position after them). The region's bytes are
 * the client's to write at any time: a reader copies them out first and
 * validates what it copied (ls_shm_next), never the shared bytes twice.
 * Header-only C11, usable from C++. */
#ifndef LOGSINK_PROTO_SHM_H
#define LOGSINK_PROTO_SHM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "logsink/proto/codec.h"
#include "logsink/proto/frame_encode.h"
#include "logsink/proto/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Region layout (offsets in bytes; every word 8-byte aligned):
 *   0                 header: u64 len | u64 released | 48 bytes reserved
 *   LS_SHM_LOG_HDR    site log: u8 log[sites_bytes] (len bytes of it used)
 *   LS_SHM_SLOTS_OFF  slot 0, slot 1, ... each LS_SHM_SLOT_HDR + slot_bytes:
 *                       u64 head | u64 tid | 48 bytes reserved | u8 data[slot_bytes]
 * The header's and the slots' words are in the machine's byte order (the
 * client stores len and head with one atomic release store each, after
 * the bytes they publish); the records and the log are little-endian, as
 * on the wire. */
#define LS_SHM_SLOT_HDR 64u
#define LS_SHM_LOG_HDR 64u /* the header before the site log */
#define LS_SHM_RELEASED_OFF 8u
#define LS_SHM_MIN_SLOT (4u << 10)
#define LS_SHM_MAX_SLOT (16u << 20)
#define LS_SHM_MAX_SLOTS 256u
#define LS_SHM_MAX_SITES (1u << 20) /* largest site log */

static inline uint64_t ls_shm_round64(uint64_t n) { return (n + 63u) & ~(uint64_t)63u; }
/* Where slot 0 starts: after the header and the site log, on a 64-byte
 * boundary. */
static inline uint64_t ls_shm_slots_off(uint32_t sites_bytes) {
  return ls_shm_round64((uint64_t)LS_SHM_LOG_HDR + sites_bytes);
}
static inline uint64_t ls_shm_slot_off(uint32_t sites_bytes, uint32_t slot_bytes, uint32_t i) {
  return ls_shm_slots_off(sites_bytes) + (uint64_t)i * (LS_SHM_SLOT_HDR + slot_bytes);
}
static inline uint64_t ls_shm_region_bytes(uint32_t slots, uint32_t slot_bytes,
                                           uint32_t sites_bytes) {
  return ls_shm_slot_off(sites_bytes, slot_bytes, slots);
}

/* ---- SHM: u32 slots | u32 slot_bytes | u32 sites_bytes ------------------- */
typedef struct ls_shm_geom {
  uint32_t slots;       /* 1 .. LS_SHM_MAX_SLOTS */
  uint32_t slot_bytes;  /* a power of two, LS_SHM_MIN_SLOT .. LS_SHM_MAX_SLOT */
  uint32_t sites_bytes; /* a multiple of 64, 64 .. LS_SHM_MAX_SITES */
} ls_shm_geom;

static inline int ls_shm_geom_ok(const ls_shm_geom *g) {
  return g->slots >= 1 && g->slots <= LS_SHM_MAX_SLOTS && g->slot_bytes >= LS_SHM_MIN_SLOT &&
         g->slot_bytes <= LS_SHM_MAX_SLOT && (g->slot_bytes & (g->slot_bytes - 1)) == 0 &&
         g->sites_bytes >= 64 && g->sites_bytes <= LS_SHM_MAX_SITES && g->sites_bytes % 64 == 0;
}

static inline ptrdiff_t ls_shm_encode(uint8_t *buf, size_t cap, const ls_shm_geom *g) {
  size_t at = 0;
  if (!ls_shm_geom_ok(g)) return -EINVAL;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_SHM)) < 0 || cap - at < 12) return -ENOBUFS;
  ls_put_u32(buf + at, g->slots);
  ls_put_u32(buf + at + 4, g->slot_bytes);
  ls_put_u32(buf + at + 8, g->sites_bytes);
  return ls_frame_close(buf, buf + at + 12);
}

static inline int ls_shm_decode(const uint8_t *p, size_t len, ls_shm_geom *g) {
  if (len != 12) return -EBADMSG;
  g->slots = ls_get_u32(p);
  g->slot_bytes = ls_get_u32(p + 4);
  g->sites_bytes = ls_get_u32(p + 8);
  return ls_shm_geom_ok(g) ? 0 : -EBADMSG;
}

/* ---- RECORDS_AT: varint slot | varint end | RECORDS payload -------------- */
/* Splits a RECORDS_AT payload: *records points at its RECORDS payload
 * (varint tid | record*). Returns 0 or -EBADMSG. */
static inline int ls_records_at_decode(const uint8_t *p, size_t len, uint64_t *slot, uint64_t *end,
                                       const uint8_t **records, size_t *rec_len) {
  const uint8_t *e = p + len;
  if (ls__get_var(&p, e, slot) < 0 || ls__get_var(&p, e, end) < 0) return -EBADMSG;
  *records = p;
  *rec_len = (size_t)(e - p);
  return 0;
}

/* Opens a RECORDS_AT frame of slot `slot` for thread `tid` whose `end` is
 * not known yet: it is written in LS_VARINT_MAX bytes (a LEB128 whose
 * continuation bytes carry zero bits is still one varint), filled in by
 * ls_records_at_set_end once the frame's records are in. Append records
 * with ls_record_encode and finish with ls_frame_close. Returns the bytes
 * written or -ENOBUFS. */
static inline ptrdiff_t ls_records_at_open(uint8_t *buf, size_t cap, uint64_t slot, uint64_t tid) {
  size_t at = 0;
  if (ls__enc_step(&at, ls_frame_open(buf, cap, LS_F_RECORDS_AT)) < 0 ||
      cap - at < 3u * LS_VARINT_MAX)
    return -ENOBUFS;
  at += ls_put_varint(buf + at, slot);
  for (unsigned i = 0; i < LS_VARINT_MAX; i++) buf[at + i] = i + 1 < LS_VARINT_MAX ? 0x80 : 0;
  at += LS_VARINT_MAX;
  at += ls_put_varint(buf + at, tid);
  return (ptrdiff_t)at;
}

/* Writes `end` into the frame ls_records_at_open began at `frame`. */
static inline void ls_records_at_set_end(uint8_t *frame, uint64_t end) {
  uint8_t *p = frame + LS_FRAME_HDR;
  while (*p & 0x80) p++; /* the slot's varint */
  p++;
  for (unsigned i = 0; i + 1 < LS_VARINT_MAX; i++, end >>= 7) p[i] = (uint8_t)(end & 0x7f) | 0x80;
  p[LS_VARINT_MAX - 1] = (uint8_t)(end & 0x01);
}

/* ---- The staged record ----------------------------------------------------
 * At position pos of a slot (byte offset pos % slot_bytes of its data; pos
 * only grows), 8-byte aligned:
 *   u32 args_len | u32 site (bit 31: truncated) | u64 ts_ns | args
 *   | [u64 truncated_bytes, with bit 31] | zero bytes to a multiple of 8
 * A u32 LS_SHM_PAD where args_len would be: the rest of the data up to its
 * end is unused, the next record is at the data's start. A record never
 * wraps around the data's end. args are the arguments as RECORDS carry
 * them (by the site's signature), at most LS_SHM_MAX_ARGS bytes. */
#define LS_SHM_REC_HDR 16u
#define LS_SHM_TRUNC 0x80000000u
#define LS_SHM_PAD 0xffffffffu
#define LS_SHM_MAX_ARGS (1u << 20)

static inline uint64_t ls_shm_rec_size(uint32_t args_len, int trunc) {
  return ((uint64_t)LS_SHM_REC_HDR + args_len + (trunc ? 8u : 0u) + 7u) & ~(uint64_t)7u;
}

/* Reads the staged record at *pos from data (a private copy of a slot's
 * data, slot_bytes long, a power of two) whose records end at `head`.
 * Returns 1 with *r filled (r->args points into data) and *pos moved past
 * it, 0 at head, or -EBADMSG when what is there is not a record that ends
 * by head (a torn or scribbled slot): the rest of it cannot be read. */
static inline int ls_shm_next(const uint8_t *data, uint32_t slot_bytes, uint64_t *pos,
                              uint64_t head, ls_record *r) {
  for (int pads = 0; pads < 2; pads++) {
    if (*pos == head) return 0;
    if (*pos > head || (*pos & 7u) != 0) return -EBADMSG;
    const uint64_t off = *pos & (slot_bytes - 1u);
    const uint64_t room = slot_bytes - off; /* to the data's end */
    if (room < 4 || head - *pos < 4) return -EBADMSG;
    const uint32_t alen = ls_get_u32(data + off);
    if (alen == LS_SHM_PAD) {
      if (head - *pos < room) return -EBADMSG;
      *pos += room;
      continue;
    }
    if (room < LS_SHM_REC_HDR || alen > LS_SHM_MAX_ARGS) return -EBADMSG;
    const uint32_t site = ls_get_u32(data + off + 4);
    const int trunc = (site & LS_SHM_TRUNC) != 0;
    const uint64_t size = ls_shm_rec_size(alen, trunc);
    if (size > room || size > head - *pos) return -EBADMSG;
    r->site = site & ~LS_SHM_TRUNC;
    r->ts_ns = ls_get_u64(data + off + 8);
    r->args = data + off + LS_SHM_REC_HDR;
    r->args_len = alen;
    r->truncated = trunc ? ls_get_u64(data + off + LS_SHM_REC_HDR + alen) : 0;
    if (trunc && r->truncated == 0) r->truncated = 1; /* "cut" with no count: still cut */
    *pos += size;
    return 1;
  }
  return -EBADMSG; /* two pads in a row */
}

#ifdef __cplusplus
}
#endif
#endif
