// fleet_read_test.cc: `logctl --nats URL` reading a fleet's log back from
// NATS JetStream. Three hosts (web-1, web-2, db-1), each a real logsinkd
// with a ring of its own into which the real `logctl send` logs records,
// the hosts in turn, and a real logsink-forward shipping that ring on the
// subject logs.HOST into the stream LOGS (capturing logs.>; another
// stream, AUDIT, captures audit.> and must be left alone). logctl must
// print the selected hosts' records merged by time, the host added (a
// column in -o short, the last key "host" of -o json's line, which is
// otherwise the forwarder's line byte for byte); apply --host globs, -p,
// --app, --grep, --until, -n and -r to the merged sequence; show once a
// record the stream holds twice (again under a new Nats-Msg-Id, as a
// batching forwarder sends it); follow (-f) new records of the selected
// hosts, each once across a forwarder's SIGKILL and restart; resume after
// a cursor showing nothing twice and skipping nothing, and say how many
// records the stream no longer held; refuse what cannot work on a stream
// (--cursor, FIELD=VALUE: exit 2) and exit 1 when no server listens.
// Nothing is random: the records, their levels and the order in which
// they are logged are fixed.
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/daemon_process.h"
#include "common/process.h"
#include "common/servers.h"
#include "common/temp_dir.h"
#include "fleet_js.h"
#include "logsink/storage/cursor.h"

namespace logsink::test {
namespace {

// One record of the fleet; the records are logged in this order, so their
// time order across the hosts is this order too.
struct Sent {
  std::string host, level, app, msg;
};

const std::vector<std::string> kHosts = {"web-1", "web-2", "db-1"};
constexpr int kRecords = 12;

// Record i: host i % 3, level i % 4 (each host gets each level), app by
// parity. The message names no host, so that a host name on an output
// line is the host column, never the message.
std::vector<Sent> AllSent() {
  static const char *const kLevels[] = {"err", "info", "crit", "warning"};
  std::vector<Sent> v;
  for (int i = 0; i < kRecords; ++i) {
    char msg[32];
    std::snprintf(msg, sizeof msg, "n=%02d %s", i, kLevels[i % 4]);
    v.push_back({kHosts[size_t(i % 3)], kLevels[i % 4], i % 2 ? "api" : "worker", msg});
  }
  return v;
}

std::vector<Sent> Where(const std::function<bool(const Sent &)> &keep) {
  std::vector<Sent> v;
  for (const Sent &s : AllSent())
    if (keep(s)) v.push_back(s);
  return v;
}

std::vector<std::string> Messages(const std::vector<Sent> &v) {
  std::vector<std::string> m;
  for (const Sent &s : v) m.push_back(s.msg);
  return m;
}

bool ErrOrWorse(const Sent &s) { return s.level == "err" || s.level == "crit"; }

// A host of the fleet: its logsinkd (socket and ring in dir) and its
// logsink-forward, which publishes that ring on logs.NAME (ready = its
// sd_notify READY=1, its stderr in dir/forward.log).
struct Host {
  explicit Host(const std::string &n) : name(n), dir("logsink-fleet-" + n), daemon(dir) {}
  bool StartForwarder(const std::string &url, std::string *err) {
    DaemonOptions o;
    o.bin = BinPath("logsink-forward");
    o.args = {"--to",          url,         "--subject",     "logs." + name,
              "--file",        daemon.ring, "--cursor-file", dir / "cursor",
              "--ack-timeout", "1s"};
    o.stderr_path = dir / "forward.log";
    return forwarder.Start(o, err);
  }
  std::string ForwardLog() const { return ReadFile(dir / "forward.log"); }

