// printer.cc: record -> output line in short, json or raw mode (see printer.h).
#include "logsink/render/printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "logsink/proto/args.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/facility.h"
#include "logsink/proto/printf.h"
#include "logsink/proto/text_kinds.h"
#include "logsink/render/escape.h"
#include "logsink/render/filter.h"

namespace logsink::render {
namespace {

using storage::Record;

const char *ColorOf(int level) {
  switch (level) {
    case 0:
    case 1:
    case 2:
      return "\x1b[1;31m";
    case 3:
      return "\x1b[31m";
    case 4:
      return "\x1b[33m";
    case 5:
      return "\x1b[1m";
    case 7:
      return "\x1b[2m";
    default:
      return nullptr;
  }
}

template <typename T>
void AppendNum(std::string *out, T v) {
  fmt::format_int f(v);
  out->append(f.data(), f.size());
}

// A name in the "NAME[PID]:" prefix: terminal-safe, and one token: the
// characters that shape the prefix (space [ ] ( ) : < >) are escaped as \xNN,
// so no label can imitate another prefix ("sshd[1]: <crit> ...").
void AppendName(std::string *out, std::string_view name) {
  std::string safe;
  AppendTerminalSafe(&safe, name);
  for (char c : safe) {
    if (std::strchr(" []():<>", c) && c != '\0') {
      fmt::format_to(std::back_inserter(*out), "\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out->push_back(c);
    }
  }
}

// Whether the prefix names the sender's uid: a sender other than root whose
// name is only its own claim could pass for root's or the kernel's, so its
// uid shows (`sshd[7] (uid 1000):`): every free-text record (a syslog tag or
// a text stream's label is whatever the sender wrote; facility kern claimed
// by such a sender was stored as user, proto/FORMAT.md) and any record labelled
// or named "kernel", the name the kernel's own records carry.
bool ShowsUid(const Record &r) {
  if (r.uid == 0) return false;
  if (r.app == "kernel" || r.comm == "kernel") return true;
  return r.site_known && ls_text_kind_of(r.site.file.data(), r.site.file.size()) >= 0;
}

// "LABEL[PID]": the client's app label when it is the process's name, else
// "LABEL(COMM)[PID]", so a label that is not the process's own name shows as
// such (comm is read from /proc at accept; the pid is the kernel's).
void AppendIdent(const Record &r, std::string *out) {
  if (r.app.empty() || r.app == r.comm || r.comm.empty()) {
    std::string_view id = !r.app.empty() ? r.app : !r.comm.empty() ? r.comm : "?";
    AppendName(out, id);
  } else {
    AppendName(out, r.app);
    out->push_back('(');
    AppendName(out, r.comm);
    out->push_back(')');
  }
  out->push_back('[');
  AppendNum(out, r.pid);
  out->push_back(']');
  if (ShowsUid(r)) {
    out->append(" (uid ");
    AppendNum(out, r.uid);
    out->push_back(')');
  }
  out->append(": <");
  out->append(LevelName(ShownLevel(r)));
  out->append("> ");
}

// Free-text records (proto/FORMAT.md, "Free-text records"; the kinds are
// proto/text_kinds.h's table): the site's line is the syslog facility, shown
// by name; the string arguments after the message (a syslog record's header
// fields, a kernel record's sequence number, time and dictionary) go in the
// kind's JSON object, each one that the record holds.
void AppendFreeTextFields(const Record &rec, std::string *out) {
  const int kind = ls_text_kind_of(rec.site.file.data(), rec.site.file.size());
  if (kind < 0) return;
  if (const char *name = ls_facility_name(rec.site.line)) {
    out->append(",\"facility\":\"");
    out->append(name);
    out->push_back('"');
  }
  const ls_text_kind_info &k = ls_text_kinds[kind];
  if (k.nfields == 0) return;
  const auto *p = reinterpret_cast<const uint8_t *>(rec.args.data());
  const uint8_t *end = p + rec.args.size();
  out->append(",\"");
  out->append(k.group);
  out->append("\":{");
  for (size_t i = 0; i <= k.nfields; i++) {  // the message first, not repeated here
    uint64_t len;
    size_t n = ls_get_varint(p, end, &len);
    if (n == 0 || len > uint64_t(end - p) - n) break;  // cut by the writer
    if (i > 0) {
      if (i > 1) out->push_back(',');
      out->push_back('"');
      out->append(k.fields[i - 1]);
      out->append("\":");
      AppendJsonString(out, std::string_view(reinterpret_cast<const char *>(p + n), len));
    }
    p += n + len;
  }
  out->push_back('}');
}

// Named fields (RENDERING.md, "Named fields"): "fields":{NAME:VALUE},
// typed, each name once. Free-text kinds have their own fields.
void AppendNamedFields(const std::vector<FieldValue> &fields, std::string *out) {
  if (fields.empty()) return;
  out->append(",\"fields\":{");
  for (size_t i = 0; i < fields.size(); i++) {
    if (i) out->push_back(',');
    AppendJsonString(out, fields[i].name);
    out->push_back(':');
    AppendFieldJson(fields[i], out);
  }
  out->push_back('}');
}

// JSON members after the first: ,"name":value. The key goes out in one
// append (three appends per key cost the JSON line ~10% of its time); the
// names are the renderer's own, short literals.
constexpr size_t kMaxKey = 32;
[[gnu::always_inline]] inline void JsonKey(std::string *out, std::string_view name,
                                           std::string_view tail = "\":") {
  if (name.size() > kMaxKey) {  // (none is: kept safe for a new one)
    out->append(",\"").append(name).append(tail);
    return;
  }
  char b[kMaxKey + 8];
  b[0] = ',';
  b[1] = '"';
  std::memcpy(b + 2, name.data(), name.size());
  std::memcpy(b + 2 + name.size(), tail.data(), tail.size());
  out->append(b, 2 + name.size() + tail.size());
}

[[gnu::always_inline]] inline void JsonNum(std::string *out, std::string_view name, uint64_t v) {
  JsonKey(out, name);
  AppendNum(out, v);
}

[[gnu::always_inline]] inline void JsonStr(std::string *out, std::string_view name,
                                           std::string_view v) {
  JsonKey(out, name);
  AppendJsonString(out, v);
}

// The exact copy of a u64 that can pass 2^53: ,"name_str":"v".
[[gnu::always_inline]] inline void JsonExactCopy(std::string *out, std::string_view name,
                                                 uint64_t v) {
  JsonKey(out, name, "_str\":\"");
  AppendNum(out, v);
  out->push_back('"');
}

// The fields every JSON record ends with (after all the others, so earlier
// keys keep their places): the boot ("" when the block does not say), the
// record's monotonic time in that boot (0 when unknown) and the sender's
// systemd unit ("" when none).
void AppendBootFields(const Record &rec, std::string *out) {
  static const BootId kNoBoot{};
  JsonStr(out, "boot_id", rec.boot_id != kNoBoot ? BootIdHex(rec.boot_id) : std::string());
  const uint64_t mono = storage::MonotonicTime(rec);
  JsonNum(out, "monotonic_ns", mono);
  JsonExactCopy(out, "monotonic_ns", mono);
  JsonStr(out, "unit", rec.unit);
}

}  // namespace

int ShownLevel(const Record &r) {
  return r.kind == Record::Kind::kDropped ? kDroppedLevel : (r.site.level & 7);
}

bool Printer::Message(const Record &rec, std::string *msg) {
  msg->clear();
  if (rec.kind == Record::Kind::kDropped) {
    msg->append("-- ");
    AppendNum(msg, rec.dropped_count);
    msg->append(" records dropped by the client since ");
    time_.AppendHuman(rec.dropped_since_ns, msg);
    msg->append(" --");
    return true;
  }
  bool ok = true;
  if (!rec.site_known) {
    RenderUnknownSite(rec.site_id, rec.args, msg);
    ok = false;
  } else {
    ok = RenderMessage(formats_.Get(rec.site_id, rec.site.fmt, rec.site.flags), rec.args, msg);
  }
  if (rec.truncated) AppendTruncated(rec.truncated, msg);
  return ok;
}

void Printer::Line(const Record &rec, const std::string &msg, bool msg_ok, std::string *out) {
  switch (mode_) {
    case OutputMode::kShort:
    case OutputMode::kShortIso:
    case OutputMode::kShortPrecise:
    case OutputMode::kShortUnix:
    case OutputMode::kShortMonotonic:
    case OutputMode::kShortFields:
      ShortLine(rec, msg, out);
      break;
    case OutputMode::kCat:
      AppendTerminalSafe(out, msg);
      out->push_back('\n');
      break;
    case OutputMode::kVerbose:
      VerboseLine(rec, msg, msg_ok, out);
      break;
    case OutputMode::kJsonPretty:
      JsonPrettyLine(rec, msg, msg_ok, out);
      break;
    case OutputMode::kRaw:
      RawLine(rec, out);
      break;
    case OutputMode::kJson:
      JsonLine(rec, msg, msg_ok, out);
      break;
  }
}

void Printer::ShortLine(const Record &rec, const std::string &msg, std::string *out) {
  Stamp(rec, out);
  out->push_back(' ');
  if (!host_.empty()) {
    AppendName(out, host_);
    out->push_back(' ');
  }
  AppendIdent(rec, out);
  const char *color = color_ ? ColorOf(ShownLevel(rec)) : nullptr;
  if (color) out->append(color);
  AppendTerminalSafe(out, msg);
  if (color) out->append("\x1b[0m");
  if (mode_ == OutputMode::kShortFields) AppendShortFields(rec, out);
  out->push_back('\n');
}

void Printer::RawLine(const Record &rec, std::string *out) {
  time_.AppendShort(rec.ts_ns, out);
  out->push_back(' ');
  AppendIdent(rec, out);
  tmp_.clear();
  if (rec.kind == Record::Kind::kDropped) {
    tmp_.append("dropped=");
    AppendNum(&tmp_, rec.dropped_count);
    tmp_.append(" since_ns=");
    AppendNum(&tmp_, rec.dropped_since_ns);
  } else {
    tmp_.append("site=");
    AppendNum(&tmp_, rec.site_id);
    if (rec.site_known) {
      tmp_.append(" fmt=\"");
      tmp_.append(rec.site.fmt);
      tmp_.append("\"");
    }
    tmp_.append(" args=");
    AppendRawArgs(
        rec.site_known ? &formats_.Get(rec.site_id, rec.site.fmt, rec.site.flags) : nullptr,
        rec.args, &tmp_);
    if (rec.truncated) {
      tmp_.append(" truncated=");
      AppendNum(&tmp_, rec.truncated);
    }
  }
  AppendTerminalSafe(out, tmp_);
  out->push_back('\n');
}

void Printer::JsonLine(const Record &rec, const std::string &msg, bool msg_ok, std::string *out) {
  const int level = ShownLevel(rec);
  // u64 fields that can pass 2^53 also come as exact strings (*_str), for
  // readers such as jq that hold numbers as doubles (RENDERING.md, "Large
  // integers in JSON"). The keys come in RENDERING.md's order ("JSON").
  out->append("{\"seq\":");
  AppendNum(out, rec.seq);
  JsonExactCopy(out, "seq", rec.seq);
  JsonNum(out, "ts_ns", rec.ts_ns);
  JsonExactCopy(out, "ts_ns", rec.ts_ns);
  out->append(",\"ts\":\"");
  time_.AppendRfc3339(rec.ts_ns, out);
  out->push_back('"');
  JsonStr(out, "level", LevelName(level));
  JsonNum(out, "priority", uint64_t(level));
  SenderFields(
      rec, [out](std::string_view k, uint64_t v) { JsonNum(out, k, v); },
      [out](std::string_view k, std::string_view v) { JsonStr(out, k, v); });
  JsonStr(out, "msg", msg);
  if (rec.kind == Record::Kind::kDropped) {
    JsonNum(out, "dropped", rec.dropped_count);
    JsonNum(out, "dropped_since_ns", rec.dropped_since_ns);
    JsonExactCopy(out, "dropped_since_ns", rec.dropped_since_ns);
    AppendBootFields(rec, out);
    out->append("}\n");
    return;
  }
  JsonNum(out, "site", rec.site_id);
  const Format *f = nullptr;
  if (rec.site_known) {
    f = &formats_.Get(rec.site_id, rec.site.fmt, rec.site.flags);
    // A site with fields shows its message's format; the fields come apart.
    JsonStr(out, "fmt", f->fields.empty() && !f->braces ? rec.site.fmt : std::string_view(f->fmt));
    JsonStr(out, "file", rec.site.file);
    JsonNum(out, "line", rec.site.line);
    AppendFreeTextFields(rec, out);
    NamedFields(rec, *f);
    AppendNamedFields(fields_, out);
  } else {
    out->append(",\"unknown_site\":true");
  }
  out->append(",\"args\":");
  size_t used = AppendJsonArgs(f, rec.args, out);
  if (used < rec.args.size()) {
    out->append(",\"args_raw\":\"");
    AppendHex(rec.args.substr(used), out, SIZE_MAX);
    out->push_back('"');
  }
  tmp_.clear();
  if (AppendJsonArgsExact(f, rec.args, &tmp_)) {
    out->append(",\"args_str\":");
    out->append(tmp_);
  }
  if (!msg_ok) out->append(",\"mismatch\":true");
  if (rec.truncated) JsonNum(out, "truncated", rec.truncated);
  AppendBootFields(rec, out);
  out->append("}\n");
}

void Printer::NamedFields(const Record &rec, const Format &f) {
  RecordFields(rec, f, &fields_);
  if (output_fields_.empty() || fields_.empty()) return;
  // A name starting with '_' in the list is a trusted field's, never a
  // stored one (as matches read it): no such stored field is kept.
  auto unwanted = [this](const FieldValue &v) {
    return v.name.empty() || v.name[0] == '_' ||
           std::find(output_fields_.begin(), output_fields_.end(), v.name) == output_fields_.end();
  };
  fields_.erase(std::remove_if(fields_.begin(), fields_.end(), unwanted), fields_.end());
}

void Printer::Lost(uint64_t n, std::string *out) {
  if (mode_ == OutputMode::kJson || mode_ == OutputMode::kJsonPretty) {
    out->append("{\"lost\":");
    AppendNum(out, n);
    out->append(",\"msg\":\"-- ");
    AppendNum(out, n);
    out->append(" records lost (overwritten before they were read) --\"}\n");
  } else {
    out->append("-- ");
    AppendNum(out, n);
    out->append(" records lost (overwritten before they were read) --\n");
  }
}

}  // namespace logsink::render
