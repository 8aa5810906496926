// security_test.cc: the socket file and the ring file get the configured
// modes (socket: [socket] mode; ring: 0640, storage's WriterOptions default),
// pid/uid/gid in records are the kernel's (SO_PEERCRED) whatever app label a
// client claims, and an unprivileged user outside the ring's group cannot
// read the ring (open() and the real logctl), while one in the group can.
// The privilege checks need root; without it the modes are still asserted.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "common/staged_binary.h"
#include "daemon/harness.h"
#include "reliability/rel_util.h"

namespace logsink::test {
namespace {

constexpr uint32_t kNobody = 65534;
constexpr uint64_t kT0 = 1700000000000000000ull;

// In a forked child: become uid/gid with no supplementary groups.
void BecomeUser(uid_t uid, gid_t gid) {
  if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(126);
}

// Runs fn in a child as uid/gid; returns its exit code.
int AsUser(uid_t uid, gid_t gid, const std::function<int()> &fn) {
  pid_t pid = fork();
  if (pid == 0) {
    BecomeUser(uid, gid);
    _exit(fn());
  }
  return WaitExit(pid);
}

uint32_t Mode(const std::string &path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return 0xffffffff;
  return st.st_mode & 07777;
}

// Sends one record claiming to be someone else in the app label.
bool SendClaim(const std::string &socket, const std::string &app) {
  Client c(socket);
  return c.ok() && c.Send(Hello(1, app) + Intern(1, 6, 1, "i am %s", "claim.c") +
                          Records(1, {Rec(1, kT0, {Arg::S(app)})}));
}

TEST(Security, SocketModeIsTheConfiguredOne) {
  const bool root = geteuid() == 0;
  TempDir dir;
  Daemon d(dir, {}, "[socket]\nmode = 0o600\n");
  d.child_setup = [] { umask(022); };
  ASSERT_TRUE(d.Start()) << d.Stderr();
  EXPECT_EQ(Mode(d.socket), 0600u);
  EXPECT_EQ(Mode(d.ring), 0640u);
  if (root) {
    ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
    int rc = AsUser(kNobody, kNobody, [&] {
      int fd = ConnectUnix(d.socket);
      return fd >= 0 ? 0 : errno;
    });
    EXPECT_EQ(rc, EACCES) << "uid 65534 could connect to a 0600 socket owned by root";
  }
  Figures("security socket mode=%04o (configured 0600) ring mode=%04o; %s", Mode(d.socket),
          Mode(d.ring),
          root ? "uid 65534 connect -> EACCES checked"
               : "not root: privilege checks not run, modes asserted");
}

TEST(Security, IdentityIsTheKernelsAndTheRingIsGroupReadable) {
  const bool root = geteuid() == 0;
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  Daemon d(dir, {}, "[socket]\nmode = 0o666\n");
  d.child_setup = [] { umask(022); };
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const uint32_t socket_mode = Mode(d.socket);
  EXPECT_EQ(socket_mode, 0666u);
  EXPECT_EQ(Mode(d.ring), 0640u);

  // This (test) process claims to be "nobody"; a child running as 65534
  // claims to be root.
  ASSERT_TRUE(SendClaim(d.socket, "nobody uid=65534"));
  pid_t liar = -1;
  if (root) {
    liar = fork();
    if (liar == 0) {
      BecomeUser(kNobody, kNobody);
      _exit(SendClaim(d.socket, "root uid=0 pid=1") ? 0 : 1);
    }
    ASSERT_EQ(WaitExit(liar), 0);
  }
  ASSERT_EQ(d.Stop(SIGTERM), 0) << d.Stderr();  // drains what both sent

  std::vector<OwnedRecord> recs = ReadRing(d.ring);
  int self = 0, other = 0;
  for (const OwnedRecord &g : recs) {
    if (g.fmt != "i am %s") continue;
    if (g.app == "nobody uid=65534") {
      self++;
      EXPECT_EQ(g.pid, uint32_t(getpid()));
      EXPECT_EQ(g.uid, uint32_t(getuid()));
      EXPECT_EQ(g.gid, uint32_t(getgid()));
    } else if (g.app == "root uid=0 pid=1") {
      other++;
      EXPECT_EQ(g.pid, uint32_t(liar));
      EXPECT_EQ(g.uid, kNobody);
      EXPECT_EQ(g.gid, kNobody);
    }
  }
  EXPECT_EQ(self, 1);
  EXPECT_EQ(other, root ? 1 : 0);

  struct stat st {};
  ASSERT_EQ(stat(d.ring.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0007, 0u) << "the ring is readable by others";
  std::string figures = "not root: privilege checks not run, modes asserted";
  if (root) {
    auto try_open = [&] {
      int fd = open(d.ring.c_str(), O_RDONLY);
      if (fd < 0) return errno;
      close(fd);
      return 0;
    };
    EXPECT_EQ(AsUser(kNobody, kNobody, try_open), EACCES)
        << "uid 65534 outside the group read the ring";
    EXPECT_EQ(AsUser(kNobody, st.st_gid, try_open), 0)
        << "uid 65534 in the ring's group could not read it";
    // logctl as uid 65534: a copy it can reach whatever the checkout's modes.
    StagedBinary logctl(BinPath("logctl"));
    ASSERT_TRUE(logctl.ok()) << logctl.error();
    auto run_as = [&](gid_t gid) {
      SubprocessOptions o;
      o.merge_stderr = true;
      o.child_setup = [&logctl, gid] {
        logctl.SetLibraryPath();
        BecomeUser(kNobody, gid);
      };
      return RunProcess(logctl.path(), {"cat", "--file", d.ring}, o, Ms(60000));
    };
    ProcResult out = run_as(kNobody);
    EXPECT_EQ(out.status, 1) << out.out;
    EXPECT_NE(out.out.find("Permission denied"), std::string::npos) << out.out;
    gid_t g = st.st_gid;
    ProcResult in = run_as(g);
    EXPECT_EQ(in.status, 0) << in.out;
    EXPECT_NE(in.out.find("i am root uid=0 pid=1"), std::string::npos) << in.out;
    figures = "uid 65534: open ring -> EACCES, logctl cat exit " + std::to_string(out.status) +
              "; uid 65534 in group " + std::to_string(g) + ": open ok, logctl cat exit " +
              std::to_string(in.status) + "; liar pid " + std::to_string(liar) +
              " stored with uid/gid 65534/65534";
  }
  Figures("security ring mode=%04o socket mode=%04o (configured 0666); %s", Mode(d.ring),
          socket_mode, figures.c_str());
}

}  // namespace
}  // namespace logsink::test
