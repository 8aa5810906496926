// logctl_boot_test.cc: integration tests of what logctl does with the boots
// and units the ring records (FORMAT.md, "Boots"): --list-boots, -b/--boot,
// -k/--dmesg, -u/--unit, -o short-monotonic and the boot_id, monotonic_ns
// and unit fields of the JSON and verbose output, against a ring written
// under two boot identities with storage's RingWriter.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "cli_util.h"

namespace logsink::test {
namespace {

constexpr uint64_t kMs = 1000000, kSec = 1000000000;

std::array<uint8_t, 16> Id(uint8_t byte) {
  std::array<uint8_t, 16> id;
  id.fill(byte);
  return id;
}

// Boot A booted 100 s before kT0 (10:00:00) and wrote a0..a4 from kT0 on,
// 1 ms apart; boot B booted at 10:59:55 and wrote b0..b4 from 11:00:00.
// Records 0 and 3 of each boot are kernel messages, 1 is sshd's (unit
// sshd.service), 2 cron's (cron.service), 4 the test app's (no unit).
class BootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    f_ = dir_.File("r.ring");
    TestRing ring(f_);
    const uint32_t msg = ring.Intern(6, "%s");
    const uint32_t kmsg = ring.Intern(6, "%s", 0, "kernel");  // facility 0: kern
    const Source sshd{11, 501, 0, 0, "sshd", "sshd", "sshd.service"};
    const Source cron{12, 502, 0, 0, "cron", "cron", "cron.service"};
    const Source kernel{13, 0, 0, 0, "kernel", "logsinkd"};
    const Source *srcs[] = {&kernel, &sshd, &cron, &kernel, &ring.source()};
    ring.Reboot(kBootA, kT0 - 100 * kSec);
    for (int i = 0; i < 5; i++) Add(&ring, i % 3 ? msg : kmsg, srcs[i], "a", i, kT0);
    ring.Reboot(kBootB, kT0 + 3595 * kSec);
    for (int i = 0; i < 5; i++) Add(&ring, i % 3 ? msg : kmsg, srcs[i], "b", i, kT0 + 3600 * kSec);
    ring.writer()->AppendDropped(sshd, kT0 + 3600 * kSec + 5 * kMs, 2, kT0);
    ring.Close();
  }
  void Add(TestRing *ring, uint32_t site, const Source *src, const std::string &boot, int i,
           uint64_t t0) {
    const std::string text = (i % 3 ? "" : "k") + boot + std::to_string(i);
    ring->Add(site, "s", Args().s(text).bytes(), t0 + uint64_t(i) * kMs, src);
  }
  // The messages logctl ARGS --file f_ -o cat prints; its exit status must be 0.
  std::vector<std::string> Msgs(std::vector<std::string> args) {
    args.insert(args.end(), {"--file", f_, "-o", "cat"});
    Result r = RunLogctl(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return Lines(r.out);
  }
  using V = std::vector<std::string>;
  const std::array<uint8_t, 16> kBootA = Id(0xa1), kBootB = Id(0xb2);
  const std::string kHexA = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
  const std::string kHexB = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2";
  const V kA = {"ka0", "a1", "a2", "ka3", "a4"};
  const std::string kDropped =
      "-- 2 records dropped by the client since 2025-11-23 10:00:00.000 +0000 --";
  const V kB = {"kb0", "b1", "b2", "kb3", "b4", kDropped};
  TempDir dir_;
  std::string f_;
};

TEST_F(BootTest, ListBootsOldestFirstNumberedFromTheLast) {
  const std::string want =
      "-1 " + kHexA + " 2025-11-23T10:00:00.000000+0000 2025-11-23T10:00:00.004000+0000 5\n" +
      " 0 " + kHexB + " 2025-11-23T11:00:00.000000+0000 2025-11-23T11:00:00.005000+0000 6\n";
  // A plain option (logctl --list-boots, as journalctl's), or one of tail and cat.
  for (V args : {V{"--list-boots"}, V{"cat", "--list-boots"}, V{"tail", "--list-boots"}}) {
    args.insert(args.end(), {"--file", f_});
    Result r = RunLogctl(args);
    EXPECT_EQ(r.status, 0) << args[0] << ": " << r.err;
    EXPECT_EQ(r.out, want) << args[0];
    EXPECT_EQ(r.err, "");
  }
  // Local time unless --utc (TZ is UTC in these tests: the same here).
  EXPECT_EQ(RunLogctl({"--list-boots", "--utc", "--file", f_}).out, want);

  Result r = RunLogctl({"--list-boots", "--json", "--file", f_});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(Lines(r.out).size(), 1u) << r.out;
  json v = ParseJson(r.out);
  ASSERT_TRUE(v.is_array()) << r.out;
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0]["index"].get<int64_t>(), -1);
  EXPECT_EQ(v[0]["boot_id"].get<std::string>(), kHexA);
  EXPECT_EQ(v[0]["first_ts_ns"].get<uint64_t>(), kT0);
  EXPECT_EQ(v[0]["first_ts_ns_str"].get<std::string>(), std::to_string(kT0));
  EXPECT_EQ(v[0]["last_ts_ns_str"].get<std::string>(), std::to_string(kT0 + 4 * kMs));
  EXPECT_EQ(v[0]["records"].get<uint64_t>(), 5u);
  EXPECT_EQ(v[1]["index"].get<int64_t>(), 0);
  EXPECT_EQ(v[1]["boot_id"].get<std::string>(), kHexB);
  EXPECT_EQ(v[1]["last_ts_ns"].get<uint64_t>(), kT0 + 3600 * kSec + 5 * kMs);
  EXPECT_EQ(v[1]["records"].get<uint64_t>(), 6u);
  EXPECT_EQ(r.out.rfind("[{\"index\":-1,\"boot_id\":\"" + kHexA + "\",\"first_ts_ns\":", 0), 0u)
      << r.out;

  // An empty ring has no boots.
  std::string e = dir_.File("empty.ring");
  TestRing(e).Close();
  r = RunLogctl({"--list-boots", "--file", e});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(RunLogctl({"--list-boots", "--json", "--file", e}).out, "[]\n");
}

