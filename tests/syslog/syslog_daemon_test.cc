// syslog_daemon_test.cc: logsinkd's syslog socket (daemon/SYSLOG.md) with the
// real daemon: util-linux logger(1) in both forms, the bytes glibc's
// syslog(3) sends, malformed and oversized datagrams, invalid UTF-8, the
// kernel's pid against a claimed one, sources per sender, the socket file
// rules, socket activation, and a syslog flood beside a native client.
// Records are read back with `logctl cat --json` and RingReader. Times are
// hang limits only.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "common/seed.h"
#include "common/unix_socket.h"
#include "daemon/harness.h"

namespace logsink::test {
namespace {

using json = nlohmann::json;

std::string Hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// A daemon with a syslog socket at dir/syslog.sock.
struct SyslogDaemon {
  explicit SyslogDaemon(const TempDir &dir, std::vector<std::string> extra = {})
      : path(dir / "syslog.sock"), d(dir, With(dir / "syslog.sock", std::move(extra))) {}
  static std::vector<std::string> With(const std::string &p, std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--syslog-socket", p});
    return extra;
  }
  std::map<std::string, uint64_t> Stats() {
    Client c(d.socket);
    return c.Stats();
  }
  // Waits until the daemon has read n datagrams.
  bool WaitReceived(uint64_t n) {
    return WaitUntil([&] { return Stats()["syslog_received"] >= n; });
  }
  std::string path;
  Daemon d;
};

// `logctl cat --json` of the ring, one object per record.
std::vector<json> CatJson(const std::string &ring) {
  ProcResult r = RunProcess(BinPath("logctl"), {"cat", "--json", "--file", ring});
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<json> out;
  for (const std::string &line : Lines(r.out)) {
    json j = json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << line;
    out.push_back(j);
  }
  return out;
}

const json *ByMsg(const std::vector<json> &recs, const std::string &msg) {
  for (const json &j : recs)
    if (j.value("msg", "") == msg) return &j;
  return nullptr;
}

// Runs logger with args to the syslog socket; returns its pid (the
// record's trusted pid) and checks that it succeeded.
pid_t RunLogger(const std::vector<std::string> &args) {
  Subprocess p("/usr/bin/logger", args);
  pid_t pid = p.pid();
  ProcResult r = p.Finish(kHang);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  return pid;
}

TEST(SyslogSocket, LoggerRfc3164AndRfc5424) {
  TempDir dir;
  SyslogDaemon s(dir);
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  pid_t p3164 = RunLogger({"--rfc3164", "-u", s.path, "--socket-errors=on", "-t", "tag3164", "-p",
                           "local3.warning", "hello  from 3164"});
  pid_t p5424 = RunLogger({"--rfc5424", "-u", s.path, "--socket-errors=on", "-t", "tag5424", "-p",
                           "mail.err", "--msgid", "ID47", "--sd-id", "ex@32473", "--sd-param",
                           "k=\"v\\]\\\"x\"", "hello from 5424"});
  pid_t plocal = RunLogger({"-u", s.path, "--socket-errors=on", "-i", "-t", "taglocal", "-p",
                            "authpriv.debug", "hello local"});
  ASSERT_TRUE(s.WaitReceived(3));
  auto st = s.Stats();
  EXPECT_EQ(st["syslog_rfc3164"], 2u);
  EXPECT_EQ(st["syslog_rfc5424"], 1u);
  EXPECT_EQ(st["syslog_malformed"], 0u);
  EXPECT_EQ(s.d.Stop(), 0) << s.d.Stderr();

  auto recs = CatJson(s.d.ring);
  ASSERT_EQ(recs.size(), 3u);
  const json *a = ByMsg(recs, "hello  from 3164");
  ASSERT_TRUE(a) << recs[0].dump();
  EXPECT_EQ((*a)["pid"], p3164);
  EXPECT_EQ((*a)["uid"], getuid());
  EXPECT_EQ((*a)["level"], "warning");
  EXPECT_EQ((*a)["app"], "tag3164");
  // comm is read from /proc when the daemon first sees the sender; logger
  // may have exited and been reaped by then (documented in SYSLOG.md).
  EXPECT_TRUE((*a)["comm"] == "logger" || (*a)["comm"] == "") << (*a)["comm"];
  EXPECT_EQ((*a)["facility"], "local3");
  EXPECT_EQ((*a)["file"], "syslog:rfc3164");
  EXPECT_EQ((*a)["line"], 19);
  std::string host = Hostname();
  EXPECT_EQ((*a)["syslog"]["hostname"], host.substr(0, host.find('.')));  // logger cuts it
  EXPECT_EQ((*a)["syslog"]["timestamp"].get<std::string>().size(), 15u);
  EXPECT_FALSE((*a)["syslog"].contains("msgid"));

  const json *b = ByMsg(recs, "hello from 5424");
  ASSERT_TRUE(b);
  EXPECT_EQ((*b)["pid"], p5424);
  EXPECT_EQ((*b)["level"], "err");
  EXPECT_EQ((*b)["app"], "tag5424");
  EXPECT_EQ((*b)["facility"], "mail");
  EXPECT_EQ((*b)["file"], "syslog:rfc5424");
  EXPECT_EQ((*b)["syslog"]["hostname"], host);
  EXPECT_EQ((*b)["syslog"]["msgid"], "ID47");
  EXPECT_NE((*b)["syslog"]["sd"].get<std::string>().find("[ex@32473 k=\"v\\]\\\"x\"]"),
            std::string::npos)
      << (*b)["syslog"]["sd"];
  EXPECT_EQ((*b)["syslog"]["timestamp"].get<std::string>().substr(0, 2), "20");

  const json *c = ByMsg(recs, "hello local");
  ASSERT_TRUE(c);
  EXPECT_EQ((*c)["pid"], plocal);
  EXPECT_EQ((*c)["level"], "debug");
  EXPECT_EQ((*c)["app"], "taglocal");
  EXPECT_EQ((*c)["facility"], "authpriv");
  EXPECT_EQ((*c)["syslog"]["hostname"], "");  // the local form has none
}

// glibc's syslog(3) writes to /dev/log only, so its exact bytes (glibc 2.36,
// openlog("myprog", LOG_PID, LOG_DAEMON); syslog(LOG_INFO, ...)) are sent
// here from this process: "<PRI>%h %e %T ident[pid]: msg", no newline.
// The pid in the message is a claim: the record's pid is the kernel's.
TEST(SyslogSocket, GlibcLocalFormAndAClaimedPid) {
  TempDir dir;
  SyslogDaemon s(dir);
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  ASSERT_TRUE(SendDatagram(s.path, "<30>Nov  5 01:02:03 myprog[1]: hello from glibc"));
  ASSERT_TRUE(s.WaitReceived(1));
  EXPECT_EQ(s.d.Stop(), 0) << s.d.Stderr();
  auto recs = CatJson(s.d.ring);
  ASSERT_EQ(recs.size(), 1u);
  const json &r = recs[0];
  EXPECT_EQ(r["msg"], "hello from glibc");
  EXPECT_EQ(r["pid"], getpid());
  EXPECT_EQ(r["gid"], getgid());
  EXPECT_EQ(r["app"], "myprog");
  EXPECT_EQ(r["level"], "info");
  EXPECT_EQ(r["facility"], "daemon");
  EXPECT_EQ(r["syslog"]["timestamp"], "Nov  5 01:02:03");
  // The daemon's clock, not the message's 5 November.
  auto now = std::chrono::system_clock::now().time_since_epoch();
  uint64_t now_ns = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
  EXPECT_LE(r["ts_ns"].get<uint64_t>(), now_ns);
  EXPECT_GT(r["ts_ns"].get<uint64_t>(), now_ns - 600ull * 1000000000);
}

TEST(SyslogSocket, MalformedDatagramsAreStoredRawAndCounted) {
  TempDir dir;
  SyslogDaemon s(dir);
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  const std::vector<std::string> bad = {"no pri here", "<86>bogus header\n",
                                        "<13>1 - host app - - [cut sd=\"", "<999>x", ""};
  for (const std::string &b : bad) ASSERT_TRUE(SendDatagram(s.path, b));
  ASSERT_TRUE(s.WaitReceived(bad.size()));
  auto st = s.Stats();
  EXPECT_EQ(st["syslog_malformed"], 5u);
  EXPECT_EQ(st["syslog_malformed_pri"], 3u);
  EXPECT_EQ(st["syslog_malformed_rfc3164"], 1u);
  EXPECT_EQ(st["syslog_malformed_rfc5424"], 1u);
  EXPECT_EQ(st["syslog_rfc3164"] + st["syslog_rfc5424"], 0u);
  EXPECT_EQ(s.d.Stop(), 0) << s.d.Stderr();
  auto got = ReadRing(s.d.ring);
  ASSERT_EQ(got.size(), bad.size());
  for (size_t i = 0; i < bad.size(); i++) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].file, "syslog:raw");
    EXPECT_EQ(got[i].fmt, "%s");
    EXPECT_EQ(got[i].pid, uint32_t(getpid()));
    // One string argument: the datagram's bytes, every one of them.
    std::string want;
    PutStr(&want, bad[i]);
    EXPECT_EQ(got[i].args, want);
  }
  // "<86>": the PRI was valid, so authpriv.info; the others user.notice.
  EXPECT_EQ(got[1].line, 10u);
  EXPECT_EQ(got[1].level, 6u);
  EXPECT_EQ(got[0].line, 1u);
  EXPECT_EQ(got[0].level, 5u);
  auto recs = CatJson(s.d.ring);
  ASSERT_EQ(recs.size(), bad.size());
  EXPECT_EQ(recs[1]["msg"], "<86>bogus header\n");
  EXPECT_EQ(recs[1]["facility"], "authpriv");
  EXPECT_FALSE(recs[1].contains("syslog"));
}

