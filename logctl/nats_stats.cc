// nats_stats.cc: `logctl stats --nats URL`: per selected host of a fleet's
// stream, its messages, records, records err or worse, records its
// forwarder reported lost, oldest and newest record, rate over that span,
// and its top writers. Reads every record of the selected hosts once (one
// consumer per host, as a read does: nats_host.h); memory is a fetch per
// host and a count per writer label.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "logsink/render/escape.h"
#include "logsink/render/timefmt.h"
#include "nats_host.h"
#include "nats_stream.h"
#include "out.h"
#include "read_setup.h"

namespace logsink::logctl {
namespace {

constexpr size_t kTopWriters = 3;

struct HostStats {
  uint64_t msgs = 0, records = 0, severe = 0, lost = 0;
  uint64_t oldest = UINT64_MAX, newest = 0;
  std::map<std::string, uint64_t> writers;  // label -> records

  double rate() const {
    if (records < 2 || newest <= oldest) return 0;
    return double(records) / (double(newest - oldest) / 1e9);
  }
  std::vector<std::pair<std::string, uint64_t>> top() const {
    std::vector<std::pair<std::string, uint64_t>> v(writers.begin(), writers.end());
    std::stable_sort(v.begin(), v.end(), [](auto &a, auto &b) { return a.second > b.second; });
    if (v.size() > kTopWriters) v.resize(kTopWriters);
    return v;
  }
};

void Count(const fleet::Entry &e, HostStats *h) {
  const fleet::Fields &f = e.f;
  if (e.notice) {
    h->lost += f.notice_count;
    return;
  }
  ++h->records;
  if (!f.dropped && f.priority <= 3) ++h->severe;
  h->oldest = std::min(h->oldest, e.ts_ns);
  h->newest = std::max(h->newest, e.ts_ns);
  ++h->writers[f.app.empty() ? f.comm : f.app];
}

void AppendJson(const fleet::Stream &st, const std::map<std::string, HostStats> &hosts,
                std::string *b) {
  auto it = std::back_inserter(*b);
  *b += "{\"stream\":";
  render::AppendJsonString(b, st.name);
  fmt::format_to(it, ",\"messages\":{},\"bytes\":{},\"hosts_total\":{},\"hosts\":[", st.msgs,
                 st.bytes, st.hosts_total);
  bool first = true;
  for (const auto &[name, h] : hosts) {
    *b += first ? "{\"host\":" : ",{\"host\":";
    first = false;
    render::AppendJsonString(b, name);
    fmt::format_to(it,
                   ",\"messages\":{},\"records\":{},\"err_and_worse\":{},\"lost\":{},"
                   "\"oldest_ts_ns\":{},\"newest_ts_ns\":{},\"rate\":{:.3f},\"top_writers\":[",
                   h.msgs, h.records, h.severe, h.lost, h.records ? h.oldest : 0, h.newest,
                   h.rate());
    bool f2 = true;
    for (const auto &[label, n] : h.top()) {
      *b += f2 ? "{\"app\":" : ",{\"app\":";
      f2 = false;
      render::AppendJsonString(b, label);
      fmt::format_to(it, ",\"records\":{}}}", n);
    }
    *b += "]}";
  }
  *b += "]}\n";
}

void AppendText(const Options &o, const fleet::Stream &st,
                const std::map<std::string, HostStats> &hosts, std::string *b) {
  auto it = std::back_inserter(*b);
  render::TimeFormatter tf(o.utc);
  *b += "stream:        ";
  render::AppendTerminalSafe(b, st.name);
  fmt::format_to(it, " ({} messages, {} bytes)\nhosts:         {} of {}\n", st.msgs, st.bytes,
                 hosts.size(), st.hosts_total);
  for (const auto &[name, h] : hosts) {
    *b += "host ";
    render::AppendTerminalSafe(b, name);
    fmt::format_to(it, ": {} messages, {} records ({} err and worse), {} lost\n", h.msgs, h.records,
                   h.severe, h.lost);
    if (h.records) {
      *b += "  oldest ";
      tf.AppendHuman(h.oldest, b);
      *b += ", newest ";
      tf.AppendHuman(h.newest, b);
      fmt::format_to(it, ", {:.3g} records/s\n  top writers:", h.rate());
      for (const auto &[label, n] : h.top()) {
        *b += ' ';
        render::AppendTerminalSafe(b, label.empty() ? "?" : label);
        fmt::format_to(it, " {} ({:.1f}%)", n, 100.0 * double(n) / double(h.records));
      }
      *b += '\n';
    }
  }
}

}  // namespace

int StatsNats(const Options &o) {
  fleet::Stream st;
  if (int rc = fleet::OpenStream(o, false, "", &st); rc >= 0) return rc;
  std::map<std::string, HostStats> hosts;
  for (const auto &[host, msgs] : st.host_msgs) hosts[host].msgs = msgs;
  std::string why;
  std::map<std::string, std::unique_ptr<fleet::ShownByRing>> shown;  // by host
  for (size_t i = 0; i < st.readers.size(); i++) {
    auto &by_ring = shown[st.readers[i].first];
    if (!by_ring) by_ring = std::make_unique<fleet::ShownByRing>();
    fleet::HostReader r(st.readers[i].first, st.readers[i].second, i, by_ring.get());
    if (!r.Open(st.js, st.name, 0, st.last_seq, &why)) {
      Error("--nats", why);
      return kExitError;
    }
    HostStats &h = hosts[r.host()];
    fleet::Entry e;
    while (r.Next(&e, &why)) Count(e, &h);
    if (!why.empty()) {
      Error("--nats", why);
      return kExitError;
    }
  }
  Out out(STDOUT_FILENO);
  if (o.json)
    AppendJson(st, hosts, out.buf());
  else
    AppendText(o, st, hosts, out.buf());
  return FinishOutput(&out, "stdout");
}

}  // namespace logsink::logctl