TEST_F(BootTest, BootSelectsOneBootsRecords) {
  V all = kA;
  all.insert(all.end(), kB.begin(), kB.end());
  EXPECT_EQ(Msgs({"cat"}), all);
  // No value, 0: the last boot.
  for (V args :
       {V{"cat", "-b"}, V{"cat", "-b", "0"}, V{"cat", "--boot"}, V{"cat", "--boot=0"},
        V{"cat", "-b0"}, V{"cat", "-b", "2"}, V{"cat", "-b", "+2"}, V{"-b"}, V{"cat", "-b", kHexB}})
    EXPECT_EQ(Msgs(args), kB) << args[1];
  // -1: the one before; 1: the first.
  std::string dashed = kHexA.substr(0, 8) + "-" + kHexA.substr(8, 4) + "-" + kHexA.substr(12, 4) +
                       "-" + kHexA.substr(16, 4) + "-" + kHexA.substr(20);
  std::string upper = kHexA;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  for (V args : {V{"cat", "-b", "-1"}, V{"cat", "-b-1"}, V{"cat", "--boot", "-1"},
                 V{"cat", "--boot=-1"}, V{"cat", "-b", "1"}, V{"-b", "-1"}, V{"cat", "-b", kHexA},
                 V{"cat", "-b", dashed}, V{"cat", "--boot=" + upper}})
    EXPECT_EQ(Msgs(args), kA) << args.back();
  EXPECT_EQ(Msgs({"cat", "-b", "all"}), all);
  // The value may come before or after other options; -b alone before one.
  EXPECT_EQ(Msgs({"cat", "-b", "-r"}), V(kB.rbegin(), kB.rend()));
  EXPECT_EQ(Msgs({"tail", "-n", "2", "-b", "-1"}), V(kA.end() - 2, kA.end()));
  EXPECT_EQ(Msgs({"tail", "-b", "-1", "-n", "2", "-r"}), (V{"a4", "ka3"}));
  EXPECT_EQ(Msgs({"cat", "-b", "-1", "--grep", "^a"}), (V{"a1", "a2", "a4"}));
  // export takes it too.
  Result r = RunLogctl({"export", "-b", "-1", "--file", f_});
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(Lines(r.out).size(), kA.size()) << r.out;
  EXPECT_NE(Lines(r.out)[4].find("<info> a4"), std::string::npos) << r.out;
}

