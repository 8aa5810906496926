// systemd_activation_test.cc: logsinkd under systemd's own activation tool
// and notify protocol: records sent before the daemon ever ran survive
// (systemd-socket-activate), READY=1 only once the ring is open, STATUS= without counters.
#include <gtest/gtest.h>

#include <regex>

#include "daemon/harness.h"

namespace logsink::test {
namespace {

// `systemd-socket-activate -l <sock> logsinkd <args>` (stdout and stderr in
// one pipe); it execs logsinkd in place (same pid) when the first connection
// arrives.
std::unique_ptr<Subprocess> SpawnActivate(const std::string &sock,
                                          const std::vector<std::string> &args) {
  std::vector<std::string> all = {"-l", sock, BinPath("logsinkd")};
  all.insert(all.end(), args.begin(), args.end());
  SubprocessOptions o;
  o.merge_stderr = true;
  return std::make_unique<Subprocess>("/usr/bin/systemd-socket-activate", all, o);
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
void ExpectRecords(const std::vector<OwnedRecord> &got, const std::string &app, int n) {
  int seen = 0;
  for (const OwnedRecord &g : got) {
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
  std::string sock = dir / "s.sock", ring = dir / "logsink.ring";
  auto act = SpawnActivate(sock, {"--socket", dir / "unused.sock", "--file", ring, "--size", "1MiB",
                                  "--log-level", "info"});
  const pid_t pid = act->pid();
  // systemd-socket-activate says "Listening on ... as 3." after listen().
  std::string line, out;
  while (out.find("Listening on") == std::string::npos && act->ReadLine(&line, kHang))
    out += line + "\n";
  ASSERT_NE(out.find("Listening on"), std::string::npos) << out;

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
  WaitUntil([&] { return (stored = b.Stats()["next_record_seq"]) >= kA + kB; }, kHang, Ms(10));
  EXPECT_EQ(stored, uint64_t(kA + kB));
  EXPECT_NE(Exe(pid).find("logsinkd"), std::string::npos) << "same pid, logsinkd exec'd";
  EXPECT_NE(access((dir / "unused.sock").c_str(), F_OK), 0) << "bound its own socket";

  act->Signal(SIGTERM);
  ProcResult r = act->Finish(kHang);
  out += r.out;
  EXPECT_EQ(r.status, 0) << out;
  EXPECT_NE(out.find("the socket from systemd"), std::string::npos) << out;
  auto got = ReadRing(ring);
  ExpectRecords(got, "early-a", kA);
  ExpectRecords(got, "early-b", kB);
}

TEST(SystemdNotify, ReadyOnlyOnceTheRingIsOpenAndTheSocketServed) {
  TempDir dir;
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();  // returns at READY=1
  const auto &seen = d.notify().messages();
  ASSERT_FALSE(seen.empty());
  ASSERT_NE(seen.back().find("READY=1"), std::string::npos) << d.notify().Joined();
  // Right at READY=1: the ring file is a valid ring and a client is served.
  std::unique_ptr<logsink::storage::RingReader> r;
  RecordingReporter rep;
  EXPECT_TRUE(
      logsink::storage::RingReader::Open(logsink::storage::Env::Default(), d.ring, &rep, &r).ok());
  Client c(d.socket);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.Stats()["next_record_seq"], 0u);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

TEST(SystemdNotify, NoReadyWhenTheRingCannotBeOpened) {
  TempDir dir;
  Daemon holder(dir);  // holds the ring file's writer lock
  ASSERT_TRUE(holder.Start()) << holder.Stderr();
  DaemonProcess second;
  DaemonOptions o;
  o.args = {"--socket", dir / "second.sock", "--file", holder.ring, "--size", "1MiB"};
  o.stderr_path = dir / "second.err";
  std::string why;
  EXPECT_FALSE(second.Start(o, &why));
  const std::string err = ReadFile(o.stderr_path);
  EXPECT_EQ(second.exit_status(), 1) << why << "\n" << err;
  EXPECT_NE(err.find("in use by another writer"), std::string::npos) << err;
  second.notify().Drain();
  EXPECT_EQ(second.notify().Joined().find("READY=1"), std::string::npos)
      << second.notify().Joined();
  EXPECT_EQ(holder.Stop(), 0) << holder.Stderr();
}

// logsinkd sends `STATUS=` with READY=1: what it serves, and no counter
// (`systemctl status` shows it to every local user; the counters tell about
// everyone's records and go only to readers of the ring, through STATS).
// Logging records changes nothing in what systemd is told.
TEST(SystemdNotify, StatusNamesWhatIsServedAndNoCounter) {
  TempDir dir;
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const std::regex counter(R"((^|\n)STATUS=[^\n]*\b[0-9]+ (records?|connections)\b)");
  NotifyListener &n = d.notify();
  const std::string ready = n.Joined();
  EXPECT_NE(ready.find("READY=1\nSTATUS=serving " + d.socket + "; counters: logctl stats"),
            std::string::npos)
      << ready;

  constexpr int kN = 321;
  Client c(d.socket);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.Send(Batch("status", kN)));
  EXPECT_EQ(c.Stats()["next_record_seq"], uint64_t(kN));
  kill(d.pid(), SIGTERM);
  EXPECT_TRUE(n.WaitFor("STOPPING=1")) << n.Joined();
  for (const auto &m : n.messages()) EXPECT_FALSE(std::regex_search(m, counter)) << m;
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

}  // namespace
}  // namespace logsink::test
