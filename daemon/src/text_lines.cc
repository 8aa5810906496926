// text_lines.cc: see text_lines.h.
#include "text_lines.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "logsink/proto/frame.h"
#include "reply.h"
#include "syslog_parse.h"  // ParsePri: the one <PRI> rule

namespace logsink::daemon {

void TextLines::SetFields(std::vector<std::pair<std::string, std::string>> fields) {
  owned_ = std::move(fields);
  fields_bytes_ = 0;
  for (const auto &[name, value] : owned_)
    fields_bytes_ += name.size() + value.size() + sizeof(TextField) + 2 * sizeof(std::string);
}

void TextLines::Feed(const uint8_t *p, size_t n) {
  while (n > 0) {
    const uint8_t *nl = static_cast<const uint8_t *>(memchr(p, '\n', n));
    size_t len = nl ? size_t(nl - p) : n;
    size_t keep = std::min(len, kMaxTextLine - line_.size());
    line_.append(reinterpret_cast<const char *>(p), keep);
    line_cut_ += len - keep;
    if (!nl) break;
    EndLine();
    p = nl + 1;
    n -= len + 1;
  }
}

void TextLines::EndLine() {
  if (line_cut_) line_.resize(DropPartialChar(line_, &line_cut_).size());  // cut at kMaxTextLine
  unsigned level = flags_ >> LS_HELLO_LEVEL_SHIFT & 7u;
  unsigned facility = flags_ >> LS_HELLO_FACILITY_SHIFT & 31u;
  std::string_view msg = line_;
  unsigned prio;
  size_t k;
  if ((flags_ & LS_HELLO_PRIO_PREFIX) && (k = ParsePri(msg, &prio)) > 0) {
    msg.remove_prefix(k);
    level = prio & 7u;
    if (prio >= 8) facility = prio >> 3;
  }
  static constexpr TextKind kStream[] = {TextKind::kText, TextKind::kStdout, TextKind::kStderr};
  TextKind kind = kStream[flags_ >> LS_HELLO_STREAM_SHIFT & 3u];
  TextFields f;
  f.msg = msg;
  if (!owned_.empty()) {
    // Views made here, not kept: a moved TextLines moves its strings.
    fields_.clear();
    for (const auto &[name, value] : owned_) fields_.push_back({name, value});
    f.fields = &fields_;
  }
  storage::Status s = ctx_->text->Append(*src_, kind, uint8_t(facility), uint8_t(level),
                                         WallClockNanos(), f, line_cut_);
  if (s.ok()) {  // the acknowledgment counts only lines that are in the ring
    ctx_->counters->text_lines++;
    lines_++;
    if (line_cut_ || ctx_->text->last_cut()) {
      ctx_->counters->text_lines_cut++;
      lines_cut_++;
    }
    if (!owned_.empty() && ctx_->text->last_fields_fallback()) lines_without_fields_++;
  } else {
    WriteFailed(ctx_, s);
  }
  line_.clear();
  line_cut_ = 0;
}

bool TextLines::Finish(bool stopping) {
  if (line_.empty() && line_cut_ == 0) return false;
  if (stopping && (flags_ & LS_HELLO_RELAY)) {
    spdlog::debug("source {}: unfinished line of {} bytes left to its relay", src_->id,
                  line_.size() + line_cut_);
    line_.clear();
    line_cut_ = 0;
    return false;
  }
  uint64_t stored = lines_;
  EndLine();
  if (lines_ == stored) return false;
  ctx_->counters->text_partial_lines++;
  partial_lines_++;
  return true;
}

void TextLines::AppendAck(std::string *out) const {
  AppendCountersFrame(
      [&](const CounterFn &f) {
        f("lines", lines_);
        f("lines_cut", lines_cut_);
        f("partial_lines", partial_lines_);
        if (!owned_.empty()) f("lines_without_fields", lines_without_fields_);
      },
      out);
}

}  // namespace logsink::daemon
