/* site.c: call-site preparation (a format parsed once per process into a
 * small argument program) and the argument encoder of PROTOCOL.md
 * "Arguments" that runs on every call. */
#define _GNU_SOURCE
#include "site.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "clock.h"
#include "encode.h"
#include "logsink/proto/braces.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/fields.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/wire.h"

static int ls__int_op(int length) {
  switch (length) {
    case LS_LEN_HH:
      return LS_OP_SCHAR;
    case LS_LEN_H:
      return LS_OP_SHORT;
    case LS_LEN_L:
      return LS_OP_LONG;
    case LS_LEN_LL:
    case LS_LEN_BIGL:
      return LS_OP_LLONG; /* glibc reads %Ld as long long */
    case LS_LEN_J:
      return LS_OP_INTMAX;
    case LS_LEN_Z:
      return LS_OP_SSIZE;
    case LS_LEN_T:
      return LS_OP_PTRDIFF;
    default:
      return LS_OP_INT;
  }
}

static int ls__uint_op(int length) {
  switch (length) {
    case LS_LEN_HH:
      return LS_OP_UCHAR;
    case LS_LEN_H:
      return LS_OP_USHORT;
    case LS_LEN_L:
      return LS_OP_ULONG;
    case LS_LEN_LL:
    case LS_LEN_BIGL:
      return LS_OP_ULLONG;
    case LS_LEN_J:
      return LS_OP_UINTMAX;
    case LS_LEN_Z:
      return LS_OP_SIZE;
    case LS_LEN_T:
      return LS_OP_UPTRDIFF;
    default:
      return LS_OP_UINT;
  }
}

int ls__prog_build(const char *fmt, size_t len, ls__prog *p) {
  size_t pos = 0;
  ls_fmt_spec s;
  int r;
  unsigned n = 0, fixed = 0;
  memset(p, 0, sizeof *p);
  ls_braces b;
  if (ls_braces_split(fmt, len, &b) != 0) {
    /* The C++ API's brace format: one op per type letter (varargs take a
     * bool as int, a float as double), then the field list's conversions. */
    /* The printf format sent to a daemon without brace formats
     * (sender.c) must fit an INTERN: up to 5 bytes (" %llu") per argument
     * where the letter took one. */
    if (ls_braces_check(fmt, len) < 0 || len + 4 * b.ntypes > LS_INTERN_MAX_FMT) return -EINVAL;
    for (size_t i = 0; i < b.ntypes; i++) {
      int op;
      switch (fmt[b.types + i]) {
        case 'i':
          op = LS_OP_LLONG;
          break;
        case 'u':
          op = LS_OP_ULLONG;
          break;
        case 'b':
          op = LS_OP_UINT;
          break;
        case 'c':
          op = LS_OP_CHAR;
          break;
        case 'f':
        case 'F':
          op = LS_OP_DOUBLE;
          break;
        case 's':
          op = LS_OP_STR;
          p->has_str = 1;
          break;
        default:
          op = LS_OP_PTR;
          break;
      }
      fixed += op == LS_OP_DOUBLE ? 8 : op == LS_OP_STR ? 0 : LS_VARINT_MAX;
      p->prec[n] = LS_PREC_NONE;
      p->op[n++] = (uint8_t)op;
    }
    p->braces = 1;
    pos = b.text + b.text_len;
  }
  while ((r = ls_fmt_next(fmt, len, &pos, &s)) > 0) {
    if (s.type == 0) continue; /* %% */
    unsigned need = 1u + (s.width == LS_FMT_STAR) + (s.precision == LS_FMT_STAR);
    if (n + need > LS_FMT_MAX_ARGS) return -E2BIG;
    if (s.width == LS_FMT_STAR) {
      p->op[n++] = LS_OP_STAR;
      fixed += LS_VARINT_MAX;
    }
    if (s.precision == LS_FMT_STAR) {
      p->op[n++] = LS_OP_STAR;
      fixed += LS_VARINT_MAX;
    }
    int op;
    switch (s.type) {
      case LS_ARG_INT:
        op = ls__int_op(s.length);
        fixed += LS_VARINT_MAX;
        break;
      case LS_ARG_UINT:
        op = ls__uint_op(s.length);
        fixed += LS_VARINT_MAX;
        break;
      case LS_ARG_DOUBLE:
        op = s.length == LS_LEN_BIGL ? LS_OP_LDOUBLE : LS_OP_DOUBLE;
        fixed += 8;
        break;
      case LS_ARG_CHAR:
        op = s.length == LS_LEN_L ? LS_OP_WCHAR : LS_OP_CHAR;
        fixed += LS_VARINT_MAX;
        break;
      case LS_ARG_PTR:
        op = LS_OP_PTR;
        fixed += LS_VARINT_MAX;
        break;
      case LS_ARG_STR:
        op = s.conv == 'm' ? LS_OP_ERRNO : s.length == LS_LEN_L ? LS_OP_WSTR : LS_OP_STR;
        p->has_str = 1;
        if (op == LS_OP_ERRNO) p->has_errno = 1;
        p->prec[n] = s.precision == LS_FMT_STAR ? LS_PREC_STAR
                     : s.precision >= 0         ? s.precision
                                                : LS_PREC_NONE;
        break;
      default:
        return -EINVAL;
    }
    p->op[n++] = (uint8_t)op;
  }
  if (r < 0) return r;
  /* A field list (LS_FIELDS) must be one a daemon takes: checked once, here. */
  if (memchr(fmt, LS_FIELDS_SEP, len)) {
    if (ls_fields_check(fmt, len, 0) < 0) return -EINVAL;
    p->fields = 1;
  }
  p->nargs = (uint8_t)n;
  /* fixed <= 64 * 10 does not fit a u8: keep the exact value only when small. */
  p->fixed_max = fixed > 255 ? 255 : (uint8_t)fixed;
  if (fixed > 255) p->has_str = 1; /* take the budgeted (variable-size) path */
  return 0;
}

