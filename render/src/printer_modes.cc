// printer_modes.cc: the -o modes beyond short, json and raw (see printer.h):
// the short-* timestamps, verbose and json-pretty, and the mode names.
#include <fmt/format.h>

#include <cstring>
#include <ctime>
#include <iterator>

#include "logsink/render/escape.h"
#include "logsink/render/filter.h"
#include "logsink/render/printer.h"

namespace logsink::render {
namespace {

using storage::Record;

const struct {
  const char *name;
  OutputMode mode;
} kModes[] = {
    {"short", OutputMode::kShort},
    {"short-iso", OutputMode::kShortIso},
    {"short-precise", OutputMode::kShortPrecise},
    {"short-unix", OutputMode::kShortUnix},
    {"short-monotonic", OutputMode::kShortMonotonic},
    {"cat", OutputMode::kCat},
    {"verbose", OutputMode::kVerbose},
    {"json", OutputMode::kJson},
    {"json-pretty", OutputMode::kJsonPretty},
    {"raw", OutputMode::kRaw},
};

// CLOCK_REALTIME at boot: now minus the time since boot (CLOCK_BOOTTIME,
// which counts suspend too).
int64_t BootRealtimeNs() {
  struct timespec rt, bt;
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_BOOTTIME, &bt);
  return (int64_t(rt.tv_sec) - int64_t(bt.tv_sec)) * 1000000000 +
         (int64_t(rt.tv_nsec) - int64_t(bt.tv_nsec));
}

void Field(std::string *out, const char *name, std::string_view value) {
  out->append("    ");
  out->append(name);
  out->push_back('=');
  AppendTerminalSafe(out, value);
  out->push_back('\n');
}

void Field(std::string *out, const char *name, uint64_t value) {
  fmt::format_to(std::back_inserter(*out), "    {}={}\n", name, value);
}

// Re-indents one line of compact JSON (as JsonLine writes it: no spaces
// outside strings) over several lines, two spaces per level; empty objects
// and arrays stay "{}" and "[]".
void Indent(std::string_view j, std::string *out) {
  int depth = 0;
  bool in_str = false;
  auto newline = [&](int d) {
    out->push_back('\n');
    out->append(size_t(2 * d), ' ');
  };
  for (size_t i = 0; i < j.size(); i++) {
    char c = j[i];
    if (in_str) {
      out->push_back(c);
      if (c == '\\' && i + 1 < j.size()) {
        out->push_back(j[++i]);
      } else if (c == '"') {
        in_str = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_str = true;
        out->push_back(c);
        break;
      case '{':
      case '[':
        out->push_back(c);
        if (i + 1 < j.size() && (j[i + 1] == '}' || j[i + 1] == ']')) {
          out->push_back(j[++i]);
          break;
        }
        newline(++depth);
        break;
      case '}':
      case ']':
        newline(--depth);
        out->push_back(c);
        break;
      case ',':
        out->push_back(c);
        newline(depth);
        break;
      case ':':
        out->append(": ");
        break;
      case '\n':
        break;
      default:
        out->push_back(c);
    }
  }
  out->push_back('\n');
}

}  // namespace

const char kOutputModeNames[] =
    "short, short-iso, short-precise, short-unix, short-monotonic, cat, verbose, json, "
    "json-pretty or raw";

bool ParseOutputMode(const std::string &name, OutputMode *mode) {
  for (const auto &m : kModes) {
    if (name == m.name) {
      *mode = m.mode;
      return true;
    }
  }
  return false;
}

Printer::Printer(OutputMode mode, bool color, bool utc) : mode_(mode), color_(color), time_(utc) {
  if (mode == OutputMode::kShortMonotonic) boot_ns_ = BootRealtimeNs();  // the fallback
}

void Printer::Stamp(const Record &rec, std::string *out) {
  const uint64_t ts_ns = rec.ts_ns;
  switch (mode_) {
    case OutputMode::kShortIso:
      time_.AppendLocal(ts_ns, 0, out);
      break;
    case OutputMode::kShortPrecise:
      time_.AppendLocal(ts_ns, 9, out);
      break;
    case OutputMode::kShortUnix:
      fmt::format_to(std::back_inserter(*out), "{}.{:09}", ts_ns / 1000000000u,
                     ts_ns % 1000000000u);
      break;
    case OutputMode::kShortMonotonic: {
      // The record's CLOCK_MONOTONIC time in its own boot, from its block's
      // clock pair (FORMAT.md, "Boots"). A block without one (0): the
      // record's time minus the realtime of this boot, so records of
      // earlier boots are negative and a clock step since boot shifts them.
      const uint64_t mono = storage::MonotonicTime(rec);
      int64_t d = mono ? int64_t(mono) : int64_t(ts_ns) - boot_ns_;
      uint64_t a = d < 0 ? uint64_t(-(d + 1)) + 1 : uint64_t(d);
      fmt::format_to(std::back_inserter(*out), "[{}{:5}.{:06}]", d < 0 ? "-" : "", a / 1000000000u,
                     a % 1000000000u / 1000u);
      break;
    }
    default:
      time_.AppendShort(ts_ns, out);
  }
}

void Printer::VerboseLine(const Record &rec, const std::string &msg, bool msg_ok,
                          std::string *out) {
  time_.AppendLocal(rec.ts_ns, 9, out);
  fmt::format_to(std::back_inserter(*out), " [seq {}]\n", rec.seq);
  int level = rec.kind == Record::Kind::kDropped ? kDroppedLevel : (rec.site.level & 7);
  Field(out, "SEQ", rec.seq);
  Field(out, "TS_NS", rec.ts_ns);
  Field(out, "PRIORITY", uint64_t(level));
  Field(out, "LEVEL", LevelName(level));
  Field(out, "PID", rec.pid);
  Field(out, "UID", rec.uid);
  Field(out, "GID", rec.gid);
  Field(out, "APP", rec.app);
  Field(out, "COMM", rec.comm);
  Field(out, "TID", rec.tid);
  if (rec.kind == Record::Kind::kDropped) {
    Field(out, "DROPPED", rec.dropped_count);
    Field(out, "DROPPED_SINCE_NS", rec.dropped_since_ns);
  } else {
    Field(out, "SITE", rec.site_id);
    if (rec.site_known) {
      Field(out, "FMT", rec.site.fmt);
      Field(out, "FILE", rec.site.file);
      Field(out, "LINE", rec.site.line);
    }
    if (rec.truncated) Field(out, "TRUNCATED", rec.truncated);
    if (!msg_ok) Field(out, "MISMATCH", uint64_t(1));
  }
  if (rec.boot_id != BootId{}) Field(out, "BOOT_ID", BootIdHex(rec.boot_id));
  if (const uint64_t mono = storage::MonotonicTime(rec)) Field(out, "MONOTONIC_NS", mono);
  if (!rec.unit.empty()) Field(out, "UNIT", rec.unit);
  Field(out, "MESSAGE", msg);
}

void Printer::JsonPrettyLine(const Record &rec, const std::string &msg, bool msg_ok,
                             std::string *out) {
  std::string line;  // not tmp_: JsonLine uses it
  JsonLine(rec, msg, msg_ok, &line);
  Indent(line, out);
}

}  // namespace logsink::render
