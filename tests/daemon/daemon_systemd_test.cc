// daemon_systemd_test.cc: logsinkd's systemd seams, run as a real process:
// sd_notify (READY=1, WATCHDOG=1 pings, STOPPING=1) and socket activation
// (a listening socket passed as fd 3 with LISTEN_FDS/LISTEN_PID).
#include <gtest/gtest.h>

#include "daemon/harness.h"

namespace {

using namespace lstest;

int BindUnix(const std::string &path, int type) {
  int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Receives notify datagrams until one contains `want` (or the hang limit).
bool WaitNotify(int fd, const std::string &want, std::string *all) {
  auto deadline = Clock::now() + kHang;
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) continue;
    std::string msg(buf, size_t(n));
    *all += msg + "|";
    if (msg.find(want) != std::string::npos) return true;
  }
  return false;
}

TEST(DaemonSystemd, NotifiesReadyWatchdogAndStopping) {
  TempDir dir;
  std::string notify = dir / "notify";
  int nfd = BindUnix(notify, SOCK_DGRAM);
  ASSERT_GE(nfd, 0);
  Daemon d(dir);
  d.child_setup = [notify] {
    setenv("NOTIFY_SOCKET", notify.c_str(), 1);
    setenv("WATCHDOG_USEC", "100000", 1);  // ping every 50 ms
  };
  ASSERT_TRUE(d.Start()) << d.Stderr();
  std::string seen;
  EXPECT_TRUE(WaitNotify(nfd, "READY=1", &seen)) << seen;
  EXPECT_TRUE(WaitNotify(nfd, "WATCHDOG=1", &seen)) << seen;
  kill(d.pid(), SIGTERM);
  EXPECT_TRUE(WaitNotify(nfd, "STOPPING=1", &seen)) << seen;
  EXPECT_EQ(d.Stop(), 0);
  close(nfd);
}

TEST(DaemonSystemd, UsesTheSocketPassedBySystemd) {
  TempDir dir;
  std::string activated = dir / "activated.sock";
  int lfd = BindUnix(activated, SOCK_STREAM);
  ASSERT_GE(lfd, 0);
  ASSERT_EQ(listen(lfd, 16), 0);
  Daemon d(dir);  // its --socket path must stay unused
  d.child_setup = [lfd] {
    if (lfd == 3)  // SD_LISTEN_FDS_START; dup2 would leave close-on-exec set
      fcntl(3, F_SETFD, 0);
    else
      dup2(lfd, 3);  // clears close-on-exec
    setenv("LISTEN_FDS", "1", 1);
    setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
  };
  d.socket = activated;  // Start() waits on this one
  ASSERT_TRUE(d.Start()) << d.Stderr();
  close(lfd);
  Client c(activated);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.Send(Hello(1, "activated") + Intern(1, 6, 1, "hi %d", "a.c") +
                     Records(1, {{1, 5, {Arg::I(42)}}})));
  EXPECT_EQ(c.Stats()["next_record_seq"], 1u) << d.Stderr();
  EXPECT_NE(access((dir / "logsink.sock").c_str(), F_OK), 0) << "bound its own socket";
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  auto got = ReadRing(d.ring);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].app, "activated");
}

}  // namespace
