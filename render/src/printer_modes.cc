// printer_modes.cc: the -o modes beyond short, json and raw (see printer.h):
// the short-* timestamps, short-fields' fields, verbose and json-pretty, and
// the mode names.
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
    {"short-fields", OutputMode::kShortFields},
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

// "    NAME=value": a field by its JSON name, in capitals.
void FieldName(std::string *out, std::string_view name) {
  out->append("    ");
  for (char c : name) out->push_back(c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c);
  out->push_back('=');
}

void Field(std::string *out, std::string_view name, std::string_view value) {
  FieldName(out, name);
  AppendTerminalSafe(out, value);
  out->push_back('\n');
}

void Field(std::string *out, std::string_view name, uint64_t value) {
  FieldName(out, name);
  fmt::format_to(std::back_inserter(*out), "{}\n", value);
}

// A field's value as short-fields writes it (RENDERING.md, "Named
// fields"), logfmt's way: as it is when it is not empty and holds nothing
// that could end or split the name=value piece or that the terminal
// escaping would change (no space, TAB, '=', '"', control character,
// invalid UTF-8 or invisible character); else in double quotes, '"' and
// '\\' escaped with a backslash first and the result escaped for the
// terminal as the message is (\xNN, \n, \u202e: AppendTerminalSafe, the one
// escaping of the short modes). A bare value never holds an escape, so its
// backslashes are its own; in a quoted one every backslash starts one.
void AppendLogfmtValue(std::string *out, std::string_view v, std::string *scratch) {
  scratch->clear();
  AppendTerminalSafe(scratch, v);
  const bool bare = !v.empty() && *scratch == v && v.find_first_of(" \t=\"") == v.npos;
  if (bare) {
    out->append(v);
    return;
  }
  scratch->clear();
  for (char c : v) {
    if (c == '"' || c == '\\') scratch->push_back('\\');
    scratch->push_back(c);
  }
  out->push_back('"');
  AppendTerminalSafe(out, *scratch);  // '"' and '\\' are printable: kept as they are
  out->push_back('"');
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
    "short, short-iso, short-precise, short-unix, short-monotonic, short-fields, cat, verbose, "
    "json, json-pretty or raw";

bool IsShortMode(OutputMode mode) {
  switch (mode) {
    case OutputMode::kShort:
    case OutputMode::kShortIso:
    case OutputMode::kShortPrecise:
    case OutputMode::kShortUnix:
    case OutputMode::kShortMonotonic:
    case OutputMode::kShortFields:
      return true;
    case OutputMode::kJson:
    case OutputMode::kRaw:
    case OutputMode::kCat:
    case OutputMode::kVerbose:
    case OutputMode::kJsonPretty:
      return false;
  }
  return false;
}

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
  const int level = ShownLevel(rec);
  Field(out, "seq", rec.seq);
  Field(out, "ts_ns", rec.ts_ns);
  Field(out, "priority", uint64_t(level));
  Field(out, "level", LevelName(level));
  auto field = [out](std::string_view k, auto v) { Field(out, k, v); };
  SenderFields(rec, field, field);
  if (rec.kind == Record::Kind::kDropped) {
    Field(out, "dropped", rec.dropped_count);
    Field(out, "dropped_since_ns", rec.dropped_since_ns);
  } else {
    Field(out, "site", rec.site_id);
    if (rec.site_known) {
      const Format &f = formats_.Get(rec.site_id, rec.site.fmt, rec.site.flags);
      // A site with fields or a brace format shows its message's format
      // (a brace format's text, without its type letters).
      Field(out, "fmt", f.fields.empty() && !f.braces ? rec.site.fmt : std::string_view(f.fmt));
      Field(out, "file", rec.site.file);
      Field(out, "line", rec.site.line);
      // Named fields as they are named (not upper-cased: they are the
      // program's), after the record's own; those of --output-fields only.
      NamedFields(rec, f);
      // Under a heading, indented further: a field named like one of the
      // record's own keys (UID) cannot pass for it.
      if (!fields_.empty()) out->append("    FIELDS:\n");
      for (const FieldValue &v : fields_) {
        out->append("        ");
        AppendTerminalSafe(out, v.name);
        out->push_back('=');
        tmp_.clear();
        AppendFieldText(v, &tmp_);
        AppendTerminalSafe(out, tmp_);
        out->push_back('\n');
      }
    }
    if (rec.truncated) Field(out, "truncated", rec.truncated);
    if (!msg_ok) Field(out, "mismatch", uint64_t(1));
  }
  if (rec.boot_id != BootId{}) Field(out, "boot_id", BootIdHex(rec.boot_id));
  if (const uint64_t mono = storage::MonotonicTime(rec)) Field(out, "monotonic_ns", mono);
  if (!rec.unit.empty()) Field(out, "unit", rec.unit);
  Field(out, "message", msg);
}

void Printer::AppendShortFields(const Record &rec, std::string *out) {
  if (rec.kind != Record::Kind::kRecord || !rec.site_known) return;
  // The fields JSON and verbose show: each name once, at its first place
  // with its last value, those of --output-fields only.
  NamedFields(rec, formats_.Get(rec.site_id, rec.site.fmt, rec.site.flags));
  for (const FieldValue &v : fields_) {
    out->push_back(' ');
    AppendTerminalSafe(out, v.name);  // a checked name (proto/fields.h): kept as it is
    out->push_back('=');
    value_.clear();
    AppendFieldText(v, &value_);
    AppendLogfmtValue(out, value_, &tmp_);
  }
}

void Printer::JsonPrettyLine(const Record &rec, const std::string &msg, bool msg_ok,
                             std::string *out) {
  std::string line;  // not tmp_: JsonLine uses it
  JsonLine(rec, msg, msg_ok, &line);
  Indent(line, out);
}

}  // namespace logsink::render
