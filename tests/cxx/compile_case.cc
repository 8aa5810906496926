// compile_case.cc: one LS_FMT call per case (tests/cxx/CMakeLists.txt),
// compiled with -Wall -Wextra -Werror -pedantic: LS_CASE_ok compiles (with
// and without arguments); LS_CASE_mismatch (two fields, one argument),
// LS_CASE_badfield (a field that is not `name={}`), LS_CASE_emptyspec
// (`{:}`, which fmt 9 checks and then throws on), LS_CASE_nul (a 0 byte
// in the format), LS_CASE_namedwidth and LS_CASE_namedprecision (`{:{w}}`,
// `{:.{p}}`, which fmt 9 checks but LS_FMT cannot pass) must not.
#include <logsink/logsink.hpp>
#include <string>

int main() {
  std::string user = "alice";
#if defined(LS_CASE_ok)
  LS_FMT(nullptr, LS_INFO, "{} took {:.3f} s" LS_FIELDS("user={}"), 7, 1.5, user);
  LS_FMT(nullptr, LS_INFO, "no arguments, {{}} and {:005}|{:\xff<3}", 5, 6);
  LS_FMT(nullptr, LS_INFO, "nested {:{}} {:.{}} {{{:>{}}}} {:}<5}", 5, 3, 7.5, 2, 8, 2, 9);
#elif defined(LS_CASE_emptyspec)
  LS_FMT(nullptr, LS_INFO, "{:} took", 7);
#elif defined(LS_CASE_namedwidth)
  LS_FMT(nullptr, LS_INFO, "{:}<{w}}", 5, 3);
#elif defined(LS_CASE_namedprecision)
  LS_FMT(nullptr, LS_INFO, "{:.{p}f}", 5.0, 3);
#elif defined(LS_CASE_nul)
  LS_FMT(nullptr, LS_INFO, "{} took\0 {}", 7, 8);
#elif defined(LS_CASE_mismatch)
  LS_FMT(nullptr, LS_INFO, "{} took {:.3f} s", 7);
#elif defined(LS_CASE_badfield)
  LS_FMT(nullptr, LS_INFO, "{} took {:.3f} s" LS_FIELDS("user={:>4}"), 7, 1.5, user);
#endif
  return 0;
}
