// logctl_retention_test.cc: retention (proto/FORMAT.md, "Tiers") with the
// real logsinkd and logctl: a program's errors and a quiet program's records
// outlive a flood of twenty times the ring, another user's flood leaves
// root's records (its flood of errors too), a flood of errors alone still laps, logctl stats shows
// the tiers and the daemon's eviction counters. Each scenario also runs with the tiers off
// ([retention] shares 0), where the same flood wipes them: what the tiers are for, and proof the
// checks can fail.
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>

#include "cli_util.h"
#include "common/daemon_process.h"
#include "daemon/harness.h"

namespace logsink::test {
namespace {

const char kTiersOff[] = "[retention]\nkept_share = 0\nerror_share = 0\n";

// n lines "<tag> line <i> <64 hex digits>": about 80 bytes that compress
// about 2x, so that a flood of them laps the ring (deterministic: the digits
// come from a fixed-seed generator; the content does not matter).
std::string TextLines(const std::string &tag, int n) {
  std::string s;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < n; i++) {
    s += tag + " line " + std::to_string(i) + " ";
    for (int k = 0; k < 64; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
      s += "0123456789abcdef"[x & 15];
    }
    s += '\n';
  }
  return s;
}

// Records per app label, read with logctl cat --json.
std::map<std::string, int> CountByApp(const std::string &ring) {
  std::map<std::string, int> n;
  Result r = RunLogctl({"cat", "--json", "--file", ring});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const std::string &l : Lines(r.out)) n[ParseJson(l)["app"].get<std::string>()]++;
  return n;
}

Result Send(const Daemon &d, const std::vector<std::string> &args, std::string in,
            bool as_nobody = false) {
  SpawnOptions o;
  o.stdin_data = std::move(in);
  o.as_nobody = as_nobody;
  std::vector<std::string> a = {"send", "--socket", d.socket};
  a.insert(a.end(), args.begin(), args.end());
  return RunLogctl(a, o);
}

// 20 MB of debug lines into a 1 MiB ring.
constexpr int kFloodLines = 200000;

TEST(Retention, ErrorsAndAQuietProgramOutliveAFlood) {
  for (bool tiers : {true, false}) {
    SCOPED_TRACE(tiers ? "tiers" : "tiers off");
    TempDir dir;
    Daemon d(dir, {}, tiers ? "" : kTiersOff);
    ASSERT_TRUE(d.Start()) << d.Stderr();
    ASSERT_EQ(Send(d, {"-t", "errs", "-p", "err"}, TextLines("e", 200)).status, 0);
    ASSERT_EQ(Send(d, {"-t", "quiet", "-p", "info"}, TextLines("q", 200)).status, 0);
    ASSERT_EQ(Send(d, {"-t", "chatty", "-p", "debug"}, TextLines("c", kFloodLines)).status, 0);
    auto n = CountByApp(d.ring);
    if (tiers) {
      EXPECT_EQ(n["errs"], 200);
      EXPECT_EQ(n["quiet"], 200);
    } else {
      EXPECT_EQ(n["errs"], 0);
      EXPECT_EQ(n["quiet"], 0);
    }
    EXPECT_GT(n["chatty"], 0);
    std::printf("retention %s: errs %d/200, quiet %d/200, chatty %d of %d\n", tiers ? "on" : "off",
                n["errs"], n["quiet"], n["chatty"], kFloodLines);
    // What stats says: the tiers, and what left the file by class.
    Result st = RunLogctl({"stats", "--json", "--file", d.ring, "--socket", d.socket});
    ASSERT_EQ(st.status, 0) << st.err;
    json j = ParseJson(st.out);
    EXPECT_EQ(j["tiers"].size(), tiers ? 3u : 1u) << st.out;
    EXPECT_GT(j["by_class"]["info"].get<uint64_t>(), 0u) << st.out;
    const json &c = j["daemon"]["counters"];
    if (tiers) {
      EXPECT_GT(c["evicted_info"].get<uint64_t>(), 0u) << st.out;
      EXPECT_EQ(c["evicted_err"].get<uint64_t>(), 0u) << st.out;
      EXPECT_GT(c["kept_tier1"].get<uint64_t>(), 0u) << st.out;
    } else {
      EXPECT_EQ(c["kept_tier1"].get<uint64_t>(), 0u) << st.out;
    }
    Result text = RunLogctl({"stats", "--file", d.ring, "--socket", d.socket});
    EXPECT_EQ(text.out.find("tiers:") != std::string::npos, tiers) << text.out;
    EXPECT_NE(text.out.find("by class:"), std::string::npos) << text.out;
  }
}

