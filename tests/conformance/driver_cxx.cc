// driver_cxx.cc: the conformance driver of the C++ API (LS_FMT,
// LS_FIELDS with `{}`), built as C++17. README.md lists what each call
// must produce: the same records as the C driver's printf formats.
#include <climits>
#include <logsink/logsink.hpp>
#include <string>
#include <string_view>

#include "driver.h"

namespace {

void Catalogue(ls_client *c) {
  const std::string long_text(1000, 'x');
  LS_FMT(c, LS_INFO, "integers {} {} {} {:x} {:o} {}", -42, 42u, ULLONG_MAX, 255u, 0755u,
         LLONG_MIN);
  LS_FMT(c, LS_NOTICE, "floats {:.3f} {:g} {:.1f} {:g} {:e}", 3.14159, 1e6, -0.5, 2.5e-7,
         12345.678);
  LS_FMT(c, LS_WARNING, "strings [{}] [{:>8}] [{:<8}] [{:.3}]", "h\xc3\xa9llo w\xc3\xb6rld",
         std::string("right"), std::string_view("left"), "truncate");
  LS_FMT(c, LS_ERR, "char {} and percent {}%", 'x', 100);
  LS_FMT(c, LS_DEBUG, "empty [{}]", "");
  LS_FMT(c, LS_CRIT, "lines {}", "first\nsecond\ttab");
  LS_FMT(c, LS_INFO, "long {}", long_text);
  LS_FMT(c, LS_ALERT, "no arguments");
}

template <int L>
void LevelAt(ls_client *c, int i) {
  LS_FMT(c, L, "level {}", i);
}

template <int L>
void ProbeAt(ls_client *c) {
  LS_FMT(c, L, "probe");
}

void Level(ls_client *c, int i) {
  using F = void (*)(ls_client *, int);
  static constexpr F at[] = {LevelAt<0>, LevelAt<1>, LevelAt<2>, LevelAt<3>,
                             LevelAt<4>, LevelAt<5>, LevelAt<6>, LevelAt<7>};
  at[i](c, i);
}

void Probe(ls_client *c, int i) {
  using F = void (*)(ls_client *);
  static constexpr F at[] = {ProbeAt<0>, ProbeAt<1>, ProbeAt<2>, ProbeAt<3>,
                             ProbeAt<4>, ProbeAt<5>, ProbeAt<6>, ProbeAt<7>};
  at[i](c);
}

void Fields(ls_client *c) {
  LS_FMT(c, LS_INFO, "login {}" LS_FIELDS("logger={} user={} n={} big={} ok={} ratio={}"), "alice",
         "conformance", std::string("alice"), -7LL, ULLONG_MAX, true, 0.5);
}

void Numbered(ls_client *c, const char *tag, int i) { LS_FMT(c, LS_INFO, "{} {}", tag, i); }

}  // namespace

int main(int argc, char **argv) {
  static const conformance_calls calls = {Catalogue, Level, Probe, Fields, Numbered};
  return conformance_main(argc, argv, &calls);
}
