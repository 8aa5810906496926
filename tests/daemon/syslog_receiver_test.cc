// syslog_receiver_test.cc: the syslog socket's reader (daemon/src/
// syslog_socket.h) in process on a real ring file, for its limits: the
// bounded source cache (LRU eviction, a fresh id for a forgotten sender),
// tags cut to max_app, a datagram without credentials, a real datagram
// socket read with SCM_CREDENTIALS and MSG_TRUNC, and the receive thread's
// queue: the loop's budget per wakeup, the queue's bound, order kept.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <thread>

#include "daemon/context_fixture.h"
#include "daemon/harness.h"
#include "syslog_socket.h"

namespace logsink::test {
namespace {

using namespace logsink::daemon;

class SyslogReceiverTest : public ContextTest {
 protected:
  SyslogReceiverTest() : ContextTest(16u << 20) {}
  // A datagram socket pair: sv[0] receives with credentials, sv[1] sends.
  void Pair(int sv[2]) {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
    ASSERT_EQ(EnableCredentials(sv[0]), 0);
  }
  void Store(SyslogReceiver *rx, const std::string &d, uint32_t pid = 10, bool creds = true) {
    rx->Store(reinterpret_cast<const uint8_t *>(d.data()), d.size(), d.size(), pid, 20, 30, creds);
  }
};

TEST_F(SyslogReceiverTest, SourceCacheIsBoundedLeastRecentlyUsedFirst) {
  SyslogReceiver rx(&ctx_, -1, 64);
  auto msg = [](size_t tag) { return "<13>Nov 25 12:00:00 t" + std::to_string(tag) + ": m"; };
  for (size_t i = 0; i < kMaxSyslogSources; i++) Store(&rx, msg(i));
  EXPECT_EQ(counters_.syslog_sources, kMaxSyslogSources);
  EXPECT_EQ(counters_.syslog_sources_evicted, 0u);
  Store(&rx, msg(0));  // t0 is now the most recently used; t1 the least
  EXPECT_EQ(counters_.syslog_sources, kMaxSyslogSources);
  Store(&rx, msg(kMaxSyslogSources));  // a new sender: t1 is forgotten
  EXPECT_EQ(counters_.syslog_sources_evicted, 1u);
  EXPECT_EQ(rx.cached_sources(), kMaxSyslogSources);
  Store(&rx, msg(0));  // still remembered
  Store(&rx, msg(1));  // forgotten: a fresh source id
  EXPECT_EQ(counters_.syslog_sources, kMaxSyslogSources + 2);
  EXPECT_EQ(counters_.syslog_sources_evicted, 2u);
  auto got = Flushed();
  ASSERT_EQ(got.size(), kMaxSyslogSources + 4);
  EXPECT_EQ(got[0].app, "t0");
  EXPECT_EQ(got[kMaxSyslogSources].source_id, got[0].source_id);
  EXPECT_EQ(got[kMaxSyslogSources + 2].source_id, got[0].source_id);
  EXPECT_EQ(got[kMaxSyslogSources + 3].app, "t1");
  EXPECT_NE(got[kMaxSyslogSources + 3].source_id, got[1].source_id);
  EXPECT_GT(got[kMaxSyslogSources + 3].source_id, got[kMaxSyslogSources + 1].source_id);
}

// Only root may claim facility kern: anyone else's <0>..<7> is stored as
// user (and counted), so a line that reads as the kernel's is the kernel's
// or root's.
TEST_F(SyslogReceiverTest, OnlyRootMayClaimFacilityKern) {
  SyslogReceiver rx(&ctx_, -1, 64);
  const std::string bug = "<0>Nov 25 12:00:00 kworker/0:1: BUG: soft lockup";
  Store(&rx, bug);  // uid 20
  rx.Store(reinterpret_cast<const uint8_t *>(bug.data()), bug.size(), bug.size(), 11, 0, 0, true);
  Store(&rx, "<11>Nov 25 12:00:00 app: user.err stays");
  auto got = Flushed();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].uid, 20u);
  EXPECT_EQ(got[0].line, 1u);  // user, not kern
  EXPECT_EQ(got[0].level, 0);  // the severity stays
  EXPECT_EQ(got[1].uid, 0u);
  EXPECT_EQ(got[1].line, 0u);  // root may
  EXPECT_EQ(got[2].line, 1u);
  EXPECT_EQ(counters_.kern_refused, 1u);
}

