// client_stats.h: helpers of the tests that link liblogsink: its counters,
// and ls_flush repeated until the client has reconnected.
#pragma once

#include <gtest/gtest.h>
#include <logsink/logsink.h>

#include <chrono>
#include <thread>

#include "common/process.h"

namespace logsink::test {

inline ls_stats Stats(ls_client *c) {
  ls_stats s{};
  s.size = sizeof s;
  EXPECT_EQ(ls_get_stats(c, &s), 0);
  return s;
}

// Calls ls_flush until it returns 0 (the client reconnected) or the hang limit.
inline int FlushUntilConnected(ls_client *c) {
  auto deadline = Clock::now() + kHang;
  int rc;
  while ((rc = ls_flush(c)) != 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return rc;
}

}  // namespace logsink::test
