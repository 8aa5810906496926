// spdlog_sink_test.cc: logsink/spdlog_sink.h in spdlog programs against the
// real logsinkd, read back with the real logctl: a synchronous logger's
// records keep their level, text, logger name (field `logger`) and source
// file and line; liblogsink's levels at the source skip what is below them;
// flush() sends; an async logger's burst lands whole and in order; a daemon
// restart in the middle of logging loses nothing; a program that aborts
// after logging has its records sent by liblogsink's crash handler; the
// bounded site table counts what passes it.
#define SPDLOG_ACTIVE_LEVEL SPDLOG_LEVEL_TRACE  // every SPDLOG_LOGGER_* macro logs
#include <gtest/gtest.h>
#include <logsink/spdlog_sink.h>
#include <signal.h>
#include <spdlog/async.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/daemon_process.h"
#include "common/process.h"
#include "common/ring_check.h"
#include "common/temp_dir.h"

namespace logsink::test {
namespace {

using json = nlohmann::json;

ls_stats Stats(ls_client *c) {
  ls_stats s{};
  s.size = sizeof s;
  EXPECT_EQ(ls_get_stats(c, &s), 0);
  return s;
}

// logctl --file ring ARGS..., its standard output.
std::string Logctl(const std::string &ring, std::vector<std::string> args) {
  args.insert(args.begin(), {"--file", ring});
  ProcResult r = RunProcess(BinPath("logctl"), args);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

// The records of the ring as logctl -o json prints them, once it holds at
// least n records (the daemon writes partial blocks on a timer).
std::vector<json> JsonRecords(const std::string &ring, uint64_t n,
                              std::vector<std::string> filter = {}) {
  EXPECT_TRUE(WaitUntil([&] { return NextRecordSeq(ring) >= n; }, kHang, Ms(10)))
      << NextRecordSeq(ring) << " of " << n << " records";
  filter.insert(filter.begin(), {"-o", "json"});
  std::vector<json> v;
  for (const std::string &l : Lines(Logctl(ring, filter))) v.push_back(json::parse(l));
  return v;
}

// The messages of the ring (logctl -o cat), once it holds at least n records.
std::vector<std::string> Messages(const std::string &ring, uint64_t n,
                                  std::vector<std::string> filter = {}) {
  EXPECT_TRUE(WaitUntil([&] { return NextRecordSeq(ring) >= n; }, kHang, Ms(10)))
      << NextRecordSeq(ring) << " of " << n << " records";
  filter.insert(filter.begin(), {"-o", "cat"});
  return Lines(Logctl(ring, filter));
}

std::vector<std::string> Numbered(const std::string &prefix, int from, int to) {
  std::vector<std::string> v;
  for (int i = from; i < to; i++) v.push_back(prefix + std::to_string(i));
  return v;
}

bool EndsWith(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Records dropped and reported to the daemon (drop reports in the ring).
uint64_t DroppedReported(const std::string &ring) {
  uint64_t n = 0;
  for (const OwnedRecord &r : ReadRing(ring)) n += r.dropped() ? r.dropped_count : 0;
  return n;
}

class SpdlogSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("LOGSINK_LEVEL");
    ASSERT_TRUE(daemon_.Start()) << daemon_.Stderr();
  }
  void TearDown() override { spdlog::shutdown(); }  // the registry's loggers and async pool
  ls_client *Open(const char *app, const ls_options *o = nullptr) {
    ls_client *c = ls_open(daemon_.socket.c_str(), app, o);
    EXPECT_NE(c, nullptr);
    return c;
  }
  TempDir dir_;
  Daemon daemon_{dir_, {"--size", "16MiB"}};
};

// One spdlog logger through the sink: each spdlog level at its logsink
// level, the text spdlog formatted, the logger's name as the field
// `logger`, the macro's file and line as the record's; a record without a
// location has none; a second logger on the same sink names itself.
TEST_F(SpdlogSinkTest, SyncLoggerKeepsLevelTextLoggerAndSourceLocation) {
  ls_client *c = Open("spdsync");
  auto sink = std::make_shared<logsink::spdlog_sink_mt>(c);
  auto web = std::make_shared<spdlog::logger>("web", sink);
  auto db = std::make_shared<spdlog::logger>("db", sink);
  web->set_level(spdlog::level::trace);
  web->set_pattern("%v!!");  // not applied: logsink stores the text
  const int lines[] = {
      (SPDLOG_LOGGER_TRACE(web, "trace {}", 0), __LINE__),
      (SPDLOG_LOGGER_DEBUG(web, "debug {}", 1), __LINE__),
      (SPDLOG_LOGGER_INFO(web, "user {} port {}", "bob", 2222), __LINE__),
      (SPDLOG_LOGGER_WARN(web, "warn {:.2f}", 3.14159), __LINE__),
      (SPDLOG_LOGGER_ERROR(web, "error {}", "disk"), __LINE__),
      (SPDLOG_LOGGER_CRITICAL(web, "critical {}", 5), __LINE__),
  };
  db->warn("no location {}", 7);
  ASSERT_EQ(ls_flush(c), 0);
  ls_close(c);

  const std::vector<json> v = JsonRecords(daemon_.ring, 7);
  ASSERT_EQ(v.size(), 7u);
  const std::string msgs[] = {"trace 0",   "debug 1",    "user bob port 2222",
                              "warn 3.14", "error disk", "critical 5"};
  const int priorities[] = {LS_DEBUG, LS_DEBUG, LS_INFO, LS_WARNING, LS_ERR, LS_CRIT};
  for (int i = 0; i < 6; i++) {
    SCOPED_TRACE(v[i].dump());
    EXPECT_EQ(v[i]["msg"], msgs[i]);
    EXPECT_EQ(v[i]["priority"], priorities[i]);
    EXPECT_EQ(v[i]["fields"], json::parse(R"({"logger":"web"})"));
    EXPECT_TRUE(EndsWith(v[i]["file"], "spdlog_sink_test.cc"));
    EXPECT_EQ(v[i]["line"], lines[i]);
    EXPECT_EQ(v[i]["app"], "spdsync");
    EXPECT_EQ(v[i]["fmt"], "%.*s");
  }
  EXPECT_EQ(v[6]["msg"], "no location 7");
  EXPECT_EQ(v[6]["priority"], LS_WARNING);
  EXPECT_EQ(v[6]["fields"], json::parse(R"({"logger":"db"})"));
  EXPECT_EQ(v[6]["file"], "");
  EXPECT_EQ(v[6]["line"], 0);
  // The field is what logctl matches.
  EXPECT_EQ(Lines(Logctl(daemon_.ring, {"-o", "cat", "logger=db"})),
            std::vector<std::string>{"no location 7"});
}

// A site per (file, line, level), found by the file's content: the same
// name in two buffers is one site; one buffer that changes is two files.
TEST_F(SpdlogSinkTest, SitesAreFoundByFileContentLineAndLevel) {
  ls_client *c = Open("spdsites");
  auto lg = std::make_shared<spdlog::logger>("sites", std::make_shared<logsink::spdlog_sink_st>(c));
  std::string a = "dyn/one.cc", b = "dyn/one.cc";
  lg->log(spdlog::source_loc{a.c_str(), 5, "f"}, spdlog::level::info, "a");
  lg->log(spdlog::source_loc{b.c_str(), 5, "f"}, spdlog::level::info, "b");
  lg->log(spdlog::source_loc{b.c_str(), 5, "f"}, spdlog::level::warn, "c");
  b = "dyn/two.cc";
  lg->log(spdlog::source_loc{b.c_str(), 5, "f"}, spdlog::level::info, "d");
  ASSERT_EQ(ls_flush(c), 0);
  ls_close(c);
  const std::vector<json> v = JsonRecords(daemon_.ring, 4);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0]["site"], v[1]["site"]);
  EXPECT_NE(v[1]["site"], v[2]["site"]) << "another level";
  EXPECT_NE(v[1]["site"], v[3]["site"]) << "another file";
  EXPECT_EQ(v[2]["file"], "dyn/one.cc");
  EXPECT_EQ(v[3]["file"], "dyn/two.cc");
  EXPECT_EQ(v[3]["line"], 5);
}

