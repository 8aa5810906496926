// writer_thread_test.cc: logsinkd with the writer thread ([ring]
// write_queue): the real binary, real clients, the ring read back. Also
// under TSan (label threads): the loop and the thread share the string
// table, the file and the counters.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/harness.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1700000000000000000ull;

// The next n whole frames the daemon sends on c; fewer when it closes or
// the hang limit passes.
std::vector<std::pair<uint8_t, std::string>> ReadFrames(Client &c, size_t n) {
  std::vector<std::pair<uint8_t, std::string>> frames;
  while (frames.size() < n) {
    auto f = c.ReadFrame();
    if (!f) break;
    frames.push_back(std::move(*f));
  }
  return frames;
}

// n records of site 3 (one int each) in frames of 500, on thread tid.
std::string ManyRecords(int n, uint64_t tid) {
  std::string out;
  for (int i = 0; i < n; i += 500) {
    std::vector<Rec> recs;
    for (int k = i; k < std::min(n, i + 500); k++)
      recs.push_back({3, kT0 + uint64_t(k), {Arg::I(k)}});
    out += Records(tid, recs);
  }
  return out;
}

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

// What used to make the loop wait for the thread now follows its progress
// (write_queue_drains counts the loop's waits for everything handed to it:
// before, each of the steps below was one): a STATS answer (sent once the
// thread has appended the records before it, and still before what
// answers the frames after it), a text stream's acknowledgment (once its
// line is written), a clean close (once the client's records are written)
// and an fsync (once what it is for is written). Each promise still holds:
// the counts, the order of answers, the lines and records readable at once.
TEST(DaemonWriterThread, TheLoopFollowsTheThreadInsteadOfWaitingForIt) {
  TempDir dir;
  Daemon d(dir, {}, "[ring]\nwrite_queue = \"64KiB\"\n[writer]\nfsync = \"10ms\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const int kRecords = 20000;
  Client a(d.socket);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(
      a.Send(Hello(1, "follow") + Intern(3, 6, 1, "n=%d", "f.c") + ManyRecords(kRecords, 7)));
  // STATS_REQ and RING_REQ in one write: two answers, in that order.
  ASSERT_TRUE(a.Send(StatsReq() + RingReq()));
  const auto answers = ReadFrames(a, 2);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].first, LS_F_STATS);
  EXPECT_EQ(answers[1].first, LS_F_RING);
  std::map<std::string, uint64_t> st = Client::StatsOf(answers[0].second);
  EXPECT_EQ(st["next_record_seq"], uint64_t(kRecords));

  // A text stream's acknowledgment: its line is readable once logctl returns.
  ProcResult sent =
      RunProcess(BinPath("logctl"), {"send", "--socket", d.socket, "--app", "acked", "the line"});
  ASSERT_EQ(sent.status, 0) << sent.err;
  auto has_line = [&] {
    for (const OwnedRecord &r : ReadRing(d.ring))
      if (r.app == "acked") return true;
    return false;
  };
  EXPECT_TRUE(has_line()) << "acknowledged before its line was written";

  // A clean close: every record readable once the daemon closed.
  ASSERT_EQ(shutdown(a.fd(), SHUT_WR), 0);
  ASSERT_TRUE(a.WaitClosed());
  EXPECT_EQ(ReadRing(d.ring).size(), size_t(kRecords + 1));

  // The fsync timer's sync ran after what it is for was written.
  Client b(d.socket);
  ASSERT_TRUE(WaitUntil([&] { return Client(d.socket).Stats()["syncs"] > 0; }));
  st = b.Stats();
  EXPECT_EQ(st["sync_errors"], 0u);
  EXPECT_EQ(st["write_errors"], 0u);
  EXPECT_EQ(st["write_queue_drains"], 0u) << "the loop waited for the thread";
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

