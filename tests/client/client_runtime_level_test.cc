// client_runtime_level_test.cc: levels changed while a program runs
// (PROTOCOL.md, "Levels at run time"), against the real logsinkd and the
// real logctl: a rule set with `logctl level` turns a running client's
// debug records on and its reset turns them off again; a rule for one call
// site; a user's rule never reaches another uid's program; [levels] rules
// of the configuration apply at connect, after SIGHUP and after a restart;
// a client meeting a daemon of version 1 only says HELLO again in version 1.
//
// A disabled call counts nowhere (client_level_test), so a client's
// `logged` counter tells, call by call, whether its levels let a debug
// record through: no timing is assumed, only waited for.
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "client_harness.h"
#include "client_stats.h"
#include "common/staged_binary.h"
#include "common/unix_socket.h"
#include "logsink/logsink.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/frame_encode.h"
#include "logsink/proto/level_rules.h"
#include "proto/wire_encoder.h"
#include "render_ref.h"

extern "C" {
void census_debug_site(ls_client *c);  // census_sites.c: never called
int census_debug_line(void);
}

namespace logsink::test {
namespace {

// clang-format off
void Debug(ls_client *c, int i) { LS_LOG(c, LS_DEBUG, "debug %d", i); } constexpr int kDebugLine = __LINE__;
// clang-format on
void OtherDebug(ls_client *c, int i) { LS_LOG(c, LS_DEBUG, "other debug %d", i); }

uint64_t Logged(ls_client *c) { return Stats(c).logged; }

// A record's message as readers show it ("" when its arguments do not parse).
std::string Message(const OwnedRecord &r) {
  auto args = DecodeArgs(r.fmt, r.args);
  auto text = args ? Render(r.fmt, *args) : std::nullopt;
  return text ? *text : "";
}

// Whether a debug call at the site of f produces a record now.
bool Produces(ls_client *c, void (*f)(ls_client *, int)) {
  static int i = 0;
  const uint64_t before = Logged(c);
  f(c, i++);
  return Logged(c) != before;
}

class RuntimeLevel : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("LOGSINK_LEVEL");
    ASSERT_TRUE(daemon_.Start()) << daemon_.Stderr();
  }
  ls_client *Open(const char *app, int level = LS_INFO, const char *levels = nullptr) {
    ls_options o;
    ls_options_init(&o);
    o.level = level;
    o.levels = levels;
    ls_client *c = ls_open(daemon_.socket.c_str(), app, &o);
    // Connected (and its WELCOME's rules applied) once a flush is through.
    if (c) {
      EXPECT_EQ(ls_flush(c), 0);
    }
    return c;
  }
  ProcResult Logctl(std::vector<std::string> args) {
    args.push_back("--socket");
    args.push_back(daemon_.socket);
    return RunProcess(BinPath("logctl"), args);
  }
  // Waits until a debug call at f's site produces a record (want) or not,
  // one call per try; returns how long that took.
  double WaitProduces(ls_client *c, void (*f)(ls_client *, int), bool want) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(WaitUntil([&] { return Produces(c, f) == want; }, kHang, Ms(1)))
        << "the client never " << (want ? "produced" : "stopped producing") << " debug records";
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  TempDir dir_;
  ClientDaemon daemon_{dir_};
};

