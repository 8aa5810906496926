// notify_test.cc: the daemon's Notifier (daemon/src/notify.h) in process:
// which $NOTIFY_SOCKET it sends to itself (a path, an abstract name) and
// which it hands to libsystemd's sd_notify (any other form). Debian 12's
// libsystemd (252) refuses every form the Notifier hands over (EINVAL,
// ENAMETOOLONG), so no socket of the test could receive what goes that
// way; this test binary defines sd_notify itself, which the Notifier then
// calls instead of libsystemd's, and records what it was given.
#include "notify.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/daemon_process.h"
#include "common/temp_dir.h"
#include "common/unix_socket.h"

namespace {

// What sd_notify was called with, and what it answers.
struct SdNotifyCall {
  int unset_environment;
  std::string state;
};
std::vector<SdNotifyCall> sd_notify_calls;
int sd_notify_result = 1;

}  // namespace

// In place of libsystemd's: the Notifier's reference binds to this
// definition of the test binary.
extern "C" int sd_notify(int unset_environment, const char *state) {
  sd_notify_calls.push_back({unset_environment, state});
  return sd_notify_result;
}

namespace logsink::test {
namespace {

using daemon::Notifier;

class NotifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sd_notify_calls.clear();
    sd_notify_result = 1;
  }
  void TearDown() override { unsetenv("NOTIFY_SOCKET"); }
};

// Addresses sd_notify(3) knows besides paths and abstract names, and paths
// too long for a sockaddr_un: each message goes through sd_notify as it
// is (a string_view not ending in NUL included), and Send says what
// sd_notify said: sent (> 0) or not (the caller counts it dropped).
TEST_F(NotifierTest, AnAddressOfAnotherKindGoesThroughSdNotify) {
  const std::string too_long = "/" + std::string(sizeof(sockaddr_un{}.sun_path), 'p');
  for (const std::string &addr :
       {std::string("vsock:2:9999"), std::string("run/notify"), std::string("@"), too_long}) {
    SCOPED_TRACE(addr);
    sd_notify_calls.clear();
    ASSERT_EQ(setenv("NOTIFY_SOCKET", addr.c_str(), 1), 0);
    Notifier n;
    const std::string text = "WATCHDOG=1STOPPING=1";
    sd_notify_result = 1;
    EXPECT_TRUE(n.Send(std::string_view(text).substr(0, 10)));
    sd_notify_result = -EINVAL;
    EXPECT_FALSE(n.Send("STOPPING=1"));
    sd_notify_result = 0;
    EXPECT_FALSE(n.Send("STATUS=x"));
    ASSERT_EQ(sd_notify_calls.size(), 3u);
    EXPECT_EQ(sd_notify_calls[0].state, "WATCHDOG=1");
    EXPECT_EQ(sd_notify_calls[1].state, "STOPPING=1");
    EXPECT_EQ(sd_notify_calls[2].state, "STATUS=x");
    for (const auto &c : sd_notify_calls) EXPECT_EQ(c.unset_environment, 0);
  }
}

// What the Notifier sends itself never reaches sd_notify: an abstract
// name and a path each get the message on their socket.
TEST_F(NotifierTest, PathsAndAbstractNamesAreSentDirectly) {
  NotifyListener abstract;
  ASSERT_TRUE(abstract.ok());
  ASSERT_EQ(setenv("NOTIFY_SOCKET", abstract.address().c_str(), 1), 0);
  {
    Notifier n;
    EXPECT_TRUE(n.Send("WATCHDOG=1"));
  }
  EXPECT_TRUE(abstract.WaitFor("WATCHDOG=1")) << abstract.Joined();

  TempDir dir;
  const std::string path = dir / "notify";
  int fd = BindUnix(path, SOCK_DGRAM);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(setenv("NOTIFY_SOCKET", path.c_str(), 1), 0);
  {
    Notifier n;
    EXPECT_TRUE(n.Send("STOPPING=1"));
  }
  char buf[64];
  ssize_t got = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
  close(fd);
  EXPECT_EQ(std::string(buf, size_t(got > 0 ? got : 0)), "STOPPING=1");
  EXPECT_TRUE(sd_notify_calls.empty());
}

// Without $NOTIFY_SOCKET nothing is sent, and nothing counts as dropped.
TEST_F(NotifierTest, WithoutNotifySocketNothingIsSent) {
  unsetenv("NOTIFY_SOCKET");
  Notifier n;
  EXPECT_TRUE(n.Send("WATCHDOG=1"));
  EXPECT_TRUE(sd_notify_calls.empty());
}

}  // namespace
}  // namespace logsink::test