// liblogsink's levels at the source apply to the sink's records (spdlog's
// own level lets everything through here).
TEST_F(SpdlogSinkTest, RecordsBelowTheClientsLevelAreSkippedAtTheSource) {
  ls_options o;
  ls_options_init(&o);
  o.level = LS_INFO;
  ls_client *c = Open("spdlevel", &o);
  auto lg = std::make_shared<spdlog::logger>("lv", std::make_shared<logsink::spdlog_sink_mt>(c));
  lg->set_level(spdlog::level::trace);
  SPDLOG_LOGGER_TRACE(lg, "t");
  SPDLOG_LOGGER_DEBUG(lg, "d");
  SPDLOG_LOGGER_INFO(lg, "i");
  lg->debug("d2");
  SPDLOG_LOGGER_WARN(lg, "w");
  ASSERT_EQ(ls_flush(c), 0);
  const ls_stats s = Stats(c);
  EXPECT_EQ(s.logged, 2u);
  EXPECT_EQ(s.dropped, 0u);
  ls_close(c);
  EXPECT_EQ(Messages(daemon_.ring, 2), (std::vector<std::string>{"i", "w"}));
}

// logger->flush() is ls_flush: with no timer or batch to send them, the
// records are in the socket when it returns.
TEST_F(SpdlogSinkTest, FlushSendsWhatIsStaged) {
  ls_options o;
  ls_options_init(&o);
  o.send_delay_ms = 0;
  o.flush_interval_ms = 60000;
  o.flush_level = -1;
  ls_client *c = Open("spdflush", &o);
  ASSERT_EQ(ls_flush(c), 0);  // connected
  auto lg = std::make_shared<spdlog::logger>("fl", std::make_shared<logsink::spdlog_sink_mt>(c));
  for (int i = 0; i < 10; i++) SPDLOG_LOGGER_INFO(lg, "f {}", i);
  EXPECT_EQ(Stats(c).logged, 10u);
  lg->flush();
  EXPECT_EQ(Stats(c).sent, 10u);
  EXPECT_EQ(Messages(daemon_.ring, 10), Numbered("f ", 0, 10));
  ls_close(c);
}

