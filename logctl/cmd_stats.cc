// cmd_stats.cc: `logctl stats`: the ring's geometry, usage and compression
// (Summarize, plus one full scan that adds up the DROPPED entries, counts
// the records of each writer and draws the histogram) and the daemon's live
// counters.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <thread>
#include <unordered_map>
#include <vector>

#include "commands.h"
#include "common.h"
#include "daemon_stats.h"
#include "logsink/render/escape.h"
#include "logsink/render/timefmt.h"
#include "nats_read.h"
#include "out.h"

namespace logsink::logctl {
namespace {

using storage::Record;
using storage::RingReader;
using storage::Status;

// What the reader reports as it opens the file (a size other than the
// superblock's, string-table damage) is printed as cat prints it; what it
// skips while stats scans is counted.
class StatsReporter : public storage::Reporter {
 public:
  explicit StatsReporter(std::string path) : path_(std::move(path)) {}
  void Corruption(uint64_t off, std::string_view reason) override {
    if (opening)
      WarnSkipped(path_, off, reason);
    else
      corrupt++;
  }
  void Lost(uint64_t n) override { lost += n; }
  uint64_t corrupt = 0, lost = 0;
  bool opening = true;

 private:
  std::string path_;
};

std::string Span(uint64_t ns) {
  uint64_t s = ns / 1000000000u;
  uint64_t ms = ns / 1000000u % 1000;
  std::string out;
  if (s >= 86400) out += fmt::format("{}d ", s / 86400);
  if (s >= 3600) out += fmt::format("{}h ", s / 3600 % 24);
  if (s >= 60) out += fmt::format("{}min ", s / 60 % 60);
  out += fmt::format("{}.{:03}s", s % 60, ms);
  return out;
}

std::string Human(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, u++;
  return fmt::format("{:.1f} {}", v, units[u]);
}

double Pct(uint64_t a, uint64_t b) {
  return b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0;
}

// The full scan's findings beyond the summary: who wrote the records, and
// when, by priority class.
constexpr int kBuckets = 12;
struct Scan {
  uint64_t dropped = 0, dropped_entries = 0;
  struct Writer {
    uint32_t uid = 0;
    std::string label;  // the app label, else the process name
    uint64_t records = 0;
  };
  std::unordered_map<uint64_t, Writer> by_source;
  // [bucket][class]: 0 err and worse, 1 warning and notice, 2 info and
  // debug, 3 dropped reports.
  uint64_t hist[kBuckets][4] = {};
};

// The tiers' names (FORMAT.md, "Tiers").
const char *TierName(int t) { return t == 0 ? "recent" : t == 1 ? "kept" : "errors"; }

// The writers with the most records (the same uid and label summed), most first.
std::vector<Scan::Writer> TopWriters(const Scan &scan, size_t n) {
  std::map<std::pair<uint32_t, std::string>, uint64_t> sum;
  for (const auto &[id, w] : scan.by_source) sum[{w.uid, w.label}] += w.records;
  std::vector<Scan::Writer> v;
  for (const auto &[k, records] : sum) v.push_back({k.first, k.second, records});
  std::sort(v.begin(), v.end(), [](const Scan::Writer &a, const Scan::Writer &b) {
    return a.records != b.records ? a.records > b.records : a.label < b.label;
  });
  if (v.size() > n) v.resize(n);
  return v;
}

uint64_t Counter(const StatList &l, std::string_view name) {
  for (const auto &[k, v] : l)
    if (k == name) return v;
  return 0;
}

volatile sig_atomic_t g_stop = 0;

// stats --watch: a line per interval with what the daemon stored and what
// clients reported dropped since the line before, until SIGINT/SIGTERM.
int Watch(const Options &o, const std::string &socket, StatList prev) {
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop = 1; };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  render::TimeFormatter tf(o.utc);
  Out out(STDOUT_FILENO);
  fmt::format_to(std::back_inserter(*out.buf()),
                 "every {:.1f}s: time, records stored (per second), drops reported (per "
                 "second), connections\n",
                 double(o.watch_ms) / 1000);
  out.Flush();
  auto last = std::chrono::steady_clock::now();
  bool down = false;  // the last query found no daemon
  while (!g_stop) {
    const auto until = last + std::chrono::milliseconds(o.watch_ms);
    while (!g_stop && std::chrono::steady_clock::now() < until) {
      const auto left = until - std::chrono::steady_clock::now();
      const auto step =
          std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(50));
      if (step.count() > 0) std::this_thread::sleep_for(step);
    }
    if (g_stop) break;
    StatList now;
    std::string why;
    if (int rc = QueryDaemonStats(socket, 1000, &now, &why); rc < 0) {
      if (g_stop) break;  // interrupted while asking: a normal end
      if (rc != -ENOENT && rc != -ECONNREFUSED) {
        Error(socket, why);
        return kExitError;
      }
      // Stopped (a restart, most likely): said once, and the watch goes on.
      if (!down) {
        std::string &b = *out.buf();
        tf.AppendHuman(NowNs(), &b);
        b += "  the daemon is not running\n";
        out.Flush();
        down = true;
      }
      last = std::chrono::steady_clock::now();
      continue;
    }
    down = false;
    const auto t = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(t - last).count();
    last = t;
    // A daemon restarted meanwhile (its uptime went back) counts from zero.
    const bool restarted = Counter(now, "uptime_ms") < Counter(prev, "uptime_ms") ||
                           Counter(now, "records") < Counter(prev, "records");
    auto delta = [&](std::string_view name) {
      return restarted ? Counter(now, name) : Counter(now, name) - Counter(prev, name);
    };
    const uint64_t rec = delta("records"), drop = delta("dropped_reported");
    std::string &b = *out.buf();
    tf.AppendHuman(NowNs(), &b);
    fmt::format_to(
        std::back_inserter(b), "  records {} ({:.1f}/s)  dropped {} ({:.1f}/s)  connections {}{}\n",
        rec, double(rec) / secs, drop, double(drop) / secs, Counter(now, "connections_current"),
        restarted ? "  (the daemon restarted)" : "");
    out.Flush();
    if (out.failed()) return kExitOk;  // a closed pipe ends the watch
    prev = std::move(now);
  }
  return kExitOk;
}

