/* braces.h: brace formats, the call sites of the C++ API (logsink.hpp):
 * a message in the replacement-field syntax of fmt and of C++20's
 * std::format, with its arguments' types listed before it (FORMAT.md,
 * "Brace formats"; render/RENDERING.md, "Brace formats"):
 *
 *   fmt   := 0x1E type* 0x1E text [0x1F field list (fields.h)]
 *   type  := i signed integer | u unsigned integer | b bool | c char (a byte)
 *          | f double | F float | s string | p pointer
 *
 * The types say how each argument is encoded (printf.h's
 * ls_brace_arg_type: a bool as an unsigned 0 or 1, a float as the double
 * of its value); the text's fields say how each shows. The text:
 *
 *   text      := (any byte but '{', '}' and 0x1F | '{{' | '}}' | field)*
 *   field     := '{' [arg_id] [':' spec] '}'   (spec not empty)
 *   arg_id    := '0' | [1-9][0-9]*    (every field and nested width or
 *                                      precision numbered, or none: then
 *                                      they count 0, 1, 2 ... in order)
 *   spec      := [[fill] align] [sign] ['#'] ['0'] [width] ['.' precision]
 *                ['L'] [ptype]
 *   fill      := one UTF-8 character other than '{'
 *   align     := '<' | '>' | '^'
 *   sign      := '+' | '-' | ' '
 *   width     := [1-9][0-9]* (after '0': [0-9]+) | '{' [arg_id] '}'
 *   precision := [0-9]+ | '{' [arg_id] '}'
 *   ptype     := one of a A b B c d e E f F g G o p s x X
 *
 * Numbers are at most 2^31 - 1 and 10 digits; an arg_id names one of the
 * listed arguments; a nested width or precision names an integral one
 * (i, u, b or c: what fmt 9 checks when the program compiles).
 * Which spec suits which type is the renderer's (fmt's) rule: a record whose
 * spec does not suit its value renders as a mismatch. Header-only C11,
 * usable from C++: pure functions over untrusted (fmt, len). */
#ifndef LOGSINK_PROTO_BRACES_H
#define LOGSINK_PROTO_BRACES_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "logsink/proto/printf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LS_BRACE_NONE (-1)           /* width or precision absent */
#define LS_BRACE_NUM_MAX 2147483647L /* largest number in a spec */

/* A brace format split: offsets into fmt. */
typedef struct ls_braces {
  size_t types;    /* first type letter */
  size_t ntypes;   /* type letters (the text's arguments) */
  size_t text;     /* first byte of the text */
  size_t text_len; /* bytes of the text (up to 0x1F or the end) */
} ls_braces;

/* One replacement field of a text. */
typedef struct ls_brace_field {
  size_t start, end; /* offsets in the text of its '{' and one past its '}' */
  unsigned arg;      /* the value's argument (0-based, among the types) */
  size_t fill;       /* offset of the fill character in the text */
  size_t fill_len;   /* its bytes; 0: no fill given */
  char align;        /* '<' '>' '^', or 0 */
  char sign;         /* '+' '-' ' ', or 0 */
  char hash, zero, locale;
  char ptype;        /* presentation type, or 0 */
  long width;        /* >= 1, or LS_BRACE_NONE */
  int width_arg;     /* the argument holding the width, or -1 */
  long precision;    /* >= 0, or LS_BRACE_NONE */
  int precision_arg; /* the argument holding the precision, or -1 */
} ls_brace_field;

/* Walks the fields of a text: start with ls_brace_begin. */
typedef struct ls_brace_iter {
  const char *text;
  size_t len, pos;
  const char *types; /* type letters */
  unsigned ntypes;
  int numbering; /* 0: not known yet, 1: automatic, 2: manual */
  unsigned next_auto;
} ls_brace_iter;

/* Splits fmt. 1: a brace format (*b filled; its types valid letters, at
 * most LS_FMT_MAX_ARGS), 0: not one (no leading LS_BRACES_MARK), -EINVAL:
 * a leading mark but no valid type list (*b is zeroed but for 1). */
