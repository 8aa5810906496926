/* codec.h: little-endian integers and LEB128 varints shared by the wire protocol
 * and the on-disk format. Header-only C11, usable from C++.
 *
 * Every decoder is bounded: it takes (p, end) and returns the number of bytes
 * consumed, or 0 when the input is truncated or malformed. It never reads at or
 * past `end`. */
#ifndef LOGSINK_PROTO_CODEC_H
#define LOGSINK_PROTO_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LS_VARINT_MAX 10 /* bytes of the longest uint64 varint */

static inline void ls_put_u16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void ls_put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void ls_put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t ls_get_u16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
static inline uint32_t ls_get_u32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t ls_get_u64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
/* The byte order is little-endian; memcpy is correct only on little-endian hosts. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "logsink supports little-endian hosts only"
#endif

static inline uint64_t ls_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t ls_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Number of bytes ls_put_varint writes for v (1..10). */
static inline size_t ls_varint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

/* Writes v as an unsigned LEB128 varint; p must have LS_VARINT_MAX bytes free.
 * Returns the number of bytes written. */
static inline size_t ls_put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  return n;
}

/* Reads a varint from [p, end). Returns bytes consumed, 0 if truncated or
 * longer than 10 bytes / overflowing 64 bits. */
static inline size_t ls_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  unsigned shift = 0;
  size_t n = 0;
  while (p + n < end) {
    uint8_t b = p[n++];
    if (shift == 63 && b > 1) return 0; /* overflow */
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return n;
    }
    shift += 7;
    if (shift > 63) return 0;
  }
  return 0;
}

/* The length of s[0, len) without a UTF-8 sequence that its last bytes
 * begin but do not finish: a cut string never ends inside a character. Bytes
 * that are not UTF-8 are left as they are (nothing to finish). The project's
 * one rule for cutting text: the client (arguments, its app label), the
 * writer's truncation, text streams, the daemon's cuts of app labels, syslog
 * tags, datagrams and site file names use it; the Python package mirrors it
 * (logsink/_wire.py, utf8_cut). */
static inline size_t ls_utf8_trim_partial(const uint8_t *s, size_t len) {
  size_t i = len, back = 0;
  while (i > 0 && back < 3 && (s[i - 1] & 0xC0) == 0x80) {
    i--;
    back++;
  }
  if (i == 0) return len;
  const uint8_t lead = s[i - 1];
  if (lead < 0xC2 || lead > 0xF4) return len; /* ASCII, or not a lead byte */
  const size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  return len - (i - 1) < need ? i - 1 : len;
}

/* At most max bytes of s[0, len), never ending inside a UTF-8 character. */
static inline size_t ls_utf8_cut(const uint8_t *s, size_t len, size_t max) {
  return len <= max ? len : ls_utf8_trim_partial(s, max);
}

/* Where the last at most max bytes of s[0, len) start, never inside a UTF-8
 * character: the continuation bytes of a character begun before len - max
 * are left out too (a cut that keeps the end, as of a long file name). Bytes
 * that are not UTF-8 are left as they are. */
static inline size_t ls_utf8_tail(const uint8_t *s, size_t len, size_t max) {
  if (len <= max) return 0;
  size_t start = len - max, i = start, back = 0;
  while (i > 0 && back < 3 && (s[i - 1] & 0xC0) == 0x80) {
    i--;
    back++;
  }
  if (i == 0) return start;
  const uint8_t lead = s[i - 1];
  if (lead < 0xC2 || lead > 0xF4) return start;
  const size_t end = i - 1 + (lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2);
  while (start < end && start < len && (s[start] & 0xC0) == 0x80) start++;
  return start;
}

/* Appends one UTF-8 encoded code point; returns its length (0 if it does not
 * fit in room). Invalid code points (surrogates, above U+10FFFF) become
 * U+FFFD. The project's one UTF-8 encoder: the client encodes %lc/%ls with
 * it, logctl renders with it. */
static inline size_t ls_utf8_put(uint8_t *o, size_t room, uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    if (room < 1) return 0;
    o[0] = (uint8_t)cp;
    return 1;
  }
  if (cp < 0x800) {
    if (room < 2) return 0;
    o[0] = (uint8_t)(0xC0 | (cp >> 6));
    o[1] = (uint8_t)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    if (room < 3) return 0;
    o[0] = (uint8_t)(0xE0 | (cp >> 12));
    o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  if (room < 4) return 0;
  o[0] = (uint8_t)(0xF0 | (cp >> 18));
  o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
  o[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

#ifdef __cplusplus
}
#endif
#endif
