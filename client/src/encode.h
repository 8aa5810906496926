/* encode.h: the argument encoder of PROTOCOL.md "Arguments", inlined into the
 * hot path (log.c); site.c exports it as ls__encode_args for the unit tests. */
#ifndef LOGSINK_CLIENT_ENCODE_H
#define LOGSINK_CLIENT_ENCODE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <wchar.h>

#include "logsink/proto/codec.h"
#include "site.h"

/* Writes str := varint len | bytes with at most `room` bytes in total. The
 * length prefix is sized for the full length so it never has to move. */
static inline size_t ls__put_str(uint8_t *o, size_t room, const char *s, size_t len,
                                 uint64_t *trunc) {
  size_t hdr = ls_varint_len(len);
  size_t keep = len;
  if (hdr + keep > room) {
    keep = ls_utf8_cut((const uint8_t *)s, len, room > hdr ? room - hdr : 0);
    *trunc += len - keep;
  }
  size_t n = ls_put_varint(o, keep);
  memcpy(o + n, s, keep);
  return n + keep;
}

/* %ls: converts to UTF-8, at most prec output bytes (prec < 0: no limit) and
 * at most `room` bytes including the length prefix. Whole characters only. */
static inline size_t ls__put_wstr(uint8_t *o, size_t room, const wchar_t *w, long prec,
                                  uint64_t *trunc) {
  uint8_t tmp[4];
  size_t full = 0, n = 0;
  for (n = 0; w[n]; n++) { /* output length allowed by the precision */
    size_t k = ls_utf8_put(tmp, 4, (uint32_t)w[n]);
    if (prec >= 0 && full + k > (size_t)prec) break;
    full += k;
  }
  size_t limit = full;
  if (ls_varint_len(full) + full > room)
    limit = room > ls_varint_len(full) ? room - ls_varint_len(full) : 0;
  size_t len = 0, chars = 0;
  for (; chars < n; chars++) { /* whole characters that fit the limit */
    size_t k = ls_utf8_put(tmp, 4, (uint32_t)w[chars]);
    if (len + k > limit) break;
    len += k;
  }
  *trunc += full - len;
  size_t h = ls_put_varint(o, len);
  for (size_t j = 0; j < chars; j++) h += ls_utf8_put(o + h, 4, (uint32_t)w[j]);
  return h;
}

/* Encodes the arguments of p from ap into out (at most cap bytes): one
 * switch over the call site's argument types. Returns the bytes written;
 * *trunc counts string bytes cut.
 *
 * One function of over 100 lines on purpose: it is inlined into every
 * LS_LOG call (log.c), and a split costs there. Measured with callgrind
 * (200,000 LS_LOG calls of the client benchmark's two messages against a
 * running logsinkd, no drops): with the string case moved into an
 * always_inline helper of its own, ls__log executed 256.4 instructions per
 * call instead of 252.4 (+1.6%): the helper changes the register allocation
 * of the whole switch. One case per argument type reads as a table. */
static inline __attribute__((always_inline)) size_t ls__encode(const ls__prog *p, va_list *ap,
                                                               int saved_errno, uint8_t *out,
                                                               size_t cap, uint64_t *trunc) {
  uint8_t *o = out;
  uint8_t *end = out + cap;
  long star = -1; /* value of the last '*' argument */
  for (unsigned i = 0; i < p->nargs; i++) {
    uint64_t u;
    switch (p->op[i]) {
      case LS_OP_INT:
        o += ls_put_varint(o, ls_zigzag(va_arg(*ap, int)));
        continue;
      case LS_OP_STAR: {
        int v = va_arg(*ap, int);
        star = v;
        o += ls_put_varint(o, ls_zigzag(v));
        continue;
      }
      case LS_OP_SCHAR:
        o += ls_put_varint(o, ls_zigzag((signed char)va_arg(*ap, int)));
        continue;
      case LS_OP_SHORT:
        o += ls_put_varint(o, ls_zigzag((short)va_arg(*ap, int)));
        continue;
      case LS_OP_LONG:
        o += ls_put_varint(o, ls_zigzag(va_arg(*ap, long)));
        continue;
      case LS_OP_LLONG:
        o += ls_put_varint(o, ls_zigzag(va_arg(*ap, long long)));
        continue;
      case LS_OP_INTMAX:
        o += ls_put_varint(o, ls_zigzag(va_arg(*ap, intmax_t)));
        continue;
      case LS_OP_SSIZE:
        o += ls_put_varint(o, ls_zigzag(va_arg(*ap, ssize_t)));
        continue;
      case LS_OP_PTRDIFF:
        o += ls_put_varint(o, ls_zigzag(va_arg(*ap, ptrdiff_t)));
        continue;
      case LS_OP_UINT:
        u = va_arg(*ap, unsigned);
        break;
      case LS_OP_UCHAR:
        u = (unsigned char)va_arg(*ap, unsigned);
        break;
      case LS_OP_USHORT:
        u = (unsigned short)va_arg(*ap, unsigned);
        break;
      case LS_OP_ULONG:
        u = va_arg(*ap, unsigned long);
        break;
      case LS_OP_ULLONG:
        u = va_arg(*ap, unsigned long long);
        break;
      case LS_OP_UINTMAX:
        u = va_arg(*ap, uintmax_t);
        break;
      case LS_OP_SIZE:
        u = va_arg(*ap, size_t);
        break;
      case LS_OP_UPTRDIFF:
        u = (size_t)va_arg(*ap, ptrdiff_t);
        break;
      case LS_OP_PTR:
        u = (uintptr_t)va_arg(*ap, void *);
        break;
      case LS_OP_CHAR:
        u = (unsigned char)va_arg(*ap, int);
        break;
      case LS_OP_WCHAR:
        u = (uint32_t)va_arg(*ap, wint_t);
        break;
      case LS_OP_DOUBLE: {
        double d = va_arg(*ap, double);
        memcpy(o, &d, 8);
        o += 8;
        continue;
      }
      case LS_OP_LDOUBLE: {
        double d = (double)va_arg(*ap, long double);
        memcpy(o, &d, 8);
        o += 8;
        continue;
      }
      default: { /* strings: budget = what is left minus the worst case of the rest */
        size_t rest = 0;
        for (unsigned j = i + 1; j < p->nargs; j++)
          rest += (p->op[j] == LS_OP_STR || p->op[j] == LS_OP_WSTR || p->op[j] == LS_OP_ERRNO)
                      ? 1
                      : LS_VARINT_MAX;
        size_t room = (size_t)(end - o) > rest ? (size_t)(end - o) - rest : 0;
        long prec = p->prec[i] == LS_PREC_STAR ? (star >= 0 ? star : -1) : p->prec[i];
        if (p->op[i] == LS_OP_WSTR) {
          const wchar_t *w = va_arg(*ap, const wchar_t *);
          if (!w) w = L"(null)";
          o += ls__put_wstr(o, room, w, prec, trunc);
          continue;
        }
        const char *s;
        char ebuf[256];
        if (p->op[i] == LS_OP_ERRNO) {
          s = strerror_r(saved_errno, ebuf, sizeof ebuf);
          prec = -1;
        } else {
          s = va_arg(*ap, const char *);
          if (!s) s = "(null)";
        }
        /* With a precision the array need not be NUL-terminated (C11 7.21.6.1). */
        size_t len = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
        o += ls__put_str(o, room, s, len, trunc);
        continue;
      }
    }
    o += ls_put_varint(o, u);
  }
  return (size_t)(o - out);
}

#endif
