// asan.h: kAsanBuild, true when the product under test is built with
// AddressSanitizer (the asan preset). An integration test's own file is
// compiled without the instrumentation there (tests/CMakeLists.txt), so the
// compiler's __SANITIZE_ADDRESS__ does not say it: the build defines
// LOGSINK_TEST_ASAN for every test file.
// Tests use it to scale loop counts down and to leave out bounds on RSS and
// address space, which the sanitizer's shadow memory and quarantine change.
#pragma once

namespace logsink::test {

#if defined(LOGSINK_TEST_ASAN) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAsanBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAsanBuild = true;
#else
inline constexpr bool kAsanBuild = false;
#endif
#else
inline constexpr bool kAsanBuild = false;
#endif

}  // namespace logsink::test