// A sink with a client of its own: the app name given, records sent when
// the sink goes away (ls_close); an ls_open that fails throws.
TEST_F(SpdlogSinkTest, OwnedClientIsOpenedAndClosedWithTheSink) {
  {
    auto lg = logsink::spdlog_logger_st("own", daemon_.socket.c_str(), "spdowned");
    EXPECT_EQ(spdlog::get("own"), lg) << "registered like spdlog's own factories";
    for (int i = 0; i < 3; i++) SPDLOG_LOGGER_INFO(lg, "o {}", i);
    spdlog::drop("own");
  }  // the last reference: the sink's ls_close sends
  const std::vector<json> v = JsonRecords(daemon_.ring, 3);
  ASSERT_EQ(v.size(), 3u);
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(v[i]["msg"], "o " + std::to_string(i));
    EXPECT_EQ(v[i]["app"], "spdowned");
    EXPECT_EQ(v[i]["fields"], json::parse(R"({"logger":"own"})"));
  }
  const std::string long_path(200, 'x');  // longer than sun_path
  EXPECT_THROW(logsink::spdlog_sink_mt(long_path.c_str(), "x"), spdlog::spdlog_ex);
}

// spdlog's async logger (async_factory: its queue of 8192, blocking when
// full, one worker) in front of the sink: a burst of 100,000 records lands
// whole and in order.
TEST_F(SpdlogSinkTest, AsyncLoggerBurstLandsWholeAndInOrder) {
  constexpr int kN = 100000;
  ls_client *c = Open("spdasync");
  auto lg = logsink::spdlog_logger_mt<spdlog::async_factory>("async", c);
  int line = 0;
  for (int i = 0; i < kN; i++) line = (SPDLOG_LOGGER_INFO(lg, "n {}", i), __LINE__);
  lg.reset();
  spdlog::shutdown();  // the worker empties the queue, then joins
  ASSERT_EQ(ls_flush(c), 0);
  const ls_stats s = Stats(c);
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.sent, uint64_t(kN));
  ls_close(c);
  EXPECT_EQ(Messages(daemon_.ring, kN), Numbered("n ", 0, kN));
  const std::vector<json> last = JsonRecords(daemon_.ring, kN, {"-n", "1"});
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0]["fields"], json::parse(R"({"logger":"async"})"));
  EXPECT_EQ(last[0]["line"], line);
  EXPECT_EQ(DroppedReported(daemon_.ring), 0u);
}

