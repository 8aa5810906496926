// burst_test.cc: with the real logsinkd and the
// default client options: a burst of any size from 1 and 4 threads lands
// completely (every record, each exactly once, in per-thread order), and a
// SIGSTOPped daemon holds the calling thread for at most about one
// block_timeout_ms, after which calls drop and count; after SIGCONT, what was
// counted as sent arrives and the rest is reported as dropped, exactly.
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/daemon_process.h"
#include "common/process.h"
#include "common/temp_dir.h"
#include "logsink/logsink.h"
#include "logsink/proto/codec.h"
#include "logsink/storage/ring.h"
#include "rel_util.h"

namespace logsink::test {
namespace {

constexpr const char *kFmt = "burst thread %d seq %d";

double MonoS() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

ls_stats Stats(ls_client *c) {
  ls_stats s{};
  s.size = sizeof s;
  EXPECT_EQ(ls_get_stats(c, &s), 0);
  return s;
}

// Per thread, how many times each seq of kFmt is in the ring, and the sum
// of the DROPPED entries' counts.
struct Landed {
  std::vector<std::vector<uint8_t>> seen;
  uint64_t records = 0, dropped_reported = 0, out_of_order = 0;
};

Landed ReadLanded(const std::string &ring, int threads, int per_thread) {
  Landed l;
  l.seen.assign(threads, std::vector<uint8_t>(size_t(per_thread), 0));
  std::vector<int> last(threads, -1);
  std::unique_ptr<storage::RingReader> r;
  storage::Status s = storage::RingReader::Open(storage::Env::Default(), ring, nullptr, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return l;
  storage::Record rec;
  while (r->Next(&rec).ok()) {
    if (rec.kind == storage::Record::Kind::kDropped) {
      l.dropped_reported += rec.dropped_count;
      continue;
    }
    if (rec.site.fmt != kFmt) continue;
    const uint8_t *p = reinterpret_cast<const uint8_t *>(rec.args.data());
    const uint8_t *end = p + rec.args.size();
    uint64_t t = 0, q = 0;
    size_t n = ls_get_varint(p, end, &t);
    if (n == 0 || ls_get_varint(p + n, end, &q) == 0) continue;
    int th = int(ls_unzigzag(t)), seq = int(ls_unzigzag(q));
    if (th < 0 || th >= threads || seq < 0 || seq >= per_thread) continue;
    ++l.seen[size_t(th)][size_t(seq)];
    if (seq <= last[size_t(th)]) ++l.out_of_order;
    last[size_t(th)] = seq;
    ++l.records;
  }
  return l;
}

class BurstTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(daemon_.Start()) << ReadFile(daemon_.err_path); }
  TempDir dir_{"logsink-burst"};
  // Large enough that a full burst is never overwritten (about 8 bytes a record).
  Daemon daemon_{dir_, {"--size", "64MiB"}};
};

void Burst(int threads, int per_thread, Daemon *daemon) {
  ls_client *c = ls_open(daemon->socket.c_str(), "burst", nullptr);  // default options
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return Stats(c).connected == 1; }));
  double t0 = MonoS();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([c, t, per_thread] {
      for (int i = 0; i < per_thread; ++i) LS_LOG(c, LS_INFO, "burst thread %d seq %d", t, i);
    });
  for (auto &t : ts) t.join();
  double t_calls = MonoS() - t0;
  ASSERT_EQ(ls_flush(c), 0);
  double t_sent = MonoS() - t0;
  ls_stats s = Stats(c);
  ls_close(c);
  const uint64_t n = uint64_t(threads) * uint64_t(per_thread);
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.sent, n);
  Landed l;
  ASSERT_TRUE(WaitUntil([&] {
    l = ReadLanded(daemon->ring, threads, per_thread);
    return l.records >= n;
  }));
  EXPECT_EQ(l.records, n);
  EXPECT_EQ(l.out_of_order, 0u);
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < per_thread; ++i)
      ASSERT_EQ(l.seen[size_t(t)][size_t(i)], 1) << t << " " << i;
  Figures(
      "burst, default options: %d thread(s) x %d records: %llu of %llu landed, %llu dropped; "
      "calls took %.3f s, sent after %.3f s",
      threads, per_thread, (unsigned long long)l.records, (unsigned long long)n,
      (unsigned long long)s.dropped, t_calls, t_sent);
}

TEST_F(BurstTest, OneThreadBurstLandsCompletely) {
  Burst(1, int(Scaled(1000000, 200000)), &daemon_);
}

TEST_F(BurstTest, FourThreadBurstLandsCompletely) {
  Burst(4, int(Scaled(250000, 50000)), &daemon_);
}

