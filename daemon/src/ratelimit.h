// ratelimit.h: at most one log line per kind per interval, counting what it
// suppressed, for diagnostics that a client can trigger at will.
#pragma once

#include <time.h>

#include <cstdint>

namespace logsink::daemon {

template <int N>
class RateLimit {
 public:
  explicit RateLimit(uint64_t interval_ms = 1000) : interval_ms_(interval_ms) {}
  // True when a line of `kind` may be written now; *suppressed is then the
  // number of lines of that kind dropped since the last one written.
  bool Allow(int kind, uint64_t *suppressed) {
    uint64_t now = NowMs();
    Slot &s = slots_[kind];
    if (s.last_ms != 0 && now - s.last_ms < interval_ms_) {
      s.suppressed++;
      return false;
    }
    s.last_ms = now;
    *suppressed = s.suppressed;
    s.suppressed = 0;
    return true;
  }

 private:
  static uint64_t NowMs() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000 + 1;
  }
  struct Slot {
    uint64_t last_ms = 0;
    uint64_t suppressed = 0;
  };
  uint64_t interval_ms_;
  Slot slots_[N];
};

}  // namespace logsink::daemon
