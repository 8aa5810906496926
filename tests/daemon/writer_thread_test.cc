// writer_thread_test.cc: logsinkd with the writer thread ([ring]
// write_queue): the real binary, real clients, the ring read back. Also
// under TSan (label threads): the loop and the thread share the string
// table, the file and the counters.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <map>
#include <string>
#include <vector>

#include "daemon/harness.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1700000000000000000ull;

// [ring] write_queue: records go through the writer thread (a small queue,
// so the loop also waits for it; the flush timer as by default, so it
// hands the thread flushes while records are queued). Two clients' records
// all land, each client's in its order; STATS counts every record sent
// before it; a clean close makes a client's records visible at once, as
// without the thread.
TEST(DaemonWriterThread, EveryRecordLandsInOrder) {
  TempDir dir;
  Daemon d(dir, {}, "[ring]\nwrite_queue = \"64KiB\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const int kPerClient = 20000, kPerFrame = 500;
  Client a(d.socket), b(d.socket);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a.Send(Hello(1, "thread-a") + Intern(3, 6, 1, "a=%d", "a.c")));
  ASSERT_TRUE(b.Send(Hello(1, "thread-b") + Intern(3, 6, 1, "b=%d", "b.c")));
  auto send_all = [&](Client &c, uint64_t tid, int sign) {
    for (int i = 0; i < kPerClient; i += kPerFrame) {
      std::vector<Rec> recs;
      for (int k = i; k < i + kPerFrame; k++)
        recs.push_back({3, kT0 + uint64_t(k), {Arg::I(sign * k)}});
      if (!c.Send(Records(tid, recs))) return false;
    }
    return true;
  };
  ASSERT_TRUE(send_all(a, 7, 1));
  auto st = a.Stats();  // after a's records, and before b sent any
  EXPECT_EQ(st["next_record_seq"], uint64_t(kPerClient));
  ASSERT_TRUE(send_all(b, 8, -1));
  EXPECT_GT(st["write_queue_batches"], 0u);
  EXPECT_EQ(st["write_errors"], 0u);
  for (Client *c : {&a, &b}) {
    ASSERT_EQ(shutdown(c->fd(), SHUT_WR), 0);
    ASSERT_TRUE(c->WaitClosed());
  }
  // Both closed cleanly: every record visible now (flush_interval is a minute).
  const auto got = ReadRing(d.ring);
  ASSERT_EQ(got.size(), size_t(2 * kPerClient));
  std::map<std::string, uint64_t> next;  // by app: the next timestamp expected
  for (const OwnedRecord &r : got) {
    uint64_t &want = next.try_emplace(r.app, kT0).first->second;
    ASSERT_EQ(r.ts_ns, want) << r.app << " record " << r.seq;
    want++;
  }
  EXPECT_EQ(next["thread-a"], kT0 + kPerClient);
  EXPECT_EQ(next["thread-b"], kT0 + kPerClient);
  st = Client(d.socket).Stats();
  EXPECT_EQ(st["next_record_seq"], uint64_t(2 * kPerClient));
  EXPECT_EQ(st["write_errors"], 0u);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

}  // namespace
}  // namespace logsink::test