TEST_F(RuntimeLevel, ARuleTurnsDebugOnWhileTheProgramRunsAndItsResetTurnsItOff) {
  ls_client *c = Open("rtlevel");
  ASSERT_NE(c, nullptr);
  for (int i = 0; i < 10; i++) EXPECT_FALSE(Produces(c, Debug));

  ProcResult r = Logctl({"level", "--app", "rtlevel", "debug"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("level rule set: --app 'rtlevel' debug"), std::string::npos) << r.out;
  const double on_ms = WaitProduces(c, Debug, true);
  EXPECT_TRUE(Produces(c, OtherDebug));  // every site: the rule has none

  r = Logctl({"level", "--reset", "--app", "rtlevel"});
  ASSERT_EQ(r.status, 0) << r.err;
  const double off_ms = WaitProduces(c, Debug, false);
  for (int i = 0; i < 10; i++) EXPECT_FALSE(Produces(c, Debug));
  std::printf("applied after %.1f ms (on) and %.1f ms (off) from logctl's exit\n", on_ms, off_ms);

  // Both changes are in the ring, with who made them.
  LS_LOG(c, LS_EMERG, "end");
  ASSERT_EQ(ls_flush(c), 0);
  auto v = WaitRing(daemon_.ring, [](const auto &v) { return CountFmt(v, "end") == 1; });
  size_t set = 0, removed = 0;
  for (const auto &rec : v) {
    if (rec.dropped()) continue;
    const std::string text = Message(rec);
    set += text.rfind("level rule set: --app 'rtlevel' debug (by uid 0 pid ", 0) == 0;
    removed += text.rfind("level rule removed: --app 'rtlevel' debug (by uid 0 pid ", 0) == 0;
  }
  EXPECT_EQ(set, 1u);
  EXPECT_EQ(removed, 1u);
  ls_close(c);
}

TEST_F(RuntimeLevel, ASiteRuleTurnsOnThatLineOnly) {
  ls_client *c = Open("sites");
  ASSERT_NE(c, nullptr);
  const std::string site =
      std::string("client_runtime_level_test.cc:") + std::to_string(kDebugLine);
  ProcResult r = Logctl({"level", "--app", "sites", "--site", site, "debug"});
  ASSERT_EQ(r.status, 0) << r.err;
  WaitProduces(c, Debug, true);
  for (int i = 0; i < 10; i++) EXPECT_FALSE(Produces(c, OtherDebug));  // another line
  ls_close(c);
}

// `logctl sites --all`: a program's call sites that never fired are listed
// (0 records) from its census, with whether its levels let them log now.
// The site is census_sites.c's (C: g++ leaves C++ sites out).
TEST_F(RuntimeLevel, SitesAllListsTheSitesThatNeverFired) {
  ls_client *c = Open("census");
  ASSERT_NE(c, nullptr);
  LS_LOG(c, LS_ERR, "fired %d", 1);
  ASSERT_EQ(ls_flush(c), 0);
  const std::string line = "\"line\":" + std::to_string(census_debug_line()) + ",";
  auto debug_row = [&](const std::string &out) {
    for (const std::string &l : Lines(out))
      if (l.find("\"app\":\"census\"") != std::string::npos &&
          l.find("census_sites.c\"") != std::string::npos && l.find(line) != std::string::npos)
        return l;
    return std::string();
  };
  ProcResult r = Logctl({"sites", "--all", "--json", "--file", daemon_.ring});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string row = debug_row(r.out);
  EXPECT_EQ(row.rfind("{\"records\":0,", 0), 0u) << r.out;
  EXPECT_NE(row.find("\"enabled\":false"), std::string::npos) << row;
  EXPECT_NE(row.find("\"level\":\"debug\""), std::string::npos) << row;
  // A site that fired is there with its records, from the ring.
  EXPECT_NE(r.out.find("\"records\":1,"), std::string::npos) << r.out;
  // Without --all: only what wrote records.
  r = Logctl({"sites", "--json", "--file", daemon_.ring});
  EXPECT_EQ(debug_row(r.out), "") << r.out;
  // Turned on for the program: the census says it may log now.
  ASSERT_EQ(Logctl({"level", "--app", "census", "debug"}).status, 0);
  r = Logctl({"sites", "--all", "--json", "--file", daemon_.ring});
  EXPECT_NE(debug_row(r.out).find("\"enabled\":true"), std::string::npos) << r.out;
  ls_close(c);
}

// A client's own rules longer than the answer shows (LS_LEVEL_TEXT_SHOWN
// bytes), cut right after a rule: the cut text parses, without the rule
// that turns the census debug site on. `sites --all` says it does not know
// (before: "no", for a site that logs).
TEST_F(RuntimeLevel, SitesAllDoesNotGuessFromRulesTheAnswerCut) {
  std::string text = "info";
  for (char ch : {'a', 'b', 'c', 'd'}) text += "," + std::string(250, ch) + "=err";
  ASSERT_EQ(text.size(), LS_LEVEL_TEXT_SHOWN);  // ends where the answer cuts
  text += ",census_sites.c=debug";
  // The client sends its rules as ls_level_rules_text writes them: the same.
  ls_level_rules parsed;
  char err[192], back[LS_LEVELS_TEXT_MAX + 1];
  ASSERT_EQ(ls_level_rules_parse(text.c_str(), LS_INFO, &parsed, err, sizeof err), 0) << err;
  ASSERT_GT(ls_level_rules_text(&parsed, back, sizeof back), 0);
  ASSERT_EQ(text, back);
  ASSERT_EQ(ls_level_rules_for(&parsed, "census_sites.c", census_debug_line()), LS_DEBUG);
  ls_client *cut = Open("cutrules", LS_INFO, text.c_str());
  ls_client *whole = Open("wholerules", LS_INFO, "info,census_sites.c=debug");
  ASSERT_NE(cut, nullptr);
  ASSERT_NE(whole, nullptr);
  const std::string line = "\"line\":" + std::to_string(census_debug_line()) + ",";
  ProcResult r = Logctl({"sites", "--all", "--json", "--file", daemon_.ring});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string cut_row, whole_row;
  for (const std::string &l : Lines(r.out)) {
    if (l.find("census_sites.c\"") == std::string::npos || l.find(line) == std::string::npos)
      continue;
    if (l.find("\"app\":\"cutrules\"") != std::string::npos) cut_row = l;
    if (l.find("\"app\":\"wholerules\"") != std::string::npos) whole_row = l;
  }
  EXPECT_NE(cut_row.find("\"enabled\":null"), std::string::npos) << r.out;
  EXPECT_NE(whole_row.find("\"enabled\":true"), std::string::npos) << r.out;
  ls_close(cut);
  ls_close(whole);
}

// A program that never reads what the daemon sends it is closed once more
// than 1 MiB of LEVELS pushes wait for it, and counted (err_replies_unread;
// before, it was closed with a warning and counted nowhere). Root's share
// of max_memory is the whole bound, so the 1 MiB rule is what closes it.
TEST_F(RuntimeLevel, AProgramThatNeverReadsItsPushesIsClosedAndCounted) {
  const int deaf = ConnectUnix(daemon_.socket);
  ASSERT_GE(deaf, 0);
  const std::string hello = Hello2("deaf", LS_CAP_LEVELS, "");
  ASSERT_EQ(send(deaf, hello.data(), hello.size(), MSG_NOSIGNAL), ssize_t(hello.size()));
  pollfd p{deaf, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 30000), 1) << "the WELCOME";  // the client is known now
  // One LEVEL_REQ per connection, as logctl sends it; its answer read to
  // the end (the daemon closes the connection after it).
  const auto set = [&](const WireRule &r) {
    const int fd = ConnectUnix(daemon_.socket);
    if (fd < 0) return false;
    const std::string req = LevelReq(LS_LEVEL_OP_SET, r);
    bool ok = send(fd, req.data(), req.size(), MSG_NOSIGNAL) == ssize_t(req.size());
    std::vector<uint8_t> in;
    uint8_t buf[65536];
    ssize_t n = 1;
    pollfd q{fd, POLLIN, 0};
    while (ok && n > 0 && poll(&q, 1, int(kHang.count())) == 1)
      if ((n = read(fd, buf, sizeof buf)) > 0) in.insert(in.end(), buf, buf + n);
    close(fd);
    ls_frame f;
    ls_level_answer a;
    return ok && n == 0 && ls_frame_parse(in.data(), in.size(), LS_FRAME_MAX, &f) > 0 &&
           f.type == LS_F_LEVEL_ANSWER && ls_level_answer_begin(f.payload, f.len, &a) == 0 &&
           a.status == 0;
  };
  // 32 site rules of 250-byte file names: the program's rules text, pushed
  // whole at each change, is about 8 KiB.
  WireRule site;
  site.which = LS_LSEL_APP | LS_LSEL_SITE;
  site.app = "deaf";
  site.level = LS_DEBUG;
  for (int i = 0; i < 32; i++) {
    site.file = std::string(247, 'f') + std::to_string(100 + i);
    ASSERT_TRUE(set(site)) << i;
  }
  const auto unread = [&] {
    const std::string out = Logctl({"stats"}).out;
    const size_t at = out.find("err_replies_unread=");
    return at == std::string::npos ? std::string("?") : out.substr(at, out.find('\n', at) - at);
  };
  ASSERT_EQ(unread(), "err_replies_unread=0");
  // Its default level, back and forth: a push at each change. 1 MiB and
  // the socket's buffer are about 150 pushes; 1,000 are far past them.
  WireRule level;
  level.which = LS_LSEL_APP;
  level.app = "deaf";
  int changes = 0;
  for (; changes < 1000 && unread() != "err_replies_unread=1"; changes += 16)
    for (int i = 0; i < 16; i++) {
      level.level = (changes + i) % 2 ? LS_DEBUG : LS_INFO;
      ASSERT_TRUE(set(level)) << changes + i;
    }
  EXPECT_EQ(unread(), "err_replies_unread=1") << "after " << changes << " changes";
  EXPECT_GT(changes, 64) << "closed before 1 MiB could wait for it";
  // What was sent before is there to read, then the end.
  char buf[65536];
  ssize_t n = 1;
  while (n > 0 && poll(&p, 1, int(kHang.count())) == 1) n = read(deaf, buf, sizeof buf);
  EXPECT_EQ(n, 0) << "the daemon closed the connection";
  close(deaf);
  EXPECT_NE(daemon_.Stderr().find("does not read what the daemon sends it"), std::string::npos)
      << daemon_.Stderr();
}

