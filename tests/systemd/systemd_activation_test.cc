// systemd_activation_test.cc: logsinkd under systemd's own activation tool
// and notify protocol: records sent before the daemon ever ran survive
// (systemd-socket-activate), READY=1 only once the ring is open, STATUS=.
#include <gtest/gtest.h>

#include <regex>

#include "daemon/harness.h"

namespace {

using namespace lstest;

int BindDgram(const std::string &path) {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Every notify datagram received until `done` says stop or the hang limit.
std::vector<std::string> Collect(int fd, const std::function<bool(const std::string &)> &done) {
  std::vector<std::string> got;
  auto deadline = Clock::now() + kHang;
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) continue;
    got.emplace_back(buf, size_t(n));
    if (done(got.back())) break;
  }
  return got;
}

std::string Join(const std::vector<std::string> &v) {
  std::string s;
  for (auto &m : v) s += m + "|";
  return s;
}

// Starts `systemd-socket-activate -l <sock> logsinkd <args>`; it execs
// logsinkd in place (same pid) when the first connection arrives.
pid_t SpawnActivate(const std::string &sock, const std::vector<std::string> &args,
                    const std::string &err_path) {
  pid_t pid = fork();
  if (pid == 0) {
    int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(e, 1);
    dup2(e, 2);
    for (const char *v : {"LOGSINK_SOCKET", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID",
                          "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID"})
      unsetenv(v);
    std::string bin = std::string(LOGSINK_BIN_DIR) + "/logsinkd";
    std::vector<std::string> all = {"systemd-socket-activate", "-l", sock, bin};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (auto &a : all) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

std::string Exe(pid_t pid) {
  char buf[4096];
  ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, size_t(n)) : "";
}

// HELLO, one site "rec %d" and n records carrying 0..n-1, in frames of 100.
std::string Batch(const std::string &app, int n) {
  std::string b = Hello(1, app) + Intern(1, 6, 7, "rec %d", "act.c");
  for (int i = 0; i < n; i += 100) {
    std::vector<Rec> recs;
    for (int k = i; k < std::min(n, i + 100); k++)
      recs.emplace_back(1, 1000 + uint64_t(k), std::vector<Arg>{Arg::I(k)});
    b += Records(1, recs);
  }
  return b;
}

// Checks that the ring holds exactly the n records of app, in order.
void ExpectRecords(const std::vector<Got> &got, const std::string &app, int n) {
  int seen = 0;
  for (const Got &g : got) {
    if (g.app != app) continue;
    ASSERT_EQ(g.kind, logsink::storage::Record::Kind::kRecord) << app;
    EXPECT_EQ(g.fmt, "rec %d");
    EXPECT_EQ(g.args, EncodeArgs({Arg::I(seen)})) << app << " record " << seen;
    EXPECT_EQ(g.pid, uint32_t(getpid())) << "SO_PEERCRED of the connecting process";
    seen++;
  }
  EXPECT_EQ(seen, n) << app;
}

TEST(SystemdActivation, RecordsSentBeforeTheDaemonStartedAreStored) {
  TempDir dir;
  std::string sock = dir / "s.sock", ring = dir / "logsink.ring", err = dir / "activate.err";
  pid_t pid = SpawnActivate(
      sock,
      {"--socket", dir / "unused.sock", "--file", ring, "--size", "1MiB", "--log-level", "info"},
      err);
  ASSERT_GT(pid, 0);
  // systemd-socket-activate says "Listening on ... as 3." after listen().
  auto deadline = Clock::now() + kHang;
  while (ReadAll(err).find("Listening on") == std::string::npos && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_NE(ReadAll(err).find("Listening on"), std::string::npos) << ReadAll(err);

  // Freeze the activator: no logsinkd exists while the clients connect and
  // write, so everything below waits in the kernel (backlog + socket buffers).
  ASSERT_EQ(kill(pid, SIGSTOP), 0);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, WUNTRACED), pid);
  ASSERT_TRUE(WIFSTOPPED(st));
  constexpr int kA = 1000, kB = 500;
  {
    Client a(sock);  // connects, writes everything, and is gone before logsinkd runs
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE(a.Send(Batch("early-a", kA)));
  }
  Client b(sock);  // stays connected
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(b.Send(Batch("early-b", kB)));
  EXPECT_NE(Exe(pid).find("systemd-socket-activate"), std::string::npos) << Exe(pid);
  EXPECT_NE(access(ring.c_str(), F_OK), 0) << "the ring exists before logsinkd ran";

  ASSERT_EQ(kill(pid, SIGCONT), 0);
  uint64_t stored = 0;
  deadline = Clock::now() + kHang;
  while (Clock::now() < deadline) {
    stored = b.Stats()["next_record_seq"];
    if (stored >= kA + kB) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(stored, uint64_t(kA + kB)) << ReadAll(err);
  EXPECT_NE(Exe(pid).find("logsinkd"), std::string::npos) << "same pid, logsinkd exec'd";
  EXPECT_NE(access((dir / "unused.sock").c_str(), F_OK), 0) << "bound its own socket";

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(WaitExit(pid), 0) << ReadAll(err);
  EXPECT_NE(ReadAll(err).find("the socket from systemd"), std::string::npos) << ReadAll(err);
  auto got = ReadRing(ring);
  ExpectRecords(got, "early-a", kA);
  ExpectRecords(got, "early-b", kB);
}

TEST(SystemdNotify, ReadyOnlyOnceTheRingIsOpenAndTheSocketServed) {
  TempDir dir;
  std::string notify = dir / "notify";
  int nfd = BindDgram(notify);
  ASSERT_GE(nfd, 0);
  Daemon d(dir);
  d.child_setup = [notify] { setenv("NOTIFY_SOCKET", notify.c_str(), 1); };
  ASSERT_TRUE(d.Start()) << d.Stderr();
  auto seen = Collect(nfd, [](const std::string &m) { return m.find("READY=1") != m.npos; });
  ASSERT_FALSE(seen.empty());
  ASSERT_NE(seen.back().find("READY=1"), std::string::npos) << Join(seen);
  // Right at READY=1: the ring file is a valid ring and a client is served.
  std::unique_ptr<logsink::storage::RingReader> r;
  CountingReporter rep;
  EXPECT_TRUE(
      logsink::storage::RingReader::Open(logsink::storage::Env::Default(), d.ring, &rep, &r).ok());
  Client c(d.socket);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.Stats()["next_record_seq"], 0u);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  close(nfd);
}