// 100 KiB: cut to the 64 KiB kept (with blocks large enough that the
// writer cuts nothing more), the record says by how much, and it is counted.
TEST(SyslogSocket, LongDatagramIsCutAndCounted) {
  TempDir dir;
  SyslogDaemon s(dir, {"--block-size", "128KiB", "--size", "4MiB"});
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  std::string head = "<14>Nov 25 12:00:00 big: ";
  std::string body(100 * 1024 - head.size(), 'x');
  for (size_t i = 0; i < body.size(); i += 100) body[i] = char('a' + i / 100 % 26);
  ASSERT_TRUE(SendDatagram(s.path, head + body));
  ASSERT_TRUE(SendDatagram(s.path, "<14>Nov 25 12:00:00 small: after"));
  ASSERT_TRUE(s.WaitReceived(2));
  auto st = s.Stats();
  EXPECT_EQ(st["syslog_truncated"], 1u);
  EXPECT_EQ(st["syslog_bytes"], 100u * 1024 + 32);
  EXPECT_EQ(s.d.Stop(), 0) << s.d.Stderr();
  auto got = ReadRing(s.d.ring);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].truncated, 100u * 1024 - 64 * 1024);
  EXPECT_EQ(got[0].app, "big");
  std::string kept = body.substr(0, 64 * 1024 - head.size());
  std::string want;
  for (const std::string &f : {kept, std::string("Nov 25 12:00:00"), std::string()})
    PutStr(&want, f);
  EXPECT_EQ(got[0].args, want);
  EXPECT_EQ(got[1].truncated, 0u);
  auto recs = CatJson(s.d.ring);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0]["truncated"], 100 * 1024 - 64 * 1024);
  EXPECT_EQ(recs[1]["msg"], "after");
}

