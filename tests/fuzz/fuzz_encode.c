/* fuzz_encode.c: fuzz target of the client's argument encoder (client/src
 * encode.h via ls__encode_args): a fuzzed format is compiled like a call
 * site, then called through a real variadic call built with libffi, with
 * argument values (and string lengths) taken from the input. Checks that the
 * encoder stays inside its buffer (ASan: the buffer is exactly cap bytes, the
 * cap logsink's hot path gives it), that the daemon's check (ls_args_check)
 * accepts every encoding, that values round-trip, and that strings are cut
 * only by what the truncation count says.
 * Input: u8 fmt length | fmt | u8 errno | u8 cap choice | values... */
#define _GNU_SOURCE
#include <ffi.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "fuzz_check.h"
#include "logsink/proto/args.h"
#include "logsink/proto/printf.h"
#include "site.h"

/* The variadic function libffi calls: what LS_LOG's hot path does. */
static size_t EncodeVa(const ls__prog *p, int saved_errno, uint8_t *out, size_t cap,
                       uint64_t *trunc, ...) {
  va_list ap;
  va_start(ap, trunc);
  size_t n = ls__encode_args(p, &ap, saved_errno, out, cap, trunc);
  va_end(ap);
  return n;
}

/* Reads fuzz bytes; zeros when exhausted. */
typedef struct {
  const uint8_t *p, *end;
} Src;
static uint64_t Take(Src *s, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v |= (uint64_t)(s->p < s->end ? *s->p++ : 0) << (8 * i);
  return v;
}

/* One argument: its storage (libffi takes pointers to values) and what
 * the encoding must decode to. */
typedef struct {
  int i32;
  unsigned u32;
  int64_t i64;
  uint64_t u64;
  double d;
  long double ld;
  void *ptr;
  char *str;     /* owned */
  wchar_t *wstr; /* owned */
  char *want;    /* STR/WSTR/ERRNO: the full bytes expected before cutting (owned) */
  size_t want_len;
  int64_t want_i;  /* INT */
  uint64_t want_u; /* UINT, CHAR, PTR */
} Arg;

