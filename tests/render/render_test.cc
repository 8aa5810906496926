// render_test.cc: unit tests of the message renderer (logsink/render/render.h)
// and escaping (logsink/render/escape.h): well-formed formats must render exactly as
// the C library's snprintf does; mismatches render the raw parts; hostile
// input never crashes.
#include "logsink/render/render.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>

#include "common/seed.h"
#include "logsink/proto/args.h"
#include "logsink/proto/codec.h"
#include "logsink/render/escape.h"

namespace logsink::test {
namespace {

using namespace logsink::render;

void PutVarint(std::string *b, uint64_t v) {
  uint8_t tmp[LS_VARINT_MAX];
  b->append(reinterpret_cast<char *>(tmp), ls_put_varint(tmp, v));
}

void PutStr(std::string *b, std::string_view s) {
  PutVarint(b, s.size());
  b->append(s);
}

// Encodes one C argument the way liblogsink would for signature type t.
template <typename T>
void PutArg(std::string *b, char t, T v) {
  if constexpr (std::is_floating_point_v<T>) {
    double d = static_cast<double>(v);
    char raw[8];
    memcpy(raw, &d, 8);
    b->append(raw, 8);
  } else if constexpr (std::is_convertible_v<T, const char *>) {
    const char *s = v ? static_cast<const char *>(v) : "(null)";
    PutStr(b, s);
  } else if constexpr (std::is_pointer_v<T>) {
    PutVarint(b, reinterpret_cast<uintptr_t>(v));
  } else {
    if (t == LS_ARG_INT) {
      PutVarint(b, ls_zigzag(static_cast<int64_t>(v)));
    } else {
      PutVarint(b, static_cast<uint64_t>(v));
    }
  }
}

template <typename... A>
std::string Encode(const char *fmt, A... args) {
  char sig[LS_FMT_MAX_ARGS + 1];
  int n = ls_fmt_signature(fmt, strlen(fmt), sig, sizeof sig);
  EXPECT_EQ(n, static_cast<int>(sizeof...(A))) << fmt;
  std::string b;
  size_t i = 0;
  (PutArg(&b, i < static_cast<size_t>(n) ? sig[i++] : 'i', args), ...);
  return b;
}

template <typename... A>
std::string Render(const char *fmt, A... args) {
  Format f;
  Compile(fmt, &f);
  std::string out;
  EXPECT_TRUE(RenderMessage(f, Encode(fmt, args...), &out)) << fmt << " -> " << out;
  return out;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
template <typename... A>
std::string Libc(const char *fmt, A... args) {
  char buf[8192];
  snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}
#pragma GCC diagnostic pop

#define EXPECT_LIKE_SNPRINTF(fmt, ...) \
  EXPECT_EQ(Render(fmt, __VA_ARGS__), Libc(fmt, __VA_ARGS__)) << "format: " << fmt

TEST(RenderTest, IntegersMatchSnprintf) {
  EXPECT_LIKE_SNPRINTF("%d", 42);
  EXPECT_LIKE_SNPRINTF("%d", -42);
  EXPECT_LIKE_SNPRINTF("%i|%d", INT_MIN, INT_MAX);
  EXPECT_LIKE_SNPRINTF("[%5d]", 42);
  EXPECT_LIKE_SNPRINTF("[%-5d]", -42);
  EXPECT_LIKE_SNPRINTF("[%05d]", -42);
  EXPECT_LIKE_SNPRINTF("[%+d] [% d] [%+d]", 5, 5, -5);
  EXPECT_LIKE_SNPRINTF("[%.3d] [%8.3d] [%-8.3d] [%08.3d]", 7, -7, 7, 7);
  EXPECT_LIKE_SNPRINTF("[%.0d] [%.0x] [%#.0o] [%5.0d]", 0, 0u, 0u, 0);
  EXPECT_LIKE_SNPRINTF("%x %X %o %u", 255u, 255u, 8u, 4000000000u);
  EXPECT_LIKE_SNPRINTF("%#x %#X %#o %#x %#o", 255u, 255u, 8u, 0u, 0u);
  EXPECT_LIKE_SNPRINTF("[%#10x] [%#-10x] [%#010x]", 255u, 255u, 255u);
  EXPECT_LIKE_SNPRINTF("%hhd %hhu %hd %hu", 300, 300u, 70000, 70000u);
  EXPECT_LIKE_SNPRINTF("%ld %lu %lld %llu", LONG_MIN, ULONG_MAX, LLONG_MIN, ULLONG_MAX);
  EXPECT_LIKE_SNPRINTF("%zu %zd %jd %ju %td", size_t{123}, ssize_t{-5}, intmax_t{-9}, uintmax_t{9},
                       ptrdiff_t{-1});
  EXPECT_LIKE_SNPRINTF("%lx %lX %lo", 0xdeadbeefcafeUL, 0xdeadbeefcafeUL, 0777UL);
  EXPECT_LIKE_SNPRINTF("%'d", 1234567);
}

TEST(RenderTest, StarWidthAndPrecision) {
  EXPECT_LIKE_SNPRINTF("[%*d]", 6, 42);
  EXPECT_LIKE_SNPRINTF("[%*d]", -6, 42);
  EXPECT_LIKE_SNPRINTF("[%.*d]", 4, 42);
  EXPECT_LIKE_SNPRINTF("[%*.*d]", 8, 4, -42);
  EXPECT_LIKE_SNPRINTF("[%.*s]", -1, "abcdef");
  EXPECT_LIKE_SNPRINTF("[%.*s]", 3, "abcdef");
  EXPECT_LIKE_SNPRINTF("[%*s]", 8, "ab");
}

TEST(RenderTest, StringsCharsPointersMatchSnprintf) {
  EXPECT_LIKE_SNPRINTF("user %s port %d", "bob", 22);
  EXPECT_LIKE_SNPRINTF("[%10s] [%-10s] [%.2s] [%10.2s]", "abc", "abc", "abc", "abc");
  EXPECT_LIKE_SNPRINTF("[%s]", "");
  EXPECT_LIKE_SNPRINTF("[%c] [%5c] [%-5c]", 'A', 'b', 'c');
  int x = 0;
  EXPECT_LIKE_SNPRINTF("%p", static_cast<void *>(&x));
  EXPECT_LIKE_SNPRINTF("[%20p] [%-20p]", static_cast<void *>(&x), static_cast<void *>(&x));
  EXPECT_LIKE_SNPRINTF("[%p] [%10p] [%-10p]", static_cast<void *>(nullptr),
                       static_cast<void *>(nullptr), static_cast<void *>(nullptr));
  EXPECT_LIKE_SNPRINTF("100%% done, %d%%", 5);
  EXPECT_LIKE_SNPRINTF("%s", "no conversions at all");
}

TEST(RenderTest, FloatsMatchSnprintf) {
  const double values[] = {0.0,      -0.0,      1.0,           -1.5,    3.14159265358979,
                           1e300,    1e-300,    123456789.125, DBL_MIN, DBL_MAX,
                           INFINITY, -INFINITY, NAN,           0.1};
  const char *formats[] = {"%f",      "%F",      "%e",       "%E",        "%g",        "%G",
                           "%a",      "%A",      "[%12.3f]", "[%-12.3e]", "[%012.4g]", "[%+.2f]",
                           "[% .0f]", "[%#.0f]", "[%#g]",    "%.10g",     "%Lf"};
  for (const char *f : formats)
    for (double d : values) {
      if (strcmp(f, "%Lf") == 0) {
        EXPECT_EQ(Render(f, d), Libc(f, static_cast<long double>(d))) << f << " " << d;
      } else {
        EXPECT_EQ(Render(f, d), Libc(f, d)) << f << " " << d;
      }
    }
}

TEST(RenderTest, StringTypesWithoutLibcEquivalent) {
  // %m is strerror(errno) taken as a string by the client; %ls arrives as UTF-8.
  EXPECT_EQ(Render("open: %m", "No such file or directory"), "open: No such file or directory");
  EXPECT_EQ(Render("[%ls]", "gr\xc3\xbc\xc3\x9f"), "[gr\xc3\xbc\xc3\x9f]");
  // %c / %lc render the code point as UTF-8.
  EXPECT_EQ(Render("%lc", 0x263a), "\xe2\x98\xba");
  EXPECT_EQ(Render("%c", 0x110000), "\xef\xbf\xbd");  // out of range -> U+FFFD
}

TEST(RenderTest, HugeWidthIsClamped) {
  std::string s = Render("%99999d", 1);
  EXPECT_EQ(s.size(), static_cast<size_t>(logsink::render::kMaxWidth));
  EXPECT_EQ(s.back(), '1');
}

std::string RenderRaw(const char *fmt, std::string_view args, bool *ok) {
  Format f;
  Compile(fmt, &f);
  std::string out;
  *ok = RenderMessage(f, args, &out);
  return out;
}

TEST(RenderTest, TooFewArgumentBytesIsAMismatch) {
  std::string args;
  PutVarint(&args, ls_zigzag(22));  // only one of two arguments
  bool ok;
  std::string out = RenderRaw("user %s port %d", args, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(out, "[logsink: format/argument mismatch] fmt=\"user %s port %d\" args=[hex:2c]");
}

TEST(RenderTest, TooManyArgumentBytesIsAMismatch) {
  std::string args;
  PutVarint(&args, ls_zigzag(-5));
  args += "\x01\x02";
  bool ok;
  std::string out = RenderRaw("n=%d", args, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(out, "[logsink: format/argument mismatch] fmt=\"n=%d\" args=[i:-5, hex:0102]");
}

TEST(RenderTest, RefusedFormatsRenderRawParts) {
  for (const char *f : {"%n", "%1$d", "%", "%k", "%5%"}) {
    bool ok;
    std::string out = RenderRaw(f, "\x04", &ok);
    EXPECT_FALSE(ok) << f;
    EXPECT_EQ(out,
              std::string("[logsink: format/argument mismatch] fmt=\"") + f + "\" args=[hex:04]");
  }
}

TEST(RenderTest, StringLengthBeyondBufferIsAMismatch) {
  std::string args;
  PutVarint(&args, 1000);  // claims 1000 bytes
  args += "abc";
  bool ok;
  std::string out = RenderRaw("%s", args, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(out.find("hex:e807616263"), std::string::npos) << out;
}

TEST(RenderTest, UnknownSiteAndTruncation) {
  std::string out;
  logsink::render::RenderUnknownSite(77, "\x05", &out);
  EXPECT_EQ(out, "[unknown format #77] args=[hex:05]");
  // clear + push_back, not `out = "x"`: GCC 12 at -O3 reports a false
  // -Wrestrict inside std::string::assign(const char*) here.
  out.clear();
  out.push_back('x');
  logsink::render::AppendTruncated(12, &out);
  EXPECT_EQ(out, "x\xe2\x80\xa6[truncated 12 bytes]");
}

TEST(RenderTest, RawAndJsonArgs) {
  std::string args = Encode("%d %u %f %c %s %p", -5, 7u, 1.5, 'A', "b\"o", (void *)0x1234);
  Format f;
  Compile("%d %u %f %c %s %p", &f);
  std::string raw, json;
  logsink::render::AppendRawArgs(&f, args, &raw);
  EXPECT_EQ(raw, "[i:-5, u:7, f:1.5, c:U+0041, s:\"b\\\"o\", p:0x1234]");
  EXPECT_EQ(logsink::render::AppendJsonArgs(&f, args, &json), args.size());
  EXPECT_EQ(json, "[-5,7,1.5,\"A\",\"b\\\"o\",\"0x1234\"]");
  // Non-finite doubles are not JSON numbers: they become strings.
  Format g;
  Compile("%f %f", &g);
  json.clear();
  logsink::render::AppendJsonArgs(&g, Encode("%f %f", INFINITY, NAN), &json);
  EXPECT_EQ(json, "[\"inf\",\"nan\"]");
}

TEST(RenderTest, FormatCacheCompilesOncePerId) {
  logsink::render::FormatCache cache;
  const Format &a = cache.Get(3, "a %d");
  const Format &b = cache.Get(3, "ignored: ids are immutable");
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(a.fmt, "a %d");
  EXPECT_EQ(cache.Get(0, "inline %s").sig, "s");
  EXPECT_EQ(cache.Get(0, "inline %d %d").sig, "ii");
  EXPECT_EQ(cache.Get(5000000, "big %u").sig, "u");
}

TEST(RenderTest, RandomInputNeverCrashesAndStaysBounded) {
  std::mt19937 rng(TestSeed(1234));
  const char *formats[] = {"%d",      "%s %s", "%*.*f",   "%c%p%x", "%.*s",
                           "%99999s", "plain", "%hhd %s", "%a"};
  for (int i = 0; i < 20000; i++) {
    std::string args(rng() % 24, '\0');
    for (char &c : args) c = static_cast<char>(rng());
    Format f;
    Compile(formats[i % 9], &f);
    std::string out;
    RenderMessage(f, args, &out);
    EXPECT_LT(out.size(), 3u * logsink::render::kMaxWidth + 200);
  }
}

TEST(EscapeTest, TerminalNeverGetsControlCharacters) {
  std::string out;
  AppendTerminalSafe(&out, "a\x1b[31mred\x07\n\r\tz\x7f");
  EXPECT_EQ(out, "a\\x1b[31mred\\x07\\n\\r\tz\\x7f");
  out.clear();
  AppendTerminalSafe(&out, "caf\xc3\xa9 \xff \xc2\x9b \xe2\x98\xba \xed\xa0\x80");
  EXPECT_EQ(out, "caf\xc3\xa9 \\xff \\xc2\\x9b \xe2\x98\xba \\xed\\xa0\\x80");
  out.clear();
  AppendTerminalSafe(&out, std::string_view("a\0b", 3));
  EXPECT_EQ(out, "a\\x00b");
}

// Invisible characters that change how text reads are shown
// as \uXXXX: a right-to-left override, line and paragraph separators, a BOM,
// zero-width and isolate characters.
TEST(EscapeTest, TerminalShowsBidiSeparatorsAndBomEscaped) {
  std::string out;
  AppendTerminalSafe(&out,
                     "a\xe2\x80\xae"
                     "txt.exe b\xe2\x80\xa8"
                     "c\xe2\x80\xa9"
                     "d\xef\xbb\xbf"
                     "e\xe2\x80\x8b"
                     "f\xe2\x81\xa6"
                     "g\xd8\x9c");
  EXPECT_EQ(out, "a\\u202etxt.exe b\\u2028c\\u2029d\\ufeffe\\u200bf\\u2066g\\u061c");
  out.clear();
  AppendTerminalSafe(&out, "\xe2\x80\x94 \xe2\x80\xa6");  // em dash, ellipsis: kept
  EXPECT_EQ(out, "\xe2\x80\x94 \xe2\x80\xa6");
}

TEST(EscapeTest, JsonIsAlwaysValid) {
  std::string out;
  AppendJsonEscaped(&out, "q\"b\\s\n\x01\x1b\x7f \xff \xc3\xa9 \xc2\x85 \xf0\x9f\x98\x80");
  EXPECT_EQ(out, "q\\\"b\\\\s\\n\\u0001\\u001b\\u007f \\ufffd \xc3\xa9 \\u0085 \xf0\x9f\x98\x80");
  out.clear();
  AppendJsonEscaped(&out, "\xe2\x82");  // truncated sequence
  EXPECT_EQ(out, "\\ufffd\\ufffd");
}

// Characters that are valid JSON but end a line in JavaScript (U+2028,
// U+2029) or reorder what a viewer shows (bidi overrides and isolates,
// zero-width characters, BOM) are escaped, so JSON output pasted into a
// script or a page reads as it is; other non-ASCII text is kept.
TEST(EscapeTest, JsonEscapesLineSeparatorsAndBidiControls) {
  std::string out;
  AppendJsonEscaped(&out,
                    "a\xe2\x80\xa8"
                    "b\xe2\x80\xa9"
                    "c\xe2\x80\xae"
                    "exe.txt\xe2\x81\xa6"
                    "d\xe2\x80\x8b"
                    "e\xef\xbb\xbf"
                    "f\xe2\x80\x94\xc3\xa9");
  EXPECT_EQ(out, "a\\u2028b\\u2029c\\u202eexe.txt\\u2066d\\u200be\\ufefff\xe2\x80\x94\xc3\xa9");
}

}  // namespace
}  // namespace logsink::test