// Sends one datagram with credentials naming uid (root may name any uid in
// SCM_CREDENTIALS; the pid is this process's).
bool SendDatagramAs(const std::string &path, const std::string &bytes, uid_t uid) {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  iovec iov{const_cast<char *>(bytes.data()), bytes.size()};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(ucred))] = {};
  msghdr m{};
  m.msg_name = &a;
  m.msg_namelen = sizeof a;
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = ctl;
  m.msg_controllen = sizeof ctl;
  cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_CREDENTIALS;
  c->cmsg_len = CMSG_LEN(sizeof(ucred));
  ucred cred{getpid(), uid, uid};
  std::memcpy(CMSG_DATA(c), &cred, sizeof cred);
  ssize_t n = sendmsg(fd, &m, 0);
  close(fd);
  return n == ssize_t(bytes.size());
}

// A sender other than root cannot pass for the kernel or for root: its
// facility kern is stored as user (kern_refused), and the default line shows
// its uid after the pid, while root's line and a kernel-named native record
// of root stay as they were.
TEST(SyslogSocket, UnprivilegedKernClaimShowsItsUid) {
  if (geteuid() != 0) GTEST_FAIL() << "needs root to name another uid in SCM_CREDENTIALS";
  TempDir dir;
  SyslogDaemon s(dir);
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  ASSERT_TRUE(SendDatagramAs(s.path, "<0>Nov 25 12:00:00 kernel: BUG: forged", 65534));
  ASSERT_TRUE(SendDatagramAs(s.path, "<0>Nov 25 12:00:00 kernel: BUG: root", 0));
  ASSERT_TRUE(SendDatagramAs(s.path, "<13>Nov 25 12:00:00 sshd: Accepted", 1000));
  ASSERT_TRUE(s.WaitReceived(3));
  EXPECT_EQ(s.Stats()["kern_refused"], 1u);
  EXPECT_EQ(s.d.Stop(), 0) << s.d.Stderr();
  auto recs = CatJson(s.d.ring);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0]["facility"], "user");
  EXPECT_EQ(recs[1]["facility"], "kern");
  ProcResult r = RunProcess(BinPath("logctl"), {"cat", "--file", s.d.ring});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  const std::string pid = std::to_string(getpid());
  EXPECT_NE(lines[0].find("[" + pid + "] (uid 65534): <emerg> BUG: forged"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("[" + pid + "]: <emerg> BUG: root"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("[" + pid + "] (uid 1000): <notice> Accepted"), std::string::npos)
      << lines[2];
}

TEST(SyslogSocket, InvalidUtf8IsKeptAndEscapedOnOutput) {
  TempDir dir;
  SyslogDaemon s(dir);
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  ASSERT_TRUE(SendDatagram(s.path, "<13>Nov 25 12:00:00 t: a\xff\xc3 b\x1b[2J"));
  ASSERT_TRUE(s.WaitReceived(1));
  EXPECT_EQ(s.d.Stop(), 0) << s.d.Stderr();
  auto got = ReadRing(s.d.ring);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].args.find("a\xff\xc3 b\x1b[2J"), std::string::npos);  // stored as sent
  auto recs = CatJson(s.d.ring);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0]["msg"], "a\xef\xbf\xbd\xef\xbf\xbd b\x1b[2J");  // U+FFFD per bad byte
  ProcResult r = RunProcess(BinPath("logctl"), {"cat", "--file", s.d.ring});
  EXPECT_NE(r.out.find("a\\xff\\xc3 b\\x1b[2J"), std::string::npos) << r.out;
}