// A program's first burst, right after ls_open: until the sender has tried
// to connect, "no connection" means "not yet", so the calls wait for space
// instead of dropping. Each run is a fresh process (first_burst.c), where the
// first connect is slow enough for an 8 KiB buffer to fill before it (before
// the fix 2 of 3 such runs dropped 42,105 and 96,953 of 200,000 records).
TEST_F(BurstTest, FirstBurstOfAProgramLands) {
  constexpr int kRuns = 5, kN = 200000;
  int early = 0;
  unsigned long long dropped_all = 0;
  for (int i = 0; i < kRuns; i++) {
    ProcResult r = RunProcess(BinPath("first_burst"), {daemon_.socket, std::to_string(kN)});
    ASSERT_EQ(r.status, 0) << r.err;
    unsigned connected = 9;
    unsigned long long logged = 0, sent = 0, dropped = 1;
    ASSERT_EQ(sscanf(r.out.c_str(), "connected_at_first_call=%u logged=%llu sent=%llu dropped=%llu",
                     &connected, &logged, &sent, &dropped),
              4)
        << r.out;
    EXPECT_EQ(logged, unsigned(kN)) << "run " << i;
    EXPECT_EQ(sent, unsigned(kN)) << "run " << i;
    EXPECT_EQ(dropped, 0u) << "run " << i;
    early += connected == 0;
    dropped_all += dropped;
  }
  // The runs must have exercised the case: a burst that began before the
  // connection was made (connect is asynchronous, so nearly all do).
  EXPECT_GT(early, 0);
  Figures(
      "first burst of a fresh process, 8 KiB buffers: %d runs x %d records, %llu dropped; the "
      "burst began before the connection in %d of them",
      kRuns, kN, dropped_all, early);
}

TEST_F(BurstTest, StoppedDaemonHoldsCallersBoundedThenLossIsExact) {
  ls_client *c = ls_open(daemon_.socket.c_str(), "burst", nullptr);  // default options
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return Stats(c).connected == 1; }));
  ASSERT_EQ(kill(daemon_.pid(), SIGSTOP), 0);
  const int n = 200000;
  double t0 = MonoS();
  for (int i = 0; i < n; ++i) LS_LOG(c, LS_INFO, "burst thread %d seq %d", 0, i);
  double took = MonoS() - t0;
  ls_stats mid = Stats(c);
  // The bound is a hang limit for this promise, not a performance figure:
  // one block_timeout_ms (1 s) per stall, and the sender gives the stopped
  // daemon's connection up after send_timeout_ms (1 s) and reconnects.
  EXPECT_LT(took, 5.0);
  EXPECT_GT(mid.dropped, 0u);
  ASSERT_EQ(kill(daemon_.pid(), SIGCONT), 0);
  ASSERT_TRUE(WaitUntil([&] { return ls_flush(c) == 0; }, Ms(20000), Ms(50)));
  ls_stats s = Stats(c);
  ls_close(c);
  EXPECT_EQ(s.sent + s.dropped, uint64_t(n));
  Landed l;
  ASSERT_TRUE(WaitUntil([&] {
    l = ReadLanded(daemon_.ring, 1, n);
    return l.records >= s.sent && l.dropped_reported >= s.dropped;
  }));
  EXPECT_EQ(l.records, s.sent) << "what was counted as sent arrives";
  EXPECT_EQ(l.dropped_reported, s.dropped) << "and the rest is reported as dropped";
  EXPECT_EQ(l.out_of_order, 0u);
  Figures(
      "SIGSTOPped daemon, default options: %d calls returned in %.3f s; after SIGCONT %llu "
      "landed + %llu dropped and reported = %d",
      n, took, (unsigned long long)l.records, (unsigned long long)l.dropped_reported, n);
}

// A record at flush_level waits until it is in the socket, but
// not on a daemon that does not read: after one bounded wait the client is
// marked stalled and the next flush-level calls only wake the sender. 20,000
// LS_ERR calls with 200-byte strings fill the socket buffer many times over;
// without the stall mark each would wait block_timeout_ms (1 s).
TEST_F(BurstTest, FlushLevelCallsDoNotWaitOnAStoppedDaemon) {
  ls_client *c = ls_open(daemon_.socket.c_str(), "errs", nullptr);  // default options
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return Stats(c).connected == 1; }));
  ASSERT_EQ(kill(daemon_.pid(), SIGSTOP), 0);
  const int n = 20000;
  const std::string pad(200, 'p');
  double t0 = MonoS();
  for (int i = 0; i < n; ++i) LS_LOG(c, LS_ERR, "error %d %s", i, pad.c_str());
  double took = MonoS() - t0;
  // A hang limit, not a performance figure: a few block_timeout_ms at most.
  EXPECT_LT(took, 10.0);
  ASSERT_EQ(kill(daemon_.pid(), SIGCONT), 0);
  ASSERT_TRUE(WaitUntil([&] { return ls_flush(c) == 0; }, Ms(20000), Ms(50)));
  ls_stats s = Stats(c);
  ls_close(c);
  EXPECT_EQ(s.sent + s.dropped, uint64_t(n)) << "every call is sent or counted";
  Figures("SIGSTOPped daemon: %d LS_ERR calls returned in %.3f s (%llu sent, %llu dropped)", n,
          took, (unsigned long long)s.sent, (unsigned long long)s.dropped);
}

}  // namespace
}  // namespace logsink::test
