// compile_case.cc: one LS_FMT call per case (tests/cxx/CMakeLists.txt):
// LS_CASE_ok compiles; LS_CASE_mismatch (two fields, one argument) and
// LS_CASE_badfield (a field that is not `name={}`) must not.
#include <logsink/logsink.hpp>
#include <string>

int main() {
  std::string user = "alice";
#if defined(LS_CASE_ok)
  LS_FMT(nullptr, LS_INFO, "{} took {:.3f} s" LS_FIELDS("user={}"), 7, 1.5, user);
#elif defined(LS_CASE_mismatch)
  LS_FMT(nullptr, LS_INFO, "{} took {:.3f} s", 7);
#elif defined(LS_CASE_badfield)
  LS_FMT(nullptr, LS_INFO, "{} took {:.3f} s" LS_FIELDS("user={:>4}"), 7, 1.5, user);
#endif
  return 0;
}