int Class(const Record &rec) {
  if (rec.kind == Record::Kind::kDropped) return 3;
  return rec.site.level <= 3 ? 0 : rec.site.level <= 5 ? 1 : 2;
}

// Records decoded (block headers and entries) per byte stored in the blocks.
double Ratio(const RingReader::Summary &sum) {
  return static_cast<double>(sum.raw_bytes) / static_cast<double>(sum.bytes_used);
}

// What the daemon on the socket says about the file, decided once for
// both formats.
struct DaemonStatus {
  enum class State {
    kWritesThisFile,  // running, writing this very file: its counters describe it
    kWritesAnother,   // running, writing another ring (ring.path)
    kNotRunning,      // nothing listens on the socket
    kUnreachable,     // something else went wrong (why)
  };
  State state = State::kNotRunning;
  std::string socket;
  StatList counters;  // kWritesThisFile (and --watch's first line)
  DaemonRing ring;    // kWritesThisFile, kWritesAnother
  std::string why;    // kUnreachable
};

// Asks the daemon on socket for its ring and counters. Its counters
// describe the file only when it writes this very ring: the same identity
// and the same file (st_dev, st_ino), not the same path string. A recreated
// file at the path has another identity; a copy has the identity but is
// another file.
DaemonStatus QueryDaemon(const std::string &socket, const std::string &path,
                         const storage::Layout &L) {
  DaemonStatus d;
  d.socket = socket;
  int drc = QueryDaemonStatsAndRing(socket, 1000, &d.counters, &d.ring, &d.why);
  struct stat st;
  if (drc == -ENOENT || drc == -ECONNREFUSED) {
    d.state = DaemonStatus::State::kNotRunning;
  } else if (drc != 0) {
    d.state = DaemonStatus::State::kUnreachable;
  } else if (!L.RingIdHex().empty() && d.ring.id == L.ring_id && stat(path.c_str(), &st) == 0 &&
             uint64_t(st.st_dev) == d.ring.dev && uint64_t(st.st_ino) == d.ring.ino) {
    d.state = DaemonStatus::State::kWritesThisFile;
  } else {
    d.state = DaemonStatus::State::kWritesAnother;
  }
  return d;
}