// The suite runs as root; uid 65534 sets rules too.
TEST_F(RuntimeLevel, AUsersRuleNeverReachesAnotherUidsProgram) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root, to act as another user";
  ASSERT_EQ(chmod(dir_.path().c_str(), 0711), 0);  // the user may reach the socket
  ASSERT_EQ(chmod(daemon_.socket.c_str(), 0666), 0);
  ls_client *c = Open("rootprog");
  ASSERT_NE(c, nullptr);
  // A copy of logctl uid 65534 may run (the build tree may be private).
  StagedBinary logctl(BinPath("logctl"));
  ASSERT_TRUE(logctl.ok()) << logctl.error();
  const std::string socket = daemon_.socket;
  auto as_nobody = [&](std::vector<std::string> args) -> std::optional<std::string> {
    args.push_back("--socket");
    args.push_back(socket);
    SubprocessOptions o;
    o.child_setup = [&logctl] {
      logctl.SetLibraryPath();
      if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(126);
    };
    ProcResult r = RunProcess(logctl.path(), args, o, kHang);
    if (r.status == 126 || r.status < 0) return std::nullopt;
    return std::to_string(r.status) + "\n" + r.out + r.err;
  };
  // Without --uid: the rule is for uid 65534's programs.
  auto got = as_nobody({"level", "--app", "rootprog", "debug"});
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->rfind("0\n", 0), 0u) << *got;
  EXPECT_NE(got->find("--uid 65534 debug"), std::string::npos) << *got;
  // Naming root's uid is refused.
  got = as_nobody({"level", "--uid", "0", "--app", "rootprog", "debug"});
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->rfind("1\n", 0), 0u) << *got;
  EXPECT_NE(got->find("own programs only"), std::string::npos) << *got;
  // And so is removing a rule root set for the user's programs.
  ASSERT_EQ(Logctl({"level", "--app", "other", "--uid", "65534", "info"}).status, 0);
  got = as_nobody({"level", "--reset", "--app", "other"});
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->rfind("1\n", 0), 0u) << *got;
  EXPECT_NE(got->find("set by root"), std::string::npos) << *got;
  // The user is shown their own programs only: not root's.
  got = as_nobody({"level", "--json"});
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->find("rootprog\",\"unit"), std::string::npos) << *got;
  EXPECT_EQ(got->find("\"uid\":0,"), std::string::npos) << *got;

  // The daemon sent root's program nothing: its pushed rules are empty
  // (LEVELS is sent in the request's own turn, before its answer).
  ProcResult list = Logctl({"level", "--json"});
  ASSERT_EQ(list.status, 0) << list.err;
  EXPECT_NE(list.out.find("\"app\":\"rootprog\""), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("\"pushed\":\"\""), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("\"pushed\":\"debug\""), std::string::npos) << list.out;
  for (int i = 0; i < 10; i++) EXPECT_FALSE(Produces(c, Debug));

  // The same rule by root reaches it (the control).
  ASSERT_EQ(Logctl({"level", "--app", "rootprog", "debug"}).status, 0);
  WaitProduces(c, Debug, true);
  ls_close(c);
}