  std::string name;
  TempDir dir;
  Daemon daemon;
  DaemonProcess forwarder;
};

// What the tests share: nats-server with the streams, the hosts (stopped
// once LOGS holds their records) and what LOGS holds.
struct Fleet {
  TempDir dir{"logsink-fleet"};
  NatsServer nats;
  std::vector<std::unique_ptr<Host>> hosts;
  std::vector<Js::Msg> stored;  // LOGS, in stream order
};

// Starts the fleet and fills LOGS; "" or what went wrong.
std::string StartFleet(Fleet *f) {
  const auto t0 = Clock::now();
  std::string err;
  NatsServerOptions o;
  o.dir = f->dir.path();
  o.name = "fleet";
  if (!f->nats.Start(o, &err)) return "nats-server: " + err;
  Js js(f->nats.url());
  if (!js.ok()) return "cannot connect to " + f->nats.url();
  // AUDIT first: a reader that takes the first stream it finds reads the
  // wrong one.
  if (!js.AddStream("AUDIT", "audit.>") || !js.AddStream("LOGS", "logs.>"))
    return "cannot create the streams";
  if (!js.Publish("audit.web-1", R"({"seq":0,"ts_ns":1,"level":"err","app":"x","msg":"audit"})",
                  {{"Nats-Msg-Id", "audit-1"}}))
    return "cannot publish into AUDIT";
  for (const std::string &name : kHosts) {
    f->hosts.push_back(std::make_unique<Host>(name));
    if (!f->hosts.back()->daemon.Start())
      return "logsinkd of " + name + ": " + f->hosts.back()->daemon.Stderr();
  }
  std::map<std::string, Host *> by_name;
  for (auto &h : f->hosts) by_name[h->name] = h.get();
  // `logctl send` returns once the daemon stored the record: the records
  // are stored in this order, their timestamps rising across the hosts.
  for (const Sent &s : AllSent()) {
    Host *h = by_name[s.host];
    ProcResult r = RunProcess(BinPath("logctl"), {"send", "--socket", h->daemon.socket, "-p",
                                                  s.level, "--app", s.app, s.msg});
    if (r.status != 0)
      return "logctl send " + s.msg + ": exit " + std::to_string(r.status) + "\n" + r.err;
  }
  for (auto &h : f->hosts)
    if (int st = h->daemon.Stop(); st != 0)
      return "logsinkd of " + h->name + " exited " + std::to_string(st) + "\n" + h->daemon.Stderr();
  for (auto &h : f->hosts)
    if (!h->StartForwarder(f->nats.url(), &err))
      return "logsink-forward of " + h->name + ": " + err + "\n" + h->ForwardLog();
  if (!WaitUntil([&] { return js.Count("LOGS") >= kRecords; }, kHang, Ms(5))) {
    std::string logs;
    for (auto &h : f->hosts) logs += "\n[" + h->name + "]\n" + h->ForwardLog();
    return "LOGS holds " + std::to_string(js.Count("LOGS")) + " of " + std::to_string(kRecords) +
           " messages" + logs;
  }
  for (auto &h : f->hosts)
    if (int st = h->forwarder.Stop(SIGTERM); st != 0)
      return "logsink-forward of " + h->name + " exited " + std::to_string(st) + "\n" +
             h->ForwardLog();
  if (!js.All("LOGS", &f->stored)) return "cannot read LOGS back";
  std::printf("[setup] 3 hosts, %d records in LOGS in %lld ms\n", kRecords,
              (long long)std::chrono::duration_cast<Ms>(Clock::now() - t0).count());
  return "";
}

std::string Join(const std::vector<std::string> &v) {
  std::string s;
  for (const std::string &a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

class FleetReadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fleet_ = new Fleet;
    error_ = StartFleet(fleet_);
  }
  static void TearDownTestSuite() {
    delete fleet_;
    fleet_ = nullptr;
  }
  void SetUp() override {
    hung_ = false;
    ASSERT_TRUE(error_.empty()) << error_;
  }

  // logctl --nats URL args...; *cmd: the command line, for messages. Once
  // one hung (killed after kHang), the test's later reads are not run:
  // failures, at once.
  static ProcResult Read(const std::vector<std::string> &args, std::string *cmd,
                         const std::string &url = "") {
    std::vector<std::string> all = {"--nats", url.empty() ? fleet_->nats.url() : url};
    all.insert(all.end(), args.begin(), args.end());
    *cmd = "logctl " + Join(all);
    if (hung_) {
      ADD_FAILURE() << *cmd << ": not run, an earlier logctl of this test hung";
      return {};
    }
    ProcResult r = RunProcess(BinPath("logctl"), all, {}, kHang);
    if (r.status == -1) {
      hung_ = true;
      ADD_FAILURE() << *cmd << ": hung (killed after " << kHang.count() << " ms)\n" << r.err;
    }
    return r;
  }
  // Its output lines; a test failure when it does not exit 0.
  static std::vector<std::string> ReadLines(const std::vector<std::string> &args,
                                            const std::string &url = "") {
    std::string cmd;
    ProcResult r = Read(args, &cmd, url);
    if (r.status != -1) {  // -1: Read() said so
      EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
    }
    return Lines(r.out);
  }

  // The JSON line the forwarder published for the record whose message is
  // msg ("" when LOGS holds none).
  static std::string Published(const std::string &msg) {
    for (const Js::Msg &m : fleet_->stored) {
      nlohmann::json j = nlohmann::json::parse(m.body, nullptr, false);
      if (!j.is_discarded() && j.value("msg", "") == msg) return m.body;
    }
    return "";
  }

  // out (-o json) holds the records of want, in this order: each line the
  // forwarder's line with "host" added as its last key.
  static void ExpectJson(const std::vector<std::string> &out, const std::vector<Sent> &want,
                         const std::string &cmd) {
    ASSERT_EQ(out.size(), want.size()) << cmd << "\n" << Join(out);
    for (size_t k = 0; k < want.size(); ++k) {
      nlohmann::json j = nlohmann::json::parse(out[k], nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << cmd << "\nline " << k << ": " << out[k];
      EXPECT_EQ(j.value("host", ""), want[k].host) << cmd << "\nline " << k << ": " << out[k];
      EXPECT_EQ(j.value("msg", ""), want[k].msg) << cmd << "\nline " << k << ": " << out[k];
      EXPECT_EQ(j.value("level", ""), want[k].level) << cmd << "\nline " << k << ": " << out[k];
      EXPECT_EQ(j.value("app", ""), want[k].app) << cmd << "\nline " << k << ": " << out[k];
      std::string body = Published(want[k].msg);
      ASSERT_TRUE(!body.empty() && body.back() == '}') << want[k].msg << ": " << body;
      EXPECT_EQ(out[k], body.substr(0, body.size() - 1) + ",\"host\":\"" + want[k].host + "\"}")
          << cmd;
    }
  }

  static inline Fleet *fleet_ = nullptr;
  static inline std::string error_;
  static inline bool hung_ = false;
};

// The setup itself: LOGS holds each record once, on its host's subject, as
// the forwarder's JSON line under a cursor id (AUDIT its one message).
TEST_F(FleetReadTest, TheStreamHoldsEachHostsRecordsOnceOnItsSubject) {
  const std::vector<Js::Msg> &stored = fleet_->stored;
  ASSERT_EQ(stored.size(), size_t(kRecords));
  std::map<std::string, Sent> sent;
  for (const Sent &s : AllSent()) sent[s.msg] = s;
  std::set<std::string> seen, ids;
  for (const Js::Msg &m : stored) {
    nlohmann::json j = nlohmann::json::parse(m.body, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << m.body;
    std::string msg = j.value("msg", "");
    ASSERT_EQ(sent.count(msg), 1u) << m.body;
    EXPECT_TRUE(seen.insert(msg).second) << m.body;
    EXPECT_EQ(m.subject, "logs." + sent[msg].host) << m.body;
    EXPECT_EQ(j.value("level", ""), sent[msg].level) << m.body;
    EXPECT_EQ(j.value("app", ""), sent[msg].app) << m.body;
    storage::Cursor c;
    std::string why;
    EXPECT_TRUE(storage::ParseCursor(m.id, &c, &why)) << why;
    EXPECT_TRUE(ids.insert(m.id).second) << m.id;
  }
  Js js(fleet_->nats.url());
  EXPECT_EQ(js.Count("AUDIT"), 1);
}

// --host 'web-*' -p err -o json: exactly the err-or-worse records of web-1
// and web-2, in time order, each with its host; nothing of db-1.
TEST_F(FleetReadTest, HostGlobAndLevelGiveTheWebHostsErrorsInTimeOrderAsJson) {
  std::vector<std::string> args = {"--stream", "LOGS", "--host", "web-*",     "-p",
                                   "err",      "-o",   "json",   "--no-pager"};
  std::vector<Sent> want = Where([](const Sent &s) { return s.host != "db-1" && ErrOrWorse(s); });
  ASSERT_EQ(want.size(), 4u);  // two hosts, crit and err each
  ExpectJson(ReadLines(args), want, "logctl --nats URL " + Join(args));
  // --json is -o json.
  ExpectJson(ReadLines({"--host", "web-*", "-p", "err", "--json", "--no-pager"}), want, "--json");
}

// -o short: the host is a column after the time, before the rest of the
// local short line; -o cat: the messages alone.
TEST_F(FleetReadTest, ShortShowsTheHostColumnAndCatTheMessagesOnly) {
  std::vector<Sent> want = AllSent();
  std::vector<std::string> out = ReadLines({"-o", "short", "--no-pager"});
  ASSERT_EQ(out.size(), want.size()) << Join(out);
  for (size_t k = 0; k < want.size(); ++k) {
    const std::string &line = out[k];
    size_t host = line.find(" " + want[k].host + " ");
    size_t msg = line.rfind(want[k].msg);
    EXPECT_NE(host, std::string::npos) << line;
    ASSERT_NE(msg, std::string::npos) << line;
    EXPECT_EQ(msg + want[k].msg.size(), line.size()) << line;  // the message ends it
    EXPECT_LT(host, msg) << line;
    for (const std::string &other : kHosts)
      if (other != want[k].host) {
        EXPECT_EQ(line.find(other), std::string::npos) << line;
      }
  }
  EXPECT_EQ(ReadLines({"-o", "cat", "--no-pager"}), Messages(want));
  EXPECT_EQ(ReadLines({"--host", "db-1", "-o", "cat", "--no-pager"}),
            Messages(Where([](const Sent &s) { return s.host == "db-1"; })));
}

// -n N: the last N of the merged, filtered sequence; -r: newest first.
TEST_F(FleetReadTest, LastNAndReverseApplyToTheMergedSequence) {
  std::vector<std::string> all = Messages(AllSent());
  EXPECT_EQ(ReadLines({"-n", "2", "-o", "cat", "--no-pager"}),
            std::vector<std::string>(all.end() - 2, all.end()));
  EXPECT_EQ(ReadLines({"-r", "-o", "cat", "--no-pager"}),
            std::vector<std::string>(all.rbegin(), all.rend()));
  std::vector<std::string> web2 = Messages(Where([](const Sent &s) { return s.host == "web-2"; }));
  EXPECT_EQ(ReadLines({"--host", "web-2", "-n", "2", "-o", "cat", "--no-pager"}),
            std::vector<std::string>(web2.end() - 2, web2.end()));
  std::vector<std::string> errs = Messages(Where(ErrOrWorse));
  EXPECT_EQ(ReadLines({"-p", "err", "-r", "-o", "cat", "--no-pager"}),
            std::vector<std::string>(errs.rbegin(), errs.rend()));
}

// No --host: every host; no --stream: the stream capturing logs.> (not
// AUDIT); plain `logctl --nats URL` is `cat`. --host is repeatable.
TEST_F(FleetReadTest, WithoutHostOrStreamEveryHostOfTheLogsStreamIsRead) {
  ExpectJson(ReadLines({"-o", "json", "--no-pager"}), AllSent(), "-o json");
  std::vector<std::string> plain = ReadLines({"--no-pager"});
  std::vector<Sent> want = AllSent();
  ASSERT_EQ(plain.size(), want.size()) << Join(plain);
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_NE(plain[k].find(" " + want[k].host + " "), std::string::npos) << plain[k];
    EXPECT_NE(plain[k].find(want[k].msg), std::string::npos) << plain[k];
  }
  EXPECT_EQ(ReadLines({"--host", "db-1", "--host", "web-[2]", "-o", "cat", "--no-pager"}),
            Messages(Where([](const Sent &s) { return s.host != "web-1"; })));
}

// A record the stream holds twice is shown once. The copies are made as a
// batching forwarder makes them, under new ids: batches (ls1-RING-FIRST-
// LAST, headers Logsink-Ring, -First-Seq, -Last-Seq, -Records) holding
// records the stream already holds one per message. Another nats-server
// holds LOGS's messages and the copies, so that the shared stream stays
// as the forwarders left it.
TEST_F(FleetReadTest, ARecordTheStreamHoldsTwiceIsShownOnce) {
  TempDir dir("logsink-fleet-again");
  NatsServer nats;
  NatsServerOptions o;
  o.dir = dir.path();
  o.name = "again";
  std::string err;
  ASSERT_TRUE(nats.Start(o, &err)) << err;
  Js js(nats.url());
  ASSERT_TRUE(js.ok());
  ASSERT_TRUE(js.AddStream("LOGS", "logs.>"));
  // Each host's messages by record number.
  std::map<std::string, std::map<uint64_t, const Js::Msg *>> by_host;
  std::map<std::string, std::string> ring_of;
  for (const Js::Msg &m : fleet_->stored) {
    ASSERT_TRUE(js.Publish(m.subject, m.body, {{"Nats-Msg-Id", m.id}})) << m.id;
    storage::Cursor c;
    std::string why;
    ASSERT_TRUE(storage::ParseCursor(m.id, &c, &why)) << why;
    by_host[m.subject.substr(5)][c.seq] = &m;
    ring_of[m.subject.substr(5)] = c.ring_id;
  }
  // A batch of web-2's records 1 and 2, one of db-1's record 0.
  auto batch = [&](const std::string &host, uint64_t first, uint64_t last) {
    std::string body;
    for (uint64_t seq = first; seq <= last; ++seq) {
      if (!by_host[host].count(seq)) return false;
      body += by_host[host][seq]->body + "\n";
    }
    char hex[20];
    std::snprintf(hex, sizeof hex, "%llx", (unsigned long long)last);
    const std::string &ring = ring_of[host];
    return js.Publish("logs." + host, body,
                      {{"Nats-Msg-Id", storage::FormatCursor(ring, first) + "-" + hex},
                       {"Logsink-Ring", ring},
                       {"Logsink-First-Seq", std::to_string(first)},
                       {"Logsink-Last-Seq", std::to_string(last)},
                       {"Logsink-Records", std::to_string(last - first + 1)}});
  };
  ASSERT_TRUE(batch("web-2", 1, 2));
  ASSERT_TRUE(batch("db-1", 0, 0));
  ASSERT_EQ(js.Count("LOGS"), kRecords + 2);  // the stream holds three records twice

  ExpectJson(ReadLines({"-o", "json", "--no-pager"}, nats.url()), AllSent(), "twice, -o json");
  EXPECT_EQ(ReadLines({"-r", "-o", "cat", "--no-pager"}, nats.url()).size(), size_t(kRecords));
  EXPECT_EQ(ReadLines({"--host", "web-2", "-o", "cat", "--no-pager"}, nats.url()),
            Messages(Where([](const Sent &s) { return s.host == "web-2"; })));
}

// What a stream cannot do is refused with exit 2, naming --nats: a
// record's cursor (--cursor, here the cursor of a record in LOGS) and
// FIELD=VALUE matches.
TEST_F(FleetReadTest, CursorAndFieldMatchesAreRefused) {
  for (const std::vector<std::string> &args : std::vector<std::vector<std::string>>{
           {"--cursor", fleet_->stored[0].id, "--no-pager"}, {"app=api", "--no-pager"}}) {
    std::string cmd;
    ProcResult r = Read(args, &cmd);
    if (r.status == -1) continue;  // hung: a failure already
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("--nats"), std::string::npos) << cmd << "\n" << r.err;
    EXPECT_EQ(r.out, "") << cmd;
  }
}

// A source logctl cannot choose alone is refused with a reason: two
// streams that each capture part of multi.> (name one with --stream), and
// `stats --watch`, which reports a local daemon.
TEST_F(FleetReadTest, SeveralStreamsAndStatsWatchAreRefusedWithTheirReason) {
  Js js(fleet_->nats.url());
  ASSERT_TRUE(js.ok());
  ASSERT_TRUE(js.AddStream("MULTIA", "multi.a"));
  ASSERT_TRUE(js.AddStream("MULTIB", "multi.b"));
  std::string cmd;
  ProcResult r = Read({"--subject-prefix", "multi", "--no-pager"}, &cmd);
  EXPECT_NE(r.status, 0) << cmd;
  EXPECT_NE(r.err.find("several streams capture multi.>"), std::string::npos) << cmd << "\n"
                                                                              << r.err;
  EXPECT_NE(r.err.find("MULTIA"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--stream"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << cmd;
  r = Read({"--subject-prefix", "multi", "--stream", "MULTIA", "-o", "cat", "--no-pager"}, &cmd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
  r = RunProcess(BinPath("logctl"), {"stats", "--nats", fleet_->nats.url(), "--watch=1"}, {},
                 kHang);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--watch"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// Filters on the records' own fields: --app, --grep, --until.
TEST_F(FleetReadTest, AppGrepAndUntilFilterTheMergedRecords) {
  EXPECT_EQ(ReadLines({"--app", "api", "-o", "cat", "--no-pager"}),
            Messages(Where([](const Sent &s) { return s.app == "api"; })));
  EXPECT_EQ(ReadLines({"--grep", "n=0[3-5]", "-o", "cat", "--no-pager"}),
            (std::vector<std::string>{"n=03 warning", "n=04 err", "n=05 info"}));
  EXPECT_EQ(ReadLines({"--until", "@1", "-o", "cat", "--no-pager"}), std::vector<std::string>{});
  EXPECT_EQ(ReadLines({"--since", "@1", "-o", "cat", "--no-pager"}), Messages(AllSent()));
}

// $LOGSINK_NATS stands for --nats in tail and cat (not where --file names
// a ring); --subject-prefix reads another layout: AUDIT's audit.HOST.
TEST_F(FleetReadTest, TheEnvironmentAndASubjectPrefixChooseTheSource) {
  SubprocessOptions env;
  const std::string url = fleet_->nats.url();
  env.child_setup = [url] { setenv("LOGSINK_NATS", url.c_str(), 1); };
  ProcResult r = RunProcess(BinPath("logctl"), {"-o", "cat", "--no-pager"}, env, kHang);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out), Messages(AllSent()));
  r = RunProcess(BinPath("logctl"), {"--file", "/nonexistent/ring", "--no-pager"}, env, kHang);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("/nonexistent/ring"), std::string::npos) << r.err;
  EXPECT_EQ(ReadLines({"--subject-prefix", "audit", "-o", "cat", "--no-pager"}),
            std::vector<std::string>{"audit"});
  std::string cmd;
  r = Read({"--subject-prefix", "a..b", "--no-pager"}, &cmd);
  EXPECT_EQ(r.status, 2) << cmd << "\n" << r.err;
}

// stats --nats --json: per host its messages, records, err-or-worse
// count and top writers, as logged.
TEST_F(FleetReadTest, StatsCountsEachHostsRecordsAndWriters) {
  ProcResult r =
      RunProcess(BinPath("logctl"),
                 {"stats", "--nats", fleet_->nats.url(), "--host", "web-*", "--json"}, {}, kHang);
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j.value("stream", ""), "LOGS");
  EXPECT_EQ(j.value("hosts_total", 0), 3);
  ASSERT_EQ(j["hosts"].size(), 2u) << r.out;
  for (const nlohmann::json &h : j["hosts"]) {
    const std::string host = h.value("host", "");
    std::vector<Sent> mine = Where([&](const Sent &s) { return s.host == host; });
    EXPECT_EQ(h.value("records", 0u), mine.size()) << h.dump();
    EXPECT_EQ(h.value("messages", 0u), mine.size()) << h.dump();
    size_t severe = 0;
    std::map<std::string, uint64_t> apps;
    for (const Sent &s : mine) {
      severe += ErrOrWorse(s);
      ++apps[s.app];
    }
    EXPECT_EQ(h.value("err_and_worse", 0u), severe) << h.dump();
    EXPECT_EQ(h.value("lost", 1u), 0u) << h.dump();
    std::map<std::string, uint64_t> top;
    for (const nlohmann::json &w : h["top_writers"])
      top[w.value("app", "")] = w.value("records", 0u);
    EXPECT_EQ(top, apps) << h.dump();
  }
  r = RunProcess(BinPath("logctl"), {"stats", "--nats", fleet_->nats.url()}, {}, kHang);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string &host : kHosts)
    EXPECT_NE(r.out.find("host " + host + ":"), std::string::npos) << r.out;
}

// The cursor --show-cursor prints (the last line) and what follows it.
std::string CursorOf(std::vector<std::string> *lines) {
  const std::string mark = "-- cursor: ";
  if (lines->empty() || lines->back().rfind(mark, 0) != 0) return "";
  std::string c = lines->back().substr(mark.size());
  lines->pop_back();
  return c;
}

// -f on a fleet of its own: new records of the selected hosts appear (and
// none of the other's), each once, also across a SIGKILL and restart of a
// forwarder, and a selected host that first publishes meanwhile is found;
// stopped by SIGTERM it writes its cursor file, after which a read shows
// nothing again and then only what came since.
TEST(FleetFollow, NewRecordsOfTheSelectedHostsShowOnceAcrossAForwarderKill) {
  Fleet f;
  std::string err = StartFleet(&f);
  ASSERT_TRUE(err.empty()) << err;
  const std::string url = f.nats.url();
  // Where the stream ends now: the follower shows what comes after it,
  // however soon it subscribes.
  ProcResult r = RunProcess(BinPath("logctl"),
                            {"--nats", url, "-n", "0", "--show-cursor", "--no-pager"}, {}, kHang);
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> out = Lines(r.out);
  const std::string start = CursorOf(&out);
  ASSERT_FALSE(start.empty()) << r.out;
  ASSERT_TRUE(out.empty()) << r.out;

  TempDir dir("logsink-fleet-follow");
  const std::string cursor_file = dir / "fleet.cursor";
  WriteFile(cursor_file, start + "\n");
  Subprocess follower(BinPath("logctl"), {"--nats", url, "--host", "web-1", "--host", "db-*", "-f",
                                          "--cursor-file", cursor_file, "-o", "cat"});
  std::map<std::string, Host *> by_name;
  for (auto &h : f.hosts) by_name[h->name] = h.get();
  for (auto &h : f.hosts) {
    ASSERT_TRUE(h->daemon.Start()) << h->daemon.Stderr();
    ASSERT_TRUE(h->StartForwarder(url, &err)) << err << "\n" << h->ForwardLog();
  }
  auto send = [&](const std::string &host, const std::string &msg) {
    ProcResult s =
        RunProcess(BinPath("logctl"), {"send", "--socket", by_name[host]->daemon.socket, msg});
    ASSERT_EQ(s.status, 0) << s.err;
  };
  std::vector<std::string> want, shown;
  auto expect_shown = [&](size_t n) {
    std::string line;
    const auto t0 = Clock::now();
    while (shown.size() < n && follower.ReadLine(&line, kHang)) shown.push_back(line);
    std::printf("[follow] %zu lines, the last %lld ms after it was sent\n", shown.size(),
                (long long)std::chrono::duration_cast<Ms>(Clock::now() - t0).count());
  };
  for (int i = 0; i < 3; ++i) {
    for (const char *host : {"web-1", "web-2", "db-1"}) {
      const std::string msg = std::string("follow ") + host + " " + std::to_string(i);
      send(host, msg);
      if (std::string(host) != "web-2") want.push_back(msg);
    }
  }
  expect_shown(want.size());
  ASSERT_EQ(shown, want) << follower.Finish().err;
  // web-1's forwarder killed between two records; its restart resends
  // what it had not committed: nothing shows twice.
  Host &web1 = *by_name["web-1"];
  web1.forwarder.Stop(SIGKILL);
  for (int i = 3; i < 6; ++i) {
    const std::string msg = "follow web-1 " + std::to_string(i);
    send("web-1", msg);
    want.push_back(msg);
  }
  ASSERT_TRUE(web1.StartForwarder(url, &err)) << err << "\n" << web1.ForwardLog();
  expect_shown(want.size());
  ASSERT_EQ(shown, want);
  // The last record is in the stream: a record that showed twice would
  // come within the reorder window; one more record, then its line, proves
  // nothing else waited.
  send("db-1", "follow db-1 last");
  want.push_back("follow db-1 last");
  expect_shown(want.size());
  EXPECT_EQ(shown, want);
  // A host that first publishes while -f runs and matches --host is
  // found (the follower lists the subjects again every 5 s).
  Js js(url);
  ASSERT_TRUE(js.ok());
  const std::string ring9 = "00112233445566778899aabbccddeeff";
  ASSERT_TRUE(js.Publish("logs.db-9",
                         "{\"seq\":0,\"seq_str\":\"0\",\"ts_ns\":1,\"ts_ns_str\":\"" +
                             std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count()) +
                             "\",\"level\":\"info\",\"priority\":6,\"app\":\"new\","
                             "\"msg\":\"follow db-9 new host\"}",
                         {{"Nats-Msg-Id", "ls1-" + ring9 + "-0"}}));
  ASSERT_TRUE(js.Publish("logs.zz-1", "{\"seq\":0,\"ts_ns\":1,\"msg\":\"not selected\"}",
                         {{"Nats-Msg-Id", "ls1-" + ring9 + "-1"}}));
  want.push_back("follow db-9 new host");
  expect_shown(want.size());
  EXPECT_EQ(shown, want);
  follower.Signal(SIGTERM);
  ProcResult fr = follower.Finish();
  EXPECT_EQ(fr.status, 0) << fr.err;
  EXPECT_EQ(fr.out, "") << "lines after the last one expected";
  // Resuming after the follower's cursor: nothing; then only what is new.
  std::vector<std::string> resume = {"--nats", url,    "--host",        "web-1",
                                     "--host", "db-*", "--cursor-file", cursor_file,
                                     "-o",     "cat",  "--no-pager"};
  r = RunProcess(BinPath("logctl"), resume, {}, kHang);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  send("web-1", "after the cursor");
  ASSERT_TRUE(WaitUntil(
      [&] {
        r = RunProcess(BinPath("logctl"), resume, {}, kHang);
        return r.status != 0 || !r.out.empty();
      },
      kHang, Ms(20)));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "after the cursor\n");
  for (auto &h : f.hosts) {
    EXPECT_EQ(h->forwarder.Stop(SIGTERM), 0) << h->ForwardLog();
    EXPECT_EQ(h->daemon.Stop(), 0) << h->daemon.Stderr();
  }
}

