// ratelimit.h: at most one log line per kind per interval, counting what it
// suppressed, for diagnostics that a client or a failing disk can repeat at will.
#pragma once

#include <spdlog/spdlog.h>
#include <time.h>

#include <cstdint>
#include <string>
#include <utility>

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

  // The daemon's one rate-limited reporter: writes the line unless one of the
  // same kind was written within the interval, and then says how many of its
  // kind were suppressed meanwhile.
  template <typename... Args>
  void Log(int kind, spdlog::level::level_enum level, fmt::format_string<Args...> f,
           Args &&...args) {
    uint64_t suppressed = 0;
    if (!Allow(kind, &suppressed)) return;
    std::string line = fmt::format(f, std::forward<Args>(args)...);
    if (suppressed) line += fmt::format(" ({} similar lines suppressed)", suppressed);
    spdlog::log(level, "{}", line);
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
