// client_fd_test.cc: the application closes liblogsink's socket descriptor
// and opens its own file, which takes the same number (the lowest free one).
// The test puts its file on that number with dup3, which closes the library's
// socket and installs the file in one step: a plain close-then-open would race
// with the library's sender thread, which may reconnect in between and take
// the number itself.
// Nothing of the library's may reach that file, the library must not close
// it, and it must reconnect so later records land, each once. Against the
// real logsinkd, whose shared buffers (PROTOCOL.md, "Letting go") must not
// store a second copy of what the client sends again.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <logsink/logsink.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "client_harness.h"
#include "client_stats.h"
#include "daemon/harness.h"

namespace logsink::test {
namespace {

constexpr int kSecrets = 100;
constexpr const char *kSecretFmt = "password=%s n=%d";

// The descriptor of this process connected to the socket at path, or -1.
int FindSocketTo(const std::string &path) {
  for (int fd = 0; fd < 1024; fd++) {
    sockaddr_un sa{};
    socklen_t len = sizeof sa;
    if (getpeername(fd, reinterpret_cast<sockaddr *>(&sa), &len) == 0 && sa.sun_family == AF_UNIX &&
        path == sa.sun_path)
      return fd;
  }
  return -1;
}

class ClientFdTest : public ::testing::Test {
 protected:
  // A client that only sends on ls_flush, connected; fd_ is the number of
  // its socket.
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.Stderr();
    ls_options o;
    ls_options_init(&o);
    o.flush_level = -1;
    o.flush_interval_ms = 3600u * 1000u;
    o.send_delay_ms = 0;
    c_ = ls_open(daemon_.socket.c_str(), "fd", &o);
    ASSERT_NE(c_, nullptr);
    LS_LOG(c_, LS_INFO, "password=%s n=%d", "none", -1);
    ASSERT_EQ(ls_flush(c_), 0);
    fd_ = FindSocketTo(daemon_.socket);
    ASSERT_GE(fd_, 0) << "the client's socket";
  }

  // Replaces the client's socket with the application's descriptor f, on the
  // same number; returns that number.
  int TakeTheNumber(int f) {
    EXPECT_EQ(dup3(f, fd_, O_CLOEXEC), fd_) << strerror(errno);
    EXPECT_EQ(close(f), 0);
    return fd_;
  }
  void TearDown() override { ls_close(c_); }

  std::map<std::string, uint64_t> DaemonStats() { return Client(daemon_.socket).Stats(); }

  // Nothing staged from now on can be stored twice: the daemon has ended
  // the stream the taken number closed (the only connection left is the
  // one asking), or the client found the number taken (its sender passes
  // every ~50 ms for the daemon's level rules; it then let the region go
  // and may have connected again).
  void WaitStreamEnded() {
    EXPECT_TRUE(WaitUntil([&] {
      return Stats(c_).fd_lost == 1 || DaemonStats()["connections_current"] == 1;
    })) << daemon_.Stderr();
  }

  // Logs the secrets, flushes (reconnecting), checks the counters and that
  // every secret landed in the ring, once.
  void LogSecretsAndCheckTheyLand() {
    ls_client *c = c_;
    for (int i = 0; i < kSecrets; i++) LS_LOG(c, LS_INFO, "password=%s n=%d", "hunter2", i);
    EXPECT_EQ(FlushUntilConnected(c), 0) << "the client reconnects";
    CheckSecretsLanded();
  }

  void CheckSecretsLanded() {
    ls_client *c = c_;
    ls_stats s = Stats(c);
    EXPECT_EQ(s.fd_lost, 1u);
    EXPECT_EQ(s.reconnects, 1u);
    EXPECT_EQ(s.dropped, 0u) << "nothing was pending when the number was taken";
    EXPECT_EQ(s.sent, uint64_t(kSecrets) + 1);
    auto v = WaitRing(daemon_.ring, [&](const std::vector<OwnedRecord> &r) {
      return CountFmt(r, kSecretFmt) >= kSecrets + 1;
    });
    EXPECT_EQ(CountFmt(v, kSecretFmt), size_t(kSecrets) + 1);
    EXPECT_EQ(CountFmt(ReadRing(daemon_.ring), kSecretFmt), size_t(kSecrets) + 1) << "stored twice";
  }

  TempDir dir_;
  ClientDaemon daemon_{dir_};
  ls_client *c_ = nullptr;
  int fd_ = -1;
};

TEST_F(ClientFdTest, RegularFileOnTheNumberIsNeitherWrittenNorClosed) {
  int f = open((dir_ / "app.txt").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(f, 0) << strerror(errno);
  f = TakeTheNumber(f);
  WaitStreamEnded();

  LogSecretsAndCheckTheyLand();

  struct stat st {};
  ASSERT_EQ(fstat(f, &st), 0) << "the library closed the application's file";
  EXPECT_EQ(st.st_size, 0) << "the library wrote into the application's file";
  EXPECT_EQ(write(f, "app\n", 4), 4) << strerror(errno);
  ls_close(c_);
  c_ = nullptr;
  EXPECT_EQ(write(f, "app\n", 4), 4) << "ls_close closed the application's file";
  EXPECT_EQ(close(f), 0);
}

TEST_F(ClientFdTest, SocketpairOnTheNumberReceivesNothing) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  sv[0] = TakeTheNumber(sv[0]);
  WaitStreamEnded();

  LogSecretsAndCheckTheyLand();
  ls_close(c_);
  c_ = nullptr;

  char buf[256];
  errno = 0;
  EXPECT_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), -1) << "the library wrote to it";
  EXPECT_EQ(errno, EAGAIN);
  // Still open, and still the application's.
  ASSERT_EQ(send(sv[0], "x", 1, MSG_NOSIGNAL), 1) << strerror(errno);
  ASSERT_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), 1);
  EXPECT_EQ(buf[0], 'x');
  close(sv[0]);
  close(sv[1]);
}

// Records staged after the number was taken and before the daemon read
// the stream's end: the client lets its region go as soon as it finds the
// number taken, so the daemon (stopped until then) does not store what the
// client sends again on its next connection.
TEST_F(ClientFdTest, RecordsStagedBeforeTheDaemonSawTheEndLandOnce) {
  ASSERT_EQ(kill(daemon_.pid(), SIGSTOP), 0);
  struct Resume {
    pid_t pid;
    ~Resume() { kill(pid, SIGCONT); }
  } resume{daemon_.pid()};
  int f = open((dir_ / "app.txt").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(f, 0) << strerror(errno);
  f = TakeTheNumber(f);
  ls_client *c = c_;
  for (int i = 0; i < kSecrets; i++) LS_LOG(c, LS_INFO, "password=%s n=%d", "hunter2", i);
  // A flush finds the number taken, then waits for the stopped daemon.
  int flushed = -1;
  std::thread t([&] { flushed = FlushUntilConnected(c); });
  EXPECT_TRUE(WaitUntil([&] { return Stats(c).fd_lost == 1; }))
      << "the client saw the number taken";
  ASSERT_EQ(kill(daemon_.pid(), SIGCONT), 0);
  t.join();
  EXPECT_EQ(flushed, 0) << "the client reconnects";
  CheckSecretsLanded();
  EXPECT_EQ(DaemonStats()["shm_kept"], 1u) << "the region was let go unread";
  EXPECT_EQ(DaemonStats()["shm_drains"], 0u);
  close(f);
}

}  // namespace
}  // namespace logsink::test