// One ring source per (pid, uid, gid, tag): repeat senders share it.
TEST(SyslogSocket, SourcesAreReusedPerSenderAndTag) {
  TempDir dir;
  SyslogDaemon s(dir);
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  for (const char *m :
       {"<13>Nov 25 12:00:00 one: a", "<13>Nov 25 12:00:00 two: b", "<13>Nov 25 12:00:00 one: c"})
    ASSERT_TRUE(SendDatagram(s.path, m));
  ASSERT_TRUE(s.WaitReceived(3));
  EXPECT_EQ(s.Stats()["syslog_sources"], 2u);
  EXPECT_EQ(s.d.Stop(), 0) << s.d.Stderr();
  auto got = ReadRing(s.d.ring);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].source_id, got[2].source_id);
  EXPECT_NE(got[0].source_id, got[1].source_id);
  EXPECT_EQ(got[1].app, "two");
}

// A flood of datagrams while a native client sends: every native record
// lands. The flood runs until the native client's last frame was read
// (its STATS reply came back), so starvation would hang, not pass.
TEST(SyslogSocket, FloodDoesNotStarveNativeClients) {
  uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  TempDir dir;
  SyslogDaemon s(dir, {"--size", "64MiB"});
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> flooded{0};
  std::thread flood([&] {
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", s.path.c_str());
    std::string msg = "<13>Nov 25 12:00:00 flood: " + std::string(100, 'f');
    auto deadline = Clock::now() + kHang;
    while (!stop && Clock::now() < deadline)
      if (sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr *>(&a), sizeof a) > 0)
        flooded++;
    close(fd);
  });
  // The flood is on before the native client starts.
  ASSERT_TRUE(WaitUntil([&] { return s.Stats()["syslog_received"] >= 1000; }));
  const int kFrames = 50 + int(rng() % 50), kPerFrame = 100;
  Client c(s.d.socket);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.Send(Hello(1, "native") + Intern(1, 6, 1, "native %d", "n.c")));
  for (int f = 0; f < kFrames; f++) {
    std::vector<Rec> recs;
    for (int i = 0; i < kPerFrame; i++)
      recs.push_back({1, uint64_t(f * kPerFrame + i), {Arg::I(f * kPerFrame + i)}});
    ASSERT_TRUE(c.Send(Records(1, recs)));
  }
  auto st = c.Stats();  // answered once everything before it was read
  uint64_t during = flooded.load();
  stop = true;
  flood.join();
  ASSERT_FALSE(st.empty());
  EXPECT_GT(st["syslog_received"], 1000u);
  EXPECT_GT(during, 1000u);
  EXPECT_EQ(s.d.Stop(), 0) << s.d.Stderr();
  RecordingReporter rep;
  auto got = ReadRing(s.d.ring, &rep);
  EXPECT_EQ(rep.lost, 0u);
  std::set<int64_t> native;
  uint64_t syslog = 0;
  for (const OwnedRecord &g : got) {
    if (g.app == "native") {
      uint64_t v = 0;
      ls_get_varint(reinterpret_cast<const uint8_t *>(g.args.data()),
                    reinterpret_cast<const uint8_t *>(g.args.data()) + g.args.size(), &v);
      native.insert(ls_unzigzag(v));
    } else if (g.app == "flood") {
      syslog++;
    }
  }
  EXPECT_EQ(native.size(), size_t(kFrames * kPerFrame));
  EXPECT_GE(syslog, st["syslog_received"]);
  std::printf("[flood] %llu syslog datagrams stored, %d native records (seed %llu)\n",
              static_cast<unsigned long long>(syslog), kFrames * kPerFrame,
              static_cast<unsigned long long>(seed));
}

