/* printf.h: the printf format-string parser shared by the client (to encode
 * arguments), the daemon (to validate records) and logctl (to render them).
 * Header-only C11, usable from C++. Pure functions over (fmt, len): the format
 * is untrusted input on the daemon and logctl side.
 *
 * A format's *signature* is the list of argument types it consumes, one
 * character per argument (see LS_ARG_*). The encoding of each type on the wire
 * and on disk is in proto/PROTOCOL.md ("Arguments").
 *
 * Supported: flags `-+ #0'`, width and precision as digits or `*`, length
 * modifiers hh h l ll j z t L q, conversions d i u o x X f F e E g G a A c s p
 * %% and glibc's %m (strerror(errno), taken by the client as a string).
 * Refused (-EINVAL): %n (writes memory), positional arguments (%1$d), unknown
 * conversions, a lone '%' at the end.
 *
 * A format that starts with LS_BRACES_MARK is not a printf format but a
 * brace format (braces.h): ls_fmt_signature knows both; ls_fmt_next only
 * printf's. */
#ifndef LOGSINK_PROTO_PRINTF_H
#define LOGSINK_PROTO_PRINTF_H

#include <errno.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Argument types (signature characters). */
#define LS_ARG_INT 'i'    /* signed integer of any C width: zigzag varint */
#define LS_ARG_UINT 'u'   /* unsigned integer of any C width: varint */
#define LS_ARG_DOUBLE 'f' /* double (long double is converted): 8 bytes IEEE 754 LE */
#define LS_ARG_CHAR 'c'   /* %c / %lc: the character's code point, varint */
#define LS_ARG_STR 's'    /* %s / %ls / %m: varint byte length + UTF-8/raw bytes */
#define LS_ARG_PTR 'p'    /* %p: pointer value, varint */

#define LS_FMT_MAX_ARGS 64 /* most arguments one format may consume */

/* A format whose first byte is this one is a brace format (braces.h, the
 * C++ API's): its arguments are listed by type letters between two such
 * bytes, then comes its text; the conversions below do not apply to it. */
#define LS_BRACES_MARK '\x1e'

/* The argument type (LS_ARG_*) of a brace format's type letter, 0 for a
 * letter that is none: i signed, u unsigned, b bool (0 or 1, as unsigned),
 * c a char (one byte), f double, F float (sent as the double of its value),
 * s string, p pointer. */
static inline char ls_brace_arg_type(char t) {
  switch (t) {
    case 'i':
      return LS_ARG_INT;
    case 'u':
    case 'b':
      return LS_ARG_UINT;
    case 'c':
      return LS_ARG_CHAR;
    case 'f':
    case 'F':
      return LS_ARG_DOUBLE;
    case 's':
      return LS_ARG_STR;
    case 'p':
      return LS_ARG_PTR;
    default:
      return 0;
  }
}

/* Flags of a conversion. */
#define LS_FMT_MINUS 0x01u
#define LS_FMT_PLUS 0x02u
#define LS_FMT_SPACE 0x04u
#define LS_FMT_HASH 0x08u
#define LS_FMT_ZERO 0x10u
#define LS_FMT_QUOTE 0x20u

#define LS_FMT_STAR (-2) /* width/precision taken from an int argument */
#define LS_FMT_NONE (-1) /* width/precision absent */

/* Length modifiers. */
enum ls_fmt_len {
  LS_LEN_NONE = 0,
  LS_LEN_HH,
  LS_LEN_H,
  LS_LEN_L,
  LS_LEN_LL,
  LS_LEN_J,
  LS_LEN_Z,
  LS_LEN_T,
  LS_LEN_BIGL
};

typedef struct ls_fmt_spec {
  size_t start;   /* offset of '%' */
  size_t end;     /* offset one past the conversion character */
  unsigned flags; /* LS_FMT_* */
  int width;      /* >= 0, LS_FMT_NONE or LS_FMT_STAR */
  int precision;  /* >= 0, LS_FMT_NONE or LS_FMT_STAR */
  int length;     /* enum ls_fmt_len */
  char conv;      /* conversion character, '%' for %% */
  char type;      /* LS_ARG_* of the value, 0 for %% */
} ls_fmt_spec;

static inline int ls__fmt_num(const char *f, size_t len, size_t *i, int *out) {
  int v = 0;
  if (*i >= len || f[*i] < '0' || f[*i] > '9') return 0;
  while (*i < len && f[*i] >= '0' && f[*i] <= '9') {
    if (v > 100000) return -EINVAL; /* absurd width/precision */
    v = v * 10 + (f[*i] - '0');
    (*i)++;
  }
  *out = v;
  return 1;
}

/* Finds the next conversion at or after *pos. Returns 1 and fills *spec (and
 * sets *pos = spec->end), 0 when there is none left, -EINVAL when the format
 * is malformed or uses something refused (see the top of this file).
 * One function on purpose: it follows C's grammar of a conversion in order
 * (flags, width, precision, length, conversion character), each part a few
 * lines one after the other; split, the parts would pass the position and
 * the spec back and forth without becoming any clearer. */
