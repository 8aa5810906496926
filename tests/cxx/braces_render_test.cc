// braces_render_test.cc: brace formats (proto/braces.h) rendered by the
// renderer (render/) against fmt::format itself, over a table of specs
// (fill, align, sign, '#', '0', width, precision, L, every presentation
// type) and edge values of every argument type, the arguments encoded by
// the C++ API's own encoder (logsink.hpp): what the renderer shows is what
// fmt prints, a spec fmt refuses for its value renders as a mismatch, and
// every text fmt accepts is one proto's parser accepts (else the daemon
// would refuse a site that compiled).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <logsink/logsink.hpp>
#include <string>
#include <vector>

#include "logsink/proto/braces.h"
#include "logsink/render/render.h"

namespace logsink::test {
namespace {

// The site format and argument bytes of `text` with `args`, as LS_FMT
// makes them.
template <typename... A>
std::pair<std::string, std::string> Encode(std::string_view text, const A &...args) {
  std::string fmt = "\x1e";
  ((fmt += detail::letter<detail::norm_t<A>>()), ...);
  fmt += '\x1e';
  fmt += text;
  unsigned char buf[4096];
  unsigned char *p = buf;
  uint64_t trunc = 0;
  ((p = detail::put(p, detail::value<detail::norm_t<A>>(args), SIZE_MAX, &trunc)), ...);
  return {fmt, std::string(reinterpret_cast<char *>(buf), size_t(p - buf))};
}

struct Outcome {
  bool ok;
  std::string text;
};

template <typename... A>
Outcome Render(std::string_view text, const A &...args) {
  auto [fmt, bytes] = Encode(text, args...);
  render::Format f;
  render::Compile(fmt, &f);
  std::string out;
  const bool ok = render::RenderMessage(f, bytes, &out);
  return {ok, out};
}

template <typename... A>
Outcome Fmt(std::string_view text, const A &...args) {
  try {
    return {true, fmt::format(fmt::runtime(text), detail::value<detail::norm_t<A>>(args)...)};
  } catch (const fmt::format_error &) {
    return {false, ""};
  }
}

// One case: the renderer matches fmt, and proto accepts every text fmt does.
template <typename... A>
void Check(std::string_view text, const A &...args) {
  const Outcome want = Fmt(text, args...);
  const Outcome got = Render(text, args...);
  std::string fmt = Encode(text, args...).first;
  if (want.ok) {
    EXPECT_GE(ls_braces_check(fmt.data(), fmt.size()), 0) << "proto refuses \"" << text << "\"";
    EXPECT_TRUE(got.ok) << "\"" << text << "\" -> " << got.text;
    EXPECT_EQ(got.text, want.text) << "\"" << text << "\"";
  } else {
    EXPECT_FALSE(got.ok) << "\"" << text << "\" renders \"" << got.text
                         << "\" where fmt refuses it";
  }
}

const std::vector<std::string> kCommon = {
    "",      ":",     ":<8",     ":>8",  ":^8",   ":*^9",    ":\xe2\x98\x85>6",
    ":08",   ":+",    ":-",      ": ",   ":#",    ":.0",     ":.3",
    ":12.4", ":L",    ":>+#012", ":<{}", "d",     ":a",      ":A",
    ":b",    ":B",    ":c",      ":d",   ":e",    ":E",      ":f",
    ":F",    ":g",    ":G",      ":o",   ":p",    ":s",      ":x",
    ":X",    ":#x",   ":#o",     ":#b",  ":+.2e", ":010.3f", ":^12.5g",
    ":<+10", ":#10X", ":L>10",   ":.{}"};

// "{" spec "}" plus, for a spec that takes a nested argument, that argument.
template <typename T>
void CheckSpecs(const T &v) {
  for (const std::string &spec : kCommon) {
    const std::string text = "<{" + spec + "}>";
    if (spec.find("{}") != std::string::npos) {
      Check(text, v, 7);
      Check(text, v, 0u);
    } else {
      Check(text, v);
    }
  }
}

TEST(BraceRender, IntegersMatchFmt) {
  for (int64_t v : {int64_t(0), int64_t(1), int64_t(-1), int64_t(42), int64_t(65),
                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()})
    CheckSpecs(v);
  for (uint64_t v : {uint64_t(0), uint64_t(255), std::numeric_limits<uint64_t>::max()})
    CheckSpecs(v);
  // Narrower C++ types log as 64 bits and show as fmt shows them.
  CheckSpecs(static_cast<int8_t>(-5));
  CheckSpecs(static_cast<unsigned short>(65535));
  CheckSpecs(static_cast<signed char>(97));
}

TEST(BraceRender, BoolsCharsAndPointersMatchFmt) {
  CheckSpecs(true);
  CheckSpecs(false);
  CheckSpecs('a');
  CheckSpecs('\x7f');
  CheckSpecs(static_cast<const void *>(nullptr));
  CheckSpecs(reinterpret_cast<const void *>(uintptr_t(0x1234abcd)));
}

TEST(BraceRender, FloatingPointMatchesFmt) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, -0.0, 0.1, 1.0 / 3, 1e300, 5e-324, 123456789.0, 1e16, 2.5, -1.5e-7, inf,
                   -inf, std::nan("")})
    CheckSpecs(v);
  for (float v : {0.1f, 1e-45f, 3.4e38f, -2.75f, 16777217.0f}) CheckSpecs(v);
  CheckSpecs(static_cast<long double>(0.25));
}

