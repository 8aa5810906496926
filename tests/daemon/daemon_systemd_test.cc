// daemon_systemd_test.cc: logsinkd's systemd seams, run as a real process:
// sd_notify (READY=1, WATCHDOG=1 pings, STOPPING=1; a full notify socket
// never stops the loop) and socket activation (a listening socket passed as
// fd 3 with LISTEN_FDS/LISTEN_PID).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>

#include "daemon/harness.h"

namespace logsink::test {
namespace {

TEST(DaemonSystemd, NotifiesReadyWatchdogAndStopping) {
  TempDir dir;
  Daemon d(dir);  // its NOTIFY_SOCKET is the harness's listener (d.notify())
  d.child_setup = [] { setenv("WATCHDOG_USEC", "100000", 1); };  // ping every 50 ms
  ASSERT_TRUE(d.Start()) << d.Stderr();
  NotifyListener &n = d.notify();
  EXPECT_NE(n.Joined().find("READY=1"), std::string::npos) << n.Joined();
  EXPECT_TRUE(n.WaitFor("WATCHDOG=1")) << n.Joined();
  kill(d.pid(), SIGTERM);
  EXPECT_TRUE(n.WaitFor("STOPPING=1")) << n.Joined();
  EXPECT_EQ(d.Stop(), 0);
}

// A service manager that reads its notify socket late (or a launcher that
// stops reading after READY=1, as bench/daemon_launch did): once the
// socket's queue is full, libsystemd's blocking send would stop the loop
// for good at the next STATUS= or WATCHDOG=1. They are dropped and counted
// instead, and the daemon goes on serving. (Before: no STATS answer once
// the queue was full.)
TEST(DaemonSystemd, AFullNotifySocketNeverStopsTheLoop) {
  TempDir dir;
  Daemon d(dir);
  d.child_setup = [] { setenv("WATCHDOG_USEC", "100000", 1); };  // ping every 50 ms
  ASSERT_TRUE(d.Start()) << d.Stderr();
  // Fill the listener's queue (an abstract address "@name").
  const std::string addr = d.notify().address();
  ASSERT_EQ(addr[0], '@');
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, addr.data() + 1, addr.size() - 1);
  const socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + addr.size());
  // A sender's own buffer may fill before the listener's queue (whose
  // length is net.unix.max_dgram_qlen): fresh senders until one cannot
  // send its first datagram, so the queue itself is full.
  int queued = 0;
  for (int sent = 1; sent > 0;) {
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd, 0);
    for (sent = 0; sendto(fd, "X=1", 3, 0, reinterpret_cast<sockaddr *>(&a), len) == 3;) sent++;
    EXPECT_EQ(errno, EAGAIN);
    close(fd);
    queued += sent;
  }
  ASSERT_GT(queued, 0);
  Client c(d.socket);
  std::map<std::string, uint64_t> st;
  EXPECT_TRUE(WaitUntil([&] {
    st = c.Stats();
    return !st.empty() && st["notify_dropped"] >= 3;
  })) << "notify_dropped "
      << st["notify_dropped"] << ", STATS answered: " << !st.empty();
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
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
}  // namespace logsink::test
