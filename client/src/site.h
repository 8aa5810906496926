/* site.h: prepared call sites: a site's format parsed once per process into
 * a small argument program (ls__prog) with a process-wide id, and the
 * argument encoder that runs the program on every call. Depends on the
 * public header and proto only. */
#ifndef LOGSINK_CLIENT_SITE_H
#define LOGSINK_CLIENT_SITE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "logsink/logsink.h"
#include "logsink/proto/printf.h"

/* How one argument is taken from the va_list. */
enum ls__op {
  LS_OP_INT,
  LS_OP_SCHAR,
  LS_OP_SHORT,
  LS_OP_LONG,
  LS_OP_LLONG,
  LS_OP_INTMAX,
  LS_OP_SSIZE,
  LS_OP_PTRDIFF,
  LS_OP_UINT,
  LS_OP_UCHAR,
  LS_OP_USHORT,
  LS_OP_ULONG,
  LS_OP_ULLONG,
  LS_OP_UINTMAX,
  LS_OP_SIZE,
  LS_OP_UPTRDIFF,
  LS_OP_DOUBLE,
  LS_OP_LDOUBLE,
  LS_OP_CHAR,
  LS_OP_WCHAR,
  LS_OP_STR,
  LS_OP_WSTR,
  LS_OP_ERRNO,
  LS_OP_PTR,
  LS_OP_STAR /* an int width or precision */
};

/* Precision handling of a %s / %ls argument. */
#define LS_PREC_NONE (-1)
#define LS_PREC_STAR (-2) /* the value of the STAR op just before */

typedef struct ls__prog {
  uint32_t id;       /* process-wide site id, 1..LS_SITE_MAX */
  uint8_t nargs;     /* ops */
  uint8_t has_str;   /* a string-like op is present (variable size) */
  uint8_t has_errno; /* %m */
  uint8_t fields;    /* the format carries fields after 0x1F (LS_FIELDS) */
  uint8_t braces;    /* a brace format (braces.h; the C++ API's) */
  uint8_t fixed_max; /* worst-case bytes of the non-string args */
  uint8_t op[LS_FMT_MAX_ARGS];
  int32_t prec[LS_FMT_MAX_ARGS]; /* string ops: LS_PREC_* or a precision */
} ls__prog;

/* One call of the prepared or new site s, arguments in *ap (log.c); like
 * ls__log. For ls_vlog (wrap.c). */
LS__HIDDEN int ls__vlog_site(ls_client *c, ls_site *s, va_list *ap);

/* Parses fmt into *p (id not set). 0 or -EINVAL (refused format), -E2BIG. */
LS__HIDDEN int ls__prog_build(const char *fmt, size_t len, ls__prog *p);

/* Encodes the arguments of p from ap into [out, out + cap). *trunc receives
 * the number of string bytes cut to fit. saved_errno is used by %m. Returns
 * the bytes written (the caller guarantees cap >= p->fixed_max when
 * !p->has_str; string args are cut to fit cap). */
LS__HIDDEN size_t ls__encode_args(const ls__prog *p, va_list *ap, int saved_errno, uint8_t *out,
                                  size_t cap, uint64_t *trunc);

/* Returns the prepared program of a site, preparing it on first use (once per
 * process). NULL when the format is refused or the id space is exhausted. */
LS__HIDDEN const ls__prog *ls__site_prog(ls_site *s);
LS__HIDDEN void ls__site_lock(int lock); /* 1: lock, 0: unlock (fork handlers) */

/* The census (logsink.h, LS__CENSUS): the "ls_census" sections of the
 * process's modules, one range of site pointers each, in the order they
 * registered. At most LS__CENSUS_MODULES; the rest are left out. */
#define LS__CENSUS_MODULES 256
typedef struct ls__census_range {
  ls_site *const *start, *const *stop;
} ls__census_range;
/* How many ranges were registered (removed ones included: they stay as
 * empty entries, so an index keeps its range). */
LS__HIDDEN size_t ls__census_count(void);
/* Range i in *out, held: the module cannot be unloaded (its destructor
 * waits) until ls__census_release. 0 (nothing held) when it was removed. */
LS__HIDDEN int ls__census_hold(size_t i, ls__census_range *out);
LS__HIDDEN void ls__census_release(void);

#endif