// A cursor resumes each host where it stopped: nothing twice, nothing
// skipped; when the stream no longer holds what came after the cursor (its
// limits removed it: here a purge), the number of records gone shows in
// their place. Another nats-server, with web-1's messages copied.
TEST_F(FleetReadTest, ACursorResumesAndCountsWhatTheStreamNoLongerHolds) {
  TempDir dir("logsink-fleet-cursor");
  NatsServer nats;
  NatsServerOptions o;
  o.dir = dir.path();
  o.name = "cursor";
  std::string err;
  ASSERT_TRUE(nats.Start(o, &err)) << err;
  Js js(nats.url());
  ASSERT_TRUE(js.ok());
  ASSERT_TRUE(js.AddStream("LOGS", "logs.>"));
  std::vector<const Js::Msg *> web1;
  for (const Js::Msg &m : fleet_->stored)
    if (m.subject == "logs.web-1") web1.push_back(&m);
  ASSERT_EQ(web1.size(), 4u);
  std::vector<std::string> msgs = Messages(Where([](const Sent &s) { return s.host == "web-1"; }));
  ASSERT_TRUE(js.Publish(web1[0]->subject, web1[0]->body, {{"Nats-Msg-Id", web1[0]->id}}));
  std::vector<std::string> out =
      ReadLines({"--show-cursor", "-o", "cat", "--no-pager"}, nats.url());
  const std::string c1 = CursorOf(&out);
  ASSERT_FALSE(c1.empty());
  EXPECT_EQ(out, std::vector<std::string>{msgs[0]});
  for (size_t k = 1; k < web1.size(); ++k)
    ASSERT_TRUE(js.Publish(web1[k]->subject, web1[k]->body, {{"Nats-Msg-Id", web1[k]->id}}));
  // After c1: the other three, once.
  EXPECT_EQ(ReadLines({"--after-cursor", c1, "-o", "cat", "--no-pager"}, nats.url()),
            std::vector<std::string>(msgs.begin() + 1, msgs.end()));
  // The stream loses its first three messages: c1's and the next two.
  jsOptions po;
  jsOptions_Init(&po);
  po.Stream.Purge.Sequence = 4;
  natsConnection *nc = nullptr;
  jsCtx *jctx = nullptr;
  ASSERT_EQ(natsConnection_ConnectTo(&nc, nats.url().c_str()), NATS_OK);
  ASSERT_EQ(natsConnection_JetStream(&jctx, nc, nullptr), NATS_OK);
  jsErrCode jerr;
  EXPECT_EQ(js_PurgeStream(jctx, "LOGS", &po, &jerr), NATS_OK);
  jsCtx_Destroy(jctx);
  natsConnection_Destroy(nc);
  out = ReadLines({"--after-cursor", c1, "-o", "cat", "--no-pager"}, nats.url());
  ASSERT_EQ(out.size(), 2u) << Join(out);
  EXPECT_EQ(out[0],
            "-- web-1: 2 records were gone from the stream (its limits) before this read got to "
            "them --");
  EXPECT_EQ(out[1], msgs[3]);
  // A cursor of another stream is refused.
  std::string cmd;
  ProcResult r =
      Read({"--stream", "LOGS", "--after-cursor", "lsn1:OTHER~web-1=1:1:-:0", "--no-pager"}, &cmd,
           nats.url());
  EXPECT_EQ(r.status, 1) << cmd << "\n" << r.err;
  EXPECT_NE(r.err.find("OTHER"), std::string::npos) << r.err;
  // Not a fleet cursor: a usage error.
  r = Read({"--after-cursor", web1[0]->id, "--no-pager"}, &cmd, nats.url());
  EXPECT_EQ(r.status, 2) << cmd << "\n" << r.err;
}

// A URL where no server listens: exit 1, with a message.
TEST(FleetReadDown, AServerThatDoesNotListenExitsOne) {
  std::vector<std::string> args = {"--nats", "nats://127.0.0.1:" + std::to_string(FreePort()),
                                   "--no-pager"};
  ProcResult r = RunProcess(BinPath("logctl"), args, {}, kHang);
  EXPECT_EQ(r.status, 1) << "logctl " << Join(args) << "\n" << r.err;
  EXPECT_NE(r.err, "");
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace logsink::test