// Everything `logctl stats` prints, gathered before anything is printed.
struct StatsReport {
  std::string path;
  storage::Layout layout;
  RingReader::Summary sum;
  bool empty = false;    // no records (Summarize: NotFound)
  uint64_t corrupt = 0;  // damaged blocks the full scan skipped
  Scan scan;
  // The histogram's range: its first time and its width (at least 1).
  uint64_t t0 = 0, width = 1;
  // Counted, not newest - oldest + 1: the kept tiers number their records with gaps.
  uint64_t records = 0;
  uint64_t by_class[3] = {};  // err and worse, warning and notice, info and debug
  uint64_t span = 0;          // newest - oldest record time
  DaemonStatus daemon;
};

// The full scan: DROPPED entries, writers and times are only known by
// reading every record.
Status ScanRecords(RingReader *r, StatsReport *rep) {
  Scan &scan = rep->scan;
  Status s = r->SeekOldest();
  Record rec;
  while (s.ok() && (s = r->Next(&rec)).ok()) {
    if (rec.kind == Record::Kind::kDropped)
      scan.dropped += rec.dropped_count, scan.dropped_entries++;
    Scan::Writer &w = scan.by_source[rec.source_id];
    if (w.records++ == 0) {
      w.uid = rec.uid;
      w.label = std::string(rec.app.empty() ? rec.comm : rec.app);
    }
    // Times outside the summary's range (a client's clock) go to the ends.
    const uint64_t t = std::clamp(storage::FilterTime(rec), rep->t0, rep->t0 + rep->width - 1);
    scan.hist[(unsigned __int128)(t - rep->t0) * kBuckets / rep->width][Class(rec)]++;
  }
  return s.IsNotFound() ? Status() : s;
}

// Fills *rep: the ring's summary, a full scan and the daemon's status.
// Returns -1, or an exit code after an error (printed).
int GatherReport(const Options &o, StatsReport *rep) {
  if (!RingPath(o.file, o.socket, &rep->path)) return kExitError;
  const std::string &path = rep->path;
  StatsReporter damage(path);
  std::unique_ptr<RingReader> r;
  if (int rc = OpenRing(path, &damage, &r)) return rc;
  damage.opening = false;  // skipped_blocks counts blocks, from here on
  RingReader::Summary &sum = rep->sum;
  Status s = r->Summarize(&sum);
  rep->empty = s.IsNotFound();
  if (!s.ok() && !rep->empty) {
    Error(path, s.ToString());
    return kExitError;
  }
  rep->t0 = sum.oldest_ts_ns;
  rep->width = sum.newest_ts_ns > rep->t0 ? sum.newest_ts_ns - rep->t0 + 1 : 1;
  if (!rep->empty) {
    if (s = ScanRecords(r.get(), rep); !s.ok()) {
      Error(path, s.ToString());
      return kExitError;
    }
  }
  rep->corrupt = damage.corrupt;
  rep->layout = r->layout();
  rep->records = rep->empty ? 0 : sum.records;
  for (const auto &row : rep->scan.hist) {
    for (int c = 0; c < 3; c++) rep->by_class[c] += row[c];
  }
  rep->span = sum.newest_ts_ns > sum.oldest_ts_ns ? sum.newest_ts_ns - sum.oldest_ts_ns : 0;
  std::string socket;
  if (!SocketPath(o.socket, &socket)) return kExitError;
  rep->daemon = QueryDaemon(socket, path, rep->layout);
  return -1;
}

