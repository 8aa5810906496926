// user_dir_squat_test.cc: another user squatting a victim's per-user
// directory, with the real binaries. The test (root) plays the squatter: it
// creates the victim's $XDG_RUNTIME_DIR/logsink world-writable and owned by
// itself, the same situation as a /tmp/logsink-<uid>/ made first by someone
// else, with a listening socket anyone can connect to. The victim, uid
// 65534 running staged copies of logctl and logsinkd, must refuse it with the
// reason: `logctl send` exits non-zero and nothing connects to the
// squatter's listener, `logctl cat` refuses the default ring there, logsinkd
// refuses to start. The control: the same listener in a directory the victim
// owns does receive logctl send's connection, so the refusal is what the
// assertions see, not a test that cannot connect at all.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/process.h"
#include "common/staged_binary.h"
#include "common/temp_dir.h"
#include "common/unix_socket.h"

namespace logsink::test {
namespace {

constexpr uid_t kVictim = 65534;

class UserDirSquatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "the test suite runs as root, to act as two users";
    // The victim must reach $XDG_RUNTIME_DIR (TempDir makes it 0700).
    ASSERT_EQ(chmod(xdg_.path().c_str(), 0755), 0);
    dir_ = xdg_ / "logsink";
  }

  // The squatter's directory: world-writable, owned by root, not the victim.
  void Squat() {
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
    ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  }

  // A listener at the victim's default socket that the victim may connect to.
  void Listen() {
    std::string sock = dir_ + "/logsink.sock";
    listener_ = ListenUnix(sock);
    ASSERT_GE(listener_, 0);
    ASSERT_EQ(chmod(sock.c_str(), 0777), 0);
    ASSERT_EQ(fcntl(listener_, F_SETFL, O_NONBLOCK), 0);
  }

  // True if a client connected to the listener (a connection waits in the
  // backlog until accepted, so after the client exited this is final).
  bool SomeoneConnected() {
    int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      EXPECT_EQ(errno, EAGAIN);
      return false;
    }
    close(fd);
    return true;
  }

  // Runs a staged copy of bin as the victim, with XDG_RUNTIME_DIR set.
  ProcResult AsVictim(const StagedBinary &bin, const std::vector<std::string> &args) {
    SubprocessOptions o;
    o.merge_stderr = true;
    std::string xdg = xdg_.path();
    o.child_setup = [&bin, xdg] {
      bin.SetLibraryPath();
      setenv("XDG_RUNTIME_DIR", xdg.c_str(), 1);
      if (setgroups(0, nullptr) != 0 || setgid(kVictim) != 0 || setuid(kVictim) != 0) _exit(126);
    };
    return RunProcess(bin.path(), args, o, kHang);
  }

  std::string Reason() const {
    return dir_ + " is owned by uid 0, not " + std::to_string(kVictim) + ": refusing it";
  }

  void TearDown() override {
    if (listener_ >= 0) close(listener_);
  }

  TempDir xdg_{"logsink-squat"};
  std::string dir_;
  int listener_ = -1;
};

TEST_F(UserDirSquatTest, LogctlSendRefusesASquattedDirectory) {
  Squat();
  Listen();
  StagedBinary logctl(BinPath("logctl"));
  ASSERT_TRUE(logctl.ok()) << logctl.error();
  ProcResult r = AsVictim(logctl, {"send", "db password is hunter2"});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find(Reason()), std::string::npos) << r.out;
  EXPECT_FALSE(SomeoneConnected()) << "the record went to the squatter's listener";
}

TEST_F(UserDirSquatTest, LogctlSendReachesAListenerInTheVictimsOwnDirectory) {
  // Control for the test above: the same listener, in a directory that passes.
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(chown(dir_.c_str(), kVictim, kVictim), 0);
  Listen();
  StagedBinary logctl(BinPath("logctl"));
  ASSERT_TRUE(logctl.ok()) << logctl.error();
  // The listener takes the connection and closes it unanswered: logctl
  // fails at once (not after its reply timeout), having connected.
  bool connected = false;
  std::thread listener([&] {
    pollfd p{listener_, POLLIN, 0};
    if (poll(&p, 1, 30000) != 1) return;  // a hang limit: no one came
    int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    connected = fd >= 0;
    if (fd >= 0) close(fd);
  });
  ProcResult r = AsVictim(logctl, {"send", "hello"});
  listener.join();
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_TRUE(connected);
}

TEST_F(UserDirSquatTest, LogctlRefusesTheDefaultRingInASquattedDirectory) {
  Squat();
  WriteFile(dir_ + "/logsink.ring", "a planted ring");
  StagedBinary logctl(BinPath("logctl"));
  ASSERT_TRUE(logctl.ok()) << logctl.error();
  ProcResult r = AsVictim(logctl, {"cat"});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out, "logctl: ring: " + Reason() + "\n");
}

TEST_F(UserDirSquatTest, LogsinkdRefusesToStartInASquattedDirectory) {
  Squat();
  StagedBinary logsinkd(BinPath("logsinkd"));
  ASSERT_TRUE(logsinkd.ok()) << logsinkd.error();
  ProcResult r = AsVictim(logsinkd, {"--size", "1M"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out, "logsinkd: configuration error: " + Reason() + "\n");
  struct stat st;
  EXPECT_NE(lstat((dir_ + "/logsink.sock").c_str(), &st), 0) << "bound in the squatted directory";
  EXPECT_NE(lstat((dir_ + "/logsink.ring").c_str(), &st), 0) << "created its ring there";
}

}  // namespace
}  // namespace logsink::test
