// lockout_test.cc: lockout and its limits against the real logsinkd,
// with two real uids: a uid that opens every connection it can and sends
// nothing gets max_connections_per_uid slots, loses them after stall_timeout,
// and never stops another uid's client; and a daemon out of descriptors
// (EMFILE) closes the waiting connections it cannot serve (counted) instead of
// leaving them unread, and serves new ones once descriptors are free.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "daemon/harness.h"
#include "reliability/rel_util.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1700000000000000000ull;

// Runs fn in a child as uid/gid `uid`; returns its exit status.
pid_t AsUid(uint32_t uid, const std::function<int()> &fn) {
  pid_t p = fork();
  if (p == 0) {
    if (setgid(uid) != 0 || setuid(uid) != 0) _exit(255);
    _exit(fn());
  }
  return p;
}

// A client as uid 65533 that logs n records; exit 0 when all were read.
int GoodClient(const std::string &socket, int n) {
  Client c(socket);
  if (!c.ok()) return 1;
  std::vector<Rec> recs;
  for (int i = 0; i < n; ++i) recs.push_back(Rec(1, kT0 + uint64_t(i), {Arg::I(i)}));
  if (!c.Send(Hello(1, "other") + Intern(1, 6, 1, "other %d", "o.c") + Records(1, recs))) return 2;
  return c.WaitRead() ? 0 : 3;
}

int Count(const std::vector<OwnedRecord> &v, uint32_t uid, const std::string &fmt) {
  int n = 0;
  for (const auto &r : v) n += r.uid == uid && r.fmt == fmt;
  return n;
}

TEST(Lockout, AUidHoldingAllItsSlotsDoesNotStopAnother) {
  TempDir dir("logsink-lockout");
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  Daemon d(dir, {},
           "[limits]\nmax_connections = 64\nmax_connections_per_uid = 16\n"
           "stall_timeout = \"2s\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  // The attacker: 64 silent connections, held until the parent says so.
  pid_t attacker = AsUid(65534, [&] {
    close(go[1]);
    std::vector<std::unique_ptr<Client>> held;
    for (int i = 0; i < 64; ++i) held.push_back(std::make_unique<Client>(d.socket));
    char b;
    (void)!read(go[0], &b, 1);
    return 0;
  });
  close(go[0]);
  Client stats(d.socket);  // root: exempt from the per-uid limit
  ASSERT_TRUE(stats.Send(Hello(1, "stats")));
  ASSERT_TRUE(WaitUntil([&] { return stats.Stats()["err_uid_connections"] >= 48; }));
  // While the attacker holds all its slots, another uid logs.
  int st = WaitExit(AsUid(65533, [&] { return GoodClient(d.socket, 50); }));
  EXPECT_EQ(st, 0);
  // Silent connections lose their slots after stall_timeout.
  ASSERT_TRUE(WaitUntil([&] { return stats.Stats()["err_stalled"] >= 16; }, Ms(10000)));
  auto s = stats.Stats();
  EXPECT_EQ(s["err_uid_connections"], 48u);
  EXPECT_EQ(s["err_stalled"], 16u);
  ASSERT_EQ(write(go[1], "x", 1), 1);
  close(go[1]);
  EXPECT_EQ(WaitExit(attacker), 0);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  auto v = ReadRing(d.ring);
  EXPECT_EQ(Count(v, 65533, "other %d"), 50);
  Figures(
      "lockout (uid 65534 opens 64 silent connections; max_connections 64, per uid 16, "
      "stall_timeout 2s): %llu refused at once (err_uid_connections), %llu closed silent "
      "(err_stalled); uid 65533 meanwhile landed %d/50 records",
      (unsigned long long)s["err_uid_connections"], (unsigned long long)s["err_stalled"],
      Count(v, 65533, "other %d"));
}

TEST(Lockout, OutOfDescriptorsWaitingConnectionsAreClosedAndCounted) {
  TempDir dir("logsink-emfile");
  Daemon d(dir);
  d.child_setup = [] {
    rlimit r{32, 32};
    setrlimit(RLIMIT_NOFILE, &r);
  };
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const int kConns = 60;
  std::vector<std::unique_ptr<Client>> cs;
  for (int i = 0; i < kConns; ++i) {
    cs.push_back(std::make_unique<Client>(d.socket));
    ASSERT_TRUE(cs.back()->ok());
    cs.back()->Send(Hello(1, "many"));
  }
  // Every connection is either served (its HELLO read) or closed: none is
  // left waiting unread.
  int served = 0, closed = 0;
  for (auto &c : cs) {
    // Read by the daemon (nothing left unsent on our side) or closed by it;
    // a connection it closed reports EOF right after.
    ASSERT_TRUE(WaitUntil([&] {
      int unread = 0;
      return ioctl(c->fd(), SIOCOUTQ, &unread) == 0 && unread == 0;
    }));
    pollfd p{c->fd(), POLLIN, 0};
    char b[64];
    // Closed with our HELLO unread: ECONNRESET, else EOF.
    ssize_t r = poll(&p, 1, 100) == 1 ? recv(c->fd(), b, sizeof b, MSG_DONTWAIT) : 1;
    bool gone = r == 0 || (r < 0 && errno == ECONNRESET);
    gone ? ++closed : ++served;
  }
  EXPECT_EQ(served + closed, kConns);
  EXPECT_GT(closed, 0);
  cs.clear();  // descriptors free again (once the daemon saw the closes)
  std::unique_ptr<Client> after_c;
  std::map<std::string, uint64_t> s;
  int attempts = 0;  // the first may come before the daemon saw the closes
  ASSERT_TRUE(WaitUntil([&] {
    ++attempts;
    after_c = std::make_unique<Client>(d.socket);
    s = after_c->Stats();
    return !s.empty();
  }));
  Client &after = *after_c;
  EXPECT_GE(s["accept_emfile"], uint64_t(closed));
  EXPECT_LE(s["accept_emfile"], uint64_t(closed + attempts - 1));
  ASSERT_TRUE(after.Send(Hello(1, "after") + Intern(1, 6, 1, "after %d", "a.c") +
                         Records(1, {Rec(1, kT0, {Arg::I(1)})})));
  ASSERT_TRUE(after.WaitRead());
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  int landed = 0;
  for (const auto &r : ReadRing(d.ring)) landed += r.fmt == "after %d";
  EXPECT_EQ(landed, 1);
  Figures(
      "EMFILE (RLIMIT_NOFILE 32, 60 connections at once): %d served, %d closed with the "
      "reserve descriptor (accept_emfile=%llu), none left unread; a new client landed "
      "its record afterwards",
      served, closed, (unsigned long long)s["accept_emfile"]);
}

}  // namespace
}  // namespace logsink::test
