// logctl_daemon_test.cc: logctl against the real logsinkd: `logctl send`
// delivers records (and fails without a daemon), `cat` and `tail -f` read the
// daemon-written ring, `stats` shows the daemon's live counters.
#include <regex>

#include "cli_util.h"
#include "common/daemon_process.h"

namespace logsink::test {
namespace {

constexpr int kHangMs = 10000;  // hang limits only

// Runs `logctl cat` until it prints at least n lines (the daemon writes the
// partial block on its flush timer).
std::vector<std::string> CatUntil(const std::string &ring, size_t n, const char *mode = "short") {
  std::vector<std::string> lines;
  WaitUntil(
      [&] {
        lines = Lines(RunLogctl({"cat", "-o", mode, "--file", ring}).out);
        return lines.size() >= n;
      },
      kHang, Ms(20));
  return lines;
}

// Starts the daemon d, sends one line through it and waits until its ring
// shows it.
void StartAndSendOne(Daemon *d, const std::string &text) {
  ASSERT_TRUE(d->Start()) << d->Stderr();
  ASSERT_EQ(RunLogctl({"send", "--socket", d->socket, text}).status, 0);
  ASSERT_EQ(CatUntil(d->ring, 1).size(), 1u);
}

TEST(LogctlDaemonTest, SendThenCat) {
  TempDir dir;
  Daemon d(dir);  // tests/common: ready on READY=1
  ASSERT_TRUE(d.Start()) << d.Stderr();
  Result r = RunLogctl(
      {"send", "--socket", d.socket, "--level", "err", "--app", "tester", "disk", "sda1", "full"});
  ASSERT_EQ(r.status, 0) << r.err;
  SpawnOptions in;
  in.stdin_data = "line one\nline \x1b[31mtwo\n";
  r = RunLogctl({"send", "--socket", d.socket}, in);
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = CatUntil(d.ring, 3);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find(" tester(logctl)["), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("]: <err> disk sda1 full"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(" logctl["), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("]: <info> line one"), std::string::npos);
  EXPECT_NE(lines[2].find("]: <info> line \\x1b[31mtwo"), std::string::npos) << lines[2];

  lines = CatUntil(d.ring, 3, "json");
  json v = ParseJson(lines[0]);
  ASSERT_FALSE(v.is_discarded()) << lines[0];
  EXPECT_EQ(v["msg"].get<std::string>(), "disk sda1 full");
  EXPECT_EQ(v["app"].get<std::string>(), "tester");
  EXPECT_EQ(v["uid"].get<uint64_t>(), static_cast<uint64_t>(getuid()));  // stamped by the daemon
  EXPECT_EQ(v["priority"].get<int64_t>(), 3);

  r = RunLogctl({"verify", "--file", d.ring});
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(LogctlDaemonTest, FollowSeesRecordsSentThroughTheDaemon) {
  TempDir dir;
  Daemon d(dir);  // tests/common: ready on READY=1
  ASSERT_NO_FATAL_FAILURE(StartAndSendOne(&d, "first"));
  Proc p({"tail", "-f", "-n", "1", "--file", d.ring});
  std::string line;
  ASSERT_TRUE(p.ReadLine(&line, kHangMs));
  EXPECT_NE(line.find("<info> first"), std::string::npos) << line;
  for (int i = 0; i < 3; i++) {
    std::string msg = "live " + std::to_string(i);
    ASSERT_EQ(RunLogctl({"send", "--socket", d.socket, msg}).status, 0);
    ASSERT_TRUE(p.ReadLine(&line, kHangMs)) << "waiting for " << msg;
    EXPECT_NE(line.find("<info> " + msg), std::string::npos) << line;
  }
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Finish(kHangMs).status, 0);
}

TEST(LogctlDaemonTest, StatsShowsLiveCounters) {
  TempDir dir;
  Daemon d(dir);  // tests/common: ready on READY=1
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ASSERT_EQ(RunLogctl({"send", "--socket", d.socket, "one"}).status, 0);
  Result r = RunLogctl({"stats", "--file", d.ring, "--socket", d.socket, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  ASSERT_TRUE(v["daemon"]["running"].get<bool>()) << r.out;
  EXPECT_FALSE(v["daemon"]["counters"].empty());
  EXPECT_GT(v["daemon"]["counters"]["uptime_ms"].get<uint64_t>(), 0u);
  r = RunLogctl({"stats", "--file", d.ring, "--socket", d.socket});
  EXPECT_NE(r.out.find("daemon:        running (socket " + d.socket + "), up "), std::string::npos)
      << r.out;
}

// stats --watch prints a line per interval with the records stored
// since the line before; their sum is what was sent; SIGTERM ends it (0).
TEST(LogctlDaemonTest, StatsWatchCountsWhatArrives) {
  TempDir dir;
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  Proc p({"stats", "--file", d.ring, "--socket", d.socket, "--watch=0.1"});
  std::string line;
  do ASSERT_TRUE(p.ReadLine(&line, 10000)) << "no header";
  while (line.rfind("every 0.1s: ", 0) != 0);
  SpawnOptions in;
  in.stdin_data = "a\nb\nc\nd\ne\n";
  ASSERT_EQ(RunLogctl({"send", "--socket", d.socket}, in).status, 0);
  uint64_t sum = 0;
  while (sum < 5) {
    ASSERT_TRUE(p.ReadLine(&line, 10000)) << "sum " << sum;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m,
                                  std::regex("  records ([0-9]+) \\([0-9.]+/s\\)  "
                                             "dropped 0 \\(0.0/s\\)  connections [0-9]+$")))
        << line;
    sum += std::stoull(m[1]);
  }
  EXPECT_EQ(sum, 5u);
  // A restart: said, and the watch goes on counting the new daemon from zero.
  ASSERT_EQ(d.Stop(), 0) << d.Stderr();
  do ASSERT_TRUE(p.ReadLine(&line, 10000));
  while (line.find("  the daemon is not running") == std::string::npos);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  do ASSERT_TRUE(p.ReadLine(&line, 10000));
  while (line.find("(the daemon restarted)") == std::string::npos);
  EXPECT_TRUE(std::regex_search(line, std::regex("  records [0-9] \\("))) << line;
  p.Signal(SIGTERM);
  Result r = p.Finish(10000);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(RunLogctl({"stats", "--watch=0", "--socket", d.socket}).status, 2);
}

// With only LOGSINK_SOCKET set, every command reads the ring of the
// daemon on that socket (asked with RING_REQ), not the system default.
TEST(LogctlDaemonTest, LogsinkSocketAlonePicksTheDaemonsRing) {
  TempDir dir;
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  SpawnOptions env;
  env.env = {{"LOGSINK_SOCKET", d.socket}};
  ASSERT_EQ(RunLogctl({"send", "hello from the demo"}, env).status, 0);
  Result r = RunLogctlUntil({"tail", "-n", "1"}, env, [](const Result &r) {
    return r.out.find("<info> hello from the demo") != std::string::npos;
  });
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("<info> hello from the demo"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  r = RunLogctl({"cat", "-o", "json"}, env);
  ASSERT_EQ(Lines(r.out).size(), 1u) << r.out << r.err;
  EXPECT_EQ(RunLogctl({"verify"}, env).status, 0);
  // --socket does the same without the environment.
  r = RunLogctl({"tail", "-n", "1", "--socket", d.socket});
  EXPECT_NE(r.out.find("hello from the demo"), std::string::npos) << r.out << r.err;
  // stats without --file describes the daemon's ring, with its counters.
  r = RunLogctl({"stats", "--json"}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_TRUE(v["daemon"]["writes_this_file"].get<bool>()) << r.out;
  EXPECT_FALSE(v["daemon"]["counters"].empty()) << r.out;
  EXPECT_EQ(v["records"].get<uint64_t>(), 1u);
}

// A daemon started with a relative --file answers RING_REQ with the absolute
// path, so logctl finds it from any directory.
TEST(LogctlDaemonTest, RelativeRingPathIsAnsweredAbsolute) {
  TempDir dir;
  Daemon d(dir, {"--file", "rel.ring"});
  const std::string where = dir.path();
  d.child_setup = [where] {
    if (chdir(where.c_str()) != 0) _exit(126);
  };
  ASSERT_TRUE(d.Start()) << d.Stderr();
  SpawnOptions env;
  env.env = {{"LOGSINK_SOCKET", d.socket}};
  ASSERT_EQ(RunLogctl({"send", "relative"}, env).status, 0);
  // Run from the test's directory.
  Result r = RunLogctlUntil({"cat", "-o", "cat"}, env,
                            [](const Result &r) { return r.out == "relative\n"; });
  EXPECT_EQ(r.out, "relative\n") << r.err;
  r = RunLogctl({"stats", "--json"}, env);
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  char *abs = realpath((dir / "rel.ring").c_str(), nullptr);
  ASSERT_NE(abs, nullptr);
  EXPECT_EQ(v["file"].get<std::string>(), std::string(abs));
  EXPECT_EQ(v["daemon"]["ring"].get<std::string>(), std::string(abs));
  free(abs);
}

// $LOGSINK_FILE comes before the daemon's ring, and --file before both.
TEST(LogctlDaemonTest, FileFlagThenLogsinkFileThenTheDaemon) {
  TempDir dir;
  Daemon d(dir);
  ASSERT_NO_FATAL_FAILURE(StartAndSendOne(&d, "in the daemon's ring"));
  std::string other = dir.File("other.ring");
  {
    TestRing t(other);
    uint32_t s = t.Intern(6, "in the other ring");
    t.Add(s, "", "", kT0);
    t.Close();
  }
  SpawnOptions env;
  env.env = {{"LOGSINK_SOCKET", d.socket}, {"LOGSINK_FILE", other}};
  Result r = RunLogctl({"cat"}, env);
  EXPECT_NE(r.out.find("in the other ring"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("in the daemon's ring"), std::string::npos) << r.out;
  r = RunLogctl({"cat", "--file", d.ring}, env);
  EXPECT_NE(r.out.find("in the daemon's ring"), std::string::npos) << r.out << r.err;
  env.env = {{"LOGSINK_SOCKET", d.socket}, {"LOGSINK_FILE", ""}};  // empty: unset
  r = RunLogctl({"cat"}, env);
  EXPECT_NE(r.out.find("in the daemon's ring"), std::string::npos) << r.out << r.err;
}

// stats --file of a copy of the daemon's ring (the same identity, another
// file) or of another ring (another identity): the daemon runs but writes
// another file, so its live counters are not printed next to its numbers.
TEST(LogctlDaemonTest, StatsOfAnotherRingShowsNoLiveCounters) {
  TempDir dir;
  Daemon d(dir);
  ASSERT_NO_FATAL_FAILURE(StartAndSendOne(&d, "one"));
  std::string copy = dir.File("copy.ring");
  WriteFile(copy, ReadFile(d.ring));
  SpawnOptions env;
  env.env = {{"LOGSINK_SOCKET", d.socket}};
  for (const std::string &file : {copy, dir.File("fresh.ring")}) {
    if (file != copy) {
      TestRing t(file);  // another ring: another identity
      t.Close();
    }
    Result r = RunLogctl({"stats", "--file", file, "--json"}, env);
    ASSERT_EQ(r.status, 0) << r.err;
    json v = ParseJson(Lines(r.out)[0]);
    ASSERT_FALSE(v.is_discarded()) << r.out;
    EXPECT_TRUE(v["daemon"]["running"].get<bool>()) << r.out;
    EXPECT_FALSE(v["daemon"]["writes_this_file"].get<bool>()) << file << ": " << r.out;
    EXPECT_FALSE(v["daemon"].contains("counters")) << file << ": " << r.out;
    r = RunLogctl({"stats", "--file", file}, env);
    EXPECT_NE(r.out.find("writing another ring: "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("next_record_seq="), std::string::npos) << r.out;
  }
}

TEST(LogctlDaemonTest, SendFailsWithoutADaemon) {
  TempDir dir;
  std::string sock = dir.File("nobody.sock");
  Result r = RunLogctl({"send", "--socket", sock, "hello"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: send: daemon not running (socket " + sock + ")\n");
  r = RunLogctl({"send", "--level", "loud", "x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("logctl: send: bad level 'loud'", 0), 0u);
}

}  // namespace
}  // namespace logsink::test