// The "daemon" member of the JSON object.
void AppendDaemonJson(const DaemonStatus &d, std::string *out) {
  std::string &b = *out;
  auto it = std::back_inserter(b);
  using State = DaemonStatus::State;
  const bool running = d.state == State::kWritesThisFile || d.state == State::kWritesAnother;
  b += running ? "{\"running\":true,\"socket\":" : "{\"running\":false,\"socket\":";
  render::AppendJsonString(&b, d.socket);
  switch (d.state) {
    case State::kWritesAnother:
    case State::kWritesThisFile:
      b += d.state == State::kWritesThisFile ? ",\"writes_this_file\":true,\"ring\":"
                                             : ",\"writes_this_file\":false,\"ring\":";
      render::AppendJsonString(&b, d.ring.path);
      if (d.state == State::kWritesThisFile) {
        b += ",\"counters\":{";
        bool first = true;
        for (auto &[name, value] : d.counters) {
          if (!first) b += ',';
          first = false;
          render::AppendJsonString(&b, name);
          fmt::format_to(it, ":{}", value);
        }
        b += "}";
      }
      break;
    case State::kUnreachable:
      b += ",\"error\":";
      render::AppendJsonString(&b, d.why);
      break;
    case State::kNotRunning:
      break;
  }
  b += "}";
}

// The "daemon:" lines of the text report.
void AppendDaemonText(const DaemonStatus &d, std::string *out) {
  std::string &b = *out;
  auto it = std::back_inserter(b);
  switch (d.state) {
    case DaemonStatus::State::kWritesAnother:
      b += "daemon:        running (socket ";
      render::AppendTerminalSafe(&b, d.socket);
      b += "), writing another ring: ";
      render::AppendTerminalSafe(&b, d.ring.path);
      b += "\n";
      break;
    case DaemonStatus::State::kWritesThisFile:
      b += "daemon:        running (socket ";
      render::AppendTerminalSafe(&b, d.socket);
      b += ")";
      // An older daemon does not say (uptime_ms is newer than its counters).
      for (const auto &[k, v] : d.counters)
        if (k == "uptime_ms") b += ", up " + Span(v * 1000000);
      b += "\n";
      for (auto &[name, value] : d.counters) {
        b += "  ";
        render::AppendTerminalSafe(&b, name);
        fmt::format_to(it, "={}\n", value);
      }
      break;
    case DaemonStatus::State::kNotRunning:
      b += "daemon: not running (socket ";
      render::AppendTerminalSafe(&b, d.socket);
      b += ")\n";
      break;
    case DaemonStatus::State::kUnreachable:
      b += "daemon: unreachable (socket ";
      render::AppendTerminalSafe(&b, d.socket);
      b += "): ";
      render::AppendTerminalSafe(&b, d.why);
      b += "\n";
      break;
  }
}

