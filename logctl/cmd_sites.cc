// cmd_sites.cc: `logctl sites`, the census of call sites: which lines of
// which programs wrote the records in the ring, most records first, with
// their share of the records counted, how many came in the last minute,
// their level and format. Nothing is parsed out of messages: a native
// record names its call site (file, line, level, format) and every free-text
// record its kind (stdout, syslog, kernel, ...). It reads every record the
// filters let through (the same FILTERS as cat; blocks they rule out are
// skipped by their summaries), from the ring file or, for a user who may
// not read it, through the daemon (the user's own records).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "commands.h"
#include "common.h"
#include "daemon_stats.h"
#include "field_match.h"
#include "logsink/proto/facility.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/level_rules.h"
#include "logsink/proto/text_kinds.h"
#include "logsink/render/escape.h"
#include "logsink/render/printer.h"
#include "out.h"
#include "read_setup.h"

namespace logsink::logctl {
namespace {

using storage::Record;
using storage::Status;

constexpr uint64_t kMinuteNs = 60ull * 1000000000ull;

struct Row {
  std::string app, file, fmt;
  uint32_t line = 0;
  uint8_t level = 0;
  bool text = false;  // a kind of free text: no line, no format
  uint64_t records = 0, last_minute = 0;
  // --all: a program connected now has the site (-1: none has), and
  // whether its levels let it log (1), not (0), or cannot be told (-2).
  int enabled = -1;
};

// The row's identity: what it shows, so that the connections (sources) of
// one program that log from one site count as one row.
std::string Key(const Row &r) {
  std::string k;
  k.reserve(r.app.size() + r.file.size() + r.fmt.size() + 16);
  k += r.app;
  k += '\0';
  k += r.file;
  k += '\0';
  k += std::to_string(r.line);
  k += '\0';
  k += char('0' + r.level);
  k += '\0';
  k += r.fmt;
  return k;
}

class Census {
 public:
  explicit Census(uint64_t now_ns) : now_ns_(now_ns) {}

  void Add(const Record &rec) {
    total_++;
    const bool recent = storage::FilterTime(rec) + kMinuteNs > now_ns_;
    recent_ += recent;
    // A site of the string table, from one source: counted by number (the
    // common case, no string built); others (inline sites, and every record
    // read through the daemon, which numbers no site) by what they show.
    Row *row;
    if (rec.site_id && rec.site_known) {
      auto [it, fresh] = by_id_.try_emplace(IdKey{rec.source_id, rec.site_id}, rows_.size());
      if (fresh) rows_.push_back(MakeRow(rec));
      row = &rows_[it->second];
    } else {
      row = &ByContent(rec);
    }
    row->records++;
    row->last_minute += recent;
  }

  // The rows merged by what they show, most records first.
  std::vector<Row> Rows() {
    std::unordered_map<std::string, size_t> at;
    std::vector<Row> out;
    for (Row &r : rows_) {
      auto [it, fresh] = at.try_emplace(Key(r), out.size());
      if (fresh) {
        out.push_back(std::move(r));
      } else {
        out[it->second].records += r.records;
        out[it->second].last_minute += r.last_minute;
      }
    }
    std::sort(out.begin(), out.end(), [](const Row &a, const Row &b) {
      if (a.records != b.records) return a.records > b.records;
      return std::tie(a.app, a.file, a.line, a.level, a.fmt) <
             std::tie(b.app, b.file, b.line, b.level, b.fmt);
    });
    return out;
  }
  uint64_t total() const { return total_; }
  uint64_t recent() const { return recent_; }

 private:
  struct IdKey {
    uint64_t source;
    uint32_t site;
    bool operator==(const IdKey &o) const { return source == o.source && site == o.site; }
  };
  struct IdHash {
    size_t operator()(const IdKey &k) const {
      return size_t((k.source * 0x9E3779B97F4A7C15ull) ^ k.site);
    }
  };

  static Row MakeRow(const Record &rec) {
    Row r;
    r.app = std::string(rec.app.empty() ? rec.comm : rec.app);
    r.file = std::string(rec.site.file);
    r.text = ls_text_kind_of(rec.site.file.data(), rec.site.file.size()) >= 0;
    if (!r.text) {
      r.line = rec.site.line;
      r.fmt = std::string(rec.site.fmt);
    }
    r.level = rec.site.level;
    return r;
  }

  Row &ByContent(const Record &rec) {
    Row r = MakeRow(rec);
    auto [it, fresh] = by_content_.try_emplace(Key(r), rows_.size());
    if (fresh) rows_.push_back(std::move(r));
    return rows_[it->second];
  }

