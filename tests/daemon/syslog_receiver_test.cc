// syslog_receiver_test.cc: the syslog socket's reader (daemon/src/
// syslog_socket.h) in process on a real ring file, for its limits: the
// bounded source cache (LRU eviction, a fresh id for a forgotten sender),
// tags cut to max_app, a datagram without credentials, and a real datagram
// socket read with SCM_CREDENTIALS and MSG_TRUNC.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/harness.h"
#include "syslog_socket.h"

namespace logsink::test {
namespace {

using namespace logsink::daemon;

class SyslogReceiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spdlog::set_level(spdlog::level::off);
    storage::WriterOptions o;
    o.file_size = 16u << 20;
    ASSERT_TRUE(storage::RingWriter::Open(storage::Env::Default(), dir_ / "r", o, &w_).ok());
    text_ = std::make_unique<TextSites>(w_.get());
    text_->set_kern_refused_counter(&counters_.kern_refused);
    ctx_.writer = w_.get();
    ctx_.text = text_.get();
    ctx_.counters = &counters_;
  }
  void Store(SyslogReceiver *rx, const std::string &d, uint32_t pid = 10, bool creds = true) {
    rx->Store(reinterpret_cast<const uint8_t *>(d.data()), d.size(), d.size(), pid, 20, 30, creds);
  }
  std::vector<OwnedRecord> Flushed() {
    EXPECT_TRUE(w_->Flush().ok());
    return ReadRing(dir_ / "r");
  }
  TempDir dir_;
  std::unique_ptr<storage::RingWriter> w_;
  std::unique_ptr<TextSites> text_;
  Counters counters_;
  Context ctx_;
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

}  // namespace
}  // namespace logsink::test