static size_t Utf8(uint8_t *o, uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    o[0] = (uint8_t)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (uint8_t)(0xC0 | cp >> 6);
    o[1] = (uint8_t)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (uint8_t)(0xE0 | cp >> 12);
    o[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    o[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (uint8_t)(0xF0 | cp >> 18);
  o[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
  o[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
  o[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  size_t fl = data[0] < size - 1 ? data[0] : size - 1;
  char fmt[256];
  memcpy(fmt, data + 1, fl);
  fmt[fl] = 0;
  size_t len = strnlen(fmt, fl); /* a call site's format is a C string */
  Src src = {data + 1 + fl, data + size};
  int saved_errno = (int)Take(&src, 1);
  unsigned cap_choice = (unsigned)Take(&src, 1);

  ls__prog p;
  if (ls__prog_build(fmt, len, &p) != 0) return 0;
  char sig[LS_FMT_MAX_ARGS + 1];
  FUZZ_CHECK(ls_fmt_signature(fmt, len, sig, sizeof sig) == p.nargs);

  /* The cap the hot path passes: fixed_max for all-fixed sites, else the
   * client's max_record_bytes (1 KiB .. 64 KiB). */
  size_t cap = p.has_str ? 1024 + (size_t)cap_choice * 252 : p.fixed_max;

  Arg args[LS_FMT_MAX_ARGS];
  ffi_type *types[5 + LS_FMT_MAX_ARGS];
  void *values[5 + LS_FMT_MAX_ARGS];
  memset(args, 0, sizeof args);
  unsigned nv = 5;
  long star = -1;
  for (unsigned i = 0; i < p.nargs; i++) {
    Arg *a = &args[i];
    int op = p.op[i];
    switch (op) {
      case LS_OP_INT:
      case LS_OP_STAR:
      case LS_OP_SCHAR:
      case LS_OP_SHORT:
        a->i32 = (int)Take(&src, 4);
        if (op == LS_OP_STAR) {
          a->i32 = (int)(int16_t)a->i32; /* stars as precisions: keep strings small-ish */
          star = a->i32;
        }
        a->want_i = op == LS_OP_SCHAR   ? (signed char)a->i32
                    : op == LS_OP_SHORT ? (short)a->i32
                                        : a->i32;
        types[nv] = &ffi_type_sint;
        values[nv++] = &a->i32;
        break;
      case LS_OP_LONG:
      case LS_OP_LLONG:
      case LS_OP_INTMAX:
      case LS_OP_SSIZE:
      case LS_OP_PTRDIFF:
      case LS_OP_UPTRDIFF:
        a->i64 = (int64_t)Take(&src, 8);
        a->want_i = a->i64;
        a->want_u = (uint64_t)a->i64;
        types[nv] = &ffi_type_sint64;
        values[nv++] = &a->i64;
        break;
      case LS_OP_UINT:
      case LS_OP_UCHAR:
      case LS_OP_USHORT:
      case LS_OP_CHAR:
      case LS_OP_WCHAR:
        a->u32 = (unsigned)Take(&src, 4);
        if (op == LS_OP_UCHAR || op == LS_OP_CHAR) a->u32 &= 0xff; /* as promoted from a char */
        if (op == LS_OP_USHORT) a->u32 &= 0xffff;
        a->want_u = a->u32;
        types[nv] = &ffi_type_uint32;
        values[nv++] = &a->u32;
        break;
      case LS_OP_ULONG:
      case LS_OP_ULLONG:
      case LS_OP_UINTMAX:
      case LS_OP_SIZE:
        a->u64 = Take(&src, 8);
        a->want_u = a->u64;
        types[nv] = &ffi_type_uint64;
        values[nv++] = &a->u64;
        break;
      case LS_OP_PTR:
        a->u64 = Take(&src, 8);
        a->ptr = (void *)(uintptr_t)a->u64;
        a->want_u = a->u64;
        types[nv] = &ffi_type_pointer;
        values[nv++] = &a->ptr;
        break;
      case LS_OP_DOUBLE: {
        uint64_t bits = Take(&src, 8);
        memcpy(&a->d, &bits, 8);
        types[nv] = &ffi_type_double;
        values[nv++] = &a->d;
        break;
      }
      case LS_OP_LDOUBLE: {
        uint64_t bits = Take(&src, 8);
        memcpy(&a->d, &bits, 8);
        a->ld = a->d;
        types[nv] = &ffi_type_longdouble;
        values[nv++] = &a->ld;
        break;
      }
      case LS_OP_STR:
      case LS_OP_WSTR: {
        /* Length: 1 byte, times 300 when the top bit is set (up to ~38 KiB,
         * beyond small caps: truncation). The content repeats fuzz bytes. */
        uint64_t l = Take(&src, 1);
        int is_null = l == 0xff;
        if (l & 0x80) l = (l & 0x7f) * 300;
        long prec = p.prec[i] == LS_PREC_STAR ? (star >= 0 ? star : -1) : p.prec[i];
        if (op == LS_OP_STR) {
          a->str = malloc(l + 1);
          FUZZ_CHECK(a->str != NULL);
          uint8_t seed = (uint8_t)Take(&src, 1);
          for (uint64_t k = 0; k < l; k++) {
            uint8_t c = (uint8_t)(seed + k % 7);
            a->str[k] = (char)(c ? c : 1); /* no NUL inside */
          }
          a->str[l] = 0;
          const char *s = is_null ? "(null)" : a->str;
          size_t n = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
          a->want = malloc(n + 1);
          memcpy(a->want, s, n);
          a->want_len = n;
          a->ptr = is_null ? NULL : a->str;
        } else {
          a->wstr = malloc((l + 1) * sizeof(wchar_t));
          FUZZ_CHECK(a->wstr != NULL);
          uint32_t cp = (uint32_t)Take(&src, 4) % 0x110010u + 1;
          for (uint64_t k = 0; k < l; k++) a->wstr[k] = (wchar_t)(cp + (uint32_t)k % 3);
          a->wstr[l] = 0;
          const wchar_t *w = is_null ? L"(null)" : a->wstr;
          a->want = malloc(4 * wcslen(w) + 1);
          size_t n = 0;
          for (size_t k = 0; w[k]; k++) {
            uint8_t tmp[4];
            size_t m = Utf8(tmp, (uint32_t)w[k]);
            if (prec >= 0 && n + m > (size_t)prec) break;
            memcpy(a->want + n, tmp, m);
            n += m;
          }
          a->want_len = n;
          a->ptr = is_null ? NULL : a->wstr;
        }
        types[nv] = &ffi_type_pointer;
        values[nv++] = &a->ptr;
        break;
      }
      case LS_OP_ERRNO: { /* %m takes no argument */
        char buf[256];
        const char *s = strerror_r(saved_errno, buf, sizeof buf);
        a->want_len = strlen(s);
        a->want = malloc(a->want_len + 1);
        memcpy(a->want, s, a->want_len + 1);
        break;
      }
      default:
        FUZZ_CHECK(!"unknown op");
    }
  }

  uint8_t *out = malloc(cap ? cap : 1);
  FUZZ_CHECK(out != NULL);
  uint64_t trunc = 0;
  const ls__prog *pp = &p;
  uint8_t *outp = out;
  uint64_t *truncp = &trunc;
  ffi_type *fixed_types[5] = {&ffi_type_pointer, &ffi_type_sint, &ffi_type_pointer,
                              &ffi_type_uint64, &ffi_type_pointer};
  memcpy(types, fixed_types, sizeof fixed_types);
  values[0] = &pp;
  values[1] = &saved_errno;
  values[2] = &outp;
  values[3] = &cap;
  values[4] = &truncp;
  ffi_cif cif;
  FUZZ_CHECK(ffi_prep_cif_var(&cif, FFI_DEFAULT_ABI, 5, nv, &ffi_type_uint64, types) == FFI_OK);
  uint64_t ret = 0;
  ffi_call(&cif, FFI_FN(EncodeVa), &ret, values);
  size_t n = (size_t)ret;

  /* The daemon accepts it, and it decodes to what was passed. */
  FUZZ_CHECK(n <= cap);
  FUZZ_CHECK(ls_args_check(sig, out, n) == 0);
  const uint8_t *q = out, *end = out + n;
  uint64_t cut = 0;
  for (unsigned i = 0; i < p.nargs; i++) {
    ls_arg v;
    /* zeroed: GCC 12 at -O3 does not see that v is filled whenever k > 0
     * (checked below) and warns -Wmaybe-uninitialized on v.len */
    memset(&v, 0, sizeof v);
    size_t k = ls_arg_get(sig[i], q, end, &v);
    FUZZ_CHECK(k > 0);
    q += k;
    const Arg *a = &args[i];
    switch (sig[i]) {
      case LS_ARG_INT:
        FUZZ_CHECK((int64_t)v.u == a->want_i);
        break;
      case LS_ARG_UINT:
      case LS_ARG_CHAR:
      case LS_ARG_PTR:
        FUZZ_CHECK(v.u == a->want_u);
        break;
      case LS_ARG_DOUBLE:
        FUZZ_CHECK(memcmp(&v.f, &a->d, 8) == 0 || (isnan(v.f) && isnan(a->d)));
        break;
      case LS_ARG_STR:
        /* a prefix of the full string, cut only at a character boundary
         * for wide strings, and counted */
        FUZZ_CHECK(v.len <= a->want_len && memcmp(v.s, a->want, v.len) == 0);
        if (p.op[i] == LS_OP_WSTR && v.len < a->want_len)
          FUZZ_CHECK(((uint8_t)a->want[v.len] & 0xC0) != 0x80);
        cut += a->want_len - v.len;
        break;
    }
  }
  FUZZ_CHECK(q == end);
  FUZZ_CHECK(cut == trunc);
  if (!p.has_str) FUZZ_CHECK(trunc == 0);

  free(out);
  for (unsigned i = 0; i < p.nargs; i++) {
    free(args[i].str);
    free(args[i].wstr);
    free(args[i].want);
  }
  return 0;
}
