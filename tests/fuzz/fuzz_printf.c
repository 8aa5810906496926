/* fuzz_printf.c: fuzz target of the printf format parser (proto/printf.h:
 * ls_fmt_next, ls_fmt_signature) and of the client's call-site compiler
 * (client/src ls__prog_build). Input: byte 0 picks a signature buffer size,
 * the rest is the format. Checks every spec against the format text, that
 * ls_fmt_signature matches an independent walk with ls_fmt_next for every
 * buffer size (and never writes past it), and that the client's argument
 * program takes exactly the signature the daemon will check records by. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "logsink/proto/braces.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/fields.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/printf.h"
#include "site.h"

static char OpType(int op) {
  switch (op) {
    case LS_OP_INT:
    case LS_OP_SCHAR:
    case LS_OP_SHORT:
    case LS_OP_LONG:
    case LS_OP_LLONG:
    case LS_OP_INTMAX:
    case LS_OP_SSIZE:
    case LS_OP_PTRDIFF:
    case LS_OP_STAR:
      return LS_ARG_INT;
    case LS_OP_UINT:
    case LS_OP_UCHAR:
    case LS_OP_USHORT:
    case LS_OP_ULONG:
    case LS_OP_ULLONG:
    case LS_OP_UINTMAX:
    case LS_OP_SIZE:
    case LS_OP_UPTRDIFF:
      return LS_ARG_UINT;
    case LS_OP_DOUBLE:
    case LS_OP_LDOUBLE:
      return LS_ARG_DOUBLE;
    case LS_OP_CHAR:
    case LS_OP_WCHAR:
      return LS_ARG_CHAR;
    case LS_OP_STR:
    case LS_OP_WSTR:
    case LS_OP_ERRNO:
      return LS_ARG_STR;
    case LS_OP_PTR:
      return LS_ARG_PTR;
    default:
      return 0;
  }
}

static char ConvType(char c) {
  switch (c) {
    case 'd':
    case 'i':
      return LS_ARG_INT;
    case 'u':
    case 'o':
    case 'x':
    case 'X':
      return LS_ARG_UINT;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
      return LS_ARG_DOUBLE;
    case 'c':
      return LS_ARG_CHAR;
    case 's':
    case 'm':
      return LS_ARG_STR;
    case 'p':
      return LS_ARG_PTR;
    default:
      return 0;
  }
}

/* The signature letter of a brace format's type letter (FORMAT.md, "Brace
 * formats"), 0 for none; independent of printf.h's on purpose. */
