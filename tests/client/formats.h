// formats.h: the table of printf formats and arguments the client tests
// encode (client_encode_test) and send through logsinkd (client_daemon_test),
// as an X-macro: X(format literal, args...). Each row must render the same
// with snprintf and with the reference renderer of render_ref.h. Needs a
// UTF-8 locale (%lc, %ls) and errno set to ENOENT (%m).
#pragma once

#include <sys/types.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cwchar>
#include <string>

namespace logsink::test {
inline const char *volatile kNullStr = nullptr;  // hidden from -Wformat-overflow
inline const std::string kLong(3000, 'L');
}  // namespace logsink::test

// The "hh/h" row passes ints wider than its conversions on purpose: printf
// narrows them, and so must the renderer. Clang's -Wformat flags that
// (GCC does not); these two macros silence it around the table's expansion.
#if defined(__clang__)
#define LS_TEST_FORMATS_BEGIN \
  _Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Wformat\"")
#define LS_TEST_FORMATS_END _Pragma("clang diagnostic pop")
#else
#define LS_TEST_FORMATS_BEGIN
#define LS_TEST_FORMATS_END
#endif

#define LS_TEST_FORMATS(X)                                                                         \
  X("ints %d %i %d %d", 0, -1, INT_MAX, INT_MIN)                                                   \
  X("width [%5d|%-5d|%05d|%+d|% d|%+5d]", 42, 42, 42, 42, 42, -42)                                 \
  X("precision %.3d %.0d|%5.3x %8.4i", 5, 0, 0x1f, -12)                                            \
  X("hh/h %hhd %hhu %hhx %hd %hu %hx", 300, 511, 0x1ff, 70000, 70000, 0x1ffff)                     \
  X("l %ld %lu %lx %li", LONG_MIN, ULONG_MAX, 0xdeadbeefUL, -5L)                                   \
  X("ll %lld %llu %llx %llo", LLONG_MIN, ULLONG_MAX, 0x123456789abcdefULL, 077ULL)                 \
  X("j z t %jd %ju %zd %zu %zx %td", (intmax_t)-7, (uintmax_t)UINTMAX_MAX, (ssize_t)-8, (size_t)8, \
    (size_t)SIZE_MAX, (ptrdiff_t)-9)                                                               \
  X("unsigned %u %o %#o %x %#X %#x %X", UINT_MAX, 8u, 8u, 255u, 255u, 0u, 0xabcdefu)               \
  X("float %f %.2f %10.3f %-10.1f| %+.0f %#.0f %.10f", 3.14159, 2.5, -1.5, 0.25, 2.5, 3.0,         \
    1.0 / 3)                                                                                       \
  X("exp %e %E %.3e %g %G %#g %g %.0e", 12345.678, 0.000123, 1e100, 1e-5, 1e20, 1.0, 100000.0,     \
    5e-324)                                                                                        \
  X("hex float %a %A %.2a %la", 1.0, -0.1, 3.0, 1e-300)                                            \
  X("special %F %f %f %e %g", (double)INFINITY, -(double)INFINITY, (double)NAN, -0.0, DBL_MAX)     \
  X("long double %Lf %Le %Lg %.3LG", 1.5L, 2.5e10L, 0.1L, 1e-3L)                                   \
  X("chars [%c%c%c] [%3c] [%-3c] %lc", 'a', 'B', '0', 'x', 'y', (wint_t)L'\u00e9')                 \
  X("strings %s|%10s|%-10s|%.2s|%5.1s|%.0s|", "abc", "right", "left", "truncate", "xyz", "hidden") \
  X("null %s and %5s", logsink::test::kNullStr, "after")                                           \
  X("stars %*d|%-*d|%.*f|%*.*s|%.*s|%*d", 6, 42, 6, 42, 2, 3.14159, 8, 3, "abcdef", -1,            \
    "neg-prec", -6, 7)                                                                             \
  X("pointers %p %p %10p", (void *)0x1234, (void *)0, (void *)0xff)                                \
  X("grouping %'d %'.2f", 1234567, 1234.5)                                                         \
  X("errno %m and %s", "more")                                                                     \
  X("wide %ls|%6ls|%.3ls|%ls", L"wide", L"\u00f1", L"h\u00e9llo", L"\U0001F600")                   \
  X("percent 100%% %d%%", 50)                                                                      \
  X("utf8 %s %.4s", "h\u00e9llo w\u00f6rld", "\u00e9\u00e9\u00e9")                                 \
  X("long %.20s... %zu", logsink::test::kLong.c_str(), logsink::test::kLong.size())                \
  X("mixed %s=%d (%5.1f%%) at %p [%c] %lu", "key", -3, 99.5, (void *)&logsink::test::kLong, 'z',   \
    123456789UL)