static inline int ls_braces_split(const char *fmt, size_t len, ls_braces *b) {
  memset(b, 0, sizeof *b);
  if (len == 0 || fmt[0] != LS_BRACES_MARK) return 0;
  size_t i = 1;
  while (i < len && fmt[i] != LS_BRACES_MARK) {
    if (!ls_brace_arg_type(fmt[i]) || i > LS_FMT_MAX_ARGS) return -EINVAL;
    i++;
  }
  if (i >= len) return -EINVAL;
  b->types = 1;
  b->ntypes = i - 1;
  b->text = i + 1;
  const void *sep = memchr(fmt + b->text, '\x1f', len - b->text);
  b->text_len = (sep ? (size_t)((const char *)sep - fmt) : len) - b->text;
  return 1;
}

static inline void ls_brace_begin(ls_brace_iter *it, const char *fmt, const ls_braces *b) {
  it->text = fmt + b->text;
  it->len = b->text_len;
  it->pos = 0;
  it->types = fmt + b->types;
  it->ntypes = (unsigned)b->ntypes;
  it->numbering = 0;
  it->next_auto = 0;
}

/* A decimal number at *i (at least one digit): 0 or -EINVAL (above
 * LS_BRACE_NUM_MAX, or more than 10 digits, leading zeros counted: fmt 9's
 * rule). */
static inline int ls__brace_num(const char *t, size_t len, size_t *i, long *out) {
  long v = 0;
  size_t digits = 0;
  while (*i < len && t[*i] >= '0' && t[*i] <= '9') {
    v = v * 10 + (t[*i] - '0');
    if (v > LS_BRACE_NUM_MAX || ++digits > 10) return -EINVAL;
    (*i)++;
  }
  *out = v;
  return 0;
}

/* An arg_id at *i, or none (then the next automatic one); the argument
 * index in *arg. 0 or -EINVAL. */
static inline int ls__brace_arg_id(ls_brace_iter *it, size_t *i, unsigned *arg) {
  const char *t = it->text;
  if (*i < it->len && t[*i] >= '0' && t[*i] <= '9') {
    if (it->numbering == 1) return -EINVAL;
    it->numbering = 2;
    if (t[*i] == '0' && *i + 1 < it->len && t[*i + 1] >= '0' && t[*i + 1] <= '9') return -EINVAL;
    long v;
    if (ls__brace_num(t, it->len, i, &v) < 0 || v >= (long)it->ntypes) return -EINVAL;
    *arg = (unsigned)v;
    return 0;
  }
  if (it->numbering == 2) return -EINVAL;
  it->numbering = 1;
  if (it->next_auto >= it->ntypes) return -EINVAL;
  *arg = it->next_auto++;
  return 0;
}

/* A width or precision at *i given as a nested '{' [arg_id] '}': the
 * argument must be an integer. 0 or -EINVAL. */
static inline int ls__brace_nested(ls_brace_iter *it, size_t *i, int *arg) {
  unsigned a;
  (*i)++; /* '{' */
  if (ls__brace_arg_id(it, i, &a) < 0) return -EINVAL;
  if (*i >= it->len || it->text[*i] != '}') return -EINVAL;
  (*i)++;
  /* fmt 9's compile-time check takes any integral type here (bool and
   * char too; it throws on those when formatting: a reader shows a
   * mismatch) */
  const char t = it->types[a];
  if (t != 'i' && t != 'u' && t != 'b' && t != 'c') return -EINVAL;
  *arg = (int)a;
  return 0;
}

/* Bytes of the UTF-8 character that starts with byte c, as fmt 9 counts
 * a fill's (its lead byte alone; 1 for a byte that leads none: 0x80-0xBF,
 * 0xF8-0xFF). */
