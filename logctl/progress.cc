// progress.cc: see progress.h.
#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace logsink::logctl {

Progress::Progress(std::string what, bool output_on_terminal, std::string unit)
    : what_(std::move(what)), unit_(std::move(unit)) {
  const char *env = std::getenv("LOGSINK_PROGRESS");
  enabled_ =
      isatty(STDERR_FILENO) == 1 && !output_on_terminal && !(env && std::strcmp(env, "0") == 0);
  start_ = std::chrono::steady_clock::now();
  next_ = start_ + (env && std::strcmp(env, "1") == 0 ? std::chrono::milliseconds(0)
                                                      : std::chrono::milliseconds(500));
}

Progress::~Progress() {
  if (drawn_) std::fputs("\r\033[K", stderr);  // back to the line's start, erased
}

void Progress::Draw(uint64_t seq) {
  if (!started_) {
    started_ = true;
    first_ = seq;
  }
  const auto now = std::chrono::steady_clock::now();
  if (now < next_) return;
  next_ = now + std::chrono::milliseconds(100);
  const uint64_t total = last_ >= first_ ? last_ - first_ + 1 : 0;
  const uint64_t done = seq >= first_ ? seq - first_ + 1 : 0;
  const unsigned pct = total ? unsigned(done * 100 / total) : 100;
  std::fprintf(stderr, "\rlogctl: %s: %u%% (%llu of %llu %s)\033[K", what_.c_str(),
               pct > 100 ? 100 : pct, (unsigned long long)done, (unsigned long long)total,
               unit_.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace logsink::logctl