// `logctl stats --json`: one object on one line.
void AppendJson(const StatsReport &rep, std::string *out) {
  const storage::Layout &L = rep.layout;
  const RingReader::Summary &sum = rep.sum;
  const Scan &scan = rep.scan;
  std::string &b = *out;
  auto it = std::back_inserter(b);
  b += "{\"file\":";
  render::AppendJsonString(&b, rep.path);
  fmt::format_to(it,
                 ",\"file_size\":{},\"block_size\":{},\"block_count\":{},\"capacity\":{},"
                 "\"blocks_used\":{},\"bytes_used\":{},\"raw_bytes\":{},\"compression_ratio\":{},"
                 "\"records\":{},\"oldest_seq\":{},"
                 "\"newest_seq\":{},\"oldest_ts_ns\":{},\"oldest_ts_ns_str\":\"{}\","
                 "\"newest_ts_ns\":{},\"newest_ts_ns_str\":\"{}\",\"span_ns\":{},"
                 "\"wraps\":{},\"dropped\":{},\"dropped_entries\":{},\"dropped_full_scan\":true,"
                 "\"strings\":{},\"strtab_bytes\":{},\"strtab_size\":{},\"skipped_blocks\":{}",
                 L.file_size, L.block_size, L.block_count, L.capacity(), sum.blocks_used,
                 sum.bytes_used, sum.raw_bytes,
                 sum.bytes_used ? fmt::format("{:.3f}", Ratio(sum)) : std::string("null"),
                 rep.records, sum.oldest_seq, sum.newest_seq, sum.oldest_ts_ns, sum.oldest_ts_ns,
                 sum.newest_ts_ns, sum.newest_ts_ns, rep.span, sum.wraps, scan.dropped,
                 scan.dropped_entries, sum.strings, sum.strtab_bytes, L.strtab_size, rep.corrupt);
  b += ",\"tiers\":[";
  for (size_t i = 0; i < sum.tiers.size(); i++) {
    const auto &t = sum.tiers[i];
    fmt::format_to(it,
                   "{}{{\"tier\":{},\"name\":\"{}\",\"blocks\":{},\"blocks_used\":{},"
                   "\"bytes_used\":{},\"records\":{},\"oldest_seq\":{},\"oldest_ts_ns\":{}}}",
                   i ? "," : "", t.tier, TierName(t.tier), t.blocks, t.blocks_used, t.bytes_used,
                   t.records, t.oldest_seq, t.oldest_ts_ns);
  }
  fmt::format_to(it, "],\"by_class\":{{\"err\":{},\"warning\":{},\"info\":{}}}", rep.by_class[0],
                 rep.by_class[1], rep.by_class[2]);
  b += ",\"top_writers\":[";
  bool first_w = true;
  for (const Scan::Writer &w : TopWriters(scan, 10)) {
    b += first_w ? "{" : ",{";
    first_w = false;
    fmt::format_to(it, "\"uid\":{},\"label\":", w.uid);
    render::AppendJsonString(&b, w.label);
    fmt::format_to(it, ",\"records\":{}}}", w.records);
  }
  fmt::format_to(it, "],\"histogram\":{{\"start_ns\":{},\"bucket_ns\":{},\"buckets\":[", rep.t0,
                 (rep.width + kBuckets - 1) / kBuckets);
  for (int k = 0; k < kBuckets && !rep.empty; k++)
    fmt::format_to(it, "{}{{\"err\":{},\"warning\":{},\"info\":{},\"dropped_reports\":{}}}",
                   k ? "," : "", scan.hist[k][0], scan.hist[k][1], scan.hist[k][2],
                   scan.hist[k][3]);
  b += "]}";
  b += ",\"daemon\":";
  AppendDaemonJson(rep.daemon, &b);
  b += "}\n";
}

// The text report's histogram: one row per twelfth of the span, its bar as
// long as its share of the busiest row, in three characters (no colour).
void AppendHistogram(const StatsReport &rep, render::TimeFormatter *tf, std::string *out) {
  std::string &b = *out;
  auto it = std::back_inserter(b);
  b += "histogram:     records per twelfth of the span: # err and worse, + warning and "
       "notice, . info and debug\n";
  uint64_t most = 1;
  for (auto &row : rep.scan.hist) most = std::max(most, row[0] + row[1] + row[2]);
  const uint64_t bucket = (rep.width + kBuckets - 1) / kBuckets;
  for (int k = 0; k < kBuckets; k++) {
    const uint64_t *c = rep.scan.hist[k];
    const uint64_t n = c[0] + c[1] + c[2];
    b += "  ";
    tf->AppendHuman(rep.t0 + uint64_t(k) * bucket, &b);
    b += "  ";
    // Widths of the three parts: rounded up, so a class present shows.
    size_t used = 0;
    for (int cls = 0; cls < 3; cls++) {
      size_t w = c[cls] ? size_t((c[cls] * 40 + most - 1) / most) : 0;
      b.append(w, "#+."[cls]);
      used += w;
    }
    b.append(used < 42 ? 42 - used : 1, ' ');
    fmt::format_to(it, "{}", n);
    if (c[0] || c[1]) fmt::format_to(it, " (err {}, warning {})", c[0], c[1]);
    b += '\n';
  }
}

