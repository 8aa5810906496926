/* args.h: bounded decoding of a record's argument bytes by its signature
 * (proto/printf.h). The same encoding is used on the wire and on disk:
 *   LS_ARG_INT    zigzag varint        LS_ARG_UINT  varint
 *   LS_ARG_DOUBLE 8 bytes IEEE 754 LE  LS_ARG_CHAR  varint (code point)
 *   LS_ARG_STR    varint len | bytes   LS_ARG_PTR   varint
 * Header-only C11, usable from C++. */
#ifndef LOGSINK_PROTO_ARGS_H
#define LOGSINK_PROTO_ARGS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "logsink/proto/codec.h"
#include "logsink/proto/printf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ls_arg {
  char type;        /* LS_ARG_* */
  uint64_t u;       /* INT (as int64 bits), UINT, CHAR, PTR */
  double f;         /* DOUBLE */
  const uint8_t *s; /* STR: bytes (not NUL-terminated) */
  size_t len;       /* STR: byte length */
} ls_arg;

/* Decodes one argument of `type` from [p, end). Returns bytes consumed, or 0
 * when truncated, malformed or of an unknown type. */
static inline size_t ls_arg_get(char type, const uint8_t *p, const uint8_t *end, ls_arg *a) {
  size_t n;
  uint64_t v;
  a->type = type;
  switch (type) {
    case LS_ARG_INT:
      n = ls_get_varint(p, end, &v);
      if (n) a->u = (uint64_t)ls_unzigzag(v);
      return n;
    case LS_ARG_UINT:
    case LS_ARG_CHAR:
    case LS_ARG_PTR:
      return ls_get_varint(p, end, &a->u);
    case LS_ARG_DOUBLE:
      if (end - p < 8) return 0;
      memcpy(&a->f, p, 8);
      return 8;
    case LS_ARG_STR:
      n = ls_get_varint(p, end, &v);
      if (!n || v > (uint64_t)(end - p - (ptrdiff_t)n)) return 0;
      a->s = p + n;
      a->len = (size_t)v;
      return n + (size_t)v;
    default:
      return 0;
  }
}

/* An integer argument as printf's length modifier (ls_fmt_spec.length)
 * makes it: hh 8 bits, h 16, none 32, the others 64; a signed value comes
 * back sign-extended (the bits of an int64_t). What a reader shows. */
static inline uint64_t ls_arg_narrow(int length, uint64_t v, int is_signed) {
  const int bits = length == LS_LEN_HH     ? 8
                   : length == LS_LEN_H    ? 16
                   : length == LS_LEN_NONE ? 32
                                           : 64;
  if (bits == 64) return v;
  const uint64_t mask = ((uint64_t)1 << bits) - 1;
  v &= mask;
  if (is_signed && (v >> (bits - 1)) != 0) v |= ~mask;
  return v;
}

/* Checks that [p, p + len) holds exactly the arguments of sig. Returns 0 or
 * -EBADMSG. */
static inline int ls_args_check(const char *sig, const uint8_t *p, size_t len) {
  const uint8_t *end = p + len;
  ls_arg a;
  for (; *sig; sig++) {
    size_t n = ls_arg_get(*sig, p, end, &a);
    if (!n) return -EBADMSG;
    p += n;
  }
  return p == end ? 0 : -EBADMSG;
}

#ifdef __cplusplus
}
#endif
#endif
