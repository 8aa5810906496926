// logctl_safety_test.cc: issue 18 (3, 8): logctl never blocks on a FIFO at
// the ring path, and `export` never writes through a symlink, never
// overwrites a file, and creates its copy no more readable than the ring.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "cli_util.h"

namespace logsink::test {
namespace {

mode_t CurrentUmask() {
  mode_t m = umask(0);
  umask(m);
  return m;
}

std::string Slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class LogctlSafetyTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

// Before the fix `cat` waited in open(2) for a writer that never came.
TEST_F(LogctlSafetyTest, AFifoAtTheRingPathIsRefusedAtOnce) {
  std::string fifo = dir_.File("ring");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const char *cmd : {"cat", "tail", "export"}) {
    std::vector<std::string> args = {cmd, "--file", fifo};
    if (std::string(cmd) == "export") {
      args.push_back("--output");
      args.push_back(dir_.File("out"));
    }
    Proc p(args);
    Result r = p.Finish(5000);  // a hang fails the test here instead of blocking it
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_EQ(r.err, "logctl: " + fifo + ": not a regular file\n") << cmd;
  }
}

TEST_F(LogctlSafetyTest, ExportNeverWritesThroughASymlink) {
  TestRing ring(dir_.File("r.ring"));
  ring.Add(ring.Intern(6, "hello"), "", "", kT0);
  ring.Close();
  std::string victim = dir_.File("victim"), link = dir_.File("out.txt");
  {
    std::ofstream v(victim);
    v << "precious\n";
  }
  ASSERT_EQ(chmod(victim.c_str(), 0600), 0);
  ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);
  Result r = RunLogctl({"export", "--output", link, "--file", ring.path()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + link + ": exists; refusing to overwrite it\n");
  EXPECT_EQ(Slurp(victim), "precious\n");
  // A dangling link is not followed either (O_EXCL): nothing is created.
  std::string dangling = dir_.File("dangling"), target = dir_.File("created-through-link");
  ASSERT_EQ(symlink(target.c_str(), dangling.c_str()), 0);
  r = RunLogctl({"export", "--output", dangling, "--file", ring.path()});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(access(target.c_str(), F_OK), 0);
}

TEST_F(LogctlSafetyTest, ExportRefusesAnExistingFileAndTakesTheRingsMode) {
  TestRing ring(dir_.File("r.ring"));
  ring.Add(ring.Intern(6, "hello"), "", "", kT0);
  ring.Close();
  ASSERT_EQ(chmod(ring.path().c_str(), 0640), 0);
  std::string out = dir_.File("out.txt");
  Result r = RunLogctl({"export", "--output", out, "--file", ring.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  struct stat st;
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u & ~CurrentUmask());
  EXPECT_NE(Slurp(out).find("hello"), std::string::npos);
  // A second export to the same name would truncate the first: refused.
  r = RunLogctl({"export", "--output", out, "--file", ring.path()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + out + ": exists; refusing to overwrite it\n");
}

}  // namespace
}  // namespace logsink::test