static inline int ls_fmt_next(const char *f, size_t len, size_t *pos, ls_fmt_spec *spec) {
  size_t i = *pos;
  while (i < len && f[i] != '%') i++;
  if (i >= len) {
    *pos = len;
    return 0;
  }
  spec->start = i++;
  spec->flags = 0;
  spec->width = LS_FMT_NONE;
  spec->precision = LS_FMT_NONE;
  spec->length = LS_LEN_NONE;
  for (;; i++) {
    if (i >= len) return -EINVAL;
    switch (f[i]) {
      case '-':
        spec->flags |= LS_FMT_MINUS;
        continue;
      case '+':
        spec->flags |= LS_FMT_PLUS;
        continue;
      case ' ':
        spec->flags |= LS_FMT_SPACE;
        continue;
      case '#':
        spec->flags |= LS_FMT_HASH;
        continue;
      case '0':
        spec->flags |= LS_FMT_ZERO;
        continue;
      case '\'':
        spec->flags |= LS_FMT_QUOTE;
        continue;
      default:
        break;
    }
    break;
  }
  if (f[i] == '*') {
    spec->width = LS_FMT_STAR;
    i++;
  } else if (ls__fmt_num(f, len, &i, &spec->width) < 0) {
    return -EINVAL;
  }
  if (i < len && f[i] == '$') return -EINVAL; /* positional arguments */
  if (i < len && f[i] == '.') {
    i++;
    if (i < len && f[i] == '*') {
      spec->precision = LS_FMT_STAR;
      i++;
    } else {
      int r = ls__fmt_num(f, len, &i, &spec->precision);
      if (r < 0) return -EINVAL;
      if (r == 0) spec->precision = 0; /* "%.f" means precision 0 */
    }
  }
  if (i >= len) return -EINVAL;
  switch (f[i]) {
    case 'h':
      if (i + 1 < len && f[i + 1] == 'h') {
        spec->length = LS_LEN_HH;
        i += 2;
      } else {
        spec->length = LS_LEN_H;
        i++;
      }
      break;
    case 'l':
      if (i + 1 < len && f[i + 1] == 'l') {
        spec->length = LS_LEN_LL;
        i += 2;
      } else {
        spec->length = LS_LEN_L;
        i++;
      }
      break;
    case 'q':
      spec->length = LS_LEN_LL;
      i++;
      break;
    case 'j':
      spec->length = LS_LEN_J;
      i++;
      break;
    case 'z':
      spec->length = LS_LEN_Z;
      i++;
      break;
    case 't':
      spec->length = LS_LEN_T;
      i++;
      break;
    case 'L':
      spec->length = LS_LEN_BIGL;
      i++;
      break;
    default:
      break;
  }
  if (i >= len) return -EINVAL;
  spec->conv = f[i];
  switch (f[i]) {
    case 'd':
    case 'i':
      spec->type = LS_ARG_INT;
      break;
    case 'u':
    case 'o':
    case 'x':
    case 'X':
      spec->type = LS_ARG_UINT;
      break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
      spec->type = LS_ARG_DOUBLE;
      break;
    case 'c':
      spec->type = LS_ARG_CHAR;
      break;
    case 's':
    case 'm':
      spec->type = LS_ARG_STR;
      break;
    case 'p':
      spec->type = LS_ARG_PTR;
      break;
    case '%':
      /* Only a bare "%%" is accepted. */
      if (i != spec->start + 1) return -EINVAL;
      spec->type = 0;
      break;
    default:
      return -EINVAL; /* includes %n */
  }
  spec->end = i + 1;
  *pos = spec->end;
  return 1;
}

/* Writes the signature of fmt into sig (NUL-terminated; one LS_ARG_* per
 * argument, `*` widths and precisions included as LS_ARG_INT, in argument
 * order). Returns the number of arguments, -EINVAL for a malformed or refused
 * format, -E2BIG for more than min(cap - 1, LS_FMT_MAX_ARGS) arguments. */
static inline int ls_fmt_signature(const char *fmt, size_t len, char *sig, size_t cap) {
  size_t pos = 0, n = 0;
  ls_fmt_spec s;
  int r;
  size_t max = cap ? cap - 1 : 0;
  if (max > LS_FMT_MAX_ARGS) max = LS_FMT_MAX_ARGS;
  if (len && fmt[0] == LS_BRACES_MARK) {
    /* A brace format: its type letters, then (after its text, whose rules
     * are braces.h's) the conversions of a field list (fields.h) after
     * the first 0x1F, as for any format. */
    for (pos = 1; pos < len && fmt[pos] != LS_BRACES_MARK; pos++) {
      const char t = ls_brace_arg_type(fmt[pos]);
      if (!t) return -EINVAL;
      if (n >= max) return -E2BIG;
      sig[n++] = t;
    }
    if (pos >= len) return -EINVAL;
    while (pos < len && fmt[pos] != '\x1f') pos++;
  }
  while ((r = ls_fmt_next(fmt, len, &pos, &s)) > 0) {
    if (s.type == 0) continue;
    if (s.width == LS_FMT_STAR) {
      if (n >= max) return -E2BIG;
      sig[n++] = LS_ARG_INT;
    }
    if (s.precision == LS_FMT_STAR) {
      if (n >= max) return -E2BIG;
      sig[n++] = LS_ARG_INT;
    }
    if (n >= max) return -E2BIG;
    sig[n++] = s.type;
  }
  if (r < 0) return r;
  if (cap) sig[n] = '\0';
  return (int)n;
}

#ifdef __cplusplus
}
#endif
#endif
