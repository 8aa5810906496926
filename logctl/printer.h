// printer.h: turns a storage::Record into one output line: "short" (local
// time, app[pid]: <level> message, control characters escaped, optional
// colour), "json" (one object per line) or "raw" (format and arguments
// uninterpreted). Keeps the per-site format cache and the time cache.
#pragma once

#include <cstdint>
#include <string>

#include "logsink/storage/ring.h"
#include "render.h"
#include "timefmt.h"

namespace logsink::logctl {

enum class OutputMode { kShort, kJson, kRaw };

class Printer {
 public:
  Printer(OutputMode mode, bool color, bool utc) : mode_(mode), color_(color), time_(utc) {}

  // Renders rec's message into *msg (replacing its contents). Returns false
  // when the format and the arguments did not match (the raw parts were
  // rendered instead).
  bool Message(const storage::Record &rec, std::string *msg);
  // Appends rec's line, '\n' included; msg is what Message() produced.
  void Line(const storage::Record &rec, const std::string &msg, bool msg_ok, std::string *out);
  // Appends the "records lost" line for a lapped reader.
  void Lost(uint64_t n, std::string *out);

  // Renders and appends in one go.
  void Print(const storage::Record &rec, std::string *out) {
    bool ok = Message(rec, &msg_);
    Line(rec, msg_, ok, out);
  }

 private:
  void ShortLine(const storage::Record &rec, const std::string &msg, std::string *out);
  void RawLine(const storage::Record &rec, std::string *out);
  void JsonLine(const storage::Record &rec, const std::string &msg, bool msg_ok, std::string *out);

  OutputMode mode_;
  bool color_;
  render::TimeFormatter time_;
  render::FormatCache formats_;
  std::string msg_, tmp_;
};

}  // namespace logsink::logctl
