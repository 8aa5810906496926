// daemon_stats_test.cc: `logctl stats`'s query (logctl/daemon_stats.cc)
// against peers that are not a healthy logsinkd: it must give up within its
// timeout, whatever the peer does, and decode REFUSE and
// STATS with proto's decoders.
#include "logctl/daemon_stats.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/temp_dir.h"
#include "common/unix_socket.h"
#include "proto/wire_encoder.h"

namespace logsink::test {
namespace {

class Peer : public ::testing::Test {
 protected:
  void SetUp() override {
    lfd_ = BindUnix(path_, SOCK_STREAM);
    ASSERT_GE(lfd_, 0);
  }
  void TearDown() override {
    for (int fd : fill_) close(fd);
    if (lfd_ >= 0) close(lfd_);
  }
  // Connects non-blocking clients until the listener's backlog is full.
  void FillBacklog() {
    struct sockaddr_un a = {};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path_.c_str(), sizeof a.sun_path - 1);
    for (int i = 0; i < 1000; i++) {
      int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      ASSERT_GE(fd, 0);
      if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        ASSERT_EQ(errno, EAGAIN);
        close(fd);
        return;
      }
      fill_.push_back(fd);
    }
    FAIL() << "the backlog never filled";
  }
  // Serves one connection: reads the request, answers with `reply`.
  std::thread Serve(std::string reply) {
    return std::thread([this, reply] {
      int fd = accept(lfd_, nullptr, nullptr);
      if (fd < 0) return;
      char req[64];
      (void)!read(fd, req, sizeof req);
      (void)!write(fd, reply.data(), reply.size());
      close(fd);
    });
  }
  TempDir dir_{"logsink-stats"};
  std::string path_ = dir_.File("sock");
  int lfd_ = -1;
  std::vector<int> fill_;
};

TEST_F(Peer, ConnectToAFullBacklogTimesOut) {
  ASSERT_EQ(listen(lfd_, 0), 0);
  FillBacklog();
  logsink::logctl::StatList out;
  std::string why;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(logsink::logctl::QueryDaemonStats(path_, 300, &out, &why), -ETIMEDOUT) << why;
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_GE(ms, 290);
  EXPECT_LT(ms, 3000) << "the connect was not bounded by the timeout";
  EXPECT_NE(why.find("timeout"), std::string::npos) << why;
}

TEST_F(Peer, SilentPeerTimesOut) {
  ASSERT_EQ(listen(lfd_, 8), 0);
  logsink::logctl::StatList out;
  std::string why;
  EXPECT_EQ(logsink::logctl::QueryDaemonStats(path_, 200, &out, &why), -ETIMEDOUT);
}

TEST_F(Peer, RefuseIsReported) {
  ASSERT_EQ(listen(lfd_, 8), 0);
  std::thread t = Serve(logsink::test::Refuse(1, "go away"));
  logsink::logctl::StatList out;
  std::string why;
  EXPECT_EQ(logsink::logctl::QueryDaemonStats(path_, 5000, &out, &why), -EPROTO);
  t.join();
  EXPECT_EQ(why, "the daemon refused: go away");
}

TEST_F(Peer, StatsAreDecoded) {
  ASSERT_EQ(listen(lfd_, 8), 0);
  std::thread t = Serve(logsink::test::Stats({{"records", 7}, {"bytes", 300}}));
  logsink::logctl::StatList out;
  std::string why;
  ASSERT_EQ(logsink::logctl::QueryDaemonStats(path_, 5000, &out, &why), 0) << why;
  t.join();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], std::make_pair(std::string("records"), uint64_t(7)));
  EXPECT_EQ(out[1], std::make_pair(std::string("bytes"), uint64_t(300)));
}

TEST_F(Peer, MalformedStatsAreRefused) {
  ASSERT_EQ(listen(lfd_, 8), 0);
  // claims 5 counters, carries none
  std::thread t = Serve(logsink::test::Frame(LS_F_STATS, std::string("\x05", 1)));
  logsink::logctl::StatList out;
  std::string why;
  EXPECT_EQ(logsink::logctl::QueryDaemonStats(path_, 5000, &out, &why), -EPROTO);
  t.join();
  EXPECT_EQ(why, "malformed STATS frame");
}

}  // namespace
}  // namespace logsink::test
