// logctl_cli_test.cc: integration tests of the real logctl binary (tail, cat,
// filters, output modes, verify, export, stats, error paths) against ring
// files written directly with storage's RingWriter.
#include <grp.h>
#include <pty.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "cli_util.h"
#include "common/staged_binary.h"
#include "common/unix_socket.h"
#include "logsink/proto/frame_encode.h"
#include "logsink/proto/wire.h"

namespace logsink::test {
namespace {

constexpr uint64_t kMs = 1000000;

std::string Line(uint64_t ts_ms, const std::string &rest) {
  char ts[64];
  snprintf(ts, sizeof ts, "2025-11-23T10:%02u:%02u.%03u000+0000 ", unsigned(ts_ms / 60000 % 60),
           unsigned(ts_ms / 1000 % 60), unsigned(ts_ms % 1000));
  return ts + rest;
}

class LogctlTest : public ::testing::Test {
 protected:
  // n records "n=<i>" at info level, 1 ms apart.
  void WriteNumbered(TestRing *ring, int n, int start = 0) {
    uint32_t site = ring->Intern(6, "n=%d");
    for (int i = start; i < start + n; i++)
      ring->Add(site, "i", Args().i(i).bytes(), kT0 + i * kMs);
  }
  // A ring with no records at r.ring; returns its path.
  std::string EmptyRing() {
    std::string f = dir_.File("r.ring");
    TestRing(f).Close();
    return f;
  }
  TempDir dir_;
};

TEST_F(LogctlTest, TailPrintsTheLastTenOldestFirst) {
  TestRing ring(dir_.File("r.ring"));
  WriteNumbered(&ring, 25);
  ring.Close();
  Result r = RunLogctl({"tail", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 10u) << r.out;
  for (int i = 0; i < 10; i++)
    EXPECT_EQ(lines[i],
              Line(15 + i, "testapp(testcomm)[4242]: <info> n=" + std::to_string(15 + i)));
  EXPECT_EQ(r.err, "");
}

TEST_F(LogctlTest, TailLineCounts) {
  TestRing ring(dir_.File("r.ring"));
  WriteNumbered(&ring, 25);
  ring.Close();
  Result r = RunLogctl({"tail", "-n", "0", "--file", dir_.File("r.ring")});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  r = RunLogctl({"tail", "-n1", "--file", dir_.File("r.ring")});
  EXPECT_EQ(r.out, Line(24, "testapp(testcomm)[4242]: <info> n=24\n"));
  r = RunLogctl({"tail", "--lines=1000", "--file", dir_.File("r.ring")});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 25u);
  EXPECT_EQ(lines.front(), Line(0, "testapp(testcomm)[4242]: <info> n=0"));
}

TEST_F(LogctlTest, EmptyRingPrintsNothing) {
  TestRing ring(dir_.File("r.ring"));
  ring.Close();
  for (const char *cmd : {"tail", "cat"}) {
    Result r = RunLogctl({cmd, "--file", dir_.File("r.ring")});
    EXPECT_EQ(r.status, 0) << cmd << r.err;
    EXPECT_EQ(r.out, "") << cmd;
  }
}

TEST_F(LogctlTest, CatPrintsEveryStoredRecordInOrderAcrossWraps) {
  // The block layout as it is: this test laps a small ring.
  TestRing ring(dir_.File("r.ring"), 12288 + 8 * 4096, 4096, LS_CODEC_NONE);
  const int kN = 20000;  // several laps of an 8-block ring
  WriteNumbered(&ring, kN);
  EXPECT_GT(ring.writer()->stats().wraps + ring.writer()->current_block_seq() / 8, 3u);
  ring.Close();
  Result r = RunLogctl({"cat", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_GT(lines.size(), 100u);
  ASSERT_LT(lines.size(), static_cast<size_t>(kN));
  int first = kN - static_cast<int>(lines.size());
  for (size_t i = 0; i < lines.size(); i++) {
    std::string want = "<info> n=" + std::to_string(first + static_cast<int>(i));
    ASSERT_EQ(lines[i].substr(lines[i].size() - want.size()), want) << i;
  }
  // tail -n agrees with cat's ending.
  r = RunLogctl({"tail", "-n", "5", "--file", dir_.File("r.ring")});
  EXPECT_EQ(Lines(r.out), std::vector<std::string>(lines.end() - 5, lines.end()));
}

TEST_F(LogctlTest, LevelFilterShowsThatLevelAndMoreSevere) {
  TestRing ring(dir_.File("r.ring"));
  const char *names[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};
  for (int l = 0; l < 8; l++) {
    uint32_t site = ring.Intern(static_cast<uint8_t>(l), std::string("at ") + names[l]);
    ring.Add(site, "", "", kT0 + l * kMs);
  }
  ring.Close();
  Result r = RunLogctl({"cat", "--level", "warning", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_EQ(lines[0], Line(0, "testapp(testcomm)[4242]: <emerg> at emerg"));
  EXPECT_EQ(lines[4], Line(4, "testapp(testcomm)[4242]: <warning> at warning"));
  r = RunLogctl({"cat", "--level", "3", "--file", dir_.File("r.ring")});
  EXPECT_EQ(Lines(r.out).size(), 4u);
  r = RunLogctl({"cat", "-p", "debug", "--file", dir_.File("r.ring")});
  EXPECT_EQ(Lines(r.out).size(), 8u);
}

// Issue 15: -p takes journalctl's ranges FROM..TO and names in any case.
TEST_F(LogctlTest, LevelRangesAndNamesInAnyCase) {
  TestRing ring(dir_.File("r.ring"));
  const char *names[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};
  for (int l = 0; l < 8; l++) {
    uint32_t site = ring.Intern(static_cast<uint8_t>(l), std::string("at ") + names[l]);
    ring.Add(site, "", "", kT0 + l * kMs);
  }
  ring.Close();
  std::string f = dir_.File("r.ring");
  // The levels shown, as the digits of their numbers.
  auto levels = [&](const std::string &p) {
    Result r = RunLogctl({"cat", "-p", p, "--file", f});
    EXPECT_EQ(r.status, 0) << p << ": " << r.err;
    std::string got;
    for (auto &l : Lines(r.out))
      for (int i = 0; i < 8; i++)
        if (l.size() > strlen(names[i]) + 3 &&
            l.compare(l.size() - strlen(names[i]) - 3, std::string::npos,
                      std::string("at ") + names[i]) == 0)
          got += char('0' + i);
    return got;
  };
  EXPECT_EQ(levels("err..warning"), "34");
  EXPECT_EQ(levels("warning..err"), "34");  // either order, like journalctl
  EXPECT_EQ(levels("..warning"), "01234");
  EXPECT_EQ(levels("notice.."), "567");
  EXPECT_EQ(levels(".."), "01234567");
  EXPECT_EQ(levels("3..4"), "34");
  EXPECT_EQ(levels("1..crit"), "12");
  EXPECT_EQ(levels("ERR"), "0123");
  EXPECT_EQ(levels("Warning"), "01234");
  EXPECT_EQ(levels("CRIT..Notice"), "2345");
  EXPECT_EQ(levels("debug..debug"), "7");
  EXPECT_EQ(levels("5"), "012345");
  // tail counts matching records, and --level works like -p.
  Result r = RunLogctl({"tail", "-n", "1", "--level=alert..err", "--file", f});
  ASSERT_EQ(Lines(r.out).size(), 1u) << r.out << r.err;
  EXPECT_NE(r.out.find("at err"), std::string::npos) << r.out;
  for (const char *bad : {"loud", "err...warning", "err..loud", "8", "err..warning..", "-1", "",
                          "e", "errr", "0x3"}) {
    r = RunLogctl({"cat", "-p", bad, "--file", f});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_EQ(r.out, "") << bad;
    EXPECT_EQ(r.err, std::string("logctl: cat: bad level '") + bad +
                         "': expected emerg, alert, crit, err, warning, notice, info, debug (any "
                         "case) or 0-7, or a range FROM..TO such as err..warning, ..warning, "
                         "err..\nTry 'logctl cat --help'.\n")
        << bad;
  }
  // send takes one level (in any case) or FACILITY.LEVEL, not a range.
  r = RunLogctl({"send", "--level", "err..warning", "--socket", dir_.File("none.sock"), "x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "logctl: send: bad level 'err..warning': expected LEVEL or FACILITY.LEVEL (user.err, "
            "local3.notice); levels: emerg, alert, crit, err, warning, notice, info, debug or "
            "0-7; facilities: kern, user, mail, daemon, auth, syslog, lpr, news, uucp, cron, "
            "authpriv, ftp, ntp, audit, alert, clock, local0-local7");
  r = RunLogctl({"cat", "--help"});
  EXPECT_NE(r.out.find("FROM..TO"), std::string::npos) << r.out;
}

TEST_F(LogctlTest, PidUidAndAppFilters) {
  TestRing ring(dir_.File("r.ring"));
  Source other{2, 777, 0, 0, "", "otherproc"};
  uint32_t site = ring.Intern(6, "from %s");
  for (int i = 0; i < 6; i++) {
    bool mine = i % 2 == 0;
    ring.Add(site, "s", Args().s(mine ? "mine" : "other").bytes(), kT0 + i * kMs,
             mine ? &ring.source() : &other);
  }
  ring.Close();
  std::string f = dir_.File("r.ring");
  Result r = RunLogctl({"cat", "--pid", "777", "--file", f});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  for (auto &l : lines)
    EXPECT_NE(l.find("otherproc[777]: <info> from other"), std::string::npos) << l;
  r = RunLogctl({"cat", "--uid", "1000", "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  for (auto &l : lines)
    EXPECT_NE(l.find("testapp(testcomm)[4242]: <info> from mine"), std::string::npos);
  r = RunLogctl({"cat", "--app", "testapp", "--file", f});
  EXPECT_EQ(Lines(r.out).size(), 3u);
  // An empty label falls back to the process name.
  r = RunLogctl({"cat", "--app", "otherproc", "--file", f});
  EXPECT_EQ(Lines(r.out).size(), 3u);
  r = RunLogctl({"cat", "--app", "nobody", "--file", f});
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.status, 0);
}

// Issue 15: a repeated --pid, --uid, --app or --grep matches any of its
// values (the last one used to win); different filters are ANDed.
TEST_F(LogctlTest, RepeatedMatchesAreOredAndFieldsAnded) {
  TestRing ring(dir_.File("r.ring"));
  Source a{1, 101, 1001, 0, "alpha", "alpha"};
  Source b{2, 102, 1002, 0, "beta", "beta"};
  Source c{3, 103, 1003, 0, "", "gamma"};
  uint32_t info = ring.Intern(6, "%s says %s");
  uint32_t err = ring.Intern(3, "%s fails %s");
  int t = 0;
  for (const Source *src : {&a, &b, &c}) {
    std::string name(src->comm);
    ring.Add(info, "ss", Args().s(name).s("hello").bytes(), kT0 + t++ * kMs, src);
    ring.Add(err, "ss", Args().s(name).s("badly").bytes(), kT0 + t++ * kMs, src);
  }
  ring.Close();
  std::string f = dir_.File("r.ring");
  // The messages shown, joined by '|'.
  auto shown = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "cat");
    args.push_back("--file");
    args.push_back(f);
    Result r = RunLogctl(args);
    EXPECT_EQ(r.status, 0) << r.err;
    std::string got;
    for (auto &l : Lines(r.out)) {
      size_t p = l.find("> ");
      if (!got.empty()) got += '|';
      got.append(p == std::string::npos ? l : l.substr(p + 2));
    }
    return got;
  };
  EXPECT_EQ(shown({"--app", "alpha", "--app", "gamma"}),
            "alpha says hello|alpha fails badly|gamma says hello|gamma fails badly");
  EXPECT_EQ(shown({"--pid", "102", "--pid", "103"}),
            "beta says hello|beta fails badly|gamma says hello|gamma fails badly");
  EXPECT_EQ(shown({"--uid", "1001", "--uid", "1002", "--uid", "1001"}),
            "alpha says hello|alpha fails badly|beta says hello|beta fails badly");
  EXPECT_EQ(shown({"-g", "^beta says", "--grep", "gamma fails"}),
            "beta says hello|gamma fails badly");
  EXPECT_EQ(shown({"-g", "^BETA SAYS", "-i", "--grep", "GAMMA"}),
            "beta says hello|gamma says hello|gamma fails badly");
  // Across fields: AND.
  EXPECT_EQ(shown({"--app", "alpha", "--app", "beta", "-p", "err"}),
            "alpha fails badly|beta fails badly");
  EXPECT_EQ(shown({"--app", "alpha", "--app", "beta", "--pid", "102", "--pid", "103"}),
            "beta says hello|beta fails badly");
  EXPECT_EQ(shown({"--app", "alpha", "--grep", "beta", "--grep", "gamma"}), "");
  // tail walks back for matches of any value.
  Result r = RunLogctl({"tail", "-n", "3", "--app", "alpha", "--app", "gamma", "--file", f});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_NE(lines[0].find("alpha fails badly"), std::string::npos);
  EXPECT_NE(lines[2].find("gamma fails badly"), std::string::npos);
  // One bad expression among good ones is still a usage error.
  r = RunLogctl({"cat", "-g", "ok", "-g", "(", "--file", f});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("logctl: cat: bad regular expression '(': ", 0), 0u) << r.err;
  r = RunLogctl({"cat", "--help"});
  EXPECT_NE(r.out.find("A repeated --pid, --uid, --app, --unit or --grep matches any of its "
                       "values"),
            std::string::npos)
      << r.out;
}

TEST_F(LogctlTest, SinceAndUntil) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "m%d");
  for (int i = 0; i < 600; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i * 1000 * kMs);
  ring.Close();
  std::string f = dir_.File("r.ring");
  // kT0 = 2025-11-23T10:00:00Z; records one second apart.
  Result r = RunLogctl({"cat", "--since", "2025-11-23T10:09:50Z", "--file", f});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 10u) << r.err;
  EXPECT_NE(lines[0].find(" m590"), std::string::npos) << lines[0];
  r = RunLogctl({"cat", "--since", "@1763892100", "--until", "2025-11-23 10:01:49", "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 10u) << r.out << r.err;  // TZ=UTC in the child
  EXPECT_NE(lines[0].find(" m100"), std::string::npos);
  EXPECT_NE(lines[9].find(" m109"), std::string::npos);
  r = RunLogctl({"tail", "-n", "3", "--since", "2025-11-23T11:09:00+01:00", "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_NE(lines[2].find(" m599"), std::string::npos);
  r = RunLogctl({"tail", "-n", "100", "--since", "2025-11-23T10:09:58Z", "--file", f});
  EXPECT_EQ(Lines(r.out).size(), 2u);
  // Relative times: the records are in the past, "1h ago" is after them all.
  r = RunLogctl({"cat", "--since", "1h ago", "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  r = RunLogctl({"cat", "--until", "yesterday", "--file", f});
  EXPECT_EQ(Lines(r.out).size(), 600u);
}

TEST_F(LogctlTest, GrepMatchesTheRenderedMessage) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "user %s port %d");
  const char *users[] = {"alice", "bob", "carol", "bob"};
  for (int i = 0; i < 4; i++)
    ring.Add(site, "si", Args().s(users[i]).i(20 + i).bytes(), kT0 + i * kMs);
  ring.Close();
  Result r = RunLogctl({"cat", "--grep", "bob port 2[0-9]$", "--file", dir_.File("r.ring")});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_NE(lines[0].find("user bob port 21"), std::string::npos);
  EXPECT_NE(lines[1].find("user bob port 23"), std::string::npos);
  r = RunLogctl({"cat", "-g", "CAROL", "-i", "--file", dir_.File("r.ring")});
  EXPECT_EQ(Lines(r.out).size(), 1u);
}

TEST_F(LogctlTest, TailWithFilterWalksBackForMatches) {
  TestRing ring(dir_.File("r.ring"), 12288 + 64 * 4096);
  uint32_t rare = ring.Intern(3, "rare event %d");
  uint32_t noise = ring.Intern(6, "noise %d");
  ring.Add(rare, "i", Args().i(1).bytes(), kT0);
  ring.Add(rare, "i", Args().i(2).bytes(), kT0 + 1);
  for (int i = 0; i < 8000; i++) ring.Add(noise, "i", Args().i(i).bytes(), kT0 + 2 + i);
  ring.Close();
  Result r = RunLogctl({"tail", "-n", "1", "--level", "err", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_NE(lines[0].find("rare event 2"), std::string::npos);
  r = RunLogctl({"tail", "-n", "5", "--grep", "^rare", "--file", dir_.File("r.ring")});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("rare event 1"), std::string::npos);
  EXPECT_NE(lines[1].find("rare event 2"), std::string::npos);
  r = RunLogctl({"tail", "-n", "3", "--grep", "noise (7999|5)$", "--file", dir_.File("r.ring")});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("noise 5"), std::string::npos);
  EXPECT_NE(lines[1].find("noise 7999"), std::string::npos);
}

// Issue 12 (9): a label cannot imitate another line's prefix, and a label
// that is not the process's name shows the name beside it.
TEST_F(LogctlTest, ShortPrefixShowsLabelAndCommAndEscapesStructure) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "hello");
  Source fake{2, 77, 1000, 100, "sshd[1]: <crit> fake", "python3"};
  Source same{3, 78, 0, 0, "sshd", "sshd"};
  Source none{4, 79, 0, 0, "", "cron"};
  ring.Add(site, "", "", kT0, &fake);
  ring.Add(site, "", "", kT0 + 1, &same);
  ring.Add(site, "", "", kT0 + 2, &none);
  ring.Close();
  Result r = RunLogctl({"cat", "--file", dir_.File("r.ring")});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.err;
  EXPECT_EQ(lines[0],
            Line(0, "sshd\\x5b1\\x5d\\x3a\\x20\\x3ccrit\\x3e\\x20fake(python3)[77]: <info> hello"));
  EXPECT_NE(lines[1].find(" sshd[78]: <info> hello"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(" cron[79]: <info> hello"), std::string::npos) << lines[2];
}

// Issue 28: a record labelled or named "kernel" from a uid other than 0
// shows that uid (it could pass for the kernel's); root's does not, nor
// does an ordinary label of another uid (only its own claim, shown beside
// its process name as above).
TEST_F(LogctlTest, ShortPrefixShowsTheUidOfAKernelNameNotRoots) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(0, "BUG: soft lockup");
  Source label{2, 77, 1000, 100, "kernel", "python3"};
  Source comm{3, 78, 1000, 100, "", "kernel"};
  Source root{4, 79, 0, 0, "kernel", "kernel"};
  Source other{5, 80, 1000, 100, "myapp", "myapp"};
  for (const Source *s : {&label, &comm, &root, &other}) ring.Add(site, "", "", kT0, s);
  ring.Close();
  Result r = RunLogctl({"cat", "--file", dir_.File("r.ring")});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.err;
  EXPECT_EQ(lines[0], Line(0, "kernel(python3)[77] (uid 1000): <emerg> BUG: soft lockup"));
  EXPECT_NE(lines[1].find(" kernel[78] (uid 1000): <emerg> BUG"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(" kernel[79]: <emerg> BUG"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(" myapp[80]: <emerg> BUG"), std::string::npos) << lines[3];
}

TEST_F(LogctlTest, JsonLinesAreValidAndCarryTheFields) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(4, "user %s port %d ratio %.2f", 42);
  ring.Add(site, "sif",
           Args().s("b\"o\\b\n\x01").i(-22).raw(std::string("\0\0\0\0\0\0\xf8\x3f", 8)).bytes(),
           kT0 + 123456789, nullptr, 99);
  ring.writer()->AppendDropped(ring.source(), kT0 + 200 * kMs, 17, kT0 - 1000 * kMs);
  ring.Close();
  Result r = RunLogctl({"cat", "--json", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  json v = ParseJson(lines[0]);
  ASSERT_FALSE(v.is_discarded()) << lines[0];
  EXPECT_EQ(v["seq"].get<uint64_t>(), 0u);
  EXPECT_EQ(v["ts_ns"].get<uint64_t>(), kT0 + 123456789);
  EXPECT_EQ(v["ts"].get<std::string>(), "2025-11-23T10:00:00.123456789Z");
  EXPECT_EQ(v["level"].get<std::string>(), "warning");
  EXPECT_EQ(v["priority"].get<int64_t>(), 4);
  EXPECT_EQ(v["pid"].get<int64_t>(), 4242);
  EXPECT_EQ(v["uid"].get<int64_t>(), 1000);
  EXPECT_EQ(v["gid"].get<int64_t>(), 100);
  EXPECT_EQ(v["app"].get<std::string>(), "testapp");
  EXPECT_EQ(v["comm"].get<std::string>(), "testcomm");
  EXPECT_EQ(v["tid"].get<int64_t>(), 99);
  EXPECT_EQ(v["msg"].get<std::string>(), "user b\"o\\b\n\x01 port -22 ratio 1.50");
  EXPECT_EQ(v["fmt"].get<std::string>(), "user %s port %d ratio %.2f");
  EXPECT_EQ(v["file"].get<std::string>(), "test.c");
  EXPECT_EQ(v["line"].get<int64_t>(), 42);
  ASSERT_EQ(v["args"].size(), 3u);
  EXPECT_EQ(v["args"][0].get<std::string>(), "b\"o\\b\n\x01");
  EXPECT_EQ(v["args"][1].get<int64_t>(), -22);
  EXPECT_EQ(v["args"][2].dump(), "1.5");
  EXPECT_FALSE(v.contains("truncated"));
  json d = ParseJson(lines[1]);
  ASSERT_FALSE(d.is_discarded()) << lines[1];
  EXPECT_EQ(d["dropped"].get<uint64_t>(), 17u);
  EXPECT_EQ(d["seq"].get<uint64_t>(), 1u);
  EXPECT_EQ(d["msg"].get<std::string>(),
            "-- 17 records dropped by the client since 2025-11-23 09:59:59.000 +0000 --");
  // --output json is the same as --json.
  Result r2 = RunLogctl({"cat", "-o", "json", "--file", dir_.File("r.ring")});
  EXPECT_EQ(r2.out, r.out);
}

// FORMAT.md, "Named fields": trailing %.0s arguments that read NAME=VALUE
// are shown by name in --json; anything else stays an argument only.
TEST_F(LogctlTest, NamedFieldsInJson) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  uint32_t two = ring.Intern(6, "a %d%.0s%.0s%.0s");
  uint32_t literal = ring.Intern(6, "100%%.0s");
  uint32_t badname = ring.Intern(6, "x%.0s");
  uint32_t middle = ring.Intern(6, "%.0s y %d");
  ring.Add(two, "isss", Args().i(1).s("k=v").s("not a field").s("req.id=a=b").bytes(), kT0);
  ring.Add(literal, "", "", kT0 + 1);
  ring.Add(badname, "s", Args().s("1bad=v").bytes(), kT0 + 2);
  ring.Add(middle, "si", Args().s("k=v").i(2).bytes(), kT0 + 3);
  ring.Close();
  Result r = RunLogctl({"cat", "--json", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u);
  json v = ParseJson(lines[0]);
  EXPECT_EQ(v["msg"], "a 1");
  EXPECT_EQ(v["fields"], json::parse(R"({"k":"v","req.id":"a=b"})")) << lines[0];
  EXPECT_EQ(v["args"].size(), 4u);  // the arguments stay as they are
  for (size_t i = 1; i < 4; i++) EXPECT_FALSE(ParseJson(lines[i]).contains("fields")) << lines[i];
  EXPECT_EQ(ParseJson(lines[1])["msg"], "100%.0s");
  // Text output is unchanged: %.0s prints nothing.
  EXPECT_EQ(Lines(RunLogctl({"cat", "-o", "cat", "--file", f}).out),
            (std::vector<std::string>{"a 1", "100%.0s", "x", " y 2"}));
}

TEST_F(LogctlTest, DroppedEntryInShortOutput) {
  TestRing ring(dir_.File("r.ring"));
  ring.writer()->AppendDropped(ring.source(), kT0 + 5 * kMs, 3, kT0);
  ring.Close();
  Result r = RunLogctl({"tail", "--file", dir_.File("r.ring")});
  EXPECT_EQ(r.out,
            Line(5,
                 "testapp(testcomm)[4242]: <warning> -- 3 records dropped by the client since "
                 "2025-11-23 10:00:00.000 +0000 --\n"));
}

TEST_F(LogctlTest, FormatArgumentMismatchShowsTheRawParts) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "a %d and %s");
  // The writer trusts its caller (the daemon validates); store bad arguments.
  ring.Add(site, "i", Args().i(5).bytes(), kT0);
  ring.Close();
  Result r = RunLogctl({"cat", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, Line(0,
                        "testapp(testcomm)[4242]: <info> [logsink: format/argument mismatch] "
                        "fmt=\"a %d and %s\" args=[i:5]\n"));
  r = RunLogctl({"cat", "--json", "--file", dir_.File("r.ring")});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_TRUE(v["mismatch"].get<bool>());
}

TEST_F(LogctlTest, ControlCharactersAreEscaped) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "evil %s");
  ring.Add(site, "s", Args().s("\x1b[2J\x1b]0;owned\x07 \xff\xc2\x9b end").bytes(), kT0);
  ring.Close();
  for (const char *mode : {"short", "raw"}) {
    Result r = RunLogctl({"cat", "-o", mode, "--file", dir_.File("r.ring")});
    ASSERT_EQ(r.status, 0);
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << mode;
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << mode;
    EXPECT_NE(r.out.find("\\x1b[2J\\x1b]0;owned\\x07 \\xff\\xc2\\x9b end"), std::string::npos)
        << r.out;
  }
  Result r = RunLogctl({"cat", "--json", "--file", dir_.File("r.ring")});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["msg"].get<std::string>(), "evil \x1b[2J\x1b]0;owned\x07 \xef\xbf\xbd\xc2\x9b end");
}

// Runs logctl on a pseudo-terminal and returns what it printed there.
// LOGSINK_PAGER is "" (no pager) unless env sets it.
// stdout_to: when given, standard output goes to that file instead (standard
// error and input stay on the terminal).
std::string RunOnTerminal(const std::vector<std::string> &args, bool no_color_env,
                          const std::vector<std::pair<std::string, std::string>> &env = {},
                          const std::string &stdout_to = "", const std::string &binary = "") {
  const std::string logctl = binary.empty() ? LogctlPath() : binary;
  int master;
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    setenv("TZ", "UTC", 1);
    setenv("LOGSINK_PAGER", "", 1);
    unsetenv("LOGSINK_FILE");
    unsetenv("LESS");
    // Not under sudo unless the test says so (the pager's secure mode).
    for (const char *v : {"SUDO_UID", "PKEXEC_UID", "LOGSINK_PAGERSECURE"}) unsetenv(v);
    for (const auto &[k, v] : env) {
      if (k[0] == '-')
        unsetenv(k.c_str() + 1);  // "-NAME": unset NAME
      else
        setenv(k.c_str(), v.c_str(), 1);
    }
    if (no_color_env) {
      setenv("NO_COLOR", "1", 1);
    } else {
      unsetenv("NO_COLOR");
    }
    if (!stdout_to.empty()) {
      int fd = open(stdout_to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(126);
    }
    std::vector<char *> argv{const_cast<char *>(logctl.c_str())};
    for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  std::string out;
  auto deadline = Clock::now() + kHang;
  while (Clock::now() < deadline) {
    struct pollfd p = {master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char b[4096];
    ssize_t n = read(master, b, sizeof b);
    if (n <= 0) break;  // EIO once the child is gone
    out.append(b, n);
  }
  close(master);
  waitpid(pid, nullptr, 0);
  return out;
}

// Issue 27: a progress line on standard error when it is a terminal and the
// records go elsewhere; never in a pipe, never over records on the terminal.
TEST_F(LogctlTest, ProgressOnlyOnATerminalAndNotOverTheRecords) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 9000);
  ring.Close();
  std::string out = dir_.File("x.txt");
  std::string screen =
      RunOnTerminal({"export", "-o", out, "--file", f}, true, {{"LOGSINK_PROGRESS", "1"}});
  EXPECT_EQ(screen.rfind("\rlogctl: export: 0% (1 of 9000 records)\x1b[K", 0), 0u) << screen;
  EXPECT_GE(screen.size(), 4u);
  EXPECT_EQ(screen.substr(screen.size() - 4), "\r\x1b[K") << "erased at the end: " << screen;
  EXPECT_EQ(ReadFile(out), RunLogctl({"cat", "--file", f}).out);
  // Without the variable it waits 0.5 s, longer than this export takes.
  ASSERT_EQ(unlink(out.c_str()), 0);
  EXPECT_EQ(RunOnTerminal({"export", "-o", out, "--file", f}, true), "");
  // Standard error in a pipe: never.
  SpawnOptions env;
  env.env = {{"LOGSINK_PROGRESS", "1"}};
  Result r = RunLogctl({"cat", "--file", f}, env);
  EXPECT_EQ(r.err, "");
  // The records on the terminal: they are the progress.
  screen = RunOnTerminal({"cat", "--no-pager", "--file", f}, true, {{"LOGSINK_PROGRESS", "1"}});
  EXPECT_NE(screen.find("n=8999"), std::string::npos);
  EXPECT_EQ(screen.find("logctl: cat:"), std::string::npos);
  // cat into a file and verify (whose stdout lists problems) count too.
  const std::string cat_out = dir_.File("cat.txt");
  screen = RunOnTerminal({"cat", "--file", f}, true, {{"LOGSINK_PROGRESS", "1"}}, cat_out);
  EXPECT_EQ(screen.rfind("\rlogctl: cat: 0% (1 of 9000 records)\x1b[K", 0), 0u) << screen;
  EXPECT_EQ(ReadFile(cat_out), RunLogctl({"cat", "--file", f}).out);
  screen = RunOnTerminal({"verify", "--file", f}, true, {{"LOGSINK_PROGRESS", "1"}}, cat_out);
  EXPECT_EQ(screen.rfind("\rlogctl: verify: ", 0), 0u) << screen;
  EXPECT_NE(screen.find(" slots)\x1b[K"), std::string::npos) << screen;
  EXPECT_EQ(screen.substr(screen.size() - 4), "\r\x1b[K") << screen;
  EXPECT_NE(ReadFile(cat_out).find(": OK: 9000 records"), std::string::npos);
}

TEST_F(LogctlTest, ColourOnlyOnATerminalAndNotWithNoColor) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(3, "failed");
  ring.Add(site, "", "", kT0);
  ring.Close();
  std::vector<std::string> args{"cat", "--file", dir_.File("r.ring")};
  EXPECT_NE(RunOnTerminal(args, false).find("<err> \x1b[31mfailed\x1b[0m"), std::string::npos);
  EXPECT_EQ(RunOnTerminal(args, true).find('\x1b'), std::string::npos);
  args.push_back("--no-color");
  EXPECT_EQ(RunOnTerminal(args, false).find('\x1b'), std::string::npos);
  EXPECT_EQ(RunLogctl({"cat", "--file", dir_.File("r.ring")}).out.find('\x1b'), std::string::npos);
}

TEST_F(LogctlTest, RawOutputShowsFormatAndArguments) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "user %s port %d");
  ring.Add(site, "si", Args().s("bob").i(22).bytes(), kT0);
  ring.Close();
  Result r = RunLogctl({"cat", "--output", "raw", "--file", dir_.File("r.ring")});
  EXPECT_EQ(r.out, Line(0, "testapp(testcomm)[4242]: <info> site=" + std::to_string(site) +
                               " fmt=\"user %s port %d\" args=[s:\"bob\", i:22]\n"));
}

TEST_F(LogctlTest, TruncatedRecordIsMarked) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "big %s");
  ring.Add(site, "s", Args().s(std::string(10000, 'x')).bytes(), kT0);
  ring.Close();
  Result r = RunLogctl({"cat", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  size_t pos = r.out.find("\xe2\x80\xa6[truncated ");
  ASSERT_NE(pos, std::string::npos) << r.out.substr(0, 200);
  uint64_t cut = std::stoull(r.out.substr(pos + 14));
  size_t xs = std::count(r.out.begin(), r.out.end(), 'x');
  EXPECT_EQ(xs + cut, 10000u);
  r = RunLogctl({"cat", "--json", "--file", dir_.File("r.ring")});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded());
  EXPECT_EQ(v["truncated"].get<uint64_t>(), cut);
}