TEST_F(BootTest, ABootNotInTheRingIsAnError) {
  struct {
    V args;
    std::string err;
  } cases[] = {
      {{"cat", "-b", "-2"}, "no boot -2 in the ring (it holds 2 boots)"},
      {{"tail", "-b", "-3"}, "no boot -3 in the ring (it holds 2 boots)"},
      {{"cat", "-b", "3"}, "no boot 3 in the ring (it holds 2 boots)"},
      {{"-b", std::string(32, 'c')},
       "no boot " + std::string(32, 'c') + " in the ring (it holds 2 boots)"},
  };
  for (auto &c : cases) {
    V args = c.args;
    args.insert(args.end(), {"--file", f_});
    Result r = RunLogctl(args);
    EXPECT_EQ(r.status, 1) << c.err;
    EXPECT_EQ(r.err, "logctl: " + f_ + ": " + c.err + "\n");
    EXPECT_EQ(r.out, "");
  }
  // export refuses before creating its file.
  std::string out = dir_.File("out.txt");
  Result r = RunLogctl({"export", "-b", "-5", "-o", out, "--file", f_});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + f_ + ": no boot -5 in the ring (it holds 2 boots)\n");
  struct stat st;
  EXPECT_NE(stat(out.c_str(), &st), 0);
  // An empty ring holds no boot, not even the last.
  std::string e = dir_.File("empty.ring");
  TestRing(e).Close();
  r = RunLogctl({"cat", "-b", "--file", e});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + e + ": no boot 0 in the ring (it holds 0 boots)\n");
  // Values that are neither: usage errors.
  r = RunLogctl({"cat", "--boot=soon", "--file", f_});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "logctl: cat: bad boot 'soon': expected an offset (0 the last boot, -1 the one "
            "before, 1 the first), a boot ID (32 hex digits) or all");
  r = RunLogctl({"cat", "-b", "soon", "--file", f_});  // not -b's value
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')), "logctl: cat: unexpected argument 'soon'");
  r = RunLogctl({"cat", "-b", "a1a1-a1a1", "--file", f_});
  EXPECT_EQ(r.status, 2) << r.err;
  r = RunLogctl({"stats", "-b", "--file", f_});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')), "logctl: stats: option '-b' does not apply here");
}

TEST_F(BootTest, ShortMonotonicIsEachRecordsOwnBootsClock) {
  Result r = RunLogctl({"cat", "-o", "short-monotonic", "--file", f_});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 11u) << r.out;
  EXPECT_EQ(lines[0], "[  100.000000] kernel(logsinkd)[0]: <info> ka0");
  EXPECT_EQ(lines[1], "[  100.001000] sshd[501]: <info> a1");
  EXPECT_EQ(lines[2], "[  100.002000] cron[502]: <info> a2");
  EXPECT_EQ(lines[4], "[  100.004000] testapp(testcomm)[4242]: <info> a4");
  EXPECT_EQ(lines[5], "[    5.000000] kernel(logsinkd)[0]: <info> kb0");
  EXPECT_EQ(lines[6], "[    5.001000] sshd[501]: <info> b1");
  EXPECT_EQ(lines[10].substr(0, 15), "[    5.005000] ") << lines[10];
}