TEST(SystemdNotify, NoReadyWhenTheRingCannotBeOpened) {
  TempDir dir;
  Daemon holder(dir);  // holds the ring file's writer lock
  ASSERT_TRUE(holder.Start()) << holder.Stderr();
  std::string notify = dir / "notify";
  int nfd = BindDgram(notify);
  ASSERT_GE(nfd, 0);
  ProcResult r =
      RunDaemon(dir, {"--socket", dir / "second.sock", "--file", holder.ring, "--size", "1MiB"},
                [notify] { setenv("NOTIFY_SOCKET", notify.c_str(), 1); });
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("in use by another writer"), std::string::npos) << r.err;
  std::string all;
  char buf[4096];
  ssize_t n;
  while ((n = recv(nfd, buf, sizeof buf, MSG_DONTWAIT)) > 0) all += std::string(buf, size_t(n));
  EXPECT_EQ(all.find("READY=1"), std::string::npos) << all;
  EXPECT_EQ(holder.Stop(), 0) << holder.Stderr();
  close(nfd);
}

// The issue asks for `STATUS=` with a short line of counters, updated now and
// then: a first one by READY=1, then one that shows the records logged.
TEST(SystemdNotify, StatusShowsTheRecordCount) {
  TempDir dir;
  std::string notify = dir / "notify";
  int nfd = BindDgram(notify);
  ASSERT_GE(nfd, 0);
  Daemon d(dir);
  d.child_setup = [notify] { setenv("NOTIFY_SOCKET", notify.c_str(), 1); };
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const std::regex records(R"((^|\n)STATUS=[^\n]*\b([0-9]+) records?\b)");
  auto count = [&](const std::string &m) -> long {
    std::smatch mm;
    return std::regex_search(m, mm, records) ? std::stol(mm[2]) : -1;
  };
  auto first = Collect(nfd, [&](const std::string &m) { return count(m) >= 0; });
  ASSERT_FALSE(first.empty()) << "no notify message at all";
  ASSERT_EQ(count(first.back()), 0) << Join(first);

  constexpr int kN = 321;
  Client c(d.socket);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.Send(Batch("status", kN)));
  EXPECT_EQ(c.Stats()["next_record_seq"], uint64_t(kN));
  auto later = Collect(nfd, [&](const std::string &m) { return count(m) == kN; });
  ASSERT_FALSE(later.empty()) << "no STATUS= update";
  EXPECT_EQ(count(later.back()), kN) << Join(later);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  close(nfd);
}

}  // namespace