// Flips one byte inside block slot `slot` (FORMAT.md: slots follow the
// superblocks and the 4 KiB string table in TestRing's geometry).
uint64_t SlotOffset(int slot) { return 8192 + 4096 + uint64_t(slot) * 4096; }
void FlipByte(const std::string &path, uint64_t off) {
  int fd = open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  unsigned char c;
  ASSERT_EQ(pread(fd, &c, 1, off), 1);
  c ^= 0x55;
  ASSERT_EQ(pwrite(fd, &c, 1, off), 1);
  close(fd);
}

TEST_F(LogctlTest, CorruptedBlockFailsVerifyButOtherRecordsStillPrint) {
  std::string f = dir_.File("r.ring");
  // The block layout as it is: a flipped byte of stored entries fails the CRC.
  TestRing ring(f, 12288 + 8 * 4096, 4096, LS_CODEC_NONE);
  WriteNumbered(&ring, 2000);  // about 4 blocks
  uint64_t blocks = ring.writer()->current_block_seq() + 1;
  ring.Close();
  ASSERT_GE(blocks, 3u);
  Result clean = RunLogctl({"verify", "--file", f});
  EXPECT_EQ(clean.status, 0) << clean.out << clean.err;
  EXPECT_NE(clean.out.find(": OK: 2000 records"), std::string::npos) << clean.out;
  Result all = RunLogctl({"cat", "--file", f});
  auto before = Lines(all.out);
  ASSERT_EQ(before.size(), 2000u);

  FlipByte(f, SlotOffset(1) + LS_BLK_HDR + 100);  // inside block 1's entries
  Result v = RunLogctl({"verify", "--file", f});
  EXPECT_EQ(v.status, 1);
  EXPECT_NE(v.out.find("offset " + std::to_string(SlotOffset(1)) + ":"), std::string::npos)
      << v.out;
  EXPECT_NE(v.out.find("CORRUPT"), std::string::npos);

  Result c = RunLogctl({"cat", "--file", f});
  EXPECT_EQ(c.status, 0) << c.err;
  auto after = Lines(c.out);
  EXPECT_LT(after.size(), before.size());
  EXPECT_GT(after.size(), 0u);
  // Every line printed is one of the original lines, in the original order.
  size_t j = 0;
  for (auto &l : after) {
    while (j < before.size() && before[j] != l) j++;
    ASSERT_LT(j, before.size()) << "unexpected line: " << l;
  }
  // The first and the last block are intact.
  EXPECT_EQ(after.front(), before.front());
  EXPECT_EQ(after.back(), before.back());
  EXPECT_NE(c.err.find("offset " + std::to_string(SlotOffset(1))), std::string::npos) << c.err;
}

