// logctl_daemon_test.cc: logctl against the real logsinkd: `logctl send`
// delivers records (and fails without a daemon), `cat` and `tail -f` read the
// daemon-written ring, `stats` shows the daemon's live counters.
#include <sys/stat.h>

#include "cli_util.h"
#include "json_lite.h"

namespace logctl_test {
namespace {

constexpr int kHangMs = 10000;  // hang limits only

// A logsinkd on a private socket and ring file.
class Daemon {
 public:
  explicit Daemon(const TempDir &dir) : sock_(dir.File("d.sock")), ring_(dir.File("d.ring")) {
    pid_ = fork();
    if (pid_ == 0) {
      int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      execl(LOGSINK_BIN_DIR "/logsinkd", "logsinkd", "--socket", sock_.c_str(), "--file",
            ring_.c_str(), "--size", "1MiB", "--log-level", "warn", static_cast<char *>(nullptr));
      _exit(127);
    }
    struct stat st;
    int64_t deadline = MonoMs() + kHangMs;
    while (stat(sock_.c_str(), &st) != 0 && MonoMs() < deadline) usleep(5000);
  }
  ~Daemon() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  const std::string &sock() const { return sock_; }
  const std::string &ring() const { return ring_; }

 private:
  std::string sock_, ring_;
  pid_t pid_;
};

// Runs `logctl cat` until it prints at least n lines (the daemon writes the
// partial block on its flush timer).
std::vector<std::string> CatUntil(const std::string &ring, size_t n, const char *mode = "short") {
  int64_t deadline = MonoMs() + kHangMs;
  std::vector<std::string> lines;
  do {
    Result r = RunLogctl({"cat", "-o", mode, "--file", ring});
    lines = Lines(r.out);
    if (lines.size() >= n) break;
    usleep(20000);
  } while (MonoMs() < deadline);
  return lines;
}

TEST(LogctlDaemonTest, SendThenCat) {
  TempDir dir;
  Daemon d(dir);
  Result r = RunLogctl(
      {"send", "--socket", d.sock(), "--level", "err", "--app", "tester", "disk", "sda1", "full"});
  ASSERT_EQ(r.status, 0) << r.err;
  SpawnOptions in;
  in.stdin_data = "line one\nline \x1b[31mtwo\n";
  r = RunLogctl({"send", "--socket", d.sock()}, in);
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = CatUntil(d.ring(), 3);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find(" tester["), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("]: <err> disk sda1 full"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(" logctl["), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("]: <info> line one"), std::string::npos);
  EXPECT_NE(lines[2].find("]: <info> line \\x1b[31mtwo"), std::string::npos) << lines[2];

  lines = CatUntil(d.ring(), 3, "json");
  jsonlite::Value v;
  ASSERT_TRUE(jsonlite::Parse(lines[0], &v)) << lines[0];
  EXPECT_EQ(v["msg"].str, "disk sda1 full");
  EXPECT_EQ(v["app"].str, "tester");
  EXPECT_EQ(v["uid"].u(), static_cast<uint64_t>(getuid()));  // stamped by the daemon
  EXPECT_EQ(v["priority"].i(), 3);

  r = RunLogctl({"verify", "--file", d.ring()});
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(LogctlDaemonTest, FollowSeesRecordsSentThroughTheDaemon) {
  TempDir dir;
  Daemon d(dir);
  ASSERT_EQ(RunLogctl({"send", "--socket", d.sock(), "first"}).status, 0);
  ASSERT_EQ(CatUntil(d.ring(), 1).size(), 1u);
  Proc p({"tail", "-f", "-n", "1", "--file", d.ring()});
  std::string line;
  ASSERT_TRUE(p.ReadLine(&line, kHangMs));
  EXPECT_NE(line.find("<info> first"), std::string::npos) << line;
  for (int i = 0; i < 3; i++) {
    std::string msg = "live " + std::to_string(i);
    ASSERT_EQ(RunLogctl({"send", "--socket", d.sock(), msg}).status, 0);
    ASSERT_TRUE(p.ReadLine(&line, kHangMs)) << "waiting for " << msg;
    EXPECT_NE(line.find("<info> " + msg), std::string::npos) << line;
  }
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Finish(kHangMs).status, 0);
}

TEST(LogctlDaemonTest, StatsShowsLiveCounters) {
  TempDir dir;
  Daemon d(dir);
  ASSERT_EQ(RunLogctl({"send", "--socket", d.sock(), "one"}).status, 0);
  Result r = RunLogctl({"stats", "--file", d.ring(), "--socket", d.sock(), "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  jsonlite::Value v;
  ASSERT_TRUE(jsonlite::Parse(Lines(r.out)[0], &v)) << r.out;
  ASSERT_TRUE(v["daemon"]["running"].b) << r.out;
  EXPECT_FALSE(v["daemon"]["counters"].obj.empty());
  r = RunLogctl({"stats", "--file", d.ring(), "--socket", d.sock()});
  EXPECT_NE(r.out.find("daemon:        running (socket " + d.sock() + ")\n"), std::string::npos)
      << r.out;
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
}  // namespace logctl_test