// A stop right behind clean closes and a STATS request: the connections
// waiting for the thread's marks are ended by the drain, not dropped; the
// STATS is answered (counting every record its client sent before it); every record
// lands and the daemon exits 0.
TEST(DaemonWriterThread, AStopBehindClosesAndAStatsRequestKeepsEverything) {
  TempDir dir;
  Daemon d(dir, {}, "[ring]\nwrite_queue = \"64MiB\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const int kClients = 4, kPerClient = 20000;
  std::vector<std::unique_ptr<Client>> cs;
  for (int c = 0; c < kClients; c++) {
    cs.push_back(std::make_unique<Client>(d.socket));
    ASSERT_TRUE(cs.back()->ok());
    const std::string app = "stop" + std::to_string(c);
    ASSERT_TRUE(cs.back()->Send(Hello(1, app.c_str()) + Intern(3, 6, 1, "n=%d", "s.c") +
                                ManyRecords(kPerClient, uint64_t(c + 1))));
  }
  ASSERT_TRUE(cs[0]->Send(StatsReq()));
  for (int c = 1; c < kClients; c++) ASSERT_EQ(shutdown(cs[c]->fd(), SHUT_WR), 0);
  for (int c = 1; c < kClients; c++) ASSERT_TRUE(cs[c]->WaitRead());
  ASSERT_TRUE(cs[0]->WaitRead());
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  // Its own records at least (the others' may have been read after it).
  const auto st = cs[0]->ReadStats();
  ASSERT_TRUE(st.count("records")) << "the STATS request went unanswered";
  EXPECT_GE(st.at("records"), uint64_t(kPerClient));
  EXPECT_EQ(ReadRing(d.ring).size(), size_t(kClients * kPerClient));
}

// A STATS answer that waits for the thread is given before the connection
// closes, as without the thread: when a later frame of the same write
// closes it (a second HELLO), and for 20 requests pipelined in one write.
TEST(DaemonWriterThread, WaitingStatsAnswersAreGivenBeforeAClose) {
  TempDir dir;
  Daemon d(dir, {}, "[ring]\nwrite_queue = \"64MiB\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  Client a(d.socket);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(a.Send(Hello(1, "closed") + Intern(3, 6, 1, "n=%d", "c.c") + ManyRecords(20000, 7) +
                     StatsReq() + Hello(1, "again")));
  const auto got = ReadFrames(a, 1);
  ASSERT_EQ(got.size(), 1u) << "closed without the STATS answer";
  EXPECT_EQ(got[0].first, LS_F_STATS);
  EXPECT_GE(Client::StatsOf(got[0].second)["next_record_seq"], 20000u);
  EXPECT_TRUE(a.WaitClosed());

  Client b(d.socket);
  ASSERT_TRUE(b.ok());
  std::string reqs = Hello(1, "many") + Intern(3, 6, 1, "n=%d", "c.c") + ManyRecords(20000, 8);
  for (int i = 0; i < 20; i++) reqs += StatsReq();
  ASSERT_TRUE(b.Send(reqs));
  const auto answers = ReadFrames(b, 20);
  ASSERT_EQ(answers.size(), 20u);
  for (const auto &[type, payload] : answers) EXPECT_EQ(type, LS_F_STATS);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

// Requests pipelined without reading the answers meet the unread-replies
// bound (64 KiB: err_replies_unread) at about the same count with the
// writer thread, whose answers wait for it and count 2 KiB each, as
// without it, whose answers wait in the output (1,814 bytes each): the
// connection is closed after 30 to 37 answers either way, every answer
// taken is given first, and the daemon holds no more.
TEST(DaemonWriterThread, PipelinedRequestsMeetTheUnreadBoundAsWithoutTheThread) {
  for (const char *queue : {"0", "64MiB"}) {
    SCOPED_TRACE(queue);
    TempDir dir;
    Daemon d(dir, {}, std::string("[ring]\nwrite_queue = \"") + queue + "\"\n");
    ASSERT_TRUE(d.Start()) << d.Stderr();
    Client c(d.socket);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(
        c.Send(Hello(1, "pipeline") + Intern(3, 6, 1, "n=%d", "c.c") + ManyRecords(2000, 8)));
    ASSERT_TRUE(c.WaitRead());  // then the requests, 300 bytes in one write: one read
    std::string reqs;
    for (int i = 0; i < 60; i++) reqs += StatsReq();
    ASSERT_TRUE(c.Send(reqs));
    const auto answers = ReadFrames(c, 60);
    EXPECT_TRUE(c.WaitClosed());
    EXPECT_GE(answers.size(), 30u);
    EXPECT_LE(answers.size(), 37u);
    for (const auto &[type, payload] : answers) EXPECT_EQ(type, LS_F_STATS);
    Client s(d.socket);
    EXPECT_EQ(s.Stats()["err_replies_unread"], 1u);
    EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  }
}

}  // namespace
}  // namespace logsink::test
