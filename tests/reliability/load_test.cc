// load_test.cc: 50 client processes x 4 threads (liblogsink, default
// non-blocking mode) log numbered records to the real logsinkd for ~3 s.
// Per client, every record it counted as sent is in the file (ls_close
// flushes, so nothing is in flight), sent + dropped = calls, and each
// thread's numbers appear in order. Prints logsinkd's peak RSS and records/s.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "daemon/harness.h"
#include "reliability/rel_client.h"
#include "reliability/rel_util.h"

namespace logsink::test {
namespace {

constexpr int kThreads = 4;
constexpr uint64_t kCapPerThread = 25000;  // keeps the ring from lapping
constexpr int kPauseUs = 8000;  // 64 records per burst: ~8,000 records/s per thread offered
constexpr int kRunMs = 3000;

TEST(Load, ManyClientsLoseOnlyWhatTheyCount) {
  const int procs = int(Scaled(50, 10));
  TempDir dir;
  Daemon d(dir, {"--size", "128MiB"});
  ASSERT_TRUE(d.Start()) << d.Stderr();
  int go[2];
  ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);  // logsinkd (exec) must not hold it
  std::vector<pid_t> pids;
  std::vector<int> res;
  for (int id = 0; id < procs; id++) {
    int rp[2];
    ASSERT_EQ(pipe2(rp, O_CLOEXEC), 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(go[1]);
      close(rp[0]);
      LoadClientMain(id, d.socket.c_str(), kThreads, kCapPerThread, kRunMs, kPauseUs, go[0], rp[1]);
    }
    close(rp[1]);
    pids.push_back(pid);
    res.push_back(rp[0]);
  }
  close(go[0]);
  // Every client connected before the start.
  ASSERT_TRUE(WaitUntil(
      [&] {
        Client c(d.socket);
        return c.ok() && c.Stats()["connections_current"] >= uint64_t(procs) + 1;
      },
      Ms(20000)));
  auto t0 = Clock::now();
  close(go[1]);
  std::vector<ClientCounts> got(procs);
  for (int id = 0; id < procs; id++) {
    ASSERT_EQ(WaitExit(pids[id], std::chrono::seconds(60)), 0) << "client " << id;
    ASSERT_EQ(read(res[id], &got[id], sizeof(ClientCounts)), ssize_t(sizeof(ClientCounts)));
    close(res[id]);
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  uint64_t hwm = StatusKiB(d.pid(), "VmHWM");
  ASSERT_EQ(d.Stop(SIGTERM), 0) << d.Stderr();

  RecordingReporter rep;
  std::vector<OwnedRecord> recs = ReadRing(d.ring, &rep);
  EXPECT_EQ(rep.corruptions(), 0u) << rep.Dump();
  EXPECT_EQ(rep.lost, 0u);
  ASSERT_FALSE(recs.empty());
  ASSERT_EQ(recs.front().seq, 0u) << "the ring lapped: make it bigger";
  std::map<uint32_t, int> pid_to_id;
  for (int id = 0; id < procs; id++) pid_to_id[uint32_t(pids[id])] = id;
  std::vector<uint64_t> in_file(procs, 0);
  std::map<std::pair<int, int>, int64_t> last;
  uint64_t bad = 0, order = 0, dropped_entries = 0;
  for (const OwnedRecord &g : recs) {
    if (g.kind == logsink::storage::Record::Kind::kDropped) {
      dropped_entries += g.dropped_count;
      continue;
    }
    std::vector<Val> a;
    auto it = pid_to_id.find(g.pid);
    if (it == pid_to_id.end() || !DecodeArgs(g.fmt, g.args, &a) || a.size() != 3 ||
        a[0].i != it->second) {
      bad++;
      continue;
    }
    auto key = std::make_pair(int(a[0].i), int(a[1].i));
    auto l = last.find(key);
    if (l != last.end() && int64_t(a[2].u) <= l->second) order++;
    last[key] = int64_t(a[2].u);
    in_file[it->second]++;
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(order, 0u) << "a thread's numbers went backwards or repeated";
  uint64_t calls = 0, sent = 0, dropped = 0, landed = 0;
  for (int id = 0; id < procs; id++) {
    EXPECT_EQ(got[id].errors, 0u);
    EXPECT_EQ(got[id].sent + got[id].dropped, got[id].calls) << "client " << id;
    EXPECT_EQ(in_file[id], got[id].sent)
        << "client " << id << ": sent records missing from the file";
    calls += got[id].calls;
    sent += got[id].sent;
    dropped += got[id].dropped;
    landed += in_file[id];
  }
  Figures(
      "load clients=%d x %d threads for %.1fs (64 records per %d us per thread, cap %llu/thread): "
      "logged=%llu sent=%llu "
      "landed=%llu dropped_counted=%llu (DROPPED entries in file=%llu) lost_uncounted=%llu",
      procs, kThreads, secs, kPauseUs, (unsigned long long)kCapPerThread, (unsigned long long)calls,
      (unsigned long long)sent, (unsigned long long)landed, (unsigned long long)dropped,
      (unsigned long long)dropped_entries, (unsigned long long)(sent - landed));
  Figures(
      "load logsinkd peak RSS (VmHWM)=%.1f MiB, %.0f records/s landed (paced load, not a maximum)",
      hwm / 1024.0, double(landed) / secs);
}

}  // namespace
}  // namespace logsink::test