TEST_F(LogctlTest, DamagedStringTableShowsUnknownFormat) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  uint32_t site = ring.Intern(6, "n=%d");
  ring.Add(site, "i", Args().i(5).bytes(), kT0);
  ring.Close();
  FlipByte(f, 8192 + 20);  // the first string-table entry's format bytes
  Result c = RunLogctl({"cat", "--file", f});
  EXPECT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, Line(0, "testapp(testcomm)[4242]: <info> [unknown format #" +
                               std::to_string(site) + "] args=[hex:0a]\n"));
  Result v = RunLogctl({"verify", "--file", f});
  EXPECT_EQ(v.status, 1) << v.out;
  EXPECT_NE(v.out.find("offset 8192"), std::string::npos) << v.out;
}

TEST_F(LogctlTest, TruncatedFile) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 1000);
  ring.Close();
  // Cut the file in the middle of block slot 2.
  ASSERT_EQ(truncate(f.c_str(), static_cast<off_t>(SlotOffset(2) + 1000)), 0);
  Result v = RunLogctl({"verify", "--file", f});
  EXPECT_EQ(v.status, 1) << v.out << v.err;
  Result c = RunLogctl({"cat", "--file", f});
  auto lines = Lines(c.out);
  // Blocks 0 and 1 are whole: their records still print, in order.
  ASSERT_GT(lines.size(), 100u) << c.err;
  for (size_t i = 0; i < lines.size(); i++)
    ASSERT_NE(lines[i].find("n=" + std::to_string(i)), std::string::npos) << lines[i];
}