  const uint64_t now_ns_;
  uint64_t total_ = 0, recent_ = 0;
  std::vector<Row> rows_;
  std::unordered_map<IdKey, size_t, IdHash> by_id_;
  std::unordered_map<std::string, size_t> by_content_;
};

std::string SafeText(const std::string &s) {
  std::string t;
  render::AppendTerminalSafe(&t, s);
  return t;
}

// --all: the call sites of the programs connected to the daemon (CENSUS_REQ,
// PROTOCOL.md "The census of call sites"): those the rows have are marked
// with whether a program's levels let them log now, the others are added
// with 0 records. kExitOk, or kExitError after the reason was printed.
int AddConnectedSites(const Options &o, std::vector<Row> *rows) {
  std::string socket, payload, why;
  if (!SocketPath(o.socket, &socket)) return kExitError;
  uint8_t req[LS_FRAME_HDR];
  ls_put_u32(req, 1);
  req[4] = LS_F_CENSUS_REQ;
  const int rc = QueryDaemonFrame(socket, 5000, req, sizeof req, LS_F_CENSUS_ANSWER, LS_FRAME_MAX,
                                  &payload, &why);
  if (rc == -ENOENT || rc == -ECONNREFUSED) {
    Error("sites", "--all: the daemon is not running (socket " + SafeText(socket) + ")");
    return kExitError;
  }
  if (rc < 0) {
    Error("sites", "--all: " + SafeText(why) + " (socket " + SafeText(socket) + ")");
    return kExitError;
  }
  std::unordered_map<std::string, size_t> at;
  for (size_t i = 0; i < rows->size(); i++) at.emplace(Key((*rows)[i]), i);
  const auto *p = reinterpret_cast<const uint8_t *>(payload.data());
  ls_census_answer a;
  ls_census_client c, prev;
  bool first = true;
  int r;
  if (ls_census_answer_begin(p, payload.size(), &a) < 0)
    r = -1;
  else
    while ((r = ls_census_answer_client(&a, first ? nullptr : &prev, &c)) == 1) {
      first = false;
      // The client's levels: its own rules, the daemon's on top (as it does).
      // A text the answer may have cut (LS_LEVEL_TEXT_SHOWN bytes: cut at a
      // rule's end, it would still parse, without the rules after it) or
      // one that does not parse leaves the question open: "?".
      ls_level_rules own, pushed;
      char err[192];
      const std::string own_text(c.own, c.own_len), pushed_text(c.pushed, c.pushed_len);
      const bool known =
          c.own_len < LS_LEVEL_TEXT_SHOWN && c.pushed_len < LS_LEVEL_TEXT_SHOWN &&
          ls_level_rules_parse(own_text.c_str(), LS_LEVEL_MAX, &own, err, sizeof err) == 0 &&
          ls_level_rules_parse(pushed_text.c_str(), LS_LEVEL_UNSET, &pushed, err, sizeof err) == 0;
      if (known) ls_level_rules_merge(&own, &pushed);
      ls_census_site s;
      while ((r = ls_census_next(&c.sites, &s)) == 1) {
        Row row;
        row.app.assign(c.app, c.app_len);
        row.file.assign(s.file, s.file_len);
        // A file that names a kind of free text is stored as "./NAME" from
        // a client other than root (the daemon renames it so: PROTOCOL.md,
        // INTERN), and shown so here too.
        if (c.uid != 0 && ls_text_kind_of(row.file.data(), row.file.size()) >= 0)
          row.file = "./" + row.file;
        row.line = s.line;
        row.level = s.level;
        row.fmt.assign(s.fmt, s.fmt_len);
        const int on =
            known ? int(int(s.level) <= ls_level_rules_for(&own, row.file.c_str(), s.line)) : -2;
        auto [it, fresh] = at.try_emplace(Key(row), rows->size());
        if (fresh) rows->push_back(std::move(row));
        Row &got = (*rows)[it->second];
        // On in any program: on; else unknown in any: unknown; else off.
        if (got.enabled == -1 || on == 1 || (on == -2 && got.enabled == 0)) got.enabled = on;
      }
      if (r < 0) break;
      prev = c;
    }
  if (r < 0) {
    Error("sites", "--all: the daemon's answer is malformed (socket " + SafeText(socket) + ")");
    return kExitError;
  }
  std::stable_sort(rows->begin(), rows->end(), [](const Row &x, const Row &y) {
    if (x.records != y.records) return x.records > y.records;
    return std::tie(x.app, x.file, x.line, x.level, x.fmt) <
           std::tie(y.app, y.file, y.line, y.level, y.fmt);
  });
  return kExitOk;
}

// FILE:LINE; a kind of free text alone; "-" for a site without a file (a
// run-time text or format: ls_log_text, ls_log).
std::string SiteText(const Row &r) {
  if (r.file.empty()) return "-";
  return r.text || r.line == 0 ? r.file : r.file + ":" + std::to_string(r.line);
}

void AppendText(const std::vector<Row> &rows, uint64_t total, bool all, std::string *b) {
  auto it = std::back_inserter(*b);
  fmt::format_to(it, "{:>10} {:>6} {:>8}  {:<7}  {}{:<16}  {:<28}  {}\n", "RECORDS", "SHARE",
                 "LAST MIN", "LEVEL", all ? "ON   " : "", "APP", "SITE", "FORMAT");
  for (const Row &r : rows) {
    fmt::format_to(it, "{:>10} {:>5.1f}% {:>8}  {:<7}  ", r.records,
                   total ? 100.0 * double(r.records) / double(total) : 0.0, r.last_minute,
                   ls_level_name(r.level));
    if (all)
      b->append(r.enabled == -1   ? "-    "
                : r.enabled == -2 ? "?    "
                : r.enabled       ? "yes  "
                                  : "no   ");
    const size_t at = b->size();
    render::AppendTerminalSafe(b, r.app);
    b->append(b->size() - at < 16 ? 16 - (b->size() - at) : 0, ' ');
    b->append("  ");
    const size_t site_at = b->size();
    render::AppendTerminalSafe(b, SiteText(r));
    b->append(b->size() - site_at < 28 ? 28 - (b->size() - site_at) : 0, ' ');
    b->append("  ");
    if (r.text)
      b->append("(text)");
    else
      render::AppendTerminalSafe(b, r.fmt);
    b->push_back('\n');
  }
  if (all) {
    const auto silent =
        std::count_if(rows.begin(), rows.end(), [](const Row &r) { return r.records == 0; });
    fmt::format_to(it, "{} records from {} sites; {} sites of connected programs wrote none\n",
                   total, rows.size() - size_t(silent), silent);
  } else {
    fmt::format_to(it, "{} records from {} sites\n", total, rows.size());
  }
}

// One JSON object per site and line, most records first.
void AppendJson(const std::vector<Row> &rows, uint64_t total, std::string *b) {
  auto it = std::back_inserter(*b);
  for (const Row &r : rows) {
    fmt::format_to(it, "{{\"records\":{},\"share\":{:.6f},\"last_minute\":{},\"level\":\"{}\",",
                   r.records, total ? double(r.records) / double(total) : 0.0, r.last_minute,
                   ls_level_name(r.level));
    if (r.enabled != -1)
      fmt::format_to(it, "\"enabled\":{},",
                     r.enabled == -2 ? "null"
                     : r.enabled     ? "true"
                                     : "false");
    b->append("\"app\":");
    render::AppendJsonString(b, r.app);
    b->append(",\"file\":");
    render::AppendJsonString(b, r.file);
    if (r.text) {
      b->append(",\"text\":true}\n");
      continue;
    }
    fmt::format_to(it, ",\"line\":{},\"fmt\":", r.line);
    render::AppendJsonString(b, r.fmt);
    b->append("}\n");
  }
}

}  // namespace

int RunSites(Options &o) {
  Reading reading;
  if (int rc = OpenReading(o, false, &reading)) return rc;
  const std::string &path = reading.path;
  RecordSource *r = reading.source.get();
  if (int rc = SelectBoot(o, r, path)) return rc;
  r->SetFilter(&o.filter, !ReadSwitchesFromEnv().no_index);
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  Census census(uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec));
  render::Printer pr(render::OutputMode::kShort, false, o.utc);  // --grep's messages
  std::string msg;
  FieldLookup lookup;  // FIELD=VALUE's
  Status s = o.filter.since_ns ? r->SeekTime(*o.filter.since_ns) : r->SeekOldest();
  Record rec;
  while (s.ok() && (s = r->Next(&rec)).ok()) {
    if (rec.kind != Record::Kind::kRecord || !o.filter.Match(rec)) continue;
    if (!o.matches.Match(rec, &lookup)) continue;
    if (!o.grep.empty()) {
      pr.Message(rec, &msg);
      if (!o.grep.Match(msg)) continue;
    }
    census.Add(rec);
  }
  if (!s.ok() && !s.IsNotFound()) {
    Error(path, s.ToString());
    return kExitError;
  }
  std::vector<Row> rows = census.Rows();
  if (o.all_sites)
    if (int rc = AddConnectedSites(o, &rows)) return rc;
  if (o.lines_given && rows.size() > o.lines) rows.resize(o.lines);
  Out out(STDOUT_FILENO);
  if (o.json)
    AppendJson(rows, census.total(), out.buf());
  else
    AppendText(rows, census.total(), o.all_sites, out.buf());
  return FinishOutput(&out, "stdout");
}

}  // namespace logsink::logctl