TEST(BraceRender, StringsMatchFmt) {
  for (const char *s : {"", "abc", "h\xc3\xa9llo w\xc3\xb6rld", "a{b}c", "tab\there"})
    CheckSpecs(std::string(s));
  CheckSpecs(std::string_view("view"));
  const char *null = nullptr;
  Check("{}|{:>8}", null, null);
}

TEST(BraceRender, TextsMatchFmt) {
  Check("plain text, no fields");
  Check("{{}} {{{}}} }}{{", 5);
  Check("{1} {0} {1}", 1, std::string("b"));
  Check("{0:{1}} {0:.{2}f}", 3.14159, 10, 2);
  Check("{:{}.{}}", 2.0 / 3, 12, 4);
  Check("{:{}}", std::string("x"), 0);
  Check("{0:{1}.{2}}", std::string("abcdef"), 8u, 3u);
  Check("{} {} {}", 'x', true, -7);
  Check("100% {}", 1);
  Check("{:%}", 1);    // not a type fmt knows
  Check("{0} {}", 1);  // manual then automatic
  Check("{} {0}", 1);  // automatic then manual
  Check("{", 1);
  Check("}", 1);
  Check("{:", 1);
  Check("{x}", 1);  // a named argument
  Check("{2}", 1, 2);
  Check("{:{}}", 1, std::string("w"));  // a string as a width
  Check("{:{}}", 1, -3);                // a negative width
  Check("{00}", 1);
  Check("{01}", 1);
  Check("{:.}", 1.5);
  Check("{:^^^5}", 1);
  Check("{:{<5}", 1);
  Check("{::<5}", 1);
  Check("{:}<5}", 1);
  // Texts fmt 9's compile-time check takes (an outside review found proto
  // refusing them): a width after the '0' flag that starts with 0, a fill
  // byte that leads no UTF-8 character, a bool or char as a nested width.
  Check("{:005}|{:00}|{:+007.2f}", 5, 6, 1.5);
  Check("{:\xff<5}|{:\xf8>3}", 1, 2);
  Check("{:{}}", 1, true);
  Check("{:{}}", 1, 'x');
  Check("{:.0000000005}", 1.5);  // 11 digits: fmt refuses
  Check("{:.000000005}", 1.5);   // 10 digits
}

TEST(BraceRender, WidthsAndPrecisionsAreClamped) {
  // fmt would print 100,000 bytes; a reader prints 4096 (RENDERING.md).
  Outcome o = Render("{:100000}", 1);
  ASSERT_TRUE(o.ok);
  EXPECT_EQ(o.text.size(), size_t(render::kMaxWidth));
  o = Render("{:{}}", std::string("x"), uint64_t(1) << 40);
  ASSERT_TRUE(o.ok);
  EXPECT_EQ(o.text.size(), size_t(render::kMaxWidth));
  o = Render("{:.100000f}", 1.0);
  ASSERT_TRUE(o.ok);
  EXPECT_EQ(o.text, fmt::format("{:.4096f}", 1.0));
  // Numbers past 2^31 - 1 are refused by proto (fmt: "number is too big").
  const std::string big =
      "\x1e"
      "i\x1e{:2147483648}";
  EXPECT_LT(ls_braces_check(big.data(), big.size()), 0);
}

TEST(BraceRender, ArgumentsThatDoNotMatchRenderAsAMismatch) {
  auto [fmt, bytes] = Encode("{} {}", 1, std::string("s"));
  render::Format f;
  render::Compile(fmt, &f);
  std::string out;
  EXPECT_FALSE(render::RenderMessage(f, bytes.substr(0, bytes.size() - 1), &out));
  EXPECT_NE(out.find("mismatch"), std::string::npos) << out;
  out.clear();
  EXPECT_TRUE(render::RenderMessage(f, bytes, &out));
  EXPECT_EQ(out, "1 s");
}

// One Format compiled again and again (FormatCache's inline slot: every
// record read through the daemon, inline sites): each site renders its own
// text, a nested width after a plain one included, and nothing piles up.
TEST(BraceRender, AFormatCompiledAgainRendersItsNewSite) {
  render::FormatCache cache;
  struct Site {
    std::pair<std::string, std::string> enc;
    std::string want;
  };
  const Site sites[] = {
      {Encode("first {}", 1), "first 1"},
      {Encode("second {}", 2), "second 2"},
      {Encode("[{:{}}]", 3, 4), "[   3]"},
      {Encode("", 0), ""},
  };
  for (int round = 0; round < 3; round++) {
    for (const Site &s : sites) {
      const render::Format &f = cache.Get(0, s.enc.first);
      std::string out;
      EXPECT_TRUE(render::RenderMessage(f, s.enc.second, &out)) << out;
      EXPECT_EQ(out, s.want) << "round " << round;
    }
  }
  render::Format f;
  for (const Site &s : sites) {
    render::Compile(s.enc.first, &f);
    std::string out;
    EXPECT_TRUE(render::RenderMessage(f, s.enc.second, &out)) << out;
    EXPECT_EQ(out, s.want);
  }
}

}  // namespace
}  // namespace logsink::test