// `logctl stats`: the text report.
void AppendText(const StatsReport &rep, std::string *out) {
  const storage::Layout &L = rep.layout;
  const RingReader::Summary &sum = rep.sum;
  const uint64_t records = rep.records;
  const uint64_t *by_class = rep.by_class;
  render::TimeFormatter tf(false);
  std::string &b = *out;
  auto it = std::back_inserter(b);
  b += "file:          ";
  render::AppendTerminalSafe(&b, rep.path);
  fmt::format_to(it, "\nfile size:     {} bytes ({})\n", L.file_size, Human(L.file_size));
  fmt::format_to(it, "block size:    {} bytes\nblock count:   {}\n", L.block_size, L.block_count);
  fmt::format_to(it, "capacity:      {} bytes ({})\n", L.capacity(), Human(L.capacity()));
  fmt::format_to(it, "blocks used:   {}\n", sum.blocks_used);
  fmt::format_to(it, "bytes used:    {} bytes ({:.1f}% of capacity)\n", sum.bytes_used,
                 Pct(sum.bytes_used, L.capacity()));
  if (sum.bytes_used) {
    fmt::format_to(it, "compression:   {:.1f}x ({} of records in {} of blocks)\n", Ratio(sum),
                   Human(sum.raw_bytes), Human(sum.bytes_used));
  } else {
    b += "compression:   - (no blocks used)\n";
  }
  if (rep.empty) {
    b += "records:       0 (empty)\n";
  } else {
    fmt::format_to(it, "records:       {} (seq {}..{})\n", records, sum.oldest_seq, sum.newest_seq);
    b += "oldest:        ";
    tf.AppendHuman(sum.oldest_ts_ns, &b);
    b += "\nnewest:        ";
    tf.AppendHuman(sum.newest_ts_ns, &b);
    b += "\nspan:          " + Span(rep.span) + "\n";
  }
  fmt::format_to(it, "wraps:         {}\n", sum.wraps);
  if (sum.tiers.size() > 1) {
    b += "tiers:         blocks used of slots, records, oldest\n";
    for (const auto &t : sum.tiers) {
      fmt::format_to(it, "  {} {:<7} {:>8} of {:<8} {:>12}  ", t.tier, TierName(t.tier),
                     t.blocks_used, t.blocks, t.records);
      if (t.records)
        tf.AppendHuman(t.oldest_ts_ns, &b);
      else
        b += "-";
      b += '\n';
    }
  }
  if (!rep.empty) {
    fmt::format_to(it,
                   "by class:      err and worse {} ({:.1f}%), warning and notice {} ({:.1f}%), "
                   "info and debug {} ({:.1f}%)\n",
                   by_class[0], Pct(by_class[0], records), by_class[1], Pct(by_class[1], records),
                   by_class[2], Pct(by_class[2], records));
  }
  fmt::format_to(it, "dropped:       {} records in {} reports (full scan)\n", rep.scan.dropped,
                 rep.scan.dropped_entries);
  if (!rep.empty) {
    if (rep.span)
      fmt::format_to(it, "rate:          {:.1f} records/s over the span\n",
                     double(records) * 1e9 / double(rep.span));
    b += "top writers:   records, share of the file, label (uid)\n";
    for (const Scan::Writer &w : TopWriters(rep.scan, 5)) {
      fmt::format_to(it, "  {:>12} {:5.1f}%  ", w.records, Pct(w.records, records));
      render::AppendTerminalSafe(&b, w.label);
      fmt::format_to(it, " (uid {})\n", w.uid);
    }
    AppendHistogram(rep, &tf, &b);
  }
  fmt::format_to(it, "string table:  {} entries, {} of {} bytes ({:.1f}%)\n", sum.strings,
                 sum.strtab_bytes, L.strtab_size, Pct(sum.strtab_bytes, L.strtab_size));
  if (rep.corrupt)
    fmt::format_to(it, "skipped:       {} damaged blocks (run logctl verify)\n", rep.corrupt);
  AppendDaemonText(rep.daemon, &b);
}

}  // namespace

int RunStats(Options &o) {
  if (!o.nats_url.empty()) return StatsNats(o);
  StatsReport rep;
  if (int rc = GatherReport(o, &rep); rc >= 0) return rc;
  Out out(STDOUT_FILENO);
  if (o.json)
    AppendJson(rep, out.buf());
  else
    AppendText(rep, out.buf());
  out.Flush();
  if (o.watch_ms) {
    if (rep.daemon.state != DaemonStatus::State::kWritesThisFile) {
      Error(rep.daemon.socket, "--watch needs the daemon that writes this ring");
      return kExitError;
    }
    return Watch(o, rep.daemon.socket, std::move(rep.daemon.counters));
  }
  return kExitOk;
}

}  // namespace logsink::logctl