// logsinkd stopped (SIGTERM) and started again while a thread logs through
// the sink: what was logged before, during and after the restart lands once,
// in order (the client keeps what the daemon did not read for the next one,
// within block_timeout_ms: PROTOCOL.md, "Restarts").
TEST_F(SpdlogSinkTest, DaemonRestartInTheMiddleOfLoggingLosesNothing) {
  constexpr int kBefore = 1000, kDuring = 50000, kAfter = 1000;
  ls_options o;
  ls_options_init(&o);
  o.block_timeout_ms = 60000;  // the window: longer than any restart here
  ls_client *c = Open("spdrestart", &o);
  auto lg = std::make_shared<spdlog::logger>("rs", std::make_shared<logsink::spdlog_sink_mt>(c));
  for (int i = 0; i < kBefore; i++) SPDLOG_LOGGER_INFO(lg, "before {}", i);
  ASSERT_EQ(ls_flush(c), 0);
  ASSERT_TRUE(WaitUntil([&] { return NextRecordSeq(daemon_.ring) >= kBefore; }, kHang, Ms(10)));

  ASSERT_EQ(daemon_.Stop(SIGTERM), 0) << daemon_.Stderr();
  // The thread logs while the daemon is down, while it starts and after.
  std::thread during([&] {
    for (int i = 0; i < kDuring; i++) SPDLOG_LOGGER_INFO(lg, "during {}", i);
  });
  const bool started = daemon_.Start();
  during.join();
  ASSERT_TRUE(started) << daemon_.Stderr();
  for (int i = 0; i < kAfter; i++) SPDLOG_LOGGER_INFO(lg, "after {}", i);
  // The client reconnects in the background; flush until it has.
  int rc = -1;
  ASSERT_TRUE(WaitUntil([&] { return (rc = ls_flush(c)) == 0; }, kHang, Ms(5))) << rc;
  const ls_stats s = Stats(c);
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.sent, uint64_t(kBefore + kDuring + kAfter));
  EXPECT_EQ(s.reconnects, 1u);
  ls_close(c);

  std::vector<std::string> want = Numbered("before ", 0, kBefore);
  for (auto &m : Numbered("during ", 0, kDuring)) want.push_back(m);
  for (auto &m : Numbered("after ", 0, kAfter)) want.push_back(m);
  EXPECT_EQ(Messages(daemon_.ring, want.size()), want);
  EXPECT_EQ(DroppedReported(daemon_.ring), 0u);
}