// Every cut lands on a UTF-8 character boundary (proto/codec.h's
// ls_utf8_cut): a tag longer than max_app, and a datagram the kernel cut
// (MSG_TRUNC) in the middle of a character, whose partial character is
// counted with the bytes cut.
TEST_F(SyslogReceiverTest, CutsLandOnCharacterBoundaries) {
  SyslogReceiver rx(&ctx_, -1, 8);
  const std::string e = "\xc3\xa9";                             // U+00E9
  Store(&rx, "<13>Nov 25 12:00:00 a" + e + e + e + e + ": m");  // a 9-byte tag
  const std::string d = "<13>Nov 25 12:00:00 t: " + e + e + e;
  const size_t len = d.size() - 3;  // inside the second character
  rx.Store(reinterpret_cast<const uint8_t *>(d.data()), len, d.size() + 100, 10, 20, 30, true);
  EXPECT_EQ(counters_.app_truncated, 1u);
  auto got = Flushed();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].app, "a" + e + e + e);
  std::string want;
  for (const std::string &f : {e, std::string("Nov 25 12:00:00"), std::string()}) PutStr(&want, f);
  EXPECT_EQ(got[1].args, want);
  // 100 bytes beyond the datagram, 3 beyond len, and the partial character.
  EXPECT_EQ(got[1].truncated, 100u + 3 + 1) << "the partial character counts as cut";
}

TEST_F(SyslogReceiverTest, TagIsCutToMaxAppAndCounted) {
  SyslogReceiver rx(&ctx_, -1, 8);
  Store(&rx, "<13>Nov 25 12:00:00 averyverylongtag: m");
  Store(&rx, "<13>1 - h app8char - - - m");
  EXPECT_EQ(counters_.app_truncated, 1u);
  auto got = Flushed();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].app, "averyver");
  EXPECT_EQ(got[1].app, "app8char");
}

TEST_F(SyslogReceiverTest, WithoutCredentialsPidIsZeroAndCounted) {
  SyslogReceiver rx(&ctx_, -1, 64);
  Store(&rx, "<13>Nov 25 12:00:00 t: m", 0, false);
  EXPECT_EQ(counters_.syslog_no_credentials, 1u);
  auto got = Flushed();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].pid, 0u);
  EXPECT_EQ(got[0].uid, 65534u) << "nobody's, never root's";
  EXPECT_EQ(got[0].gid, 65534u);
}

// A real socket pair: SCM_CREDENTIALS gives this process's pid, uid and
// gid; a datagram past kMaxSyslogDatagram is cut and its real size known.
TEST_F(SyslogReceiverTest, ReadsCredentialsAndRealSizes) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
  ASSERT_EQ(EnableCredentials(sv[0]), 0);
  int big = 1 << 20;
  setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  std::string small = "<13>Nov 25 12:00:00 t[1]: small";
  std::string large = "<13>Nov 25 12:00:00 t: " + std::string(kMaxSyslogDatagram + 100, 'x');
  ASSERT_EQ(send(sv[1], small.data(), small.size(), 0), ssize_t(small.size()));
  ASSERT_EQ(send(sv[1], large.data(), large.size(), 0), ssize_t(large.size()));
  SyslogReceiver rx(&ctx_, sv[0], 64);
  EXPECT_FALSE(rx.ReadSome(1u << 30));  // emptied the socket, not stopped by the budget
  EXPECT_EQ(counters_.syslog_received, 2u);
  EXPECT_EQ(counters_.syslog_truncated, 1u);
  EXPECT_EQ(counters_.syslog_bytes, small.size() + large.size());
  EXPECT_EQ(counters_.syslog_no_credentials, 0u);
  close(sv[0]);
  close(sv[1]);
  auto got = Flushed();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].pid, uint32_t(getpid()));  // not the 1 in the message
  EXPECT_EQ(got[0].uid, uint32_t(getuid()));
  EXPECT_EQ(got[0].gid, uint32_t(getgid()));
  // The 64 KiB kept are cut further to fit a ring block; both count.
  EXPECT_GE(got[1].truncated, large.size() - kMaxSyslogDatagram);
}