// An unprivileged user's flood (as root: uid 65534; otherwise the same uid
// under another label, which the fairness rule also separates) leaves the
// records of the one who wrote little.
TEST(Retention, AnotherUsersFloodLeavesRootsRecords) {
  const bool root = geteuid() == 0;
  for (bool tiers : {true, false}) {
    SCOPED_TRACE(tiers ? "tiers" : "tiers off");
    TempDir dir;
    ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);  // the other user must reach the socket
    Daemon d(dir, {}, tiers ? "" : kTiersOff);
    ASSERT_TRUE(d.Start()) << d.Stderr();
    ASSERT_EQ(Send(d, {"-t", "rootd"}, TextLines("r", 300)).status, 0);
    Result f = Send(d, {"-t", "flood"}, TextLines("f", kFloodLines), root);
    ASSERT_EQ(f.status, 0) << f.err;
    auto n = CountByApp(d.ring);
    EXPECT_EQ(n["rootd"], tiers ? 300 : 0);
    std::printf("retention %s, flood as %s: rootd %d/300\n", tiers ? "on" : "off",
                root ? "uid 65534" : "the same uid", n["rootd"]);
  }
}

// An unprivileged user's flood of errors (the level any sender may claim),
// about five times the ring: root's info records and root's errors are all
// still there, because the last tier moves the records of classes under
// their share on instead of overwriting them (FORMAT.md, "Tiers"). With
// [retention] fairness off the flood wipes both, as it did before the rule.
TEST(Retention, AnotherUsersErrorFloodLeavesEveryoneElsesRecords) {
  ASSERT_EQ(geteuid(), 0u) << "the flood must come from another uid: run as root";
  for (bool fair : {true, false}) {
    SCOPED_TRACE(fair ? "fairness on" : "fairness off");
    TempDir dir;
    ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);  // the other user must reach the socket
    Daemon d(dir, {}, fair ? "" : "[retention]\nfairness = false\n");
    ASSERT_TRUE(d.Start()) << d.Stderr();
    ASSERT_EQ(Send(d, {"-t", "rootd"}, TextLines("r", 300)).status, 0);
    ASSERT_EQ(Send(d, {"-t", "errs", "-p", "err"}, TextLines("e", 200)).status, 0);
    Result f = Send(d, {"-t", "flood", "-p", "err"}, TextLines("f", 60000), true);
    ASSERT_EQ(f.status, 0) << f.err;
    auto n = CountByApp(d.ring);
    EXPECT_EQ(n["rootd"], fair ? 300 : 0);
    EXPECT_EQ(n["errs"], fair ? 200 : 0);
    EXPECT_GT(n["flood"], 0);
    std::printf("error flood of uid 65534, fairness %s: rootd %d/300, errs %d/200\n",
                fair ? "on" : "off", n["rootd"], n["errs"]);
    Result st = RunLogctl({"stats", "--json", "--file", d.ring, "--socket", d.socket});
    ASSERT_EQ(st.status, 0) << st.err;
    const json j = ParseJson(st.out);
    const json &c = j["daemon"]["counters"];
    EXPECT_EQ(c["rescued"].get<uint64_t>() > 0, fair) << st.out;
    EXPECT_EQ(c["evicted_for_rescue"].get<uint64_t>() > 0, fair) << st.out;
    Result v = RunLogctl({"verify", "--file", d.ring});
    EXPECT_EQ(v.status, 0) << v.out << v.err;
  }
}

// Errors alone still behave like a ring: the newest are there, the oldest
// went, and the file never grows.
TEST(Retention, AFloodOfErrorsStillLaps) {
  TempDir dir;
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  struct stat before, after;
  ASSERT_EQ(stat(d.ring.c_str(), &before), 0);
  ASSERT_EQ(Send(d, {"-t", "errs", "-p", "err"}, TextLines("e", kFloodLines)).status, 0);
  Result r = RunLogctl({"cat", "--json", "--file", d.ring});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_LT(lines.size(), size_t(kFloodLines));
  EXPECT_NE(ParseJson(lines.back())["msg"].get<std::string>().find(
                "e line " + std::to_string(kFloodLines - 1) + " "),
            std::string::npos);
  ASSERT_EQ(stat(d.ring.c_str(), &after), 0);
  EXPECT_EQ(after.st_size, before.st_size);
  Result v = RunLogctl({"verify", "--file", d.ring});
  EXPECT_EQ(v.status, 0) << v.out << v.err;
}

}  // namespace
}  // namespace logsink::test
