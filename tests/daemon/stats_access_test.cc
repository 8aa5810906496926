// stats_access_test.cc: who gets STATS (PROTOCOL.md, "STATS counters").
// The counters tell about everyone's records (how many, how fast, which
// limits others hit, and whether a site was new to a full string table),
// so they go to those who may read the ring file anyway: root, its owner,
// its group (the peer's primary or supplementary groups) when the group
// may read it, anyone when others may. Everyone else's STATS_REQ is
// answered with REFUSE and the reason, and counted (`err_stats_refused`).
// The file's mode is checked at each request: a chmod applies at once.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "as_user.h"
#include "harness.h"

namespace logsink::test {
namespace {

constexpr uint32_t kUser = 65534;
constexpr gid_t kGroup = 4242;  // the ring's group in these tests (no such group needs to exist)

// As the current user: STATS_REQ, then "stats N" (N counters) or
// "refused: REASON" or "nothing".
std::string AskStats(const std::string &socket) {
  Client c(socket);
  if (!c.ok() || !c.Send(StatsReq())) return "nothing";
  auto f = c.ReadFrame();
  if (!f) return "nothing";
  if (f->first == LS_F_REFUSE) {
    ls_refuse r;
    if (ls_refuse_decode(reinterpret_cast<const uint8_t *>(f->second.data()), f->second.size(),
                         &r) != 0)
      return "bad refuse";
    std::string out = "refused: " + std::string(r.reason, r.reason_len);
    return c.WaitClosed() ? out : out + " (left open)";
  }
  if (f->first != LS_F_STATS) return "other frame";
  ls_statsframe_iter it;
  if (ls_statsframe_begin(reinterpret_cast<const uint8_t *>(f->second.data()), f->second.size(),
                          &it) < 0)
    return "bad stats";
  const char *name;
  size_t len;
  uint64_t v;
  int n = 0;
  while (ls_statsframe_next(&it, &name, &len, &v) == 1) n++;
  return "stats " + std::to_string(n);
}

std::string AskAs(const std::string &socket, uint32_t uid, std::vector<gid_t> groups = {}) {
  auto got = RunAsUser(
      uid, [&] { return AskStats(socket); }, groups);
  return got ? *got : "could not run as uid " + std::to_string(uid);
}

TEST(StatsAccess, OnlyThoseWhoMayReadTheRingGetTheCounters) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root, to act as another user";
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0711), 0);  // the user may reach the socket
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ASSERT_EQ(chmod(d.socket.c_str(), 0666), 0);
  ASSERT_EQ(chown(d.ring.c_str(), 0, kGroup), 0);
  ASSERT_EQ(chmod(d.ring.c_str(), 0640), 0);

  Client root(d.socket);
  const auto before = root.Stats();
  ASSERT_FALSE(before.empty());
  const size_t all = before.size();
  ASSERT_EQ(before.at("err_stats_refused"), 0u);

  // Outside the ring's group: refused, with the reason, and counted.
  const std::string refused = AskAs(d.socket, kUser);
  EXPECT_EQ(refused.rfind("refused: ", 0), 0u) << refused;
  EXPECT_NE(refused.find("uid 65534 may not read the ring file"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("left open"), std::string::npos) << refused;
  // In the group, as a supplementary group (SO_PEERGROUPS) or the primary one.
  EXPECT_EQ(AskAs(d.socket, kUser, {kGroup}), "stats " + std::to_string(all));
  EXPECT_EQ(AskAs(d.socket, kGroup), "stats " + std::to_string(all));
  // The mode decides at each request: the group may no longer read ...
  ASSERT_EQ(chmod(d.ring.c_str(), 0600), 0);
  EXPECT_EQ(AskAs(d.socket, kUser, {kGroup}).rfind("refused: ", 0), 0u);
  // ... and a file others may read gives them the counters too.
  ASSERT_EQ(chmod(d.ring.c_str(), 0644), 0);
  EXPECT_EQ(AskAs(d.socket, kUser), "stats " + std::to_string(all));
  // The file's owner, whatever the group bits.
  ASSERT_EQ(chown(d.ring.c_str(), kUser, kGroup), 0);
  ASSERT_EQ(chmod(d.ring.c_str(), 0600), 0);
  EXPECT_EQ(AskAs(d.socket, kUser), "stats " + std::to_string(all));
  ASSERT_EQ(chown(d.ring.c_str(), 0, kGroup), 0);  // the daemon stops as it started
  ASSERT_EQ(chmod(d.ring.c_str(), 0640), 0);

  const auto after = root.Stats();
  EXPECT_EQ(after.at("err_stats_refused"), 2u);
  EXPECT_EQ(after.at("stats_requests"), before.at("stats_requests") + 5);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

// SO_PEERGROUPS fills a buffer of 32 groups first; a peer with more gets
// ERANGE and the size needed, and the daemon asks again. Here the ring's
// group is the last of 40 supplementary groups: it is seen, and the
// counters are answered. (Without the second request the peer has no
// groups at all and is refused.)
TEST(StatsAccess, TheRingsGroupCountsAsTheFortiethSupplementaryGroup) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root, to act as another user";
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0711), 0);
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ASSERT_EQ(chmod(d.socket.c_str(), 0666), 0);
  ASSERT_EQ(chown(d.ring.c_str(), 0, kGroup), 0);
  ASSERT_EQ(chmod(d.ring.c_str(), 0640), 0);

  std::vector<gid_t> groups;
  for (gid_t g = 5000; groups.size() < 39; g++) groups.push_back(g);  // none may read the ring
  const std::string others_only = AskAs(d.socket, kUser, groups);
  EXPECT_EQ(others_only.rfind("refused: ", 0), 0u) << others_only;
  groups.push_back(kGroup);
  ASSERT_EQ(groups.size(), 40u);
  Client root(d.socket);
  const size_t all = root.Stats().size();
  ASSERT_GT(all, 0u);
  EXPECT_EQ(AskAs(d.socket, kUser, groups), "stats " + std::to_string(all));
  EXPECT_EQ(root.Stats().at("err_stats_refused"), 1u);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

}  // namespace
}  // namespace logsink::test
