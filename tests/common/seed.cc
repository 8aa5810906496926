// seed.cc: seeds of randomized tests (see seed.h).
#include "common/seed.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace logsink::test {

uint64_t TestSeed(std::optional<uint64_t> fixed) {
  uint64_t seed;
  if (const char *env = std::getenv("LOGSINK_TEST_SEED"); env && *env) {
    seed = std::strtoull(env, nullptr, 0);
  } else if (fixed) {
    seed = *fixed;
  } else {
    std::random_device rd;
    seed = (uint64_t(rd()) << 32) | rd();
  }
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "?";
  std::printf("[seed] %s: LOGSINK_TEST_SEED=%llu\n", name.c_str(),
              static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return seed;
}

}  // namespace logsink::test
