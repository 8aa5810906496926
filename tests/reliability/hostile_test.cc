// hostile_test.cc: one good client sends 1,000,000 numbered records to the
// real logsinkd while other connections send random bytes, oversized lengths,
// half frames that stall, unknown site ids, argument/format mismatches,
// strings without their length, bad frames of other kinds, and connect and
// disconnect in a tight loop. Every good record lands, logsinkd stays up
// within a stated peak RSS, and its STATS count each kind of rejection.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "daemon/harness.h"
#include "reliability/rel_util.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1700000000000000000ull;
constexpr int kEach = 20;  // connections of each hostile kind

// Bounds on logsinkd's peak RSS (VmHWM): on how far it may rise above what
// the daemon held once ready, before any client came, and on the peak
// itself. Measured in this test: ready at 8 MiB and 18 MiB at the peak
// (Release); under ASan+UBSan ready at 69-73 MiB (the sanitizer's own maps
// and a larger binary) and 98-110 MiB at the peak, for 20-200 rounds of
// hostile connections. The bounds leave a wide margin.
constexpr uint64_t kRssRiseBoundKiB = (kAsanBuild ? 96 : 48) * 1024;
constexpr uint64_t kRssBoundKiB = (kAsanBuild ? 192 : 64) * 1024;

std::string HelloFrame() { return logsink::test::Hello(1, "hostile"); }

// The hostile kinds, one connection each; each returns whether the daemon
// closed that connection (where it must).
struct Hostile {
  std::string socket;
  std::mt19937 rng;  // seeded by the test (TestSeed)

  void RandomBytes() {
    Client c(socket);
    if (!c.ok()) return;
    std::string b(size_t(std::uniform_int_distribution<int>(1, 512)(rng)), '\0');
    for (char &ch : b) ch = char(rng());
    c.Send(b);  // then close: whatever it was, only this connection suffers
  }
  bool Bad(const std::string &bytes) {
    Client c(socket);
    if (!c.ok()) return false;
    c.Send(bytes);
    return c.WaitClosed();
  }
  bool OversizedLength() {
    std::string f;
    PutU32(&f, 0xfffffff0u);
    f.push_back(char(LS_F_RECORDS));
    return Bad(HelloFrame() + f);
  }
  bool UnknownSite() { return Bad(HelloFrame() + Records(1, {Rec(7, kT0, {Arg::I(1)})})); }
  bool ArgMismatch() {
    return Bad(HelloFrame() + Intern(1, 6, 1, "a %d b %d", "h.c") +
               Records(1, {Rec(1, kT0, {Arg::I(1)})}));
  }
  bool StringWithoutLength() {
    return Bad(HelloFrame() + Intern(1, 6, 1, "name %s", "h.c") +
               Records(1, {Rec(1, kT0, {}, false, 0, "no length prefix here")}));
  }
  bool UnknownType() { return Bad(HelloFrame() + Frame(0x7e, "xyz")); }
  bool NoHello() { return Bad(Records(1, {})); }
  bool BadIntern() { return Bad(HelloFrame() + Intern(1, 6, 1, "evil %n", "h.c")); }
  bool BadVersion() { return Bad(logsink::test::Hello(99, "future")); }
  int connects = 0;  // successful connect() calls of ConnectDisconnect
  void ConnectDisconnect() {
    int fd = ConnectUnix(socket);
    if (fd >= 0) {
      connects++;
      close(fd);
    }
  }
  // kEach connections that send half a frame and then stall, at once.
  int HalfFramesThenStall() {
    std::vector<std::unique_ptr<Client>> cs;
    std::string f = Intern(1, 6, 1, "stalled %d", "h.c");
    for (int i = 0; i < kEach; i++) {
      cs.push_back(std::make_unique<Client>(socket));
      cs.back()->Send(HelloFrame() + f.substr(0, f.size() / 2));
    }
    int closed = 0;
    for (auto &c : cs) closed += c->WaitClosed();
    return closed;
  }
};

