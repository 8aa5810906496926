// unit_test.cc: the sender's systemd unit (daemon/src/unit.h): the cgroup
// parser on a table of real-world /proc/PID/cgroup contents, and the real
// logsinkd stamping the unit of a `logctl send` placed in a cgroup named like
// a unit, which the client's own label cannot forge.
#include "unit.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/daemon_process.h"
#include "common/process.h"
#include "common/records.h"
#include "common/temp_dir.h"

namespace logsink::test {
namespace {

TEST(UnitFromCgroup, RealWorldFiles) {
  struct Case {
    const char *file, *unit;
  };
  const Case cases[] = {
      // cgroup v2 (unified)
      {"0::/system.slice/nginx.service\n", "nginx.service"},
      {"0::/system.slice/system-getty.slice/getty@tty1.service\n", "getty@tty1.service"},
      {"0::/user.slice/user-1000.slice/session-3.scope\n", "session-3.scope"},
      // a user's delegated subtree: the system unit is user@UID.service
      {"0::/user.slice/user-1000.slice/user@1000.service/app.slice/fake.service\n",
       "user@1000.service"},
      {"0::/system.slice/docker-0123abcd.scope\n", "docker-0123abcd.scope"},
      {"0::/\n", ""},
      {"0::/init.scope\n", "init.scope"},
      {"0::/system.slice\n", ""},
      {"0::/system.slice/\n", ""},
      {"0::/machine.slice/libpod-x.scope/container\n", "libpod-x.scope"},
      // v1 / hybrid: the name=systemd hierarchy decides
      {"12:pids:/system.slice/cron.service\n1:name=systemd:/system.slice/cron.service\n0::/\n",
       "cron.service"},
      {"9:name=systemd:/probe.slice/probe-test.service\n0::/\n", "probe-test.service"},
      {"4:memory:/process_api/83045d\n0::/\n", ""},
      // not unit names
      {"0::/system.slice/not a unit.service\n", ""},
      {"0::/system.slice/noservice\n", ""},
      {"0::/system.slice/.service\n", ""},
      {"0::/system.slice/evil\x1b[31m.service\n", ""},
      {"garbage without colons\n", ""},
      {"", ""},
      {"0::/system.slice/a:b.service", "a:b.service"},  // no final newline; ':' allowed
  };
  for (const Case &c : cases) {
    EXPECT_EQ(daemon::UnitFromCgroup(c.file), c.unit) << c.file;
  }
  std::string longname = "0::/system.slice/" + std::string(300, 'a') + ".service\n";
  EXPECT_EQ(daemon::UnitFromCgroup(longname), "");
}

// The cgroup hierarchy this machine places units in: systemd's named v1
// hierarchy when mounted (hybrid), else the unified one.
std::string UnitHierarchy() {
  std::ifstream in("/proc/self/mountinfo");
  std::string line, unified;
  while (std::getline(in, line)) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::vector<std::string> f;
    size_t p = 0;
    for (int i = 0; i < 5; i++) {
      size_t q = line.find(' ', p);
      f.push_back(line.substr(p, q - p));
      p = q + 1;
    }
    const std::string tail = line.substr(dash + 3);
    if (tail.rfind("cgroup ", 0) == 0 && tail.find("name=systemd") != std::string::npos)
      return f[4];
    if (tail.rfind("cgroup2 ", 0) == 0 && unified.empty()) unified = f[4];
  }
  return unified;
}

TEST(UnitStamp, TheDaemonStampsTheCgroupsUnitAndTheClientCannotForgeIt) {
  ASSERT_EQ(geteuid(), 0u) << "creating a cgroup needs root (the test suite runs as root)";
  const std::string root = UnitHierarchy();
  ASSERT_FALSE(root.empty()) << "no cgroup hierarchy mounted";
  const std::string tag = std::to_string(getpid());
  const std::string slice = root + "/logsink-test-" + tag + ".slice";
  const std::string unit = "logsink-probe-" + tag + ".service";
  const std::string cg = slice + "/" + unit;
  ASSERT_EQ(mkdir(slice.c_str(), 0755), 0) << slice << ": " << strerror(errno);
  ASSERT_EQ(mkdir(cg.c_str(), 0755), 0) << cg << ": " << strerror(errno);
  struct Cleanup {
    std::string cg, slice;
    ~Cleanup() {
      rmdir(cg.c_str());
      rmdir(slice.c_str());
    }
  } cleanup{cg, slice};

  TempDir dir;
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  SubprocessOptions in_unit;
  const std::string procs = cg + "/cgroup.procs";
  in_unit.child_setup = [procs] {
    // Before exec: this child joins the unit's cgroup, as systemd would place it.
    int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      (void)!write(fd, "0", 1);  // "0": the writing process itself
      close(fd);
    }
  };
  auto sent =
      RunProcess(BinPath("logctl"),
                 {"send", "--socket", d.socket, "--app", "other.service", "in the unit"}, in_unit);
  ASSERT_EQ(sent.status, 0) << sent.err;
  auto outside = RunProcess(BinPath("logctl"), {"send", "--socket", d.socket, "outside"});
  ASSERT_EQ(outside.status, 0) << outside.err;
  ASSERT_EQ(d.Stop(), 0) << d.Stderr();

  std::vector<OwnedRecord> recs;
  ASSERT_TRUE(ReadRingFile(d.ring, nullptr, &recs).ok());
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].app, "other.service");  // the label is the client's claim ...
  EXPECT_EQ(recs[0].unit, unit);            // ... the unit is the kernel's cgroup
  EXPECT_NE(recs[1].unit, unit);            // the test runner's own cgroup, not the probe's
}

}  // namespace
}  // namespace logsink::test
