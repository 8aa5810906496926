// client_harness.h: helpers of liblogsink's integration tests: the real
// logsinkd (tests/common) on a 4 MiB ring, and the ring read back (failing
// the test on corruption) until it holds what a test waits for.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/daemon_process.h"
#include "common/ring_check.h"
#include "common/temp_dir.h"

namespace logsink::test {

// logsinkd on dir/logsink.sock and a 4 MiB dir/logsink.ring.
class ClientDaemon : public Daemon {
 public:
  explicit ClientDaemon(const TempDir &dir)
      : Daemon(dir, {"--size", "4MiB", "--log-level", "info"}) {}
};

// Reads the ring until pred holds (the daemon writes partial blocks on a
// timer) or the hang limit passes; returns the last read.
inline std::vector<OwnedRecord> WaitRing(
    const std::string &path, const std::function<bool(const std::vector<OwnedRecord> &)> &pred) {
  std::vector<OwnedRecord> v;
  WaitUntil(
      [&] {
        v = ReadRing(path);
        return pred(v);
      },
      kHang, Ms(10));
  return v;
}

inline size_t CountFmt(const std::vector<OwnedRecord> &v, const std::string &fmt) {
  size_t n = 0;
  for (const auto &r : v) n += !r.dropped() && r.fmt == fmt;
  return n;
}

inline uint64_t DroppedReported(const std::vector<OwnedRecord> &v) {
  uint64_t n = 0;
  for (const auto &r : v) n += r.dropped() ? r.dropped_count : 0;
  return n;
}

}  // namespace logsink::test
