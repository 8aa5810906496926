// nats_read.cc: `logctl --nats URL`. Finds the stream (--stream, else the
// one that captures PREFIX.>), lists its subjects (a host is the token after
// the prefix), keeps the hosts --host selects, reads each with a consumer
// of its own (nats_host.h), so that other hosts' messages are never pulled,
// and merges them by timestamp: a heap over each host's next record for what
// the stream held when the read began, then with -f a reorder window over
// what arrives. A fleet cursor holds each host's position (below).
#include "nats_read.h"

#include <fmt/format.h>
#include <fnmatch.h>
#include <nats/nats.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "common.h"
#include "logsink/render/escape.h"
#include "logsink/render/printer.h"
#include "logsink/storage/small_file.h"
#include "nats_host.h"
#include "nats_stream.h"
#include "out.h"
#include "read_setup.h"

namespace logsink::logctl {
namespace {

using fleet::Entry;
using fleet::HostPos;
using fleet::HostReader;

// --since starts each consumer at the stream's store time since minus this:
// a record is stored after it was logged, on a host whose clock may run
// this much ahead of the server's.
constexpr uint64_t kSinceSlackNs = 300ull * 1000000000ull;
// -f: a record waits this long after it arrived for earlier ones of other
// hosts, then is printed in time order with those that came with it.
constexpr auto kReorder = std::chrono::milliseconds(300);
// -f: at most this much of records waits its window.
constexpr size_t kHeldMax = size_t(32) << 20;
// -f: how often the stream's subjects are listed again for new hosts.
constexpr auto kSurvey = std::chrono::seconds(5);
constexpr size_t kCursorFileMax = 4u << 20;

// A fleet cursor: `lsn1:STREAM` then per host read `~KEY=MSG:LINES:RING:SEQ`
// (KEY the consumer's subject after the prefix, '%', '~', '=' and ':' in it
// as %XX; MSG the stream sequence of the message of the last entry read,
// LINES the lines of it read, SEQ that entry's record in RING, all three
// numbers in hexadecimal; RING "-" when unknown). Opaque to users, as a
// ring's cursor is.
struct FleetCursor {
  std::string stream;
  std::map<std::string, HostPos> hosts;
};

void AppendKey(std::string *out, std::string_view k) {
  for (char c : k) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '%' || c == '~' || c == '=' || c == ':' || u < 0x21 || u >= 0x7f)
      *out += fmt::format("%{:02x}", u);
    else
      out->push_back(c);
  }
}

std::string FormatFleetCursor(const FleetCursor &c) {
  std::string out = "lsn1:" + c.stream;
  for (const auto &[key, p] : c.hosts) {
    out += '~';
    AppendKey(&out, key);
    out += fmt::format("={:x}:{:x}:{}:{:x}", p.msg_seq, p.lines, p.ring.empty() ? "-" : p.ring,
                       p.rec_seq);
  }
  return out;
}

bool ParseHex(std::string_view s, uint64_t *v) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t x = 0;
  for (char c : s) {
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return false;
    x = x << 4 | uint64_t(d);
  }
  *v = x;
  return true;
}

bool ParseFleetCursor(std::string_view text, FleetCursor *c, std::string *why) {
  *why = "not a cursor of a NATS stream (they start with lsn1:, as --show-cursor prints them)";
  if (text.substr(0, 5) != "lsn1:") return false;
  text.remove_prefix(5);
  size_t tilde = text.find('~');
  c->stream = std::string(text.substr(0, tilde));
  if (c->stream.empty()) return false;
  while (tilde != std::string_view::npos) {
    text.remove_prefix(tilde + 1);
    tilde = text.find('~');
    std::string_view item = text.substr(0, tilde);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) return false;
    std::string key;
    for (size_t i = 0; i < eq; i++) {
      if (item[i] != '%') {
        key.push_back(item[i]);
        continue;
      }
      uint64_t v;
      if (i + 2 >= eq || !ParseHex(item.substr(i + 1, 2), &v)) return false;
      key.push_back(char(v));
      i += 2;
    }
    std::string_view parts[4];
    std::string_view rest = item.substr(eq + 1);
    for (int k = 0; k < 4; k++) {
      const size_t colon = rest.find(':');
      if ((colon == std::string_view::npos) != (k == 3)) return false;
      parts[k] = rest.substr(0, colon);
      if (k < 3) rest.remove_prefix(colon + 1);
    }
    HostPos p;
    uint64_t lines;
    if (!ParseHex(parts[0], &p.msg_seq) || !ParseHex(parts[1], &lines) || lines > UINT32_MAX ||
        !ParseHex(parts[3], &p.rec_seq))
      return false;
    p.lines = uint32_t(lines);
    if (parts[2] != "-") {
      uint64_t unused;
      if (parts[2].size() != 32 || !ParseHex(parts[2].substr(0, 16), &unused) ||
          !ParseHex(parts[2].substr(16), &unused))
        return false;
      p.ring = std::string(parts[2]);
    }
    c->hosts[key] = p;
  }
  return true;
}