TEST_F(LogctlTest, ErrorMessagesAndExitStatus) {
  std::string missing = dir_.File("missing.ring");
  Result r = RunLogctl({"tail", "--file", missing});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + missing + ": No such file or directory\n");
  EXPECT_EQ(r.out, "");

  std::string junk = dir_.File("junk");
  {
    std::ofstream o(junk);
    o << std::string(100000, 'j');
  }
  for (const char *cmd : {"tail", "cat", "stats", "verify"}) {
    r = RunLogctl({cmd, "--file", junk});
    EXPECT_EQ(r.status, 1) << cmd;
    // Issue 15: said once, not "PATH: not a logsink ring file (PATH is not ...)".
    EXPECT_EQ(r.err, "logctl: " + junk + ": not a logsink ring file (no LSRING superblock)\n")
        << cmd;
  }

  r = RunLogctl({"cat", "--file", dir_.path()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + dir_.path() + ": not a regular file\n");

  std::string ring_path = dir_.File("r.ring");
  {
    TestRing ring(ring_path);
    ring.Close();
  }
  ASSERT_EQ(chmod(ring_path.c_str(), 0), 0);
  SpawnOptions nobody;
  nobody.as_nobody = true;
  r = RunLogctl({"cat", "--file", ring_path}, nobody);
  EXPECT_EQ(r.status, 1);
  // Issue 15: with a hint at who may read it.
  EXPECT_EQ(r.err, "logctl: " + ring_path +
                       ": Permission denied (members of the logsink group can read the system "
                       "ring: see logsinkd(8))\n");
  // Readable by its group (as the system ring is by logsink), not by us: the
  // hint names that group. 0040: the owner may not read it either; 0711: the
  // directory is searchable, so only the file's own mode refuses.
  ASSERT_EQ(chmod(ring_path.c_str(), 0040), 0);
  ASSERT_EQ(chmod(dir_.path().c_str(), 0711), 0);
  struct stat st;
  ASSERT_EQ(stat(ring_path.c_str(), &st), 0);
  struct group *g = getgrgid(st.st_gid);
  std::string group = g ? std::string(g->gr_name) : std::to_string(st.st_gid);
  r = RunLogctl({"tail", "--file", ring_path}, nobody);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + ring_path + ": Permission denied (members of the group " + group +
                       ", which owns it, can read it: see logsinkd(8))\n");
  ASSERT_EQ(chmod(dir_.path().c_str(), 0700), 0);
  ASSERT_EQ(chmod(ring_path.c_str(), 0644), 0);

  struct {
    std::vector<std::string> args;
    std::string err;
  } usage[] = {
      {{"tail", "--bogus"}, "logctl: tail: unknown option '--bogus'\n"},
      // Long options are not abbreviated: --cursor is not --cursor-file.
      {{"cat", "--cursor-f", "x"},
       "logctl: cat: unknown option '--cursor-f' (options are not abbreviated: --cursor-file?)\n"},
      {{"cat", "--fil=x"},
       "logctl: cat: unknown option '--fil' (options are not abbreviated: --file?)\n"},
      {{"tail", "-x"}, "logctl: tail: unknown option '-x'\n"},
      {{"tail", "-n"}, "logctl: tail: option '-n' needs an argument\n"},
      {{"tail", "-n", "abc"}, "logctl: tail: bad number of lines 'abc'\n"},
      // tail(1)'s +N (from the start) is not taken as N.
      {{"tail", "-n+2"},
       "logctl: tail: bad number of lines '+2' (-n counts from the newest record; to start at "
       "the oldest, use 'logctl cat' or --cursor)\n"},
      {{"cat", "--cursor", "x", "--after-cursor", "y"},
       "logctl: cat: only one of --cursor, --after-cursor and --cursor-file may be given\n"},
      {{"cat", "--level", "loud"},
       "logctl: cat: bad level 'loud': expected emerg, alert, crit, err, warning, notice, info, "
       "debug (any case) or 0-7, or a range FROM..TO such as err..warning, ..warning, err..\n"},
      {{"cat", "--pid", "-1"}, "logctl: cat: bad number '-1' for --pid\n"},
      {{"cat", "-f"}, "logctl: cat: option '-f' does not apply here\n"},
      {{"cat", "--output", "xml"},
       "logctl: cat: bad output mode 'xml' (short, short-iso, short-precise, short-unix, "
       "short-monotonic, cat, verbose, json, json-pretty or raw)\n"},
      {{"cat", "extra"}, "logctl: cat: unexpected argument 'extra'\n"},
      {{"cat", "--grep", "("}, ""},
      {{"cat", "--since", "soonish"}, ""},
      {{"tail", "-r", "-f"}, "logctl: tail: --reverse and --follow cannot be combined\n"},
      {{"export", "-r"}, "logctl: export: option '-r' does not apply here\n"},
      {{"stats", "--no-pager"}, "logctl: stats: option '--no-pager' does not apply here\n"},
      {{"stats", "--watch", "--json"},
       "logctl: stats: --watch prints text lines; it cannot be combined with --json\n"},
      {{"stats", "--watch=0.01"},
       "logctl: stats: bad interval '0.01' for --watch (0.1 to 3600 seconds)\n"},
      {{"export", "--output", "x", "--format", "yaml"},
       "logctl: export: bad format 'yaml' (text or json)\n"},
      {{"frobnicate"},
       "logctl: frobnicate: unknown command (tail, cat, stats, send, run, verify, "
       "export, help)\n"},
  };
  for (auto &u : usage) {
    r = RunLogctl(u.args);
    EXPECT_EQ(r.status, 2) << u.args[0] << " " << r.err;
    if (!u.err.empty()) {
      EXPECT_EQ(r.err.substr(0, r.err.find('\n') + 1), u.err);
    } else {
      EXPECT_EQ(r.err.rfind("logctl: " + u.args[0] + ": bad ", 0), 0u) << r.err;
    }
    EXPECT_EQ(r.out, "");
  }
  r = RunLogctl({"tail", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: logctl tail", 0), 0u);
}

// Issue 15: `logctl help CMD` prints CMD's usage (it printed the general
// one), the same as `logctl CMD --help`.
TEST_F(LogctlTest, HelpCommandPrintsThatCommandsUsage) {
  for (const char *cmd : {"tail", "cat", "stats", "send", "run", "verify", "export"}) {
    Result h = RunLogctl({"help", cmd});
    Result o = RunLogctl({cmd, "--help"});
    EXPECT_EQ(h.status, 0) << cmd << h.err;
    EXPECT_EQ(o.status, 0) << cmd << o.err;
    EXPECT_EQ(h.out.rfind(std::string("usage: logctl ") + cmd + " ", 0), 0u) << h.out;
    EXPECT_EQ(h.out, o.out) << cmd;
    EXPECT_EQ(h.err, "") << cmd;
    Result s = RunLogctl({cmd, "-h"});
    EXPECT_EQ(s.out, o.out) << cmd;
  }
  Result r = RunLogctl({"help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: logctl COMMAND [OPTIONS]\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("'logctl help COMMAND'"), std::string::npos) << r.out;
  EXPECT_EQ(RunLogctl({"--help"}).out, r.out);
  r = RunLogctl({"help", "frobnicate"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "logctl: frobnicate: unknown command (tail, cat, stats, send, run, verify, export, "
            "help)\n");
  r = RunLogctl({"help", "tail", "extra"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "logctl: help: unexpected argument 'extra'\n");
}

// Issue 27: an export cut short (here a file size limit standing in for a
// full disk) fails and leaves no partial file; `export -o json` is refused
// with what to write instead.
TEST_F(LogctlTest, ExportCutShortLeavesNoFileAndOutputModesAreNotFileNames) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 5000);
  ring.Close();
  std::string out = dir_.File("cut.txt");
  // SIGXFSZ ignored: the write fails with EFBIG instead of killing logctl.
  ProcResult r = RunProcess("/bin/bash", {"-c", "ulimit -f 8; trap '' XFSZ; exec \"$0\" \"$@\"",
                                          LogctlPath(), "export", "-o", out, "--file", f});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err,
            "logctl: " + out + ": File too large\nlogctl: " + out + ": removed (incomplete)\n");
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "a partial copy was left";

  Result j = RunLogctl({"export", "-o", "json", "--file", f});
  EXPECT_EQ(j.status, 2);
  EXPECT_EQ(j.err.substr(0, j.err.find('\n')),
            "logctl: export: -o names the file to write, and 'json' is an output mode: for that "
            "rendering use --format (text or json); for a file of that name, -o ./json");
  EXPECT_NE(access("json", F_OK), 0);
}

TEST_F(LogctlTest, ExportWritesAChronologicalRenderedCopy) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 5000);  // wraps: the file is not physically chronological
  ring.Close();
  Result cat = RunLogctl({"cat", "--file", f});
  std::string out = dir_.File("export.txt");
  Result r = RunLogctl({"export", "--output", out, "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), cat.out);
  std::string outj = dir_.File("export.json");
  r = RunLogctl({"export", "--output", outj, "--format", "json", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream inj(outj);
  std::string line;
  uint64_t prev = 0, n = 0;
  while (std::getline(inj, line)) {
    json v = ParseJson(line);
    ASSERT_FALSE(v.is_discarded()) << line;
    if (n++) {
      EXPECT_EQ(v["seq"].get<uint64_t>(), prev + 1);
    }
    prev = v["seq"].get<uint64_t>();
  }
  EXPECT_EQ(n, Lines(cat.out).size());
  r = RunLogctl({"export", "--output", f, "--file", f});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("is the ring file itself"), std::string::npos);
  r = RunLogctl({"export", "--output", dir_.File("no/such/dir"), "--file", f});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + dir_.File("no/such/dir") + ": No such file or directory\n");
}

// Issue 15: `export -o -` writes to standard output (it used to create a
// file named "-"); export's -o is the destination, as its --help says.
TEST_F(LogctlTest, ExportToStandardOutput) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 50);
  ring.Close();
  Result cat = RunLogctl({"cat", "--file", f});
  ASSERT_EQ(Lines(cat.out).size(), 50u);
  // Run in dir_, so a file named "-" would appear there.
  SubprocessOptions so;
  const std::string dir = dir_.path();
  so.child_setup = [dir] {
    setenv("TZ", "UTC", 1);
    if (chdir(dir.c_str()) != 0) _exit(126);
  };
  Subprocess p(LogctlPath(), {"export", "--output", "-", "--file", f}, so);
  Result r = p.Finish(Ms(30000));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, cat.out);
  EXPECT_EQ(r.err, "");
  struct stat st;
  EXPECT_NE(stat(dir_.File("-").c_str(), &st), 0) << "export -o - created a file named '-'";
  // Issue 15: without -o, export writes to standard output too.
  r = RunLogctl({"export", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, cat.out);
  // -o - with filters and JSON.
  r = RunLogctl({"export", "-o", "-", "--format", "json", "-g", "n=4[0-9]$", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 10u) << r.out;
  for (auto &l : lines) EXPECT_FALSE(ParseJson(l).is_discarded()) << l;
  EXPECT_EQ(ParseJson(lines[0])["msg"].get<std::string>(), "n=40");
  // A path that merely ends in "-" is a file, as before.
  r = RunLogctl({"export", "-o", dir_.File("-"), "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(stat(dir_.File("-").c_str(), &st), 0);
  // export's help names -o as the destination, not as an output mode.
  r = RunLogctl({"export", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: logctl export [-o FILE|-] ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  -o, --output FILE|-   where to write"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("short|json|raw"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--show-cursor"), std::string::npos) << r.out;
  // tail and cat keep -o as the output mode.
  r = RunLogctl({"cat", "--help"});
  EXPECT_NE(r.out.find("-o, --output MODE  short (the default)"), std::string::npos) << r.out;
}

TEST_F(LogctlTest, StatsWithoutDaemon) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 30);
  ring.writer()->AppendDropped(ring.source(), kT0 + 40 * kMs, 5, kT0);
  ring.writer()->AppendDropped(ring.source(), kT0 + 41 * kMs, 7, kT0);
  ring.Close();
  std::string sock = dir_.File("none.sock");
  Result r = RunLogctl({"stats", "--file", f, "--socket", sock});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("records:       32 (seq 0..31)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("block count:   8\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dropped:       12 records in 2 reports (full scan)"), std::string::npos);
  EXPECT_NE(r.out.find("oldest:        2025-11-23 10:00:00.000 +0000"), std::string::npos);
  EXPECT_NE(r.out.find("span:          0.041s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("daemon: not running (socket " + sock + ")"), std::string::npos);
  r = RunLogctl({"stats", "--json", "--file", f, "--socket", sock});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["records"].get<uint64_t>(), 32u);
  EXPECT_EQ(v["dropped"].get<uint64_t>(), 12u);
  EXPECT_EQ(v["block_count"].get<uint64_t>(), 8u);
  EXPECT_FALSE(v["daemon"]["running"].get<bool>());
}

// Issue 27: stats for a person: the rate over the span, the top writers
// (label and uid, most first) and a histogram by priority class, the same in
// --json.
TEST_F(LogctlTest, StatsShowsTopWritersAndAHistogram) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  Source quiet{2, 77, 1001, 100, "", "quietcomm"};  // no label: the comm stands in
  uint32_t info = ring.Intern(6, "n=%d"), err = ring.Intern(3, "e=%d"),
           warn = ring.Intern(4, "w=%d");
  // 120 ms: 100 info records in the first twelfth, 5 errors in the last,
  // 1 warning from the quiet writer in the middle.
  for (int i = 0; i < 100; i++) ring.Add(info, "i", Args().i(i).bytes(), kT0 + uint64_t(i) * 10000);
  ring.Add(warn, "i", Args().i(1).bytes(), kT0 + 60 * kMs, &quiet);
  for (int i = 0; i < 5; i++)
    ring.Add(err, "i", Args().i(i).bytes(), kT0 + 119 * kMs + uint64_t(i));
  ring.Close();
  Result r = RunLogctl({"stats", "--file", f, "--socket", dir_.File("none.sock")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rate:          890.8 records/s over the span\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("top writers:   records, share of the file, label (uid)\n"
                       "           105  99.1%  testapp (uid 1000)\n"
                       "             1   0.9%  quietcomm (uid 1001)\n"),
            std::string::npos)
      << r.out;
  std::vector<std::string> rows;
  for (const std::string &l : Lines(r.out))
    if (l.rfind("  2025-11-23 ", 0) == 0) rows.push_back(l);
  ASSERT_EQ(rows.size(), 12u) << r.out;
  EXPECT_EQ(rows[0], "  2025-11-23 10:00:00.000 +0000  " + std::string(40, '.') + "  100");
  // The bar starts after "  TIME  " (33 columns).
  EXPECT_EQ(rows[6].substr(33), "+" + std::string(41, ' ') + "1 (err 0, warning 1)") << rows[6];
  EXPECT_EQ(rows[11].substr(33), "##" + std::string(40, ' ') + "5 (err 5, warning 0)") << rows[11];
  EXPECT_EQ(rows[3].substr(33), std::string(42, ' ') + "0") << rows[3];
  // On a terminal (colour allowed) the picture is the same characters: no
  // colour codes, nothing that needs a colour to be read.
  std::string screen =
      RunOnTerminal({"stats", "--file", f, "--socket", dir_.File("none.sock")}, false);
  for (const std::string &row : rows)
    EXPECT_NE(screen.find(row + "\r\n"), std::string::npos) << row;
  EXPECT_EQ(screen.find("\x1b["), std::string::npos) << screen;
  r = RunLogctl({"stats", "--json", "--file", f, "--socket", dir_.File("none.sock")});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["top_writers"][0]["label"], "testapp");
  EXPECT_EQ(v["top_writers"][0]["records"].get<uint64_t>(), 105u);
  EXPECT_EQ(v["top_writers"][1]["uid"].get<uint64_t>(), 1001u);
  ASSERT_EQ(v["histogram"]["buckets"].size(), 12u);
  EXPECT_EQ(v["histogram"]["buckets"][0]["info"].get<uint64_t>(), 100u);
  EXPECT_EQ(v["histogram"]["buckets"][11]["err"].get<uint64_t>(), 5u);
}

// A stand-in daemon on a real socket: checks the RING_REQ and STATS_REQ
// frames and answers them, saying it writes the file (its identity, st_dev
// and st_ino).
TEST_F(LogctlTest, StatsAsksTheDaemon) {
  std::string f = EmptyRing(), sock = dir_.File("d.sock");
  int lfd = ListenUnix(sock, 4);
  ASSERT_GE(lfd, 0);
  std::unique_ptr<RingReader> reader;
  ASSERT_TRUE(RingReader::Open(Env::Default(), f, nullptr, &reader).ok());
  struct stat st;
  ASSERT_EQ(stat(f.c_str(), &st), 0);
  std::string ring_frame(LS_RING_FRAME_MAX, '\0');
  ls_ring ring = {reader->layout().ring_id.data(), uint64_t(st.st_dev), uint64_t(st.st_ino),
                  f.data(), f.size()};
  ptrdiff_t ring_len =
      ls_ring_encode(reinterpret_cast<uint8_t *>(ring_frame.data()), ring_frame.size(), &ring);
  ASSERT_GT(ring_len, 0);
  ring_frame.resize(size_t(ring_len));
  std::string got;
  std::thread server([&] {
    int c = accept(lfd, nullptr, nullptr);
    if (c < 0) return;
    // RING_REQ and STATS_REQ, 5 bytes each, no HELLO needed (PROTOCOL.md).
    char b[64];
    size_t want = 10;
    while (got.size() < want) {
      ssize_t n = read(c, b, sizeof b);
      if (n <= 0) break;
      got.append(b, n);
    }
    std::string payload = "\x02";
    payload +=
        "\x0a"
        "records_in";
    payload += "\xac\x02";  // 300
    payload += "\x06queued";
    payload += '\0';
    std::string frame(4, '\0');
    uint32_t len = 1 + payload.size();
    memcpy(frame.data(), &len, 4);
    frame += static_cast<char>(LS_F_STATS);
    frame += payload;
    frame = ring_frame + frame;
    if (write(c, frame.data(), frame.size()) < 0) {
    }
    close(c);
  });
  Result r = RunLogctl({"stats", "--file", f, "--socket", sock});
  server.join();
  close(lfd);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.out.find("daemon:        running (socket " + sock + ")\n  records_in=300\n  queued=0\n"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(got, std::string("\x01\0\0\0\x06\x01\0\0\0\x05", 10));
}

TEST_F(LogctlTest, StatsDoesNotHangOnASilentDaemon) {
  std::string f = EmptyRing(), sock = dir_.File("d.sock");
  int lfd = ListenUnix(sock, 4);
  ASSERT_GE(lfd, 0);  // accepted by the kernel, never answered
  Proc p({"stats", "--file", f, "--socket", sock});
  Result r = p.Finish(10000);
  close(lfd);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("daemon: unreachable (socket " + sock + "): no answer within the timeout"),
            std::string::npos)
      << r.out;
}

// Issue 15: -r/--reverse prints newest first, for cat, tail and tail with a
// filter; -n still picks the newest N.
TEST_F(LogctlTest, ReverseIsNewestFirst) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 5);
  ring.Close();
  auto fwd = Lines(RunLogctl({"cat", "-o", "cat", "--file", f}).out);
  ASSERT_EQ(fwd, (std::vector<std::string>{"n=0", "n=1", "n=2", "n=3", "n=4"}));
  auto rev = Lines(RunLogctl({"cat", "-r", "-o", "cat", "--file", f}).out);
  EXPECT_EQ(rev, (std::vector<std::string>{"n=4", "n=3", "n=2", "n=1", "n=0"}));
  rev = Lines(RunLogctl({"tail", "--reverse", "-n", "2", "-o", "cat", "--file", f}).out);
  EXPECT_EQ(rev, (std::vector<std::string>{"n=4", "n=3"}));
  rev = Lines(RunLogctl({"tail", "-r", "-n", "2", "-g", "n=[013]", "-o", "cat", "--file", f}).out);
  EXPECT_EQ(rev, (std::vector<std::string>{"n=3", "n=1"}));
  rev = Lines(
      RunLogctl({"tail", "-r", "-n", "3", "--since", "@1763892000.001", "-o", "cat", "--file", f})
          .out);
  EXPECT_EQ(rev, (std::vector<std::string>{"n=4", "n=3", "n=2"}));
}

