// printer.h: turns a storage::Record into one output line: "short" (local
// time, app[pid]: <level> message, control characters escaped, optional
// colour), "json" (one object per line) or "raw" (format and arguments
// uninterpreted), and the other -o modes. Keeps the per-site format cache
// and the time cache.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "logsink/render/fields.h"
#include "logsink/render/render.h"
#include "logsink/render/timefmt.h"
#include "logsink/storage/record.h"

namespace logsink::render {

// -o modes. The short-* modes are "short" with another timestamp, but
// short-fields, which is "short" with the named fields after the message;
// the modes past kRaw are in printer_modes.cc.
enum class OutputMode {
  kShort,
  kJson,
  kRaw,
  kShortIso,        // seconds, ISO 8601 with the zone
  kShortPrecise,    // nanoseconds
  kShortUnix,       // seconds.nanoseconds since the epoch
  kShortMonotonic,  // [seconds.microseconds] since the record's boot (see printer_modes.cc)
  kShortFields,     // short, then " name=value" per named field (logfmt's quoting)
  kCat,             // the message only
  kVerbose,         // every field, one per line
  kJsonPretty,      // the json object, indented over several lines
};

// Parses an -o name ("short", "json-pretty", ...). False when unknown.
bool ParseOutputMode(const std::string &name, OutputMode *mode);
// The accepted names, for messages and help.
extern const char kOutputModeNames[];
// Whether mode writes the short line (short, short-iso, short-precise,
// short-unix, short-monotonic, short-fields): the modes coloured by level.
bool IsShortMode(OutputMode mode);

// The level a record shows and is coloured by: its site's, warning (4,
// kDroppedLevel) for a DROPPED report.
int ShownLevel(const storage::Record &r);

// Calls num(name, value) and str(name, value) for the sender's fields, in the
// order every mode that shows them uses (JSON's names; verbose shows them in
// capitals): pid, uid, gid, app, comm, tid.
template <typename Num, typename Str>
void SenderFields(const storage::Record &r, Num num, Str str) {
  num("pid", r.pid);
  num("uid", r.uid);
  num("gid", r.gid);
  str("app", r.app);
  str("comm", r.comm);
  num("tid", r.tid);
}

class Printer {
 public:
  Printer(OutputMode mode, bool color, bool utc);
  // The same settings with caches of its own, for another thread (the
  // caches change nothing in what is printed).
  Printer(const Printer &o)
      : mode_(o.mode_),
        color_(o.color_),
        time_(o.time_),
        output_fields_(o.output_fields_),
        host_(o.host_),
        boot_ns_(o.boot_ns_) {}
  Printer &operator=(const Printer &) = delete;

  // --output-fields: the named fields json, json-pretty, verbose and
  // short-fields show (RENDERING.md, "Named fields"), by exact name; the
  // others are left out of "fields", of verbose's name=value lines and of
  // short-fields' pieces (the record's own keys, "args" among them, stay).
  // A stored field whose name starts with '_' is never kept: in the list
  // such a name is a trusted field's, which is one of those keys (as
  // matches read it, logctl/field_match.h). Empty: every field. No effect
  // in other modes.
  void SetOutputFields(std::vector<std::string> names) { output_fields_ = std::move(names); }
  // The host the next lines come from (logctl --nats): the short modes show
  // it after the time, as journalctl -m does. Empty (the default): no column.
  void SetHost(std::string_view host) { host_.assign(host); }

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
  // Fills fields_ with rec's named fields, those of output_fields_ only.
  void NamedFields(const storage::Record &rec, const Format &f);
  // printer_modes.cc
  void Stamp(const storage::Record &rec, std::string *out);
  void VerboseLine(const storage::Record &rec, const std::string &msg, bool msg_ok,
                   std::string *out);
  void JsonPrettyLine(const storage::Record &rec, const std::string &msg, bool msg_ok,
                      std::string *out);
  // short-fields: " name=value" for each named field (of output_fields_).
  void AppendShortFields(const storage::Record &rec, std::string *out);

  OutputMode mode_;
  bool color_;
  TimeFormatter time_;
  FormatCache formats_;
  std::string msg_, tmp_;
  std::string value_;  // a field's text (AppendShortFields)
  std::vector<FieldValue> fields_;
  std::vector<std::string> output_fields_;  // SetOutputFields (empty: all)
  std::string host_;                        // SetHost
  // CLOCK_REALTIME at this boot, for short-monotonic of records whose block
  // has no clock pair (storage::MonotonicTime() == 0).
  int64_t boot_ns_ = 0;
};

}  // namespace logsink::render