// A daemon with a syslog socket and read_budget 4 KiB.
struct BudgetDaemon {
  BudgetDaemon() : d(dir, {"--syslog-socket", path}, "[limits]\nread_budget = \"4KiB\"\n") {}
  // Starts it and stops it (SIGSTOP) while n datagrams of 4 KiB are sent:
  // they wait in the socket until it runs again.
  void StartAndSendWhileStopped(int n) {
    ASSERT_TRUE(d.Start()) << d.Stderr();
    // One request answered: the loop runs. READY=1 comes just before it,
    // and under ThreadSanitizer a SIGTERM that arrived in between (while
    // stopped) was seen lost 9 times in 40: its runtime defers signals.
    Client(d.socket).Stats();
    ASSERT_EQ(kill(d.pid(), SIGSTOP), 0);
    std::string msg = "<13>Nov 25 12:00:00 budget: " + std::string(4096 - 28, 'b');
    ASSERT_EQ(msg.size(), 4096u);
    for (int i = 0; i < n; i++) ASSERT_TRUE(SendDatagram(path, msg)) << i;
  }
  TempDir dir;
  std::string path = dir / "syslog.sock";
  Daemon d;
};

// The read budget, made deterministic: with the daemon stopped, 8 datagrams
// of 4 KiB queue up; with read_budget 4 KiB each of the loop's turns stores
// one and goes back to the loop (syslog_budget_yields), 8 turns in all
// however the receive thread queued them. (tests/daemon/
// syslog_receiver_test.cc checks several datagrams per turn.)
TEST(SyslogSocket, ReadBudgetYieldsToTheLoop) {
  BudgetDaemon b;
  ASSERT_NO_FATAL_FAILURE(b.StartAndSendWhileStopped(8));
  ASSERT_EQ(kill(b.d.pid(), SIGCONT), 0);
  std::map<std::string, uint64_t> st;
  ASSERT_TRUE(WaitUntil([&] {
    Client c(b.d.socket);
    st = c.Stats();
    return st["syslog_received"] == 8;
  }));
  EXPECT_EQ(st["syslog_budget_yields"], 8u);
  EXPECT_EQ(b.d.Stop(), 0) << b.d.Stderr();
  EXPECT_EQ(ReadRing(b.d.ring).size(), 8u);
}

