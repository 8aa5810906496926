// setuid_env_test.cc: a set-user-ID or set-group-ID program linked with
// liblogsink ignores the environment variables that would redirect its
// records (secure_getenv). The test compiles a tiny C program with the
// system cc against the build's static liblogsink in its temporary
// directory, makes it setuid root (or setgid), and runs it as uid 65534 with
// $LOGSINK_SOCKET (or $XDG_RUNTIME_DIR) pointing at a listener of the test:
// nothing may connect to it. The control runs the same program without the
// privilege bit and must connect, so the test can see a connection. The
// same program, unprivileged, shows that liblogsink itself (not only logctl)
// refuses a per-user directory squatted by another uid.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "common/process.h"
#include "common/temp_dir.h"
#include "common/unix_socket.h"

namespace logsink::test {
namespace {

constexpr uid_t kNobody = 65534;

// Waits (bounded) for its connection, logs one record, flushes and prints
// its ids and whether it connected.
constexpr const char *kProgram = R"(#define _GNU_SOURCE
#include <logsink/logsink.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  ls_options o;
  ls_options_init(&o);
  ls_client *c = ls_open(NULL, "privileged", &o);
  if (!c) return 3;
  ls_stats st;
  st.size = sizeof st;
  for (int i = 0; i < 200 && ls_get_stats(c, &st) == 0 && !st.connected; i++) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  LS_LOG(c, LS_INFO, "token=%s", "ROOT-ONLY-SECRET");
  ls_flush(c);
  ls_close(c);
  printf("uid=%u euid=%u gid=%u egid=%u connected=%d\n", (unsigned)getuid(), (unsigned)geteuid(),
         (unsigned)getgid(), (unsigned)getegid(), (int)st.connected);
  /* _exit, not return: in the sanitizer builds LeakSanitizer's exit-time
   * check cannot run in a set-ID (non-dumpable) process and fails it. */
  fflush(stdout);
  _exit(0);
}
)";

class SetuidEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "the test suite runs as root, to make a setuid-root program";
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);  // uid 65534 runs the program here
    WriteFile(dir_ / "prog.c", kProgram);
    SubprocessOptions merged;
    merged.merge_stderr = true;
    ProcResult cc = RunProcess("/bin/sh",
                               {"-c", std::string(LOGSINK_CC) + " -std=c11 " + LOGSINK_C_FLAGS +
                                          " -I'" + LOGSINK_SOURCE_DIR + "/client/include' -o '" +
                                          prog_ + "' '" + (dir_ / "prog.c") + "' '" +
                                          LOGSINK_STATIC_LIB + "' -lpthread " + LOGSINK_LD_FLAGS},
                               merged);
    ASSERT_EQ(cc.status, 0) << cc.out;
  }

  // A listener of the test at path that anyone may connect to.
  void Listen(const std::string &path) {
    listener_ = ListenUnix(path);
    ASSERT_GE(listener_, 0);
    ASSERT_EQ(chmod(path.c_str(), 0777), 0);
    ASSERT_EQ(fcntl(listener_, F_SETFL, O_NONBLOCK), 0);
  }

  // Drains the listener's backlog; true if anyone had connected. The program
  // has exited by then, so this is final.
  bool SomeoneConnected() {
    bool any = false;
    int fd;
    while ((fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0) {
      close(fd);
      any = true;
    }
    EXPECT_EQ(errno, EAGAIN);
    return any;
  }

  // Runs the program as uid/gid 65534 with var=value in its environment.
  ProcResult RunProgram(const std::string &var, const std::string &value) {
    SubprocessOptions o;
    o.child_setup = [var, value] {
      setenv(var.c_str(), value.c_str(), 1);
      if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(126);
    };
    return RunProcess(prog_, {}, o, Ms(30000));
  }

  // The control: without a privilege bit var=value leads the program to the
  // listener. Then, root-owned with mode (setuid or setgid) and run as 65534
  // (its output shows ids, e.g. "uid=65534 euid=0 "), it must not.
  void ExpectIgnored(const std::string &var, const std::string &value, mode_t mode,
                     const std::string &ids) {
    ProcResult plain = RunProgram(var, value);
    ASSERT_EQ(plain.status, 0) << plain.err;
    // The listener accepts only after the program exited, so the client's
    // HELLO is never answered (it reports connected=0): its connect is the
    // control.
    ASSERT_TRUE(SomeoneConnected()) << "the control did not reach the listener";

    ASSERT_EQ(chown(prog_.c_str(), 0, 0), 0);
    ASSERT_EQ(chmod(prog_.c_str(), mode), 0);
    ProcResult r = RunProgram(var, value);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(ids), std::string::npos) << "not run with the privilege: " << r.out;
    EXPECT_FALSE(SomeoneConnected()) << "the privileged program followed $" << var;
  }

  void TearDown() override {
    if (listener_ >= 0) close(listener_);
  }

  TempDir dir_{"logsink-setuid"};
  std::string prog_ = dir_ / "prog";
  int listener_ = -1;
};

TEST_F(SetuidEnvTest, SetuidRootProgramIgnoresLogsinkSocket) {
  std::string sock = dir_ / "attacker.sock";
  Listen(sock);
  ExpectIgnored("LOGSINK_SOCKET", sock, 04755, "uid=65534 euid=0 ");
}

TEST_F(SetuidEnvTest, SetgidProgramIgnoresXdgRuntimeDir) {
  // uid 65534's own, valid per-user directory under the caller's
  // $XDG_RUNTIME_DIR, with a listener of the test in it.
  TempDir xdg("logsink-setgid-xdg");
  ASSERT_EQ(chmod(xdg.path().c_str(), 0755), 0);
  std::string udir = xdg / "logsink";
  ASSERT_EQ(mkdir(udir.c_str(), 0700), 0);
  ASSERT_EQ(chown(udir.c_str(), kNobody, kNobody), 0);
  Listen(udir + "/logsink.sock");
  ExpectIgnored("XDG_RUNTIME_DIR", xdg.path(), 02755, "gid=65534 egid=0 ");
}

TEST_F(SetuidEnvTest, LibraryRefusesASquattedUserDirectory) {
  // uid 65534's per-user directory made first by root, world-writable, with
  // a listener anyone may connect to: the library must not connect.
  TempDir xdg("logsink-squat-xdg");
  ASSERT_EQ(chmod(xdg.path().c_str(), 0755), 0);
  std::string udir = xdg / "logsink";
  ASSERT_EQ(mkdir(udir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(udir.c_str(), 0777), 0);
  Listen(udir + "/logsink.sock");
  ProcResult r = RunProgram("XDG_RUNTIME_DIR", xdg.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("connected=0"), std::string::npos) << r.out;
  EXPECT_FALSE(SomeoneConnected()) << "liblogsink sent into a squatted directory";
}

}  // namespace
}  // namespace logsink::test