TEST(Hostile, GoodClientLosesNothingWhileOthersMisbehave) {
  const uint64_t kGood = uint64_t(Scaled(1000000, 200000));
  TempDir dir;
  Daemon d(dir, {"--size", "128MiB"}, "[limits]\nstall_timeout = \"300ms\"\n");
  d.child_setup = SmallQuarantine;
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const uint64_t ready_kib = StatusKiB(d.pid(), "VmHWM");

  std::atomic<int> not_closed{0}, stall_closed{0}, rounds{0}, bare_connects{0};
  std::atomic<bool> good_done{false};
  const uint64_t seed = TestSeed();
  std::thread bad([&] {
    Hostile h{d.socket, std::mt19937(seed)};
    // At least kEach rounds, more while the good client is still sending (at most 10 x kEach).
    for (int i = 0; i < kEach || (!good_done && i < 10 * kEach); i++, rounds++) {
      h.RandomBytes();
      not_closed += !h.OversizedLength();
      not_closed += !h.UnknownSite();
      not_closed += !h.ArgMismatch();
      not_closed += !h.StringWithoutLength();
      not_closed += !h.UnknownType();
      not_closed += !h.NoHello();
      not_closed += !h.BadIntern();
      not_closed += !h.BadVersion();
      h.ConnectDisconnect();
    }
    stall_closed = h.HalfFramesThenStall();
    for (int i = 0; i < 50 * kEach; i++) h.ConnectDisconnect();  // a tight loop
    bare_connects = h.connects;
  });

  // The good client: numbered records, 1000 per frame, over a blocking socket.
  Client good(d.socket);
  ASSERT_TRUE(good.ok());
  ASSERT_TRUE(good.Send(logsink::test::Hello(1, "good") + Intern(1, 6, 1, "good %llu", "good.c")));
  auto t0 = Clock::now();
  uint64_t peak_during = 0;
  for (uint64_t i = 0; i < kGood;) {
    std::vector<Rec> recs;
    for (int k = 0; k < 1000 && i < kGood; k++, i++)
      recs.emplace_back(1, kT0 + i, std::vector<Arg>{Arg::U(i)});
    ASSERT_TRUE(good.Send(Records(7, recs))) << "the good connection broke at record " << i;
    if (i % 100000 == 0) peak_during = std::max(peak_during, StatusKiB(d.pid(), "VmHWM"));
  }
  good_done = true;
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  bad.join();
  double secs_all = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(not_closed.load(), 0) << "a bad connection was not closed by the daemon";
  EXPECT_EQ(stall_closed.load(), kEach) << "stalled half frames were not closed";

  // Still up and answering; every kind of rejection counted.
  std::map<std::string, uint64_t> st;
  ASSERT_TRUE(WaitUntil(
      [&] {
        st = good.Stats();
        return st["records"] >= kGood;
      },
      Ms(20000)))
      << "the daemon did not write the good records (records=" << st["records"] << ")";
  for (const char *k : {"err_bad_length", "err_unknown_site", "err_bad_record", "err_unknown_type",
                        "err_no_hello", "err_bad_intern", "err_bad_version", "err_stalled"}) {
    EXPECT_GE(st[k], uint64_t(k == std::string("err_bad_record") ? 2 * kEach : kEach)) << k;
  }
  // Every connection the daemon had to close was accepted and counted.
  EXPECT_GE(st["connections_total"], uint64_t(8 * rounds + kEach));
  uint64_t hwm = StatusKiB(d.pid(), "VmHWM");
  EXPECT_GT(ready_kib, 0u);
  EXPECT_LT(hwm, ready_kib + kRssRiseBoundKiB)
      << "logsinkd peak RSS " << hwm << " KiB, " << ready_kib << " KiB once ready";
  EXPECT_LT(hwm, kRssBoundKiB) << "logsinkd peak RSS";
  ASSERT_EQ(d.Stop(SIGTERM), 0) << d.Stderr();

  RecordingReporter rep;
  std::vector<OwnedRecord> recs = ReadRing(d.ring, &rep);
  EXPECT_EQ(rep.corruptions(), 0u) << rep.Dump();
  uint64_t next = 0, foreign = 0;
  for (const OwnedRecord &g : recs) {
    std::vector<Val> a;
    if (g.app != "good" || g.fmt != "good %llu" || !DecodeArgs(g.fmt, g.args, &a) ||
        a.size() != 1) {
      foreign++;
      continue;
    }
    if (a[0].u != next) break;
    next++;
  }
  EXPECT_EQ(next, kGood) << "the good client's records are not all there, in order";
  EXPECT_EQ(foreign, 0u) << "records from hostile connections were written";
  std::string errs;
  for (auto &[k, v] : st)
    if (k.rfind("err_", 0) == 0) errs += " " + k + "=" + std::to_string(v);
  Figures(
      "hostile good_records sent=%llu landed=%llu lost=%llu in %.1fs (%.0f records/s with "
      "hostiles) "
      "hostile connections counted=%llu (%d rounds of each kind, %d stalled half frames, %d "
      "connect/close made; %.1fs in all)",
      (unsigned long long)kGood, (unsigned long long)next, (unsigned long long)(kGood - next), secs,
      double(kGood) / secs, (unsigned long long)st["connections_total"] - 1, rounds.load(), kEach,
      bare_connects.load(), secs_all);
  Figures(
      "hostile logsinkd peak RSS (VmHWM)=%.1f MiB (%.1f MiB once ready, bounds ready + %.0f MiB "
      "and %.0f MiB, %.1f MiB midway) STATS:%s",
      hwm / 1024.0, ready_kib / 1024.0, kRssRiseBoundKiB / 1024.0, kRssBoundKiB / 1024.0,
      peak_during / 1024.0, errs.c_str());
}

}  // namespace
}  // namespace logsink::test
