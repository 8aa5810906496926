// level_gate.h: levels at the source for what `logctl send` and `logctl run`
// send: $LOGSINK_LEVEL (proto/level_rules.h), as liblogsink reads it. A line
// goes to the daemon when its level (the stream's, or with --prio-prefix its
// own "<N>" prefix's, read by the daemon's one rule, ls_pri_parse) is at or
// more severe than the rules' default level; lines have no source file, so
// file rules do not apply to them. A line's level is decided at its start.
#pragma once

#include <string>
#include <string_view>

namespace logsink::logctl {

// The default level of $LOGSINK_LEVEL (-1 off .. 7 debug): 7 when it is
// unset; when it does not parse, 7 and a warning on stderr that says why.
int LevelFromEnvironment();

// Passes the whole lines of a byte stream whose level is at or below
// `threshold` and leaves the others out.
class LineFilter {
 public:
  LineFilter(int stream_level, bool prio_prefix, int threshold);
  // Appends to *out the bytes of `in` that belong to lines that pass.
  void Feed(std::string_view in, std::string *out);
  // At the end of the stream: decides an unfinished line's start.
  void Finish(std::string *out);
  uint64_t lines_left_out() const { return left_out_; }

 private:
  void Decide(std::string *out);

  int stream_level_, threshold_;
  bool prio_prefix_;
  enum class State { kStart, kKeep, kSkip } state_ = State::kStart;
  std::string head_;  // a line's first bytes, until its level is known
  uint64_t left_out_ = 0;
};

}  // namespace logsink::logctl