// Issue 15: the journalctl-like -o modes.
TEST_F(LogctlTest, OutputModes) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  uint32_t site = ring.Intern(3, "disk %s full");
  const uint64_t ts = kT0 + 123456789;
  ring.Add(site, "s", Args().s("sda1").bytes(), ts);
  ring.Close();
  auto run = [&](const char *mode) {
    Result r = RunLogctl({"cat", "--utc", "-o", mode, "--file", f});
    EXPECT_EQ(r.status, 0) << mode << ": " << r.err;
    return r.out;
  };
  const std::string ident = " testapp(testcomm)[4242]: <err> disk sda1 full\n";
  EXPECT_EQ(run("short"), "2025-11-23T10:00:00.123456+0000" + ident);
  EXPECT_EQ(run("short-iso"), "2025-11-23T10:00:00+0000" + ident);
  EXPECT_EQ(run("short-precise"), "2025-11-23T10:00:00.123456789+0000" + ident);
  EXPECT_EQ(run("short-unix"), "1763892000.123456789" + ident);
  EXPECT_EQ(run("cat"), "disk sda1 full\n");
  // short-monotonic: the record's CLOCK_MONOTONIC time, from its block's
  // clock pair: the writer read the real monotonic clock a moment ago, when
  // its clock said ts (logctl_boot_test.cc has fake boots and clocks).
  struct timespec mt;
  clock_gettime(CLOCK_MONOTONIC, &mt);
  double now = double(mt.tv_sec) + double(mt.tv_nsec) / 1e9;
  std::string mono = run("short-monotonic");
  ASSERT_EQ(mono.front(), '[') << mono;
  size_t close = mono.find(']');
  ASSERT_NE(close, std::string::npos) << mono;
  double secs = std::stod(mono.substr(1, close - 1));
  EXPECT_LE(secs, now) << mono;
  EXPECT_GT(secs, now - 30) << mono;
  EXPECT_EQ(mono.substr(close + 1), ident) << mono;
  EXPECT_EQ(mono.substr(close - 7, 1), ".") << "microseconds: " << mono;
  std::string v = run("verbose");
  EXPECT_EQ(v.rfind("2025-11-23T10:00:00.123456789+0000 [seq 0]\n", 0), 0u) << v;
  for (const char *field :
       {"    SEQ=0\n", "    TS_NS=1763892000123456789\n", "    PRIORITY=3\n", "    LEVEL=err\n",
        "    PID=4242\n", "    APP=testapp\n", "    COMM=testcomm\n", "    FMT=disk %s full\n",
        "    FILE=test.c\n", "    MESSAGE=disk sda1 full\n"})
    EXPECT_NE(v.find(field), std::string::npos) << field << " in " << v;
  std::string pretty = run("json-pretty");
  EXPECT_GT(std::count(pretty.begin(), pretty.end(), '\n'), 10) << pretty;
  json a = json::parse(pretty, nullptr, false), b = ParseJson(Lines(run("json"))[0]);
  ASSERT_FALSE(a.is_discarded()) << pretty;
  EXPECT_EQ(a, b);
  EXPECT_NE(pretty.find("\n  \"msg\": \"disk sda1 full\",\n"), std::string::npos) << pretty;
}