// A loop that is never run: the receive thread's wakeups (uv_async_send)
// only mark the async pending; the test calls DrainQueue itself.
struct IdleLoop {
  IdleLoop() {
    uv_loop_init(&loop);
    uv_async_init(&loop, &async, [](uv_async_t *) {});
  }
  ~IdleLoop() {
    uv_close(reinterpret_cast<uv_handle_t *>(&async), nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  uv_loop_t loop;
  uv_async_t async;
};

// "<13>... q: seq=N " padded with 'x' to size bytes.
std::string Numbered(int n, size_t size) {
  std::string d = "<13>Nov 26 12:00:00 q: seq=" + std::to_string(n) + " ";
  d.resize(std::max(size, d.size()), 'x');
  return d;
}

TEST_F(SyslogReceiverTest, ThreadQueuesAndTheLoopStoresWithinItsBudget) {
  int sv[2];
  ASSERT_NO_FATAL_FAILURE(Pair(sv));
  IdleLoop idle;
  SyslogReceiver rx(&ctx_, sv[0], 64);
  ASSERT_EQ(rx.StartThread(&idle.async), 0);
  for (int i = 0; i < 8; i++) {
    std::string d = Numbered(i, 1024);
    ASSERT_EQ(send(sv[1], d.data(), d.size(), 0), ssize_t(d.size()));
  }
  // 24 bytes of header per datagram.
  ASSERT_TRUE(WaitUntil([&] { return rx.queued_bytes() == 8 * (24 + 1024); }));
  EXPECT_TRUE(rx.DrainQueue(4096));  // 4 of 1 KiB reach the budget
  EXPECT_EQ(counters_.syslog_received, 4u);
  EXPECT_TRUE(rx.DrainQueue(4096));
  EXPECT_EQ(counters_.syslog_received, 8u);
  EXPECT_FALSE(rx.DrainQueue(4096));  // empty
  EXPECT_EQ(counters_.syslog_budget_yields, 2u);
  // A slice of no time stores one datagram per wakeup (limits.read_slice).
  for (int i = 8; i < 11; i++) {
    std::string d = Numbered(i, 1024);
    ASSERT_EQ(send(sv[1], d.data(), d.size(), 0), ssize_t(d.size()));
  }
  ASSERT_TRUE(WaitUntil([&] { return rx.queued_bytes() == 3 * (24 + 1024); }));
  EXPECT_TRUE(rx.DrainQueue(1u << 30, 0));
  EXPECT_EQ(counters_.syslog_received, 9u);
  EXPECT_TRUE(rx.DrainQueue(1u << 30, 0));
  EXPECT_EQ(counters_.syslog_received, 10u);
  EXPECT_TRUE(rx.DrainQueue(1u << 30, 0));  // stopped by the slice, the queue just emptied
  EXPECT_FALSE(rx.DrainQueue(1u << 30, 0));
  EXPECT_EQ(counters_.syslog_received, 11u);
  rx.StopThread();
  close(sv[0]);
  close(sv[1]);
  auto got = Flushed();
  ASSERT_EQ(got.size(), 11u);
  for (int i = 0; i < 8; i++) EXPECT_EQ(got[size_t(i)].pid, uint32_t(getpid()));
}

// Datagrams of 60 KiB: the thread queues up to kSyslogQueueBytes, then waits
// for the loop (counted) while the sender blocks in the kernel's queue; the
// loop takes the queue and everything arrives, in order.
TEST_F(SyslogReceiverTest, QueueIsBoundedAndTheThreadWaitsForTheLoop) {
  int sv[2];
  ASSERT_NO_FATAL_FAILURE(Pair(sv));
  IdleLoop idle;
  SyslogReceiver rx(&ctx_, sv[0], 64);
  ASSERT_EQ(rx.StartThread(&idle.async), 0);
  constexpr int kCount = 40;
  constexpr size_t kSize = 60u << 10;
  std::thread sender([&] {
    int big = 4 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    for (int i = 0; i < kCount; i++) {
      std::string d = Numbered(i, kSize);
      ssize_t n;
      do n = send(sv[1], d.data(), d.size(), 0);
      while (n < 0 && errno == EINTR);
      if (n != ssize_t(d.size())) return;  // the socket was shut down: the test failed
    }
  });
  // Whatever fails below, the sender is released and joined.
  struct Release {
    std::thread &t;
    int fd;
    ~Release() {
      shutdown(fd, SHUT_RDWR);
      t.join();
      close(fd);
    }
  } release{sender, sv[0]};
  const size_t per = 24 + kSize;
  const size_t fit = kSyslogQueueBytes / per;
  // The queue fills to its bound and stays there while the loop does not run.
  ASSERT_TRUE(WaitUntil([&] { return rx.queued_bytes() == fit * per; }));
  EXPECT_LE(rx.queued_bytes(), kSyslogQueueBytes);
  // More datagrams are sent than fit: the thread takes the next one and
  // waits for room (counted) before the loop takes anything.
  ASSERT_TRUE(WaitUntil([&] { return rx.queue_full_unfolded() >= 1; }));
  uint64_t stored = 0;
  ASSERT_TRUE(WaitUntil([&] {
    rx.DrainQueue(1u << 30);
    stored = counters_.syslog_received;
    return stored == kCount;
  }));
  EXPECT_GE(counters_.syslog_queue_full, 1u);
  rx.StopThread();
  auto got = Flushed();
  ASSERT_EQ(got.size(), size_t(kCount));
  close(sv[1]);
  for (int i = 0; i < kCount; i++) {
    // Each record's first string argument is the message, "seq=N x...".
    const std::string &args = got[size_t(i)].args;
    EXPECT_NE(args.find("seq=" + std::to_string(i) + " "), std::string::npos) << i;
  }
}

// A stop while the thread waits for room: the datagrams it holds (the rest
// of its recvmmsg batch) are kept past the bound, what it queued is stored
// by DrainQueue, what is still in the socket by ReadSome, all in the order
// sent.
TEST_F(SyslogReceiverTest, StopWhileTheQueueIsFullKeepsEverything) {
  int sv[2];
  ASSERT_NO_FATAL_FAILURE(Pair(sv));
  int big = 4 << 20;
  setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  IdleLoop idle;
  SyslogReceiver rx(&ctx_, sv[0], 64);
  ASSERT_EQ(rx.StartThread(&idle.async), 0);
  constexpr size_t kSize = 60u << 10;
  const size_t per = 24 + kSize;
  const size_t fit = kSyslogQueueBytes / per;
  // fit queued, at least one held by the waiting thread, maybe some left in
  // the socket.
  const int count = int(fit) + 3;
  for (int i = 0; i < count; i++) {
    std::string d = Numbered(i, kSize);
    ASSERT_EQ(send(sv[1], d.data(), d.size(), 0), ssize_t(d.size())) << i;
  }
  ASSERT_TRUE(WaitUntil([&] { return rx.queued_bytes() == fit * per; }));
  // The thread counts the wait before it starts waiting: then it holds one.
  ASSERT_TRUE(WaitUntil([&] {
    rx.FoldThreadCounters();
    return counters_.syslog_queue_full == 1;
  }));
  rx.StopThread();
  const size_t queued = rx.queued_bytes() / per;  // past the bound now
  EXPECT_GT(queued, fit);
  EXPECT_LE(queued, size_t(count));
  while (rx.DrainQueue(1u << 30)) {
  }
  EXPECT_EQ(counters_.syslog_received, queued);
  EXPECT_FALSE(rx.ReadSome(1u << 30));
  EXPECT_EQ(counters_.syslog_received, uint64_t(count));
  close(sv[0]);
  close(sv[1]);
  auto got = Flushed();
  ASSERT_EQ(got.size(), size_t(count));
  for (int i = 0; i < count; i++)
    EXPECT_NE(got[size_t(i)].args.find("seq=" + std::to_string(i) + " "), std::string::npos) << i;
}

// Past shutdown_timeout the loop forgets what is still queued and logs how
// many datagrams that was (SyslogInput::Close): the count is exact, taken
// from both halves of the queue.
TEST_F(SyslogReceiverTest, DiscardQueuedCountsWhatIsLeft) {
  int sv[2];
  ASSERT_NO_FATAL_FAILURE(Pair(sv));
  IdleLoop idle;
  SyslogReceiver rx(&ctx_, sv[0], 64);
  ASSERT_EQ(rx.StartThread(&idle.async), 0);
  for (int i = 0; i < 6; i++) {
    std::string d = Numbered(i, 1000);
    ASSERT_EQ(send(sv[1], d.data(), d.size(), 0), ssize_t(d.size()));
  }
  ASSERT_TRUE(WaitUntil([&] { return rx.queued_bytes() == 6 * (24 + 1000); }));
  EXPECT_TRUE(rx.DrainQueue(2000));  // two stored; four left in the loop's half
  EXPECT_EQ(counters_.syslog_received, 2u);
  std::string d = Numbered(6, 1000);  // and one more in the thread's half
  ASSERT_EQ(send(sv[1], d.data(), d.size(), 0), ssize_t(d.size()));
  ASSERT_TRUE(WaitUntil([&] { return rx.queued_bytes() == 24 + 1000; }));
  rx.StopThread();
  EXPECT_EQ(rx.DiscardQueued(), 5u);
  EXPECT_EQ(rx.queued_bytes(), 0u);
  EXPECT_FALSE(rx.DrainQueue(1u << 30));
  EXPECT_EQ(counters_.syslog_received, 2u);
  close(sv[0]);
  close(sv[1]);
}

}  // namespace
}  // namespace logsink::test