// Datagrams sent before SIGTERM are stored: the stop reads them through the
// loop, one read budget (here one datagram) per turn, wherever they wait
// (the receive thread's queue or the socket), before the daemon exits.
TEST(SyslogSocket, SigtermStoresWhatWasSentBeforeIt) {
  BudgetDaemon b;
  ASSERT_NO_FATAL_FAILURE(b.StartAndSendWhileStopped(8));
  ASSERT_EQ(kill(b.d.pid(), SIGTERM), 0);  // pending until it runs again
  ASSERT_EQ(kill(b.d.pid(), SIGCONT), 0);
  EXPECT_EQ(b.d.Stop(SIGTERM), 0) << b.d.Stderr();
  EXPECT_EQ(ReadRing(b.d.ring).size(), 8u);
  EXPECT_EQ(b.d.Stderr().find("not stored"), std::string::npos) << b.d.Stderr();
}

TEST(SyslogSocket, SocketFileRules) {
  TempDir dir;
  std::string path = dir / "syslog.sock";
  // A regular file at the path: refused, left alone.
  WriteFile(path, "keep me");
  {
    Daemon d(dir, {"--syslog-socket", path});
    EXPECT_FALSE(d.Start());
    EXPECT_EQ(d.exit_status(), 1);
    EXPECT_NE(d.Stderr().find("not a socket"), std::string::npos) << d.Stderr();
    EXPECT_EQ(ReadFile(path), "keep me");
  }
  unlink(path.c_str());
  // A symbolic link to a socket: refused, not followed.
  std::string target = dir / "target.sock";
  int tfd = BindUnix(target, SOCK_DGRAM);
  ASSERT_GE(tfd, 0);
  ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0);
  {
    Daemon d(dir, {"--syslog-socket", path});
    EXPECT_FALSE(d.Start());
    EXPECT_NE(d.Stderr().find("not a socket"), std::string::npos) << d.Stderr();
  }
  unlink(path.c_str());
  // A live receiver (another syslog daemon): refused.
  {
    Daemon d(dir, {"--syslog-socket", target});
    EXPECT_FALSE(d.Start());
    EXPECT_NE(d.Stderr().find("another process receives datagrams"), std::string::npos)
        << d.Stderr();
  }
  // Its socket once it is gone (stale): replaced, given the socket mode.
  close(tfd);
  {
    Daemon d(dir, {"--syslog-socket", target}, "[socket]\nmode = 0o620\n");
    ASSERT_TRUE(d.Start()) << d.Stderr();
    struct stat st;
    ASSERT_EQ(lstat(target.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0620u);
    ASSERT_TRUE(SendDatagram(target, "<13>Nov 25 12:00:00 t: x"));
    EXPECT_EQ(d.Stop(), 0) << d.Stderr();
    EXPECT_NE(access(target.c_str(), F_OK), 0) << "the socket file is removed at exit";
  }
}