// A fake pager that records its arguments, $LESS and its input.
std::string FakePager(const TempDir &dir) {
  std::string path = dir.File("pager.sh");
  WriteFile(path,
            "#!/bin/sh\nprintf '%s' \"$*\" > \"$0.args\"\nprintf '%s' \"$LESS\" > \"$0.less\"\n"
            "cat > \"$0.in\"\n");
  chmod(path.c_str(), 0755);
  return path;
}

// Issue 15: on a terminal, tail and cat go through $LOGSINK_PAGER, else
// $PAGER, with LESS=FRSXMK unless LESS is set; -e starts it at the end
// (+G); --no-pager, a pipe or -f: no pager.
TEST_F(LogctlTest, PagerOnATerminal) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 3);
  ring.Close();
  const std::string pager = FakePager(dir_);
  auto reset = [&] {
    for (const char *ext : {".args", ".less", ".in"}) unlink((pager + ext).c_str());
  };
  std::string screen =
      RunOnTerminal({"cat", "-o", "cat", "--file", f}, true, {{"LOGSINK_PAGER", pager}});
  EXPECT_EQ(screen, "");
  EXPECT_EQ(ReadFile(pager + ".in"), "n=0\nn=1\nn=2\n");
  EXPECT_EQ(ReadFile(pager + ".args"), "");
  EXPECT_EQ(ReadFile(pager + ".less"), "FRSXMK");
  reset();
  RunOnTerminal({"tail", "-e", "-n", "1", "-o", "cat", "--file", f}, true,
                {{"LOGSINK_PAGER", pager}, {"LESS", "X"}});
  EXPECT_EQ(ReadFile(pager + ".in"), "n=2\n");
  EXPECT_EQ(ReadFile(pager + ".args"), "+G");
  EXPECT_EQ(ReadFile(pager + ".less"), "X");
  reset();
  // $PAGER when $LOGSINK_PAGER is unset; colours still follow the terminal.
  RunOnTerminal({"cat", "--file", f, "-p", "info"}, false,
                {{"-LOGSINK_PAGER", ""}, {"PAGER", pager}});
  EXPECT_NE(ReadFile(pager + ".in").find("<info> n=2"), std::string::npos);
  reset();
  // --no-pager, or an empty pager: straight to the terminal.
  screen = RunOnTerminal({"cat", "--no-pager", "-o", "cat", "--file", f}, true,
                         {{"LOGSINK_PAGER", pager}});
  EXPECT_NE(screen.find("n=2"), std::string::npos) << screen;
  EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0);
  screen = RunOnTerminal({"cat", "-o", "cat", "--file", f}, true, {{"LOGSINK_PAGER", "cat"}});
  EXPECT_NE(screen.find("n=2"), std::string::npos) << screen;
  EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0);
  // Not a terminal: no pager.
  SpawnOptions env;
  env.env = {{"LOGSINK_PAGER", pager}};
  Result r = RunLogctl({"cat", "-o", "cat", "--file", f}, env);
  EXPECT_EQ(r.out, "n=0\nn=1\nn=2\n");
  EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0);
  // -f: no pager, even on a terminal (the record shows on the terminal).
  int master;
  const std::string logctl = LogctlPath();
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    setenv("LOGSINK_PAGER", pager.c_str(), 1);
    execl(logctl.c_str(), logctl.c_str(), "tail", "-f", "-n", "1", "-o", "cat", "--file", f.c_str(),
          static_cast<char *>(nullptr));
    _exit(127);
  }
  std::string seen;
  auto deadline = Clock::now() + kHang;
  while (Clock::now() < deadline && seen.find("n=2") == std::string::npos) {
    struct pollfd p = {master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char b[256];
    ssize_t n = read(master, b, sizeof b);
    if (n <= 0) break;
    seen.append(b, size_t(n));
  }
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  close(master);
  EXPECT_NE(seen.find("n=2"), std::string::npos) << seen;
  EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0);
}

// Under sudo (SUDO_UID set), or with LOGSINK_PAGERSECURE=1, the pager is
// less in secure mode: LESSSECURE=1, run without a shell, and a pager the
// environment names is not run (under `sudo logctl` it could be anything);
// LOGSINK_PAGERSECURE=0 turns secure mode off.
TEST_F(LogctlTest, PagerIsSecureUnderSudo) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 3);
  ring.Close();
  const std::string pager = FakePager(dir_);
  // A "less" first in PATH that records $LESSSECURE, its arguments and input.
  const std::string bin = dir_.File("bin");
  mkdir(bin.c_str(), 0755);
  WriteFile(bin + "/less",
            "#!/bin/sh\nprintf '%s|%s' \"$LESSSECURE\" \"$*\" > \"$0.secure\"\ncat > \"$0.in\"\n");
  chmod((bin + "/less").c_str(), 0755);
  const std::string path =
      bin + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  auto reset = [&] {
    for (const std::string &p : {pager + ".in", bin + "/less.secure", bin + "/less.in"})
      unlink(p.c_str());
  };
  for (auto env : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"SUDO_UID", "1000"}}, {{"LOGSINK_PAGERSECURE", "1"}}, {{"PKEXEC_UID", "1000"}}}) {
    reset();
    env.push_back({"LOGSINK_PAGER", pager});
    env.push_back({"PATH", path});
    RunOnTerminal({"tail", "-e", "-n", "2", "-o", "cat", "--file", f}, true, env);
    EXPECT_EQ(ReadFile(bin + "/less.secure"), "1|+G") << env[0].first;
    EXPECT_EQ(ReadFile(bin + "/less.in"), "n=1\nn=2\n") << env[0].first;
    EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0) << env[0].first;  // not run
  }
  // Explicitly off: the named pager runs, as without sudo.
  reset();
  RunOnTerminal({"cat", "-o", "cat", "--file", f}, true,
                {{"SUDO_UID", "1000"},
                 {"LOGSINK_PAGERSECURE", "0"},
                 {"LOGSINK_PAGER", pager},
                 {"PATH", path}});
  EXPECT_EQ(ReadFile(pager + ".in"), "n=0\nn=1\nn=2\n");
  EXPECT_NE(access((bin + "/less.in").c_str(), F_OK), 0);
  // Secure mode still lets the user turn the pager off.
  reset();
  std::string screen = RunOnTerminal({"cat", "-o", "cat", "--file", f}, true,
                                     {{"SUDO_UID", "1000"}, {"LOGSINK_PAGER", ""}, {"PATH", path}});
  EXPECT_NE(screen.find("n=2"), std::string::npos) << screen;
  EXPECT_NE(access((bin + "/less.in").c_str(), F_OK), 0);
}