// A program logs through the sink and aborts: SIGABRT goes through
// liblogsink's crash handler, which sends the staged records. The control
// run, the same program with the handler off, lands none of them: nothing
// else would have sent them (its 1 MiB thread buffer is larger than the
// daemon's shared slots, so it is staged in the process's own memory).
TEST_F(SpdlogSinkTest, RecordsOfAProgramThatAbortsLand) {
  constexpr int kN = 1000;
  auto run = [&](const char *app, bool handler) {
    SubprocessOptions opt;
    opt.child_setup = [handler] {
      if (!handler) setenv("LOGSINK_CRASH_HANDLER", "0", 1);
    };
    return RunProcess(BinPath("spdlog_sink_app"),
                      {"crash", daemon_.socket, app, std::to_string(kN)}, opt);
  };
  ProcResult r = run("nohandler", false);
  EXPECT_EQ(r.status, 128 + SIGABRT) << r.err;
  r = run("crashed", true);
  EXPECT_EQ(r.status, 128 + SIGABRT) << r.err;

  const std::vector<std::string> got = Messages(daemon_.ring, kN, {"--app", "crashed"});
  EXPECT_EQ(got, Numbered("crash ", 0, kN));
  const std::vector<json> last = JsonRecords(daemon_.ring, kN, {"--app", "crashed", "-n", "1"});
  ASSERT_EQ(last.size(), 1u);
  EXPECT_TRUE(EndsWith(last[0]["file"], "spdlog_sink_app.cc")) << last[0].dump();
  EXPECT_GT(last[0]["line"], 0);
  EXPECT_EQ(last[0]["fields"], json::parse(R"({"logger":"crash"})"));
  // Everything either process sent is in the ring once the daemon stopped.
  ASSERT_EQ(daemon_.Stop(SIGTERM), 0) << daemon_.Stderr();
  EXPECT_EQ(Lines(Logctl(daemon_.ring, {"-o", "cat", "--app", "nohandler"})).size(), 0u);
}

// Past LOGSINK_SPDLOG_SITES_MAX sites, records keep everything but their
// location and are counted; a site already made is still found.
TEST_F(SpdlogSinkTest, SitesPastTheTableLoseTheirLocationAndAreCounted) {
  ls_client *c = Open("spdmany");
  auto lg = std::make_shared<spdlog::logger>("many", std::make_shared<logsink::spdlog_sink_st>(c));
  const logsink::spdlog_site_stats before = logsink::spdlog_sites();
  ASSERT_EQ(before.limit, size_t(LOGSINK_SPDLOG_SITES_MAX));
  const int room = int(before.limit - before.sites);
  for (int i = 1; i <= room + 3; i++)
    lg->log(spdlog::source_loc{"many_sites.cc", i, "f"}, spdlog::level::info, "site {}", i);
  logsink::spdlog_site_stats after = logsink::spdlog_sites();
  EXPECT_EQ(after.sites, after.limit);
  EXPECT_EQ(after.overflowed - before.overflowed, 3u);
  lg->log(spdlog::source_loc{"many_sites.cc", 1, "f"}, spdlog::level::info, "again");
  after = logsink::spdlog_sites();
  EXPECT_EQ(after.overflowed - before.overflowed, 3u) << "an existing site is found";
  ASSERT_EQ(ls_flush(c), 0);
  EXPECT_EQ(Stats(c).errors, 0u);
  ls_close(c);

  const std::vector<json> v = JsonRecords(daemon_.ring, uint64_t(room) + 4);
  ASSERT_EQ(v.size(), size_t(room) + 4);
  for (int i = 0; i < room; i++) {
    ASSERT_EQ(v[i]["file"], "many_sites.cc") << v[i].dump();
    ASSERT_EQ(v[i]["line"], i + 1) << v[i].dump();
  }
  for (int i = room; i < room + 3; i++) {
    EXPECT_EQ(v[i]["msg"], "site " + std::to_string(i + 1));
    EXPECT_EQ(v[i]["file"], "");
    EXPECT_EQ(v[i]["line"], 0);
    EXPECT_EQ(v[i]["fields"], json::parse(R"({"logger":"many"})"));
  }
  EXPECT_EQ(v[room + 3]["msg"], "again");
  EXPECT_EQ(v[room + 3]["line"], 1);
}

}  // namespace
}  // namespace logsink::test