// Refusals reach logctl's exit status and message, and are counted (the
// bounds themselves: levels_test).
TEST_F(RuntimeLevel, RefusalsAreSaidAndCounted) {
  ProcResult r = Logctl({"level", "--reset", "--app", "nobody-set-this"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no level rule for --app 'nobody-set-this'"), std::string::npos) << r.err;
  ASSERT_EQ(Logctl({"level", "--app", "a0", "info"}).status, 0);
  EXPECT_EQ(Logctl({"level", "--app", "a0", "debug"}).status, 0);  // replacing one is fine
  r = Logctl({"level", "--json"});
  EXPECT_NE(r.out.find("\"app\":\"a0\",\"level\":\"debug\""), std::string::npos) << r.out;
  r = Logctl({"stats"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("level_requests=4\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("level_refused=1\n"), std::string::npos) << r.out;
}

// A daemon restart while the program runs: [levels] rules are in force
// again when it reconnects; SIGHUP applies a changed rules text.
TEST(RuntimeLevelConfig, ConfigurationRulesApplyAtConnectAfterSighupAndAfterARestart) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  const std::string toml = "[levels]\nrules = \"app=cfgprog debug; app=cfgprog site=x.c off\"\n";
  Daemon daemon(dir, {"--size", "4MiB"}, toml);
  ASSERT_TRUE(daemon.Start()) << daemon.Stderr();
  ls_options o;
  ls_options_init(&o);
  o.level = LS_INFO;
  ls_client *c = ls_open(daemon.socket.c_str(), "cfgprog", &o);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(ls_flush(c), 0);
  EXPECT_TRUE(Produces(c, Debug));  // from the first call after the connect

  WriteFile(dir / "logsinkd.toml", "[levels]\nrules = \"app=cfgprog warning\"\n");
  ASSERT_EQ(kill(daemon.pid(), SIGHUP), 0);
  EXPECT_TRUE(WaitUntil([&] { return !Produces(c, Debug); }, kHang, Ms(1)));

  WriteFile(dir / "logsinkd.toml", toml);
  ASSERT_EQ(daemon.Stop(), 0) << daemon.Stderr();
  ASSERT_TRUE(daemon.Start()) << daemon.Stderr();
  // The client reconnects by itself (its next pass after the daemon left).
  EXPECT_TRUE(WaitUntil([&] { return Produces(c, Debug); }, kHang, Ms(1)));
  ls_close(c);
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Stderr();
}

// With [limits] max_app above 64 a client's label can be longer than an
// answer carries (LS_APP_MAX): `logctl level` and `logctl sites --all`
// show its first 64 bytes, cut on a character. Before, one such client of
// any user made root's answers malformed (exit 1, after applying a rule).
TEST(RuntimeLevelConfig, AClientsLongLabelIsCutInTheAnswers) {
  TempDir dir;
  Daemon daemon(dir, {"--size", "4MiB"}, "[limits]\nmax_app = 200\n");
  ASSERT_TRUE(daemon.Start()) << daemon.Stderr();
  std::string app;
  for (int i = 0; i < 50; i++) app += "\xc3\xa9";  // 100 bytes of 2-byte characters
  // By hand: liblogsink and ls_hello_encode keep labels within 64 bytes.
  const std::string hello = Hello2(app, LS_CAP_LEVELS, "");
  int fd = ConnectUnix(daemon.socket);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(send(fd, hello.data(), hello.size(), MSG_NOSIGNAL), ssize_t(hello.size()));
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 30000), 1) << "the WELCOME";  // the client is known now
  auto logctl = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--socket", daemon.socket});
    return RunProcess(BinPath("logctl"), args);
  };
  ProcResult r = logctl({"level"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(app.substr(0, 64)), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(app.substr(0, 66)), std::string::npos) << r.out;
  r = logctl({"sites", "--all"});
  EXPECT_EQ(r.status, 0) << r.err;
  close(fd);
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Stderr();
}

TEST(RuntimeLevelConfig, ABadRulesTextStopsTheDaemonAtStart) {
  TempDir dir;
  Daemon daemon(dir, {}, "[levels]\nrules = \"app=x loud\"\n");
  EXPECT_FALSE(daemon.Start());
  EXPECT_EQ(daemon.exit_status(), 2);
  EXPECT_NE(daemon.Stderr().find("[levels] rules: rule 1 ('app=x loud'): 'loud' is not a level"),
            std::string::npos)
      << daemon.Stderr();
}

// A daemon of version 1 answers a version 2 HELLO with REFUSE (highest 1)
// and closes: liblogsink connects again and says HELLO in version 1, then
// sends its records as before.
TEST(RuntimeLevelVersions, AClientSpeaksVersionOneToADaemonThatKnowsNoOther) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  const std::string path = dir / "old.sock";
  int lfd = ListenUnix(path);
  ASSERT_GE(lfd, 0);
  ls_options o;
  ls_options_init(&o);
  o.level = LS_INFO;
  o.levels = "net.c=debug";
  ls_client *c = ls_open(path.c_str(), "oldtimer", &o);
  ASSERT_NE(c, nullptr);
  // Info, below flush_level: the call does not wait for the socket, which
  // this thread answers below.
  LS_LOG(c, LS_INFO, "to an old daemon %d", 1);
  // Fields, which a version 1 daemon does not take: the list ends the text.
  LS_LOG(c, LS_INFO, "fields for an old daemon %d" LS_FIELDS("user=%s ok:bool=%d"), 2, "al", 1);

  int fd = AcceptWithin(lfd);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> buf;
  ls_frame f;
  ASSERT_TRUE(ReadFrameWithin(fd, &buf, &f));
  ASSERT_EQ(f.type, LS_F_HELLO);
  ls_hello h;
  ASSERT_EQ(ls_hello_decode(f.payload, f.len, &h), 0);
  EXPECT_EQ(h.version, 2u);
  EXPECT_EQ(h.caps, LS_CAP_LEVELS | LS_CAP_CENSUS | LS_CAP_FIELDS | LS_CAP_BRACES | LS_CAP_SHM);
  EXPECT_EQ(std::string(h.levels, h.levels_len), "info,net.c=debug");  // its own rules
  uint8_t refuse[128];
  const char reason[] = "protocol version 2 is not supported; this logsinkd speaks 1";
  ls_refuse rf = {1, reason, sizeof reason - 1};
  ptrdiff_t n = ls_refuse_encode(refuse, sizeof refuse, &rf);
  ASSERT_GT(n, 0);
  ASSERT_EQ(send(fd, refuse, size_t(n), MSG_NOSIGNAL), n);
  close(fd);

  fd = AcceptWithin(lfd);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(ReadFrameWithin(fd, &buf, &f));
  ASSERT_EQ(f.type, LS_F_HELLO);
  ASSERT_EQ(ls_hello_decode(f.payload, f.len, &h), 0);
  EXPECT_EQ(h.version, 1u);
  EXPECT_EQ(std::string(h.app, h.app_len), "oldtimer");
  bool records = false;
  std::vector<std::string> interned;
  while (!records && ReadFrameWithin(fd, &buf, &f)) {
    records = f.type == LS_F_RECORDS;
    ls_intern in;
    if (f.type == LS_F_INTERN && ls_intern_decode(f.payload, f.len, &in) == 0) {
      EXPECT_EQ(in.fields, 0);
      interned.emplace_back(in.fmt, in.fmt_len);
    }
  }
  EXPECT_TRUE(records);
  EXPECT_EQ(interned, (std::vector<std::string>{"to an old daemon %d",
                                                "fields for an old daemon %d user=%s ok:bool=%d"}));
  ls_close(c);
  close(fd);
  close(lfd);
}

// A daemon that answers HELLO late (one starting, the connection in its
// listening socket's backlog): the client does not wait past its send
// timeout; its records follow the HELLO, and the WELCOME's rules apply
// when it comes, as LEVELS do later.
TEST(RuntimeLevelVersions, AWelcomeThatComesLateAppliesWhenItComes) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  const std::string path = dir / "slow.sock";
  int lfd = ListenUnix(path);
  ASSERT_GE(lfd, 0);
  ls_options o;
  ls_options_init(&o);
  o.level = LS_INFO;
  o.send_timeout_ms = 50;
  ls_client *c = ls_open(path.c_str(), "late", &o);
  ASSERT_NE(c, nullptr);
  LS_LOG(c, LS_INFO, "before the welcome %d", 1);
  int fd = AcceptWithin(lfd);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> buf;
  ls_frame f;
  ASSERT_TRUE(ReadFrameWithin(fd, &buf, &f));
  ASSERT_EQ(f.type, LS_F_HELLO);
  // Records after the HELLO: the client stopped waiting for the answer.
  bool records = false;
  while (!records && ReadFrameWithin(fd, &buf, &f)) records = f.type == LS_F_RECORDS;
  ASSERT_TRUE(records);
  EXPECT_FALSE(Produces(c, Debug));
  uint8_t out[64];
  ls_welcome w = {2, LS_CAP_LEVELS, "debug", 5};
  ptrdiff_t n = ls_welcome_encode(out, sizeof out, &w);
  ASSERT_GT(n, 0);
  ASSERT_EQ(send(fd, out, size_t(n), MSG_NOSIGNAL), n);
  EXPECT_TRUE(WaitUntil([&] { return Produces(c, Debug); }, kHang, Ms(1)));
  n = ls_levels_encode(out, sizeof out, "", 0);
  ASSERT_GT(n, 0);
  ASSERT_EQ(send(fd, out, size_t(n), MSG_NOSIGNAL), n);
  EXPECT_TRUE(WaitUntil([&] { return !Produces(c, Debug); }, kHang, Ms(1)));
  ls_close(c);
  close(fd);
  close(lfd);
}

}  // namespace
}  // namespace logsink::test
