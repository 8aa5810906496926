// listener_race_test.cc: whoever can write to the socket's
// directory may swap the socket logsinkd just bound for a symlink; the
// daemon must never apply the socket's mode or group through it.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "common/temp_dir.h"
#include "listener.h"

namespace logsink::test {
namespace {

using logsink::daemon::CloseListener;
using logsink::daemon::Listener;
using logsink::daemon::ListenError;
using logsink::daemon::OpenListener;

class ListenerRaceTest : public ::testing::Test {
 protected:
  void SetUp() override {}
  TempDir tmp_{"listener-race"};
  const std::string dir_ = tmp_.path();
};

// An attacker thread renames a ready-made symlink to a private file over the
// socket path whenever a socket appears there, while the daemon's listener
// is opened again and again (bounded by tries and time). Before the fix the
// chmod/chown by path followed the link within a few hundred tries here.
TEST_F(ListenerRaceTest, ModeAndGroupAreNeverAppliedThroughASwappedLink) {
  const std::string secret = dir_ + "/secret", sock = dir_ + "/s.sock", link = dir_ + "/link";
  int fd = open(secret.c_str(), O_CREAT | O_WRONLY | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  struct stat before;
  ASSERT_EQ(stat(secret.c_str(), &before), 0);
  // A group other than the file's, so a chown through the link would show.
  const struct group *gr = getgrnam("nogroup");
  ASSERT_NE(gr, nullptr) << "the test needs Debian's 'nogroup' group";
  ASSERT_NE(gr->gr_gid, before.st_gid);

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> swaps{0};
  std::thread attacker([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      struct stat st;
      if (lstat(sock.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
      unlink(link.c_str());
      if (symlink(secret.c_str(), link.c_str()) == 0 && rename(link.c_str(), sock.c_str()) == 0)
        swaps++;
    }
  });

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int tries = 0, opened = 0;
  bool changed = false;
  for (; tries < 3000 && !changed && std::chrono::steady_clock::now() < deadline; tries++) {
    Listener l;
    std::string err;
    if (OpenListener(sock, 0666, "nogroup", &l, &err) == ListenError::kNone) {
      opened++;
      CloseListener(&l);
    }
    unlink(sock.c_str());  // a swapped-in link, so the next try can bind
    struct stat now;
    ASSERT_EQ(stat(secret.c_str(), &now), 0);
    changed = (now.st_mode & 07777) != 0600 || now.st_gid != before.st_gid;
  }
  stop = true;
  attacker.join();
  struct stat after;
  ASSERT_EQ(stat(secret.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0600u) << "after " << tries << " tries, " << swaps << " swaps";
  EXPECT_EQ(after.st_gid, before.st_gid) << "after " << tries << " tries, " << swaps << " swaps";
  EXPECT_GT(opened, 0) << "the listener never opened: the test proved nothing";
  EXPECT_GT(swaps.load(), 0u) << "the attacker never swapped: the test proved nothing";
}

// The socket still gets its mode and group when nobody interferes.
TEST_F(ListenerRaceTest, ModeAndGroupAreApplied) {
  const std::string sock = dir_ + "/s.sock";
  const struct group *gr = getgrnam("nogroup");
  ASSERT_NE(gr, nullptr);
  Listener l;
  std::string err;
  ASSERT_EQ(OpenListener(sock, 0660, "nogroup", &l, &err), ListenError::kNone) << err;
  struct stat st;
  ASSERT_EQ(lstat(sock.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_gid, gr->gr_gid);
  CloseListener(&l);
}

}  // namespace
}  // namespace logsink::test