TEST_F(BootTest, JsonAndVerboseCarryBootMonotonicTimeAndUnit) {
  Result r = RunLogctl({"cat", "--json", "--file", f_});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 11u) << r.out;
  json a1 = ParseJson(lines[1]);
  ASSERT_FALSE(a1.is_discarded()) << lines[1];
  EXPECT_EQ(a1["boot_id"].get<std::string>(), kHexA);
  EXPECT_EQ(a1["monotonic_ns"].get<uint64_t>(), 100 * kSec + kMs);
  EXPECT_EQ(a1["monotonic_ns_str"].get<std::string>(), std::to_string(100 * kSec + kMs));
  EXPECT_EQ(a1["unit"].get<std::string>(), "sshd.service");
  // After every other key.
  const std::string tail = ",\"boot_id\":\"" + kHexA +
                           "\",\"monotonic_ns\":100001000000,\"monotonic_ns_str\":\"100001000000\","
                           "\"unit\":\"sshd.service\"}";
  EXPECT_EQ(lines[1].substr(lines[1].size() - tail.size()), tail) << lines[1];
  EXPECT_NE(lines[1].find("\"args\":[\"a1\"],\"boot_id\""), std::string::npos) << lines[1];
  json b4 = ParseJson(lines[9]);
  EXPECT_EQ(b4["boot_id"].get<std::string>(), kHexB);
  EXPECT_EQ(b4["monotonic_ns"].get<uint64_t>(), 5 * kSec + 4 * kMs);
  EXPECT_EQ(b4["unit"].get<std::string>(), "") << lines[9];  // the test app has none
  json b2 = ParseJson(lines[7]);
  EXPECT_EQ(b2["unit"].get<std::string>(), "cron.service") << lines[7];
  json kb0 = ParseJson(lines[5]);
  EXPECT_EQ(kb0["file"].get<std::string>(), "kernel");
  EXPECT_EQ(kb0["facility"].get<std::string>(), "kern") << lines[5];
  // A DROPPED entry too.
  json d = ParseJson(lines[10]);
  EXPECT_EQ(d["dropped"].get<uint64_t>(), 2u);
  EXPECT_EQ(d["boot_id"].get<std::string>(), kHexB);
  EXPECT_EQ(d["monotonic_ns"].get<uint64_t>(), 5 * kSec + 5 * kMs);
  EXPECT_EQ(d["unit"].get<std::string>(), "sshd.service");
  // export --format json is the same.
  Result e = RunLogctl({"export", "--format", "json", "--file", f_});
  EXPECT_EQ(e.out, r.out);

  r = RunLogctl({"cat", "-o", "verbose", "-b", "-1", "--grep", "a1", "--file", f_});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("    BOOT_ID=" + kHexA +
                       "\n    MONOTONIC_NS=100001000000\n"
                       "    UNIT=sshd.service\n    MESSAGE=a1\n"),
            std::string::npos)
      << r.out;
  r = RunLogctl({"cat", "-o", "verbose", "--grep", "b4", "--file", f_});
  EXPECT_NE(r.out.find("    MONOTONIC_NS=5004000000\n    MESSAGE=b4\n"), std::string::npos)
      << r.out;  // no UNIT line without a unit
}

// A record that claims to be older than its boot has no monotonic time
// (storage::MonotonicTime() is 0): short-monotonic falls back to its time
// minus the realtime at which this machine booted, JSON says 0.
TEST(ShortMonotonic, FallsBackForARecordOlderThanItsBoot) {
  TempDir dir;
  std::string f = dir.File("r.ring");
  {
    TestRing ring(f);
    ring.Reboot(Id(0x5a), kT0 - 10 * kSec);
    const uint32_t site = ring.Intern(6, "m%d");
    ring.Add(site, "i", Args().i(1).bytes(), kT0);              // opens the block: monotonic 10 s
    ring.Add(site, "i", Args().i(2).bytes(), kT0 - 20 * kSec);  // 10 s before its boot
    ring.Close();
  }
  struct timespec rt, bt;
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_BOOTTIME, &bt);
  const double boot = double(rt.tv_sec - bt.tv_sec) + double(rt.tv_nsec - bt.tv_nsec) / 1e9;
  Result r = RunLogctl({"cat", "-o", "short-monotonic", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0], "[   10.000000] testapp(testcomm)[4242]: <info> m1");
  ASSERT_EQ(lines[1].front(), '[') << lines[1];
  const double secs = std::stod(lines[1].substr(1, lines[1].find(']') - 1));
  EXPECT_NEAR(secs, double(kT0 - 20 * kSec) / 1e9 - boot, 2.0) << lines[1];
  r = RunLogctl({"cat", "--json", "--file", f});
  EXPECT_EQ(ParseJson(Lines(r.out)[1])["monotonic_ns"].get<uint64_t>(), 0u) << r.out;
}