// A set-gid (or set-uid) logctl, such as one given the logsink group so that
// users can read the ring, runs the pager in secure mode whatever the
// caller's environment says, and takes less from the system's directories,
// never from the caller's PATH: there a "less" of the caller's would run
// with the program's privileges.
TEST_F(LogctlTest, PagerIsSecureInASetIdLogctl) {
  if (geteuid() != 0) GTEST_FAIL() << "making a set-gid copy needs root";
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 3);
  ring.Close();
  StagedBinary copy(LogctlPath());
  ASSERT_TRUE(copy.ok()) << copy.error();
  ASSERT_EQ(chown(copy.path().c_str(), 0, 65534), 0);
  ASSERT_EQ(chmod(copy.path().c_str(), 02755), 0);  // egid 65534, gid 0
  const std::string pager = FakePager(dir_);
  const std::string bin = dir_.File("bin");
  mkdir(bin.c_str(), 0755);
  WriteFile(bin + "/less", "#!/bin/sh\ncat > \"$0.in\"\n");
  chmod((bin + "/less").c_str(), 0755);
  const std::string path =
      bin + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  // The system's less shows the 3 lines and quits (LESS=FRSXMK: F).
  std::string screen = RunOnTerminal(
      {"cat", "-o", "cat", "--file", f}, true,
      {{"LOGSINK_PAGER", pager}, {"LOGSINK_PAGERSECURE", "0"}, {"PATH", path}, {"TERM", "xterm"}},
      "", copy.path());
  EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0) << "the named pager ran";
  EXPECT_NE(access((bin + "/less.in").c_str(), F_OK), 0) << "the caller's less ran";
  EXPECT_NE(screen.find("n=2"), std::string::npos) << screen;
  // Secure mode asked for: still not the caller's less.
  screen = RunOnTerminal({"cat", "-o", "cat", "--file", f}, true,
                         {{"-LOGSINK_PAGER", ""},
                          {"-PAGER", ""},
                          {"LOGSINK_PAGERSECURE", "1"},
                          {"PATH", path},
                          {"TERM", "xterm"}},
                         "", copy.path());
  EXPECT_NE(access((bin + "/less.in").c_str(), F_OK), 0) << "the caller's less ran";
  EXPECT_NE(screen.find("n=2"), std::string::npos) << screen;
}

// Issue 15: `logctl` alone is `logctl cat` through the pager.
TEST_F(LogctlTest, NoArgumentsIsTheWholeLogThroughThePager) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 12);
  ring.Close();
  SpawnOptions env;
  env.env = {{"LOGSINK_FILE", f}};
  Result r = RunLogctl({}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, RunLogctl({"cat", "--file", f}).out);
  EXPECT_EQ(Lines(r.out).size(), 12u);
  const std::string pager = FakePager(dir_);
  std::string screen = RunOnTerminal({}, true, {{"LOGSINK_PAGER", pager}, {"LOGSINK_FILE", f}});
  EXPECT_EQ(screen, "");
  EXPECT_EQ(ReadFile(pager + ".in"), r.out);
}