static char BraceType(char t) {
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

/* What ls_fmt_signature must return for buffer size cap, computed with
 * ls_fmt_next (a brace format: its letters, then the conversions after its
 * text's 0x1F); *want receives the expected signature. */
static int Expected(const char *f, size_t len, size_t cap, char *want) {
  size_t max = cap ? cap - 1 : 0, n = 0, pos = 0;
  if (max > LS_FMT_MAX_ARGS) max = LS_FMT_MAX_ARGS;
  ls_fmt_spec s;
  int r;
  if (len && f[0] == '\x1e') {
    for (pos = 1; pos < len && f[pos] != '\x1e'; pos++) {
      if (!BraceType(f[pos])) return -EINVAL;
      if (n + 1 > max) return -E2BIG;
      want[n++] = BraceType(f[pos]);
    }
    if (pos >= len) return -EINVAL;
    const char *sep = memchr(f + pos, 0x1f, len - pos);
    pos = sep ? (size_t)(sep - f) : len;
  }
  while ((r = ls_fmt_next(f, len, &pos, &s)) > 0) {
    if (s.type == 0) continue;
    size_t need = 1u + (s.width == LS_FMT_STAR) + (s.precision == LS_FMT_STAR);
    if (n + need > max) return -E2BIG;
    if (s.width == LS_FMT_STAR) want[n++] = LS_ARG_INT;
    if (s.precision == LS_FMT_STAR) want[n++] = LS_ARG_INT;
    want[n++] = s.type;
  }
  want[n] = 0;
  return r < 0 ? r : (int)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const char *f = (const char *)data + 1;
  size_t len = size - 1;

  /* Every spec lies inside the format and describes its text. */
  size_t pos = 0, prev_end = 0, specs = 0;
  ls_fmt_spec s;
  int r;
  while ((r = ls_fmt_next(f, len, &pos, &s)) > 0) {
    FUZZ_CHECK(s.start >= prev_end && s.start < s.end && s.end <= len && pos == s.end);
    FUZZ_CHECK(f[s.start] == '%' && f[s.end - 1] == s.conv);
    FUZZ_CHECK(memchr(f + prev_end, '%', s.start - prev_end) == NULL);
    FUZZ_CHECK(s.type == ConvType(s.conv) &&
               (s.type != 0 || (s.conv == '%' && s.end == s.start + 2)));
    FUZZ_CHECK((s.flags & ~0x3fu) == 0 && s.length >= LS_LEN_NONE && s.length <= LS_LEN_BIGL);
    FUZZ_CHECK(s.width == LS_FMT_NONE || s.width == LS_FMT_STAR || s.width >= 0);
    FUZZ_CHECK(s.precision == LS_FMT_NONE || s.precision == LS_FMT_STAR || s.precision >= 0);
    FUZZ_CHECK(s.conv != 'n');
    prev_end = s.end;
    specs++;
  }
  FUZZ_CHECK(r == 0 || r == -EINVAL);
  if (r == 0) FUZZ_CHECK(pos == len && memchr(f + prev_end, '%', len - prev_end) == NULL);

  /* ls_fmt_signature with a buffer of exactly `cap` bytes (ASan sees a
   * write past it), for the size byte 0 picks and for the full size. */
  char want[LS_FMT_MAX_ARGS + 1];
  size_t caps[2] = {data[0] % (LS_FMT_MAX_ARGS + 3), LS_FMT_MAX_ARGS + 1};
  int full = 0;
  for (int k = 0; k < 2; k++) {
    size_t cap = caps[k];
    char *sig = malloc(cap ? cap : 1);
    FUZZ_CHECK(sig != NULL);
    int n = ls_fmt_signature(f, len, sig, cap);
    int e = Expected(f, len, cap, want);
    FUZZ_CHECK(n == e);
    if (n >= 0 && cap) FUZZ_CHECK(strcmp(sig, want) == 0);
    if (k == 1) full = n;
    free(sig);
  }

  /* The client's program takes the same arguments, in the same order; a
   * format holding 0x1F must also be a field list the daemon takes
   * (proto/fields.h), else the client refuses it. */
  ls__prog p;
  int pr = ls__prog_build(f, len, &p);
  /* A brace format also needs a text that parses and room for the printf
   * form an older daemon is sent (4 bytes more per argument). */
  const int braces = len && f[0] == '\x1e';
  ls_braces b;
  const int brace_bad =
      braces && (ls_braces_check(f, len) < 0 ||
                 (ls_braces_split(f, len, &b) == 1 && len + 4 * b.ntypes > LS_INTERN_MAX_FMT));
  if (braces && full < 0)
    FUZZ_CHECK(pr == -EINVAL || pr == full);
  else if (full >= 0 &&
           (brace_bad || (memchr(f, LS_FIELDS_SEP, len) && ls_fields_check(f, len, 0) < 0)))
    FUZZ_CHECK(pr == -EINVAL);
  else
    FUZZ_CHECK(pr == (full < 0 ? full : 0));
  if (pr == 0) FUZZ_CHECK(p.fields == (memchr(f, LS_FIELDS_SEP, len) != NULL));
  if (pr == 0) {
    unsigned fixed = 0;
    int has_str = 0;
    FUZZ_CHECK(p.nargs == (unsigned)full);
    for (unsigned i = 0; i < p.nargs; i++) {
      FUZZ_CHECK(OpType(p.op[i]) == want[i]);
      if (want[i] == LS_ARG_STR)
        has_str = 1;
      else
        fixed += want[i] == LS_ARG_DOUBLE ? 8 : LS_VARINT_MAX;
    }
    FUZZ_CHECK(p.fixed_max == (fixed > 255 ? 255 : fixed));
    FUZZ_CHECK(p.has_str == (has_str || fixed > 255));
  }
  return 0;
}
