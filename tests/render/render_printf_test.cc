// render_printf_test.cc: differential test of the message renderer
// (logsink/render/render.h) against the C library. Random conversion specs (flags,
// width, precision, `*`, length modifiers, every accepted conversion) and
// random values are rendered by render::RenderMessage from argument bytes
// encoded as liblogsink encodes them, and by snprintf with the same spec,
// widths and precisions clamped to render::kMaxWidth as render/RENDERING.md
// ("`*`, and the 4096 clamp") says; the two must be byte-identical. The seed is printed and
// LOGSINK_TEST_SEED overrides it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cwchar>
#include <map>
#include <random>
#include <string>

#include "common/seed.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/printf.h"
#include "logsink/render/render.h"

namespace logsink::test {
namespace {

using render::kMaxWidth;

constexpr int kNone = LS_FMT_NONE;
constexpr int kStar = LS_FMT_STAR;
constexpr int kDotOnly = -3;  // "%.f": a '.' without digits, precision 0

void PutVarint(std::string *b, uint64_t v) {
  uint8_t tmp[LS_VARINT_MAX];
  b->append(reinterpret_cast<char *>(tmp), ls_put_varint(tmp, v));
}

void PutDouble(std::string *b, double d) {
  char raw[8];
  memcpy(raw, &d, 8);
  b->append(raw, 8);
}

// One conversion: what the renderer gets (its format text and argument
// bytes) and what snprintf gets (its spec, `*` values and the C value).
struct Conv {
  std::string flags;
  int width = kNone;  // >= 1, kNone or kStar
  int prec = kNone;   // >= 0, kNone, kStar or kDotOnly
  std::string len;    // length modifier as written
  char conv = 'd';
  int width_arg = 0, prec_arg = 0;  // the `*` arguments
  int64_t i = 0;                    // d i: the value as the record carries it
  uint64_t u = 0;                   // u o x X c p
  double d = 0;                     // f F e E g G a A
  std::string s;                    // s m
  int err = 0;                      // m: errno
};

// The spec as written in the record's format (libc false), or as given to
// snprintf (libc true: numbers clamped, L dropped from %La).
std::string Spec(const Conv &c, bool libc) {
  std::string out = "%";
  out.append(c.flags);
  auto num = [&](int v) {
    if (libc && v > kMaxWidth) v = kMaxWidth;
    out.append(std::to_string(v));
  };
  if (c.width == kStar)
    out.push_back('*');
  else if (c.width > 0)
    num(c.width);
  if (c.prec == kStar) {
    out.append(".*");
  } else if (c.prec == kDotOnly) {
    out.push_back('.');
  } else if (c.prec >= 0) {
    out.push_back('.');
    num(c.prec);
  }
  // L on %a: the client converted the long double to double; what the
  // record holds is rendered as %a of that double (glibc's %La of an x87
  // long double chooses other hex digits).
  if (!(libc && c.len == "L" && (c.conv == 'a' || c.conv == 'A'))) out.append(c.len);
  out.push_back(c.conv);
  return out;
}

// The argument bytes of c, as liblogsink's encoder writes them, except that
// integers are written as drawn (not narrowed to the modifier's type first):
// the renderer must narrow them as C does.
void Encode(const Conv &c, std::string *args) {
  if (c.width == kStar) PutVarint(args, ls_zigzag(c.width_arg));
  if (c.prec == kStar) PutVarint(args, ls_zigzag(c.prec_arg));
  switch (c.conv) {
    case 'd':
    case 'i':
      PutVarint(args, ls_zigzag(c.i));
      break;
    case 'u':
    case 'o':
    case 'x':
    case 'X':
    case 'c':
    case 'p':
      PutVarint(args, c.u);
      break;
    case 's':
    case 'm':
      PutVarint(args, c.s.size());
      args->append(c.s);
      break;
    case '%':
      break;
    default:
      PutDouble(args, c.d);
      break;
  }
}

// The `*` values snprintf gets: the renderer's clamp applied.
int ClampWidthArg(int w) {
  if (w < -kMaxWidth) return -kMaxWidth;
  return w > kMaxWidth ? kMaxWidth : w;
}
int ClampPrecArg(int p) {
  if (p < 0) return -1;
  return p > kMaxWidth ? kMaxWidth : p;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
template <typename T>
std::string Snprintf(const Conv &c, const std::string &spec, T v) {
  static char buf[16384];
  int n;
  int w = ClampWidthArg(c.width_arg), p = ClampPrecArg(c.prec_arg);
  const char *f = spec.c_str();
  if (c.conv == 'm') errno = c.err;
  if (c.width == kStar && c.prec == kStar)
    n = snprintf(buf, sizeof buf, f, w, p, v);
  else if (c.width == kStar)
    n = snprintf(buf, sizeof buf, f, w, v);
  else if (c.prec == kStar)
    n = snprintf(buf, sizeof buf, f, p, v);
  else
    n = snprintf(buf, sizeof buf, f, v);
  if (n < 0 || n >= static_cast<int>(sizeof buf)) {
    std::string failed = "[snprintf failed: ";
    failed.append(spec).push_back(']');
    return failed;
  }
  return std::string(buf, static_cast<size_t>(n));
}

std::string SnprintfNoArg(const std::string &spec) {
  char buf[16];
  int n = snprintf(buf, sizeof buf, spec.c_str());
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}
#pragma GCC diagnostic pop

// What snprintf prints for c, with the value in the C type its modifier names.
std::string Expected(const Conv &c) {
  const std::string spec = Spec(c, true);
  const std::string &l = c.len;
  const bool wide =
      l == "ll" || l == "l" || l == "j" || l == "z" || l == "t" || l == "L" || l == "q";
  switch (c.conv) {
    case 'd':
    case 'i':
      if (wide) return Snprintf(c, spec, static_cast<long long>(c.i));
      return Snprintf(c, spec, static_cast<int>(c.i));
    case 'u':
    case 'o':
    case 'x':
    case 'X':
      if (wide) return Snprintf(c, spec, static_cast<unsigned long long>(c.u));
      return Snprintf(c, spec, static_cast<unsigned>(c.u));
    case 'c':
      if (l == "l") return Snprintf(c, spec, static_cast<wint_t>(c.u));
      return Snprintf(c, spec, static_cast<int>(c.u));
    case 's':
      if (l == "l") {
        std::wstring w(c.s.begin(), c.s.end());  // ASCII only (the C locale)
        return Snprintf(c, spec, w.c_str());
      }
      return Snprintf(c, spec, c.s.c_str());
    case 'm':
      return Snprintf(c, spec, 0);
    case 'p':
      return Snprintf(c, spec, reinterpret_cast<void *>(static_cast<uintptr_t>(c.u)));
    case '%':
      return SnprintfNoArg(spec);
    default:
      if (l == "L" && c.conv != 'a' && c.conv != 'A')
        return Snprintf(c, spec, static_cast<long double>(c.d));
      return Snprintf(c, spec, c.d);
  }
}

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  uint64_t U64() { return rng_(); }
  int Below(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  int Between(int lo, int hi) { return lo + Below(hi - lo + 1); }
  bool OneIn(int n) { return Below(n) == 0; }

  Conv Random() {
    static const char kConvs[] = "diuoxXcsfFeEgGaApm%";
    Conv c;
    c.conv = kConvs[Below(static_cast<int>(sizeof kConvs) - 1)];
    if (c.conv == '%') return c;  // only a bare %% is accepted
    for (char f : std::string("-+ #0'"))
      if (OneIn(f == '\'' ? 12 : 4)) c.flags.push_back(f);
    if (c.flags.size() > 1 && OneIn(4)) std::swap(c.flags.front(), c.flags.back());
    // glibc's %#m prints the errno name; the client sends strerror's text.
    if (c.conv == 'm')
      c.flags.erase(std::remove(c.flags.begin(), c.flags.end(), '#'), c.flags.end());
    c.width = Width();
    c.prec = Precision();
    if (c.width == kStar) c.width_arg = StarArg();
    if (c.prec == kStar) c.prec_arg = StarArg();
    Value(&c);
    return c;
  }

 private:
  int Width() {
    switch (Below(20)) {
      case 0:
        return kStar;
      case 1:
        return Between(kMaxWidth - 100, kMaxWidth + 900);
      case 2:
        return OneIn(4) ? Between(100000, 999999) : Between(20, 300);
      default:
        return OneIn(2) ? kNone : Between(1, 20);
    }
  }

  int Precision() {
    switch (Below(20)) {
      case 0:
        return kStar;
      case 1:
        return kDotOnly;
      case 2:
        return OneIn(3) ? Between(kMaxWidth - 100, kMaxWidth + 900) : Between(700, 1200);
      case 3:
        return OneIn(8) ? Between(100000, 999999) : Between(20, 400);
      default:
        return OneIn(2) ? kNone : Between(0, 20);
    }
  }

  int StarArg() {
    switch (Below(8)) {
      case 0:
        return OneIn(2) ? INT_MIN : INT_MAX;
      case 1:
        return Between(-kMaxWidth - 200, kMaxWidth + 200);
      case 2:
        return -Between(1, 20);
      default:
        return Between(0, 20);
    }
  }

  static constexpr const char *kIntLens[] = {"", "hh", "h", "l", "ll", "j", "z", "t", "L", "q"};

  int64_t RandomInt() {
    static const int64_t kSpecial[] = {0,         1,          -1,        127,        128,
                                       -128,      255,        256,       32767,      -32768,
                                       65535,     65536,      INT32_MAX, INT32_MIN,  UINT32_MAX,
                                       1LL << 32, INT64_MAX,  INT64_MIN, 1234567890, -1234567890,
                                       8,         0x7fffffff, 300,       70000,      -70000};
    if (OneIn(3)) return kSpecial[Below(sizeof kSpecial / sizeof kSpecial[0])];
    uint64_t v = U64() >> Below(64);
    return static_cast<int64_t>(OneIn(2) ? v : 0 - v);
  }

  double RandomDouble() {
    static const double kSpecial[] = {0.0,
                                      -0.0,
                                      INFINITY,
                                      -INFINITY,
                                      NAN,
                                      -NAN,
                                      DBL_MIN,
                                      DBL_MAX,
                                      -DBL_MAX,
                                      DBL_TRUE_MIN,
                                      DBL_EPSILON,
                                      0.1,
                                      0.5,
                                      1.5,
                                      2.5,
                                      0.05,
                                      0.25,
                                      9.5,
                                      99.5,
                                      0.0001,
                                      0.00001,
                                      0.000099999,
                                      999999.5,
                                      9999995.0,
                                      1e15,
                                      1e16,
                                      1e22,
                                      1e23,
                                      9.999999999999999e22,
                                      123456789.125,
                                      0x1.fffffffffffffp+0,
                                      0x1.8p+0,
                                      0x1.08p+0,
                                      0x1.0000000000008p+0,
                                      0x1.fffffffffffffp-1022,
                                      0x0.8p-1022,
                                      3.141592653589793};
    double d;
    switch (Below(8)) {
      case 0:
        return kSpecial[Below(sizeof kSpecial / sizeof kSpecial[0])];
      case 1: {  // any bit pattern (all exponents, NaN payloads)
        uint64_t bits = U64();
        memcpy(&d, &bits, 8);
        return d;
      }
      case 2: {  // near 1: the exponents most output has
        uint64_t bits = (U64() & 0x800fffffffffffffULL) | (uint64_t(Between(990, 1080)) << 52);
        memcpy(&d, &bits, 8);
        return d;
      }
      case 3:  // integers of any size
        return static_cast<double>(RandomInt());
      case 4: {  // short decimals: values near a rounding boundary
        static const double kPow10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
        d = static_cast<double>(Between(0, 2000000)) / kPow10[Below(10)];
        break;
      }
      case 5:  // exact binary ties: (2n+1) / 2^k
        d = std::ldexp(static_cast<double>(2 * Between(0, 5000) + 1), -Between(1, 14));
        break;
      case 6: {  // subnormals
        uint64_t bits = U64() & (0x800fffffffffffffULL >> Below(52));
        memcpy(&d, &bits, 8);
        return d;
      }
      default:  // powers of ten and their neighbours (%g's switch to %e)
        d = std::pow(10.0, Between(-8, 24));
        if (OneIn(3)) d = std::nextafter(d, OneIn(2) ? 0.0 : INFINITY);
        break;
    }
    return OneIn(2) ? -d : d;
  }

  std::string RandomString() {
    std::string s(OneIn(20) ? Between(0, 6000) : Between(0, 24), 'a');
    bool high = OneIn(4);
    for (char &ch : s) ch = static_cast<char>(high ? Between(1, 255) : Between(0x20, 0x7e));
    return s;
  }

  void Value(Conv *c) {
    switch (c->conv) {
      case 'd':
      case 'i':
        c->len = kIntLens[Below(10)];
        c->i = RandomInt();
        break;
      case 'u':
      case 'o':
      case 'x':
      case 'X':
        c->len = kIntLens[Below(10)];
        c->u = static_cast<uint64_t>(RandomInt());
        break;
      case 'c':
        // Narrow %c: the client sends (unsigned char); above 0x7f the
        // renderer writes UTF-8 (tested apart). %lc: the C locale has ASCII.
        c->len = OneIn(3) ? "l" : OneIn(4) ? (OneIn(2) ? "h" : "hh") : "";
        c->u = static_cast<uint64_t>(Between(0, 127));
        break;
      case 's':
        c->len = OneIn(3) ? "l" : OneIn(4) ? (OneIn(2) ? "h" : "hh") : "";
        c->s = RandomString();
        if (c->len == "l")  // the C locale converts ASCII only
          for (char &ch : c->s) ch = (ch & 0x7f) ? static_cast<char>(ch & 0x7f) : 'z';
        break;
      case 'm':
        c->err = OneIn(10) ? Between(134, 5000) : Between(0, 133);
        c->s = strerror(c->err);
        break;
      case 'p': {
        static const uint64_t kPtr[] = {0, 1, 0x1000, 0x7ffc12345678, ~0ULL};
        c->u = OneIn(3) ? kPtr[Below(5)] : U64() >> Below(64);
        break;
      }
      default:
        c->len = OneIn(4) ? (OneIn(2) ? "l" : "L") : "";
        c->d = RandomDouble();
        break;
    }
  }

  std::mt19937_64 rng_;
};

std::string Describe(const Conv &c) {
  std::string v;
  char tmp[64];
  switch (c.conv) {
    case 'd':
    case 'i':
      v = std::to_string(c.i);
      break;
    case 's':
    case 'm':
      v = "string of ";
      v.append(std::to_string(c.s.size())).append(" bytes");
      break;
    case 'u':
    case 'o':
    case 'x':
    case 'X':
    case 'c':
    case 'p':
      v = std::to_string(c.u);
      break;
    case '%':
      break;
    default: {
      uint64_t bits;
      memcpy(&bits, &c.d, 8);
      snprintf(tmp, sizeof tmp, "%a (bits %016llx)", c.d, static_cast<unsigned long long>(bits));
      v = tmp;
    }
  }
  if (c.width == kStar) v.append(" width*=").append(std::to_string(c.width_arg));
  if (c.prec == kStar) v.append(" precision*=").append(std::to_string(c.prec_arg));
  return v;
}

std::string Head(const std::string &s) {
  if (s.size() <= 120) return s;
  std::string h = s.substr(0, 100);
  h.append("... (").append(std::to_string(s.size())).append(" bytes)");
  return h;
}

// Renders a whole format with the renderer; *ok is false when it refused.
std::string Render(const std::string &fmt, const std::string &args, bool *ok) {
  render::Format f;
  render::Compile(fmt, &f);
  std::string out;
  *ok = f.ok && render::RenderMessage(f, args, &out);
  return out;
}

TEST(RenderPrintfTest, RandomSpecsMatchSnprintf) {
  Gen gen(TestSeed(20240615));
  constexpr int kCases = 120000;
  static const char *const kLiterals[] = {"", "", "", "x=", "[", "] ", "caf\xc3\xa9 ", "\t"};
  int mismatches = 0, shown = 0;
  std::map<char, int> by_conv;
  for (int n = 0; n < kCases; n++) {
    // Mostly one conversion; sometimes several with literal text between.
    int convs = gen.OneIn(5) ? gen.Between(2, 4) : 1;
    std::string fmt, args, want, what;
    char first = 0;
    for (int k = 0; k < convs; k++) {
      const char *lit = kLiterals[gen.Below(8)];
      fmt.append(lit);
      want.append(lit);
      Conv c = gen.Random();
      if (!first) first = c.conv;
      fmt.append(Spec(c, false));
      Encode(c, &args);
      want.append(Expected(c));
      if (!what.empty()) what.append("; ");
      what.append(Spec(c, false)).append(": ").append(Describe(c));
    }
    bool ok;
    std::string got = Render(fmt, args, &ok);
    if (ok && got == want) continue;
    mismatches++;
    by_conv[first]++;
    if (shown++ < 20)
      ADD_FAILURE() << "format \"" << fmt << "\" with " << what << "\n  logsink: \"" << Head(got)
                    << "\"" << (ok ? "" : " (refused)") << "\n  snprintf: \"" << Head(want) << "\"";
  }
  std::string summary;
  for (auto [conv, count] : by_conv)
    summary.append(" %").append(1, conv).append(":").append(std::to_string(count));
  printf("[render_printf] %d cases, %d mismatches%s\n", kCases, mismatches, summary.c_str());
  ::testing::Test::RecordProperty("cases", kCases);
  ::testing::Test::RecordProperty("mismatches", mismatches);
  EXPECT_EQ(mismatches, 0) << "by first conversion:" << summary;
}

// The three differences the first differential run found.
std::string RenderOne(const char *fmt, double d) {
  std::string args;
  PutDouble(&args, d);
  bool ok;
  std::string out = Render(fmt, args, &ok);
  EXPECT_TRUE(ok) << fmt;
  return out;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
std::string Libc(const char *fmt, double d) {
  static char buf[8192];
  int n = snprintf(buf, sizeof buf, fmt, d);
  return n < 0 ? "[snprintf failed]" : std::string(buf, static_cast<size_t>(n));
}
#pragma GCC diagnostic pop

TEST(RenderPrintfTest, ZeroPaddingOfHexFloatsGoesAfterThePrefix) {
  EXPECT_EQ(RenderOne("%012a", 0.0), "0x0000000p+0");
  for (const char *f : {"%012a", "%+013A", "% 020a", "%#015.0a", "%-012a", "%030.3a"})
    for (double d : {0.0, -0.0, 1.5, -0x1.fp-1030, double{INFINITY}, -double{NAN}})
      EXPECT_EQ(RenderOne(f, d), Libc(f, d)) << f << " of " << d;
}

TEST(RenderPrintfTest, HashGKeepsTheDecimalPointWithoutAddingDigits) {
  EXPECT_EQ(RenderOne("%#.0g", 1.5), "2.");
  for (const char *f : {"%#.0g", "%#.1G", "%#g", "%#.0e", "%#.0f", "%#.3g", "%#.0a"})
    for (double d : {1.5, 0.0, 100.0, 1e-5, 123456789.0, 0.5})
      EXPECT_EQ(RenderOne(f, d), Libc(f, d)) << f << " of " << d;
}

TEST(RenderPrintfTest, LongPrecisionIsExactUpToTheClamp) {
  // C prints every digit asked for: "0." and 800 digits.
  std::string s = RenderOne("%.800f", 0.1);
  EXPECT_EQ(s.size(), 802u);
  EXPECT_EQ(s, Libc("%.800f", 0.1));
  // Past kMaxWidth the precision is clamped, exactly as if 4096 was written.
  EXPECT_EQ(RenderOne("%.5000f", 0.1), Libc("%.4096f", 0.1));
  EXPECT_EQ(RenderOne("%.5000f", 0.1).size(), 4098u);
  EXPECT_EQ(RenderOne("%.4096f", DBL_TRUE_MIN), Libc("%.4096f", DBL_TRUE_MIN));
  EXPECT_EQ(RenderOne("%.1000f", 0x1p-800), Libc("%.1000f", 0x1p-800));
  EXPECT_EQ(RenderOne("%.900e", DBL_MAX), Libc("%.900e", DBL_MAX));
  EXPECT_EQ(RenderOne("%.4096g", DBL_TRUE_MIN), Libc("%.4096g", DBL_TRUE_MIN));
  EXPECT_EQ(RenderOne("%#.4096g", 1.0), Libc("%#.4096g", 1.0));
  EXPECT_EQ(RenderOne("%.4096a", 1.0), Libc("%.4096a", 1.0));
  // Where fmt's own fixed precision stops being exact (767 digits in all,
  // integer digits included) and around it.
  for (const char *f : {"%.458f", "%.459f", "%.500f", "%.766f", "%.767f", "%.768f", "%.1100f"})
    for (double d : {DBL_MAX, 1e300, 123.456, 1.0 / 3, 0x1p-715, 0x1.8p-716, 0x1p-1000, 5e-324})
      EXPECT_EQ(RenderOne(f, d), Libc(f, d)) << f << " of " << d;
  std::string args;
  PutVarint(&args, ls_zigzag(5000));
  PutDouble(&args, 0.1);
  bool ok;
  EXPECT_EQ(Render("%.*f", args, &ok), Libc("%.4096f", 0.1));
  EXPECT_TRUE(ok);
}

// glibc's %#g, for a value below 10^P that rounds up to 10^P (so style e),
// prints "1.e+P" where C says "1.000e+P"; the renderer does what glibc does.
// The cases around it print as C says.
TEST(RenderPrintfTest, HashGRoundingUpToTheNextPowerOfTenIsAsGlibc) {
  EXPECT_EQ(RenderOne("%#g", 999999.5), "1.e+06");
  EXPECT_EQ(RenderOne("%#g", 1e6), "1.00000e+06");
  EXPECT_EQ(RenderOne("%#.3g", 99.96), "100.");
  for (int p = 1; p <= 25; p++) {
    std::string f = "%#.";
    f.append(std::to_string(p)).push_back('g');
    std::string e = "%#.";
    e.append(std::to_string(p - 1)).push_back('e');
    double pow10 = std::pow(10.0, p);
    for (double d : {pow10, std::nextafter(pow10, 0.0), pow10 - 0.5, pow10 - 0.25, pow10 * 0.1,
                     std::nextafter(pow10 * 0.1, 0.0), pow10 * (1 - 1e-9), pow10 * 0.99999}) {
      EXPECT_EQ(RenderOne(f.c_str(), d), Libc(f.c_str(), d)) << f << " of " << d;
      EXPECT_EQ(RenderOne(f.c_str(), -d), Libc(f.c_str(), -d)) << f << " of " << -d;
      EXPECT_EQ(RenderOne(e.c_str(), d), Libc(e.c_str(), d)) << e << " of " << d;
      std::string plain = f;
      plain.erase(1, 1);  // without '#'
      EXPECT_EQ(RenderOne(plain.c_str(), d), Libc(plain.c_str(), d)) << plain << " of " << d;
    }
  }
}

// Where the renderer cannot be snprintf: the client sent a code point.
TEST(RenderPrintfTest, CharactersAboveAsciiRenderAsUtf8) {
  for (const char *f : {"%c", "%lc", "%3c", "%-3lc"}) {
    std::string args;
    PutVarint(&args, 0xe9);
    bool ok;
    std::string got = Render(f, args, &ok);
    EXPECT_TRUE(ok);
    std::string want = "\xc3\xa9";
    if (f[1] == '3') want.insert(0, 1, ' ');
    if (f[2] == '3') want.push_back(' ');
    EXPECT_EQ(got, want) << f;
  }
}

// RENDERING.md, "Arguments and narrowing": the message narrows, JSON args do not.
TEST(RenderPrintfTest, NarrowingIsForTheMessageOnly) {
  std::string args;
  PutVarint(&args, ls_zigzag(300));
  PutVarint(&args, 0x1ffffffffULL);
  render::Format f;
  render::Compile("%hhd %x", &f);
  std::string msg, json;
  EXPECT_TRUE(render::RenderMessage(f, args, &msg));
  EXPECT_EQ(msg, "44 ffffffff");
  EXPECT_EQ(render::AppendJsonArgs(&f, args, &json), args.size());
  EXPECT_EQ(json, "[300,8589934591]");
}

TEST(RenderPrintfTest, PercentWithAnythingBetweenIsRefused) {
  for (const char *f : {"%5%", "%-%", "%.2%", "%l%", "%*%"}) {
    bool ok;
    std::string out = Render(f, "", &ok);
    EXPECT_FALSE(ok) << f;
  }
}

}  // namespace
}  // namespace logsink::test