size_t ls__encode_args(const ls__prog *p, va_list *ap, int saved_errno, uint8_t *out, size_t cap,
                       uint64_t *trunc) {
  return ls__encode(p, ap, saved_errno, out, cap, trunc);
}

/* Process-wide site ids. */
static pthread_mutex_t ls__site_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t ls__site_next = 1;

/* Fork handlers: the child must not inherit a held mutex. */
void ls__site_lock(int lock) {
  if (lock)
    pthread_mutex_lock(&ls__site_mu);
  else
    pthread_mutex_unlock(&ls__site_mu);
}

/* The census's ranges: under ls__site_mu (so the fork handlers cover it). */
static ls__census_range ls__census[LS__CENSUS_MODULES];
static size_t ls__census_n;

void ls__census_add(ls_site *const *start, ls_site *const *stop) {
  if (!start || !stop || stop <= start) return; /* a module without LS_LOG */
  pthread_mutex_lock(&ls__site_mu);
  int known = 0;
  for (size_t i = 0; i < ls__census_n && !known; i++) known = ls__census[i].start == start;
  if (!known && ls__census_n < LS__CENSUS_MODULES) /* more: left out (site.h) */
    ls__census[ls__census_n++] = (ls__census_range){start, stop};
  pthread_mutex_unlock(&ls__site_mu);
}

void ls__census_remove(ls_site *const *start) {
  if (!start) return;
  pthread_mutex_lock(&ls__site_mu);
  for (size_t i = 0; i < ls__census_n; i++)
    if (ls__census[i].start == start) ls__census[i] = (ls__census_range){NULL, NULL};
  pthread_mutex_unlock(&ls__site_mu);
}

size_t ls__census_count(void) {
  pthread_mutex_lock(&ls__site_mu);
  const size_t n = ls__census_n;
  pthread_mutex_unlock(&ls__site_mu);
  return n;
}

int ls__census_hold(size_t i, ls__census_range *out) {
  pthread_mutex_lock(&ls__site_mu);
  if (i < ls__census_n && ls__census[i].start) {
    *out = ls__census[i];
    return 1;
  }
  pthread_mutex_unlock(&ls__site_mu);
  return 0;
}

void ls__census_release(void) { pthread_mutex_unlock(&ls__site_mu); }

const ls__prog *ls__site_prog(ls_site *s) {
  const ls__prog *p = __atomic_load_n(&s->ls__prog, __ATOMIC_ACQUIRE);
  if (p) return p == (const void *)s ? NULL : p; /* s itself marks "refused" */
  pthread_mutex_lock(&ls__site_mu);
  p = __atomic_load_n(&s->ls__prog, __ATOMIC_ACQUIRE);
  if (!p) {
    ls__prog *np = malloc(sizeof *np);
    int ok = np && s->fmt && strlen(s->fmt) <= 4096 && s->level >= 0 && s->level <= 7 &&
             ls__prog_build(s->fmt, strlen(s->fmt), np) == 0 && ls__site_next <= LS_SITE_MAX;
    if (ok) {
      np->id = ls__site_next++;
      p = np;
    } else {
      free(np);
      p = (const void *)s;
    }
    __atomic_store_n(&s->ls__prog, p, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&ls__site_mu);
  return p == (const void *)s ? NULL : p;
}

#include "testing.h"

int ls__test_encode(const char *fmt, int saved_errno, uint8_t *out, size_t cap, size_t *len,
                    uint64_t *trunc, va_list ap) {
  ls__prog p;
  int rc = ls__prog_build(fmt, strlen(fmt), &p);
  if (rc) return rc;
  va_list cp;
  va_copy(cp, ap);
  *trunc = 0;
  *len = ls__encode_args(&p, &cp, saved_errno, out, cap, trunc);
  va_end(cp);
  return 0;
}

int ls__test_tsc_mode(void) {
  ls__clock_init();
  return ls__tsc_mode;
}