static inline size_t ls__brace_utf8_len(unsigned char c) {
  return c >= 0xf8 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

/* The next replacement field. 1: *f filled, 0: no more (the text is well
 * formed up to its end), -EINVAL: malformed. */
static inline int ls_brace_next(ls_brace_iter *it, ls_brace_field *f) {
  const char *t = it->text;
  const size_t len = it->len;
  size_t i = it->pos;
  for (;;) {
    while (i < len && t[i] != '{' && t[i] != '}') i++;
    if (i >= len) {
      it->pos = i;
      return 0;
    }
    if (t[i] == '}') {
      if (i + 1 >= len || t[i + 1] != '}') return -EINVAL;
      i += 2;
      continue;
    }
    if (i + 1 < len && t[i + 1] == '{') {
      i += 2;
      continue;
    }
    break;
  }
  memset(f, 0, sizeof *f);
  f->start = i++;
  f->width = f->precision = LS_BRACE_NONE;
  f->width_arg = f->precision_arg = -1;
  if (ls__brace_arg_id(it, &i, &f->arg) < 0) return -EINVAL;
  if (i < len && t[i] == ':') {
    i++;
    const size_t spec = i;
    /* [[fill] align]: fmt 9 takes '}' for a fill, not '{' */
    const size_t k = ls__brace_utf8_len((unsigned char)(i < len ? t[i] : 0));
    if (i + k < len && (t[i + k] == '<' || t[i + k] == '>' || t[i + k] == '^') && t[i] != '{') {
      f->fill = i;
      f->fill_len = k;
      f->align = t[i + k];
      i += k + 1;
    } else if (i < len && (t[i] == '<' || t[i] == '>' || t[i] == '^')) {
      f->align = t[i++];
    }
    if (i < len && (t[i] == '+' || t[i] == '-' || t[i] == ' ')) f->sign = t[i++];
    if (i < len && t[i] == '#') f->hash = t[i++];
    if (i < len && t[i] == '0') f->zero = t[i++];
    /* after the '0' flag a width may start with 0 too ("{:005}") */
    if (i < len && t[i] >= (f->zero ? '0' : '1') && t[i] <= '9') {
      if (ls__brace_num(t, len, &i, &f->width) < 0) return -EINVAL;
    } else if (i < len && t[i] == '{') {
      if (ls__brace_nested(it, &i, &f->width_arg) < 0) return -EINVAL;
    }
    if (i < len && t[i] == '.') {
      i++;
      if (i < len && t[i] >= '0' && t[i] <= '9') {
        if (ls__brace_num(t, len, &i, &f->precision) < 0) return -EINVAL;
      } else if (i < len && t[i] == '{') {
        if (ls__brace_nested(it, &i, &f->precision_arg) < 0) return -EINVAL;
      } else {
        return -EINVAL;
      }
    }
    if (i < len && t[i] == 'L') f->locale = t[i++];
    if (i == spec && i < len && t[i] == '}') return -EINVAL; /* "{:}": fmt 9 refuses it */
    if (i < len && t[i] != '}') {
      if (t[i] == '\0' || !strchr("aAbBcdeEfFgGopsxX", t[i])) return -EINVAL;
      f->ptype = t[i++];
    }
  }
  if (i >= len || t[i] != '}') return -EINVAL;
  f->end = ++i;
  it->pos = i;
  return 1;
}

/* Checks a brace format (fields after 0x1F are fields.h's to check).
 * Returns the number of replacement fields, or -EINVAL (not a brace
 * format, or a malformed one). */
static inline int ls_braces_check(const char *fmt, size_t len) {
  ls_braces b;
  if (ls_braces_split(fmt, len, &b) != 1) return -EINVAL;
  ls_brace_iter it;
  ls_brace_field f;
  int n = 0, r;
  ls_brace_begin(&it, fmt, &b);
  while ((r = ls_brace_next(&it, &f)) > 0) n++;
  return r < 0 ? -EINVAL : n;
}

#ifdef __cplusplus
}
#endif
#endif