TEST(SyslogSocket, ConfigKeyAndPrintConfig) {
  TempDir dir;
  std::string path = dir / "from-toml.sock";
  Daemon d(dir, {}, "[syslog]\nsocket = \"" + path + "\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ASSERT_TRUE(SendDatagram(path, "<13>Nov 25 12:00:00 toml: configured"));
  ASSERT_TRUE(WaitUntil([&] {
    Client c(d.socket);
    return c.Stats()["syslog_received"] == 1;
  }));
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  ProcResult r = RunDaemon(dir, {"--syslog-socket", "/run/x/syslog.sock", "--socket",
                                 dir / "a.sock", "--file", dir / "a.ring", "--print-config"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("[syslog]\nsocket = \"/run/x/syslog.sock\"\n"), std::string::npos) << r.out;
  r = RunDaemon(dir, {"--syslog-socket", dir / "a.sock", "--socket", dir / "a.sock", "--file",
                      dir / "a.ring"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("syslog.socket and socket.path are the same path"), std::string::npos)
      << r.err;
  r = RunDaemon(dir, {"--help"});
  EXPECT_NE(r.out.find("--syslog-socket PATH"), std::string::npos);
}

// Not reloadable: SIGHUP logs a changed path and keeps serving the old one.
TEST(SyslogSocket, SighupKeepsTheSocketAndSaysSo) {
  TempDir dir;
  std::string first = dir / "first.sock", second = dir / "second.sock";
  Daemon d(dir, {}, "[syslog]\nsocket = \"" + first + "\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  WriteFile(dir / "logsinkd.toml", "[syslog]\nsocket = \"" + second + "\"\n");
  ASSERT_EQ(kill(d.pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitUntil([&] {
    return d.Stderr().find("syslog.socket changed; it takes effect after a restart") !=
           std::string::npos;
  })) << d.Stderr();
  EXPECT_NE(access(second.c_str(), F_OK), 0);
  ASSERT_TRUE(SendDatagram(first, "<13>Nov 25 12:00:00 t: still here"));
  ASSERT_TRUE(WaitUntil([&] {
    Client c(d.socket);
    return c.Stats()["syslog_received"] == 1;
  }));
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

// Socket activation with both units: the stream socket and the datagram
// socket, in either order; no path is bound.
TEST(SyslogSocket, TakesBothSocketsFromSystemd) {
  for (bool dgram_first : {false, true}) {
    SCOPED_TRACE(dgram_first);
    TempDir dir;
    std::string stream_path = dir / "act.sock", dgram_path = dir / "act-syslog.sock";
    int sfd = BindUnix(stream_path, SOCK_STREAM);
    ASSERT_GE(sfd, 0);
    ASSERT_EQ(listen(sfd, 16), 0);
    int dfd = BindUnix(dgram_path, SOCK_DGRAM);
    ASSERT_GE(dfd, 0);
    int first = dgram_first ? dfd : sfd, second = dgram_first ? sfd : dfd;
    Daemon d(dir);  // its --socket path must stay unused
    d.child_setup = [first, second] {
      // fds above any the child may hold, then onto 3 and 4 (dup2 clears
      // close-on-exec).
      int a = fcntl(first, F_DUPFD, 100), b = fcntl(second, F_DUPFD, 100);
      dup2(a, 3);
      dup2(b, 4);
      setenv("LISTEN_FDS", "2", 1);
      setenv("LISTEN_FDNAMES", "one:two", 1);
      setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
    };
    ASSERT_TRUE(d.Start()) << d.Stderr();
    close(sfd);
    close(dfd);
    ASSERT_TRUE(SendDatagram(dgram_path, "<13>Nov 25 12:00:00 act: via systemd"));
    ASSERT_TRUE(WaitUntil([&] {
      Client c(stream_path);
      return c.Stats()["syslog_received"] == 1;
    }));
    EXPECT_NE(access((dir / "logsink.sock").c_str(), F_OK), 0) << "bound its own socket";
    EXPECT_EQ(d.Stop(), 0) << d.Stderr();
    auto got = ReadRing(d.ring);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].app, "act");
  }
}

TEST(SyslogSocket, RefusesTwoDatagramSocketsFromSystemd) {
  TempDir dir;
  int sfd = BindUnix(dir / "s.sock", SOCK_STREAM);
  ASSERT_EQ(listen(sfd, 16), 0);
  int d1 = BindUnix(dir / "d1.sock", SOCK_DGRAM), d2 = BindUnix(dir / "d2.sock", SOCK_DGRAM);
  Daemon d(dir);
  d.child_setup = [sfd, d1, d2] {
    int a = fcntl(sfd, F_DUPFD, 100), b = fcntl(d1, F_DUPFD, 100), c = fcntl(d2, F_DUPFD, 100);
    dup2(a, 3);
    dup2(b, 4);
    dup2(c, 5);
    setenv("LISTEN_FDS", "3", 1);
    setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
  };
  EXPECT_FALSE(d.Start());
  EXPECT_EQ(d.exit_status(), 1);
  EXPECT_NE(d.Stderr().find("not the one listening Unix stream socket or the one Unix datagram"),
            std::string::npos)
      << d.Stderr();
  close(sfd);
  close(d1);
  close(d2);
}

}  // namespace
}  // namespace logsink::test