// --after-cursor, else --cursor-file's cursor (none when the file does not
// exist). False with the error printed and *rc set.
bool StartCursor(const Options &o, std::optional<FleetCursor> *out, int *rc) {
  std::string text = o.after_cursor;
  if (text.empty() && !o.cursor_file.empty()) {
    std::string why;
    const int got = storage::ReadSmallFile(o.cursor_file, kCursorFileMax, &text, &why);
    if (got == 0) return true;
    if (got < 0) {
      Error(o.cursor_file, why);
      *rc = kExitError;
      return false;
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  }
  if (text.empty()) return true;
  FleetCursor c;
  std::string why;
  if (!ParseFleetCursor(text, &c, &why)) {
    Error(o.after_cursor.empty() ? o.cursor_file : "--after-cursor", why);
    *rc = o.after_cursor.empty() ? kExitError : kExitUsage;
    return false;
  }
  *out = std::move(c);
  return true;
}

// A record's fields as the printer and the filter read them; views into e.f.
storage::Record RecordOf(const Entry &e) {
  storage::Record r;
  const fleet::Fields &f = e.f;
  r.seq = e.first;
  r.ts_ns = e.ts_ns;
  r.pid = f.pid;
  r.uid = f.uid;
  r.gid = f.gid;
  r.tid = f.tid;
  r.app = f.app;
  r.comm = f.comm;
  r.unit = f.unit;
  if (f.dropped) {
    r.kind = storage::Record::Kind::kDropped;
    r.dropped_count = f.dropped_count;
    r.dropped_since_ns = f.dropped_since_ns;
  }
  r.site.level = uint8_t(std::min<uint32_t>(f.priority, 7));
  r.site.file = f.file;
  r.site.line = f.line;
  r.site_known = f.has_fmt;
  return r;
}

// Copies JSON text (valid: ParseFields read it) escaping in its strings
// what render::AppendJsonEscaped escapes in logctl's own JSON (C1 and bidi
// controls, U+2028/U+2029, invalid UTF-8): a published line reaches a
// terminal as safely as a local one.
void AppendEscapedJson(std::string_view in, std::string *out) {
  bool in_string = false;
  size_t i = 0;
  while (i < in.size()) {
    const char c = in[i];
    if (!in_string) {
      out->push_back(c);
      in_string = c == '"';
      i++;
      continue;
    }
    if (c == '"') {
      out->push_back(c);
      in_string = false;
      i++;
    } else if (c == '\\') {
      const size_t n = i + 1 < in.size() && in[i + 1] == 'u' ? 6 : 2;
      out->append(in.substr(i, n));
      i += n;
    } else {
      const size_t end = in.find_first_of("\"\\", i);
      render::AppendJsonEscaped(out, in.substr(i, end - i));
      i = end == std::string_view::npos ? in.size() : end;
    }
  }
}

// Renders an entry for -o: the published line with the host added (json),
// the short line with a host column, or the message alone (cat).
class Renderer {
 public:
  Renderer(const Options &o, bool tty)
      : mode_(o.mode), pr_(o.mode, UseColor(o, tty), o.utc), o_(o) {}

  // Appends e's line to *out; false when the filters leave it out.
  bool Render(const Entry &e, const std::string &host, std::string *out) {
    if (e.notice) return Notice(e, host, out), true;
    const storage::Record r = RecordOf(e);
    if (!o_.filter.Match(r)) return false;
    const std::string &msg = e.f.msg;
    if (!o_.grep.Match(msg)) return false;
    if (json_mode()) return Json(e.line, host, out), true;
    pr_.SetHost(host);
    pr_.Line(r, msg, !e.f.mismatch, out);
    return true;
  }

  // Records of host gone from the stream before this read got to them.
  void Gone(const std::string &host, uint64_t n, std::string *out) {
    const std::string text = std::to_string(n) +
                             " records were gone from the stream (its limits) before this "
                             "read got to them";
    if (json_mode()) {
      std::string line = "{\"lost\":" + std::to_string(n) + ",\"msg\":";
      render::AppendJsonString(&line, text);
      line += '}';
      return Json(line, host, out);
    }
    out->append("-- ");
    render::AppendTerminalSafe(out, host);
    out->append(": " + text + " --\n");
  }

 private:
  bool json_mode() const {
    return mode_ == render::OutputMode::kJson || mode_ == render::OutputMode::kJsonPretty;
  }

  void Json(std::string_view line, const std::string &host, std::string *out) {
    // The line without its '}' (ParseFields checked it is one object),
    // strings escaped as the local -o json escapes them.
    tmp_.clear();
    AppendEscapedJson(line.substr(0, line.size() - 1), &tmp_);
    size_t last = tmp_.find_last_not_of(" \t\r");
    tmp_ += last != std::string::npos && tmp_[last] == '{' ? "\"host\":" : ",\"host\":";
    render::AppendJsonString(&tmp_, host);
    tmp_ += '}';
    if (mode_ == render::OutputMode::kJsonPretty) {
      // dump() writes non-ASCII as it is: escaped again, as above.
      AppendEscapedJson(nlohmann::ordered_json::parse(tmp_).dump(2), out);
    } else {
      out->append(tmp_);
    }
    out->push_back('\n');
  }

  void Notice(const Entry &e, const std::string &host, std::string *out) {
    if (json_mode()) return Json(e.line, host, out);
    out->append("-- ");
    render::AppendTerminalSafe(out, host);
    out->append(": ");
    render::AppendTerminalSafe(out, e.f.msg);
    out->append(" --\n");
  }

  render::OutputMode mode_;
  render::Printer pr_;
  const Options &o_;
  std::string tmp_;
};

volatile sig_atomic_t g_stop = 0;
void OnStopSignal(int) { g_stop = 1; }

// One read: the readers, the merge, the output and the hosts' positions.
class FleetRead {
 public:
  FleetRead(const Options &o, bool tty, fleet::Stream *st)
      : o_(o), st_(st), rd_(o, tty), out_(STDOUT_FILENO) {
    cursor_.stream = st->name;
  }
  ~FleetRead() {
    // A connection that is down cannot delete the consumers: they are
    // ephemeral and go by themselves, so a stop does not wait for it. The
    // status alone may still say connected just after the server went (the
    // client has not read the reset yet), and each delete would then wait
    // its request timeout: one round trip, bounded, says whether it is up.
    constexpr int64_t kAliveMs = 1000;
    if (natsConnection_Status(st_->nc) != NATS_CONN_STATUS_CONNECTED ||
        natsConnection_FlushTimeout(st_->nc, kAliveMs) != NATS_OK)
      for (auto &r : readers_) r->Abandon();
    {
      std::lock_guard<std::mutex> lock(inbox_.mu);
      inbox_.closing = true;
    }
    inbox_.room.notify_all();
    readers_.clear();  // before the inbox goes
  }

  // A reader of host's messages on the subject filter.
  void Add(const std::string &host, const std::string &filter) {
    auto &shown = shown_[host];
    if (!shown) shown = std::make_unique<fleet::ShownByRing>();
    readers_.push_back(std::make_unique<HostReader>(host, filter, readers_.size(), shown.get()));
    filters_.insert(filter);
  }
  bool empty() const { return readers_.empty(); }
  // The cursor key of a reader: its subject after PREFIX.
  std::string Key(const HostReader &r) const {
    return r.filter().substr(o_.nats_prefix.size() + 1);
  }

  int Run(const std::optional<FleetCursor> &start) {
    jsCtx *js = st_->js;
    const uint64_t first_seq = st_->first_seq, last_seq = st_->last_seq;
    std::string why;
    const uint64_t since_ns = o_.filter.since_ns.value_or(0);
    const uint64_t since = !since_ns ? 0 : since_ns > kSinceSlackNs ? since_ns - kSinceSlackNs : 1;
    for (auto &r : readers_) {
      if (start) {
        auto it = start->hosts.find(Key(*r));
        if (it != start->hosts.end()) {
          r->Resume(it->second, it->second.msg_seq < first_seq);
          cursor_.hosts[Key(*r)] = it->second;
        }
      }
      // A host whose consumer cannot be made (a subject NATS will not
      // take in a request) is left out, saying so; the others are read.
      if (!r->Open(js, cursor_.stream, since, last_seq, &why)) {
        Warn(why + " (host left out)");
        why.clear();
      }
    }
    if (!Snapshot(start.has_value(), &why)) return Fail(why);
    if (o_.follow && !out_.failed() && !Follow(js, last_seq, &why)) return Fail(why);
    return Finish();
  }

 private:
  int Fail(const std::string &why) {
    out_.Flush();
    Error("--nats", why);
    return kExitError;
  }

  // The entry the merge took from reader i: printed (or kept for -n, -r)
  // when it passes the filters, and the host's position moves past it.
  void Emit(size_t i, const Entry &e, bool keep) {
    line_.clear();
    const HostReader &r = *readers_[i];
    if (const uint64_t gone = readers_[i]->TakeGap()) rd_.Gone(r.host(), gone, &line_);
    rd_.Render(e, r.host(), &line_);
    HostPos &p = cursor_.hosts[Key(r)];
    p.msg_seq = e.msg_seq;
    p.lines = e.line_no;
    if (!e.ring.empty()) {
      p.ring = e.ring;
      p.rec_seq = r.Progress(e.ring);
    }
    if (line_.empty()) return;
    if (keep) {
      kept_.push_back(line_);
      if (!o_.reverse && kept_.size() > o_.lines) kept_.pop_front();
    } else {
      out_.buf()->append(line_);
      out_.MaybeFlush();
    }
  }

  // What the stream held when the read began, merged: the earliest of the
  // hosts' next entries first (ties: host, then the reader's order).
  bool Snapshot(bool resumed, std::string *why) {
    std::vector<Entry> heads(readers_.size());
    auto later = [&](size_t a, size_t b) {
      if (heads[a].ts_ns != heads[b].ts_ns) return heads[a].ts_ns > heads[b].ts_ns;
      if (readers_[a]->host() != readers_[b]->host())
        return readers_[a]->host() > readers_[b]->host();
      return a > b;
    };
    std::priority_queue<size_t, std::vector<size_t>, decltype(later)> next(later);
    for (size_t i = 0; i < readers_.size(); i++) {
      if (readers_[i]->Next(&heads[i], why))
        next.push(i);
      else if (!why->empty())
        return false;
    }
    // tail keeps the last -n lines (not after a cursor: everything after
    // it, as for a ring); -r keeps them all, to print newest first.
    const bool keep = (o_.cmd == Command::kTail && !resumed) || o_.reverse;
    while (!next.empty() && !out_.failed()) {
      const size_t i = next.top();
      next.pop();
      Emit(i, heads[i], keep);
      if (readers_[i]->Next(&heads[i], why))
        next.push(i);
      else if (!why->empty())
        return false;
    }
    if (o_.reverse) std::reverse(kept_.begin(), kept_.end());
    for (const std::string &l : kept_) {
      out_.buf()->append(l);
      out_.MaybeFlush();
    }
    kept_.clear();
    return true;
  }

  // -f: each host's new messages as they come, printed in time order among
  // those that arrived within the reorder window. Until SIGINT or SIGTERM
  // (then the cursor is written), or the reader of the output goes.
  // Hosts that came since the read began (checked every kSurvey): new
  // readers, following from the first message after the snapshot.
  bool AddNewHosts(jsCtx *js, uint64_t last_seq, std::string *why) {
    std::map<std::string, std::pair<bool, bool>> hosts;
    if (!fleet::Survey(o_, st_, &hosts, why)) return false;
    for (const auto &[host, filter] : st_->readers) {
      if (!filters_.insert(filter).second) continue;
      Add(host, filter);
      readers_.back()->FollowFrom(last_seq + 1);
      if (!readers_.back()->Follow(js, cursor_.stream, &inbox_, why))
        Warn(*why + " (host left out)");
    }
    return true;
  }

  bool Follow(jsCtx *js, uint64_t last_seq, std::string *why) {
    out_.Flush();
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    for (auto &r : readers_)
      if (!r->Follow(js, cursor_.stream, &inbox_, why)) Warn(*why + " (host left out)");
    why->clear();
    using Clock = std::chrono::steady_clock;
    struct Held {
      Clock::time_point at;
      size_t reader;
      Entry e;
    };
    std::vector<Held> held;
    size_t held_bytes = 0;
    // Prints the held entries (those due, or all), in time order.
    auto print = [&](Clock::time_point now, bool all) {
      auto due = all ? held.end()
                     : std::stable_partition(held.begin(), held.end(),
                                             [&](const Held &h) { return now - h.at >= kReorder; });
      std::stable_sort(held.begin(), due, [&](const Held &a, const Held &b) {
        if (a.e.ts_ns != b.e.ts_ns) return a.e.ts_ns < b.e.ts_ns;
        return readers_[a.reader]->host() < readers_[b.reader]->host();
      });
      for (auto it = held.begin(); it != due; ++it) {
        held_bytes -= it->e.line.size();
        Emit(it->reader, it->e, false);
      }
      held.erase(held.begin(), due);
    };
    auto surveyed = Clock::now();
    while (!g_stop && !out_.failed()) {
      if (Clock::now() - surveyed >= kSurvey &&
          natsConnection_Status(st_->nc) == NATS_CONN_STATUS_CONNECTED) {
        surveyed = Clock::now();
        // A failed survey is tried again at the next.
        std::string ignored;
        AddNewHosts(js, last_seq, &ignored);
      }
      std::deque<std::pair<size_t, natsMsg *>> got;
      {
        std::unique_lock<std::mutex> lock(inbox_.mu);
        inbox_.ready.wait_for(lock, std::chrono::milliseconds(100),
                              [&] { return !inbox_.q.empty(); });
        got.swap(inbox_.q);
        inbox_.bytes = 0;
      }
      inbox_.room.notify_all();
      const Clock::time_point now = Clock::now();
      for (auto &[i, m] : got) {
        readers_[i]->Feed(m);
        Entry e;
        while (readers_[i]->NextFed(&e)) {
          held_bytes += e.line.size();
          held.push_back({now, i, std::move(e)});
        }
        // A flood does not wait its window in memory: past kHeldMax what
        // is held is printed at once.
        if (held_bytes >= kHeldMax) print(now, true);
      }
      print(now, false);
      if (!out_.buf()->empty()) out_.Flush();
    }
    // Stopped: what is held is printed, so that the cursor covers it.
    print(Clock::now(), true);
    return true;
  }

  int Finish() {
    uint64_t bad = 0;
    for (auto &r : readers_) bad += r->bad_lines();
    if (bad) Warn(std::to_string(bad) + " lines of the stream were not JSON objects (skipped)");
    if (!cursor_.hosts.empty() && (o_.show_cursor || !o_.cursor_file.empty())) {
      const std::string c = FormatFleetCursor(cursor_);
      if (o_.show_cursor) out_.buf()->append("-- cursor: " + c + "\n");
      if (!o_.cursor_file.empty()) {
        storage::SmallFileOptions opts;
        opts.mode = 0600;
        std::string why;
        if (!storage::WriteSmallFile(o_.cursor_file, c + "\n", opts, &why)) {
          FinishOutput(&out_, "stdout");
          Error(o_.cursor_file, "cannot write the cursor file: " + why);
          return kExitError;
        }
      }
    }
    return FinishOutput(&out_, "stdout");
  }

  const Options &o_;
  fleet::Stream *st_;
  std::set<std::string> filters_;  // the subjects read
  Renderer rd_;
  Out out_;
  fleet::Inbox inbox_;  // before readers_: the readers' deliveries use it
  std::map<std::string, std::unique_ptr<fleet::ShownByRing>> shown_;  // by host
  std::vector<std::unique_ptr<HostReader>> readers_;
  FleetCursor cursor_;
  std::deque<std::string> kept_;
  std::string line_;
};

}  // namespace

int ReadNats(const Options &o, bool tty) {
  using render::OutputMode;
  switch (o.mode) {
    case OutputMode::kRaw:
    case OutputMode::kVerbose:
    case OutputMode::kShortFields:
    case OutputMode::kShortMonotonic:
      Error("--nats",
            "this output mode needs what only a ring holds; a stream has short, short-iso, "
            "short-precise, short-unix, cat, json and json-pretty");
      return kExitUsage;
    default:
      break;
  }
  std::optional<FleetCursor> start;
  int rc = kExitOk;
  if (!StartCursor(o, &start, &rc)) return rc;
  fleet::Stream st;
  if (int orc = fleet::OpenStream(o, o.follow, start ? start->stream : "", &st); orc >= 0)
    return orc;
  if (start && start->stream != st.name) {
    Error(o.after_cursor.empty() ? o.cursor_file : "--after-cursor",
          "the cursor is of the stream " + start->stream + ", not of " + st.name);
    return kExitError;
  }
  FleetRead read(o, tty, &st);
  for (const auto &[host, filter] : st.readers) read.Add(host, filter);
  return read.Run(start);
}

}  // namespace logsink::logctl