// A ring written by a writer that does not know its boot: no boot id.
TEST(BootlessRing, JsonHasAnEmptyBootId) {
  TempDir dir;
  std::string f = dir.File("r.ring");
  {
    TestRing ring(f);
    ring.Reboot(std::array<uint8_t, 16>{}, kT0 - 7 * kSec);
    ring.Add(ring.Intern(6, "x"), "", "", kT0);
    ring.Close();
  }
  Result r = RunLogctl({"cat", "--json", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  json v = ParseJson(r.out);
  EXPECT_EQ(v["boot_id"].get<std::string>(), "") << r.out;
  EXPECT_EQ(v["monotonic_ns"].get<uint64_t>(), 7 * kSec) << r.out;
  r = RunLogctl({"cat", "-o", "verbose", "--file", f});
  EXPECT_EQ(r.out.find("BOOT_ID="), std::string::npos) << r.out;
}

TEST_F(BootTest, UnitSelectsBySystemdUnit) {
  const V sshd = {"a1", "b1", kDropped};
  EXPECT_EQ(Msgs({"cat", "-u", "sshd.service"}), sshd);
  EXPECT_EQ(Msgs({"cat", "-u", "sshd"}), sshd);  // sshd.service
  EXPECT_EQ(Msgs({"cat", "--unit", "sshd"}), sshd);
  EXPECT_EQ(Msgs({"cat", "--unit=sshd.service", "-b"}), V(sshd.begin() + 1, sshd.end()));
  EXPECT_EQ(Msgs({"cat", "-u", "sshd", "-u", "cron"}), (V{"a1", "a2", "b1", "b2", sshd.back()}));
  EXPECT_EQ(Msgs({"cat", "-u", "cron", "-b", "-1"}), (V{"a2"}));
  EXPECT_EQ(Msgs({"cat", "-u", "sshd.socket"}), V());  // has a suffix: as it is
  EXPECT_EQ(Msgs({"tail", "-n", "1", "-u", "cron"}), (V{"b2"}));
  EXPECT_EQ(Msgs({"-u", "cron"}), (V{"a2", "b2"}));
  Result r = RunLogctl({"cat", "-u", "", "--file", f_});
  EXPECT_EQ(r.status, 2);
}

TEST_F(BootTest, DmesgIsTheKernelMessagesOfTheLastBoot) {
  EXPECT_EQ(Msgs({"cat", "-k"}), (V{"kb0", "kb3"}));
  EXPECT_EQ(Msgs({"cat", "--dmesg"}), (V{"kb0", "kb3"}));
  EXPECT_EQ(Msgs({"-k"}), (V{"kb0", "kb3"}));
  EXPECT_EQ(Msgs({"cat", "-k", "-b", "-1"}), (V{"ka0", "ka3"}));
  EXPECT_EQ(Msgs({"cat", "-b", "1", "-k"}), (V{"ka0", "ka3"}));
  EXPECT_EQ(Msgs({"cat", "-k", "-b", "all"}), (V{"ka0", "ka3", "kb0", "kb3"}));
  EXPECT_EQ(Msgs({"tail", "-n", "1", "-k"}), (V{"kb3"}));
  Result e = RunLogctl({"export", "-k", "--file", f_});  // -o: export's destination
  EXPECT_EQ(e.status, 0) << e.err;
  auto lines = Lines(e.out);
  ASSERT_EQ(lines.size(), 2u) << e.out;
  EXPECT_NE(lines[1].find(" kernel(logsinkd)[0]: <info> kb3"), std::string::npos) << e.out;
  EXPECT_EQ(Msgs({"cat", "-k", "-u", "sshd"}), V());
  Result r = RunLogctl({"cat", "-k", "-b", "-2", "--file", f_});
  EXPECT_EQ(r.status, 1) << r.err;
}

// Whether child pid (not reaped yet) has ended, or watches a file with
// inotify: logctl -f waiting for the writer.
bool FollowingOrEnded(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::ifstream stat(proc + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] == 'Z') return true;
  DIR *d = opendir((proc + "/fdinfo").c_str());
  if (!d) return true;
  bool watching = false;
  while (struct dirent *e = readdir(d)) {
    std::ifstream info(proc + "/fdinfo/" + e->d_name);
    std::string l;
    while (std::getline(info, l)) watching = watching || l.rfind("inotify wd:", 0) == 0;
  }
  closedir(d);
  return watching;
}

// As journalctl -f -b: on an empty ring, -f with -b or -k (the last boot)
// waits for the records of this machine's boot, the one a writer here
// gives the records it writes next, instead of failing for want of a last
// boot. Without -f it is still an error: the ring holds no boot.
TEST(EmptyRingBoot, FollowWaitsForTheRecordsOfThisBoot) {
  TempDir dir;
  const std::string f = dir.File("r.ring");
  TestRing ring(f);  // this machine's boot until Reboot()
  const uint32_t msg = ring.Intern(6, "%s");
  const uint32_t kmsg = ring.Intern(6, "%s", 0, "kernel");
  ring.Flush();
  for (std::vector<std::string> args : {std::vector<std::string>{"tail", "-b"}, {"-k"}}) {
    args.insert(args.end(), {"--file", f});
    Result r = RunLogctl(args);
    EXPECT_EQ(r.status, 1) << args[0];
    EXPECT_EQ(r.err, "logctl: " + f + ": no boot 0 in the ring (it holds 0 boots)\n") << args[0];
  }
  Proc b({"tail", "-f", "-b", "--file", f, "-o", "cat"});
  Proc k({"-f", "-k", "--file", f, "-o", "cat"});
  // Both have read the empty ring and wait (or, failing, have ended).
  for (Proc *p : {&b, &k})
    ASSERT_TRUE(WaitUntil([&] { return FollowingOrEnded(p->pid()); }, kHang, Ms(10)));
  ring.Add(msg, "s", Args().s("one").bytes(), kT0);
  ring.Add(kmsg, "s", Args().s("kone").bytes(), kT0 + kMs);
  ring.Flush();
  // A record of another boot is not the one followed; this boot's again is.
  ring.Reboot(Id(0xc3), kT0);
  ring.Add(msg, "s", Args().s("other boot").bytes(), kT0 + 2 * kMs);
  ring.Reboot(storage::Env::Default()->BootId(), kT0);
  ring.Add(kmsg, "s", Args().s("ktwo").bytes(), kT0 + 3 * kMs);
  ring.Flush();
  std::string line;
  for (const char *want : {"one", "kone", "ktwo"}) {
    ASSERT_TRUE(b.ReadLine(&line, 10000)) << "-b: waiting for " << want << "; " << b.Finish().err;
    EXPECT_EQ(line, want);
  }
  for (const char *want : {"kone", "ktwo"}) {
    ASSERT_TRUE(k.ReadLine(&line, 10000)) << "-k: waiting for " << want << "; " << k.Finish().err;
    EXPECT_EQ(line, want);
  }
  for (Proc *p : {&b, &k}) {
    p->Signal(SIGTERM);
    Result r = p->Finish();
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "") << "nothing more (not the other boot's record)";
  }
}

TEST_F(BootTest, HelpNamesTheOptions) {
  Result r = RunLogctl({"cat", "--help"});
  for (const char *want : {"-b, --boot [ID|OFFSET]", "-k, --dmesg", "-u, --unit UNIT",
                           "--list-boots", "since the record's own boot"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  EXPECT_EQ(r.out.find("from the realtime stamp"), std::string::npos) << r.out;
  r = RunLogctl({"export", "--help"});
  EXPECT_NE(r.out.find("-b, --boot"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\n  --list-boots"), std::string::npos) << r.out;  // tail and cat's
  r = RunLogctl({"export", "--list-boots", "--file", f_});
  EXPECT_EQ(r.status, 2);
}

}  // namespace
}  // namespace logsink::test