// Issue 15: u64 fields beyond 2^53 (which jq rounds) have exact string
// copies: seq_str, ts_ns_str, dropped_since_ns_str always, args_str when an
// integer argument is beyond +-2^53; the numeric fields stay as they were.
// Issue 27: journalctl's options work without a command: -n/-f make it
// tail, anything else is cat; -S/-U, -t, --cursor; usage errors name no
// command.
TEST_F(LogctlTest, TopLevelOptionsAreJournalctls) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 25);
  ring.Close();
  auto same = [&](std::vector<std::string> top, std::vector<std::string> cmd) {
    top.insert(top.end(), {"--file", f});
    cmd.insert(cmd.end(), {"--file", f});
    Result a = RunLogctl(top), b = RunLogctl(cmd);
    EXPECT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(a.err, "");
    EXPECT_FALSE(a.out.empty()) << top[0];
    EXPECT_EQ(a.out, b.out) << top[0];
    return a.out;
  };
  EXPECT_EQ(Lines(same({"-n", "3"}, {"tail", "-n", "3"})).size(), 3u);
  EXPECT_EQ(Lines(same({"-r"}, {"cat", "-r"})).size(), 25u);
  EXPECT_EQ(Lines(same({"-r", "-n", "2"}, {"tail", "-r", "-n", "2"}))[0],
            Line(24, "testapp(testcomm)[4242]: <info> n=24"));
  // -S/-U are --since/--until; -t is the app label (journalctl's tag).
  std::string out =
      same({"-S", "2025-11-23 10:00:00.010", "-U", "2025-11-23 10:00:00.012"},
           {"cat", "--since", "2025-11-23 10:00:00.010", "--until", "2025-11-23 10:00:00.012"});
  EXPECT_EQ(Lines(out).size(), 3u) << out;
  EXPECT_EQ(
      Lines(same({"-t", "testapp", "-n", "4"}, {"tail", "--app", "testapp", "-n", "4"})).size(),
      4u);
  Result r = RunLogctl({"-t", "other", "--file", f});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(RunLogctl({"cat", "--tag", "other", "--file", f}).out, "");
  // --cursor starts at the record, --after-cursor after it.
  r = RunLogctl({"-n", "1", "-U", "2025-11-23 10:00:00.023", "--show-cursor", "--file", f});
  ASSERT_EQ(Lines(r.out).size(), 2u) << r.out << r.err;
  std::string cur23 = Lines(r.out).back().substr(std::string("-- cursor: ").size());
  r = RunLogctl({"--cursor", cur23, "--file", f});
  EXPECT_EQ(r.out, Line(23, "testapp(testcomm)[4242]: <info> n=23\n") +
                       Line(24, "testapp(testcomm)[4242]: <info> n=24\n"))
      << r.err;
  r = RunLogctl({"--after-cursor", cur23, "--file", f});
  EXPECT_EQ(r.out, Line(24, "testapp(testcomm)[4242]: <info> n=24\n")) << r.err;
  r = RunLogctl({"-n", "+2", "--file", f});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "logctl: bad number of lines '+2' (-n counts from the newest record; to start at the "
            "oldest, use 'logctl cat' or --cursor)\nTry 'logctl --help'.\n");
  r = RunLogctl({"-x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "logctl: unknown option '-x'\nTry 'logctl --help'.\n");
}

// Issue 27: a socket the user named, with no daemon on it, is an error that
// names it: never a silent read of another ring.
TEST_F(LogctlTest, ANamedSocketWithoutADaemonIsAnError) {
  std::string sock = dir_.File("none.sock");
  std::string want =
      "logctl: " + sock + ": no daemon listens on this socket (No such file or directory), which ";
  for (const char *cmd : {"tail", "cat", "stats", "verify", "export"}) {
    Result r = RunLogctl({cmd, "--socket", sock});
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_EQ(r.err, want +
                         "--socket names; to read a ring file without its daemon, give "
                         "--file PATH\n")
        << cmd;
    EXPECT_EQ(r.out, "");
    SpawnOptions env;
    env.env = {{"LOGSINK_SOCKET", sock}};
    r = RunLogctl({cmd}, env);
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_EQ(r.err, want +
                         "$LOGSINK_SOCKET names; to read a ring file without its daemon, "
                         "give --file PATH\n")
        << cmd;
  }
}

TEST_F(LogctlTest, JsonHasExactStringCopiesOfLargeIntegers) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  uint32_t big = ring.Intern(6, "%lu %lld %d %s %.1f");
  uint32_t small = ring.Intern(6, "%d");
  const uint64_t ts = kT0 + 123456789;  // 1763892000123456789 > 2^53
  const uint64_t u = 18446744073709551611ull;
  const int64_t i = -(int64_t(1) << 60) - 3;
  std::string dbl(8, '\0');
  double half = 0.5;
  std::memcpy(dbl.data(), &half, 8);
  ring.Add(big, "uiisf", Args().u(u).i(i).i(7).s("x").raw(dbl).bytes(), ts);
  ring.Add(small, "i", Args().i(int64_t(1) << 53).bytes(), ts + 1);
  ring.writer()->AppendDropped(ring.source(), ts + 2, 4, ts - 1000);
  ring.Close();
  Result r = RunLogctl({"cat", "--json", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  // Parsed as text, not as doubles: the copies must be the exact decimals.
  EXPECT_NE(lines[0].find("\"seq\":0,\"seq_str\":\"0\",\"ts_ns\":1763892000123456789,"
                          "\"ts_ns_str\":\"1763892000123456789\""),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("\"args\":[18446744073709551611,-1152921504606846979,7,\"x\",0.5]"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("\"args_str\":[\"18446744073709551611\",\"-1152921504606846979\","
                          "\"7\",\"x\",0.5]"),
            std::string::npos)
      << lines[0];
  json v = ParseJson(lines[0]);
  ASSERT_FALSE(v.is_discarded());
  EXPECT_EQ(v["ts_ns_str"].get<std::string>(), std::to_string(ts));
  EXPECT_EQ(v["ts_ns"].get<uint64_t>(), ts);
  // 2^53 itself is exact as a double: no args_str.
  json w = ParseJson(lines[1]);
  EXPECT_EQ(w["seq_str"].get<std::string>(), "1");
  EXPECT_FALSE(w.contains("args_str")) << lines[1];
  json d = ParseJson(lines[2]);
  EXPECT_EQ(d["dropped_since_ns_str"].get<std::string>(), std::to_string(ts - 1000)) << lines[2];
  // stats --json: the timestamps too.
  r = RunLogctl({"stats", "--json", "--file", f, "--socket", dir_.File("none.sock")});
  json s = ParseJson(Lines(r.out)[0]);
  EXPECT_EQ(s["oldest_ts_ns_str"].get<std::string>(), std::to_string(ts)) << r.out;
  EXPECT_EQ(s["newest_ts_ns_str"].get<std::string>(), std::to_string(ts + 2)) << r.out;
}

// A ring of many compressed blocks, written in bursts of one source at a time
// (each burst longer than a block), with errors only in beta's bursts and two
// "rare" records at the very start: filtered reads skip the blocks whose
// summaries rule out every record.
class BlockSkipTest : public LogctlTest {
 protected:
  struct Written {
    const Source *src;
    int level;
  };
  void SetUp() override {
    f_ = dir_.File("r.ring");
    ring_ = std::make_unique<TestRing>(f_, 12288 + 256 * 4096);
    info_ = ring_->Intern(6, "n=%d");
    err_ = ring_->Intern(3, "e=%d");
    Add(&rare_, 6);
    Add(&rare_, 3);
    const Source *srcs[] = {&alpha_, &beta_, &gamma_};
    for (int i = 0; i < kN; i++) {
      const Source *src = srcs[i / kBurst % 3];
      Add(src, src == &beta_ && i % 97 == 0 ? 3 : 6);
    }
    ring_->Flush();
  }
  void Add(const Source *src, int level) {
    int i = int(recs_.size());
    ring_->Add(level == 3 ? err_ : info_, "i", Args().i(i).bytes(), kT0 + uint64_t(i) * kMs, src);
    recs_.push_back({src, level});
  }
  // What the unfiltered cat prints (no block is skipped), one line a record.
  const std::vector<std::string> &All() {
    if (all_.empty()) {
      Result r = RunLogctl({"cat", "--file", f_});
      EXPECT_EQ(r.status, 0) << r.err;
      all_ = Lines(r.out);
      EXPECT_EQ(all_.size(), recs_.size()) << "the ring lapped";
    }
    return all_;
  }
  // The lines of the records `keep` passes, oldest first.
  std::vector<std::string> Expected(const std::function<bool(const Written &)> &keep) {
    std::vector<std::string> out;
    const auto &all = All();
    for (size_t i = 0; i < recs_.size() && i < all.size(); i++)
      if (keep(recs_[i])) out.push_back(all[i]);
    return out;
  }
  // Runs logctl CMD ARGS --file f_ and returns its lines.
  std::vector<std::string> Run(std::vector<std::string> args) {
    args.push_back("--file");
    args.push_back(f_);
    Result r = RunLogctl(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return Lines(r.out);
  }
  // Blocks a reader with filter bf skips reading the whole ring.
  uint64_t Skipped(const BlockFilter &bf) {
    std::unique_ptr<RingReader> r;
    Status s = RingReader::Open(Env::Default(), f_, nullptr, &r);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return 0;
    r->SetBlockFilter(&bf);
    std::vector<OwnedRecord> recs;
    s = ReadAllRecords(r.get(), &recs);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return r->blocks_skipped();
  }
  static std::vector<std::string> Last(const std::vector<std::string> &v, size_t n) {
    return std::vector<std::string>(v.end() - std::min(n, v.size()), v.end());
  }

  static constexpr int kN = 60000, kBurst = 6000;
  std::string f_;
  std::unique_ptr<TestRing> ring_;
  uint32_t info_ = 0, err_ = 0;
  Source alpha_{1, 101, 1001, 0, "alpha", "alpha"};
  Source beta_{2, 102, 1002, 0, "beta", "beta"};
  Source gamma_{3, 103, 1003, 0, "", "gamma"};  // no label: --app matches its comm
  Source rare_{4, 104, 1004, 0, "rare", "rare"};
  std::vector<Written> recs_;
  std::vector<std::string> all_;
};

TEST_F(BlockSkipTest, FilteredOutputIsExactlyThePerRecordFiltersWhileBlocksAreSkipped) {
  const auto &all = All();
  ASSERT_EQ(all.size(), recs_.size());
  // The layout does let a reader skip: these filters rule out whole blocks.
  BlockFilter bf;
  bf.apps = {"alpha"};
  EXPECT_GT(Skipped(bf), 3u);
  bf.apps = {"rare"};
  EXPECT_GT(Skipped(bf), 10u);
  bf = BlockFilter();
  bf.levels = 0x0f;  // emerg..err
  EXPECT_GT(Skipped(bf), 3u);

  auto is = [](const Source *s) { return [s](const Written &w) { return w.src == s; }; };
  auto alpha = Expected(is(&alpha_)), gamma = Expected(is(&gamma_));
  auto rare = Expected(is(&rare_));
  ASSERT_EQ(rare.size(), 2u);
  EXPECT_EQ(Run({"cat", "--app", "alpha"}), alpha);
  EXPECT_EQ(Run({"cat", "--app", "gamma"}), gamma);
  EXPECT_EQ(Run({"cat", "--app", "rare"}), rare);
  EXPECT_EQ(Run({"cat", "--app", "nobody"}), std::vector<std::string>());
  EXPECT_EQ(Run({"cat", "--app", "alpha", "--app", "rare"}),
            Expected([&](const Written &w) { return w.src == &alpha_ || w.src == &rare_; }));
  auto errors = Expected([](const Written &w) { return w.level <= 3; });
  EXPECT_GT(errors.size(), 10u);
  EXPECT_EQ(Run({"cat", "-p", "err"}), errors);
  EXPECT_EQ(Run({"cat", "-p", "err", "--app", "beta"}),
            Expected([&](const Written &w) { return w.level <= 3 && w.src == &beta_; }));
  EXPECT_EQ(Run({"cat", "-p", "info..debug", "--app", "rare"}), std::vector<std::string>{rare[0]});
  EXPECT_EQ(Run({"cat", "--pid", "101", "--pid", "103"}),
            Expected([&](const Written &w) { return w.src == &alpha_ || w.src == &gamma_; }));
  EXPECT_EQ(Run({"cat", "--uid", "1002"}), Expected(is(&beta_)));
  // Records 20000..31999 by time (1 ms apart from kT0 = 10:00:00): alpha's
  // bursts are 2..6001, 18002..24001, 36002..42001, so 20000..24001 of them.
  std::vector<std::string> window;
  for (int i = 20000; i <= 31999; i++)
    if (recs_[size_t(i)].src == &alpha_) window.push_back(all[size_t(i)]);
  ASSERT_EQ(window.size(), 4002u);
  EXPECT_EQ(Run({"cat", "--app", "alpha", "--since", "2025-11-23T10:00:20Z", "--until",
                 "2025-11-23T10:00:31.999Z"}),
            window);
  // tail -n N walks back over skipped blocks to N matches or the ring's start.
  EXPECT_EQ(Run({"tail", "-n", "5", "--app", "alpha"}), Last(alpha, 5));
  EXPECT_EQ(Run({"tail", "-n", "3000", "--app", "gamma"}), Last(gamma, 3000));
  EXPECT_EQ(Run({"tail", "-n", "10", "--app", "rare"}), rare);
  EXPECT_EQ(Run({"tail", "-n", "1", "-p", "err", "--app", "rare"}), Last(rare, 1));
  EXPECT_EQ(Run({"tail", "-n", "7", "-p", "err"}), Last(errors, 7));
  EXPECT_EQ(Run({"tail", "-n", "10", "--app", "nobody"}), std::vector<std::string>());
  // --reverse and export go through the same reading.
  auto beta = Expected(is(&beta_));
  EXPECT_EQ(Run({"cat", "-r", "--app", "beta"}),
            std::vector<std::string>(beta.rbegin(), beta.rend()));
  EXPECT_EQ(Run({"export", "-o", "-", "--app", "alpha"}), alpha);
}

// -f with a filter: a partial block skipped for its summary is read again
// when it grows, and after tail walked back over skipped blocks it follows
// from where it read, each match once.
TEST_F(BlockSkipTest, FollowWithAFilterShowsEachMatchOnce) {
  All();
  Proc p({"tail", "-f", "-n", "5", "--app", "rare", "--file", f_});
  std::string line;
  for (int i = 0; i < 2; i++) {
    ASSERT_TRUE(p.ReadLine(&line, 10000)) << i;
    EXPECT_EQ(line, all_[size_t(i)]);
  }
  // Others' records first (the partial block's summary rules it out), then
  // rare's in the same block, then whole blocks of others, then rare's again.
  for (int i = 0; i < 50; i++) Add(&beta_, 6);
  ring_->Flush();
  usleep(300 * 1000);  // logctl looks at the partial block (and skips it)
  std::vector<int> want;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 3; i++) {
      want.push_back(int(recs_.size()));
      Add(&rare_, 6);
    }
    ring_->Flush();
    for (int i = 0; i < 5000; i++) Add(&alpha_, 6);
    ring_->Flush();
  }
  for (int i : want) {
    ASSERT_TRUE(p.ReadLine(&line, 10000)) << "waiting for record " << i;
    EXPECT_NE(line.find("rare[104]: <info> n=" + std::to_string(i)), std::string::npos) << line;
  }
  usleep(300 * 1000);
  p.Signal(SIGTERM);
  Result r = p.Finish(10000);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");  // nothing more, no record twice
  EXPECT_EQ(r.err, "");
}

TEST_F(LogctlTest, StatsShowsTheCompression) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 3000);
  ring.Close();
  std::string sock = dir_.File("none.sock");
  Result r = RunLogctl({"stats", "--file", f, "--socket", sock});
  ASSERT_EQ(r.status, 0) << r.err;
  std::unique_ptr<RingReader> reader;
  ASSERT_TRUE(RingReader::Open(Env::Default(), f, nullptr, &reader).ok());
  RingReader::Summary sum;
  ASSERT_TRUE(reader->Summarize(&sum).ok());
  ASSERT_GT(sum.raw_bytes, sum.bytes_used);  // numbered records compress
  char want[128];
  snprintf(want, sizeof want,
           "\ncompression:   %.1fx (%.1f KiB of records in %.1f KiB of blocks)\n",
           double(sum.raw_bytes) / double(sum.bytes_used), double(sum.raw_bytes) / 1024,
           double(sum.bytes_used) / 1024);
  EXPECT_NE(r.out.find(want), std::string::npos) << want << r.out;
  // The lines around it stay.
  EXPECT_NE(r.out.find("bytes used:    " + std::to_string(sum.bytes_used) + " bytes"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("records:       3000 (seq 0..2999)"), std::string::npos) << r.out;
  r = RunLogctl({"stats", "--json", "--file", f, "--socket", sock});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["raw_bytes"].get<uint64_t>(), sum.raw_bytes);
  EXPECT_EQ(v["bytes_used"].get<uint64_t>(), sum.bytes_used);
  EXPECT_NEAR(v["compression_ratio"].get<double>(), double(sum.raw_bytes) / double(sum.bytes_used),
              0.001);
  // Stored as they are: 1.0x. An empty ring has no ratio.
  std::string g = dir_.File("plain.ring");
  TestRing plain(g, 12288 + 8 * 4096, 4096, LS_CODEC_NONE);
  WriteNumbered(&plain, 300);
  plain.Close();
  r = RunLogctl({"stats", "--file", g, "--socket", sock});
  EXPECT_NE(r.out.find("\ncompression:   1.0x ("), std::string::npos) << r.out;
  std::string e = dir_.File("empty.ring");
  TestRing(e).Close();
  r = RunLogctl({"stats", "--file", e, "--socket", sock});
  EXPECT_NE(r.out.find("\ncompression:   - (no blocks used)\n"), std::string::npos) << r.out;
  r = RunLogctl({"stats", "--json", "--file", e, "--socket", sock});
  v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["raw_bytes"].get<uint64_t>(), 0u);
  EXPECT_TRUE(v["compression_ratio"].is_null()) << r.out;
}

TEST(LogctlVersion, DashVAndVersion) {
  for (const char *a : {"-V", "--version"}) {
    Result r = RunLogctl({a});
    EXPECT_EQ(r.status, 0) << a << ": " << r.err;
    EXPECT_EQ(r.out.rfind("logctl ", 0), 0u) << a << ": " << r.out;
  }
}

}  // namespace
}  // namespace logsink::test
