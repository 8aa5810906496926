// level_gate.cc: $LOGSINK_LEVEL for logctl send and run (see level_gate.h).
#include "level_gate.h"

#include <cstdio>
#include <cstdlib>

#include "common.h"
#include "logsink/proto/facility.h"
#include "logsink/proto/level_rules.h"

namespace logsink::logctl {

int LevelFromEnvironment() {
  const char *env = std::getenv("LOGSINK_LEVEL");
  if (!env || !*env) return LS_LEVEL_MAX;  // empty: as if unset
  ls_level_rules r;
  char why[192];
  if (ls_level_rules_parse(env, LS_LEVEL_MAX, &r, why, sizeof why) != 0) {
    Warn("LOGSINK_LEVEL=\"" + std::string(env).substr(0, 128) + "\" ignored: " + why);
    return LS_LEVEL_MAX;
  }
  return r.level;
}

namespace {
constexpr size_t kHead = 5;  // "<191>": the longest PRI prefix
}

LineFilter::LineFilter(int stream_level, bool prio_prefix, int threshold)
    : stream_level_(stream_level), threshold_(threshold), prio_prefix_(prio_prefix) {}

void LineFilter::Decide(std::string *out) {
  int level = stream_level_;
  unsigned pri;
  if (prio_prefix_ && ls_pri_parse(head_.data(), head_.size(), &pri) > 0) level = int(pri & 7u);
  const bool ended = !head_.empty() && head_.back() == '\n';
  if (level <= threshold_) {
    out->append(head_);
    state_ = ended ? State::kStart : State::kKeep;
  } else {
    left_out_++;
    state_ = ended ? State::kStart : State::kSkip;
  }
  head_.clear();
}

void LineFilter::Feed(std::string_view in, std::string *out) {
  if (threshold_ >= LS_LEVEL_MAX) {  // everything passes
    out->append(in);
    return;
  }
  while (!in.empty()) {
    if (state_ == State::kStart) {
      // A line's level needs its first bytes (its prefix) or its end.
      while (!in.empty() && head_.size() < kHead && (head_.empty() || head_.back() != '\n')) {
        head_ += in.front();
        in.remove_prefix(1);
      }
      if (head_.size() == kHead || head_.back() == '\n' || !prio_prefix_) Decide(out);
      continue;
    }
    const size_t nl = in.find('\n');
    const size_t n = nl == std::string_view::npos ? in.size() : nl + 1;
    if (state_ == State::kKeep) out->append(in.substr(0, n));
    if (nl != std::string_view::npos) state_ = State::kStart;
    in.remove_prefix(n);
  }
}

void LineFilter::Finish(std::string *out) {
  if (state_ == State::kStart && !head_.empty()) Decide(out);
}

}  // namespace logsink::logctl
