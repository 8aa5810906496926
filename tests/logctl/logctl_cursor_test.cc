// logctl_cursor_test.cc: cursors in logctl: --show-cursor prints
// the cursor of the last record shown, --after-cursor and --cursor-file
// continue exactly after it (a run that finds nothing new keeps the file),
// a cursor of a recreated ring is refused, and records overwritten since
// the cursor are reported as lost. The cursor file is replaced through a
// temporary file of a unique name (never a fixed F.tmp someone else may have
// planted), and one owned by another user or not a regular file is refused.
#include <dirent.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli_util.h"
#include "common/temp_dir.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1763892000000000000ull;  // 2025-11-23T10:00:00Z
constexpr uint64_t kMs = 1000000;

std::string CursorLine(const std::string &out) {
  auto lines = Lines(out);
  return lines.empty() ? "" : lines.back();
}

TEST(LogctlCursor, ShowAfterAndCursorFileContinueExactly) {
  TempDir dir;
  std::string f = dir / "r.ring", cf = dir / "cursor";
  TestRing ring(f, 8192 + 4096 + 64 * 4096);
  uint32_t site = ring.Intern(6, "m%d");
  for (int i = 0; i < 10; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i * kMs);
  ring.Flush();

  Result r = RunLogctl({"tail", "-n", "3", "--show-cursor", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_NE(lines[2].find(" m9"), std::string::npos);
  ASSERT_EQ(lines[3].rfind("-- cursor: ls1-", 0), 0u) << lines[3];
  std::string c9 = lines[3].substr(11);
  EXPECT_EQ(c9.substr(c9.size() - 2), "-9");

  // Nothing after the last record yet; then three more.
  r = RunLogctl({"cat", "--after-cursor", c9, "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  for (int i = 10; i < 13; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i * kMs);
  ring.Flush();
  r = RunLogctl({"cat", "--after-cursor", c9, "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_NE(lines[0].find(" m10"), std::string::npos);
  EXPECT_NE(lines[2].find(" m12"), std::string::npos);

  // --cursor-file: the first run shows everything and stores the cursor,
  // the next shows only what came since, one that shows nothing keeps it.
  r = RunLogctl({"cat", "--cursor-file", cf, "--file", f});
  EXPECT_EQ(Lines(r.out).size(), 13u) << r.err;
  std::string stored = ReadFile(cf);
  EXPECT_EQ(stored.substr(stored.size() - 3), "-c\n") << stored;  // record 12
  r = RunLogctl({"cat", "--cursor-file", cf, "--file", f});
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(ReadFile(cf), stored);
  ring.Add(site, "i", Args().i(13).bytes(), kT0 + 13 * kMs);
  ring.Flush();
  r = RunLogctl({"cat", "--cursor-file", cf, "--json", "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_NE(lines[0].find("\"msg\":\"m13\""), std::string::npos);
  // Filters apply after the cursor; the cursor names the last record shown.
  r = RunLogctl({"cat", "--after-cursor", c9, "--grep", "m1[01]$", "--show-cursor", "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(CursorLine(r.out).substr(CursorLine(r.out).size() - 2), "-b");
}

TEST(LogctlCursor, RefusesAnotherRingsCursorAndReportsLostRecords) {
  TempDir dir;
  std::string f = dir / "r.ring";
  std::string c0;
  {
    // 8 blocks of 4 KiB, the block layout as it is: this test laps the ring.
    TestRing ring(f, 12288 + 8 * 4096, 4096, LS_CODEC_NONE);
    uint32_t site = ring.Intern(6, "m%d");
    ring.Add(site, "i", Args().i(0).bytes(), kT0);
    ring.Flush();
    Result r = RunLogctl({"cat", "--show-cursor", "--file", f});
    c0 = CursorLine(r.out).substr(11);
    // Lap the ring: record 0 and many after it are overwritten.
    for (int i = 1; i < 20000; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i * kMs);
    ring.Close();
  }
  Result r = RunLogctl({"cat", "--after-cursor", c0, "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("records lost (overwritten before they were read)"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines.back().find(" m19999"), std::string::npos);

  r = RunLogctl({"cat", "--after-cursor", "nonsense", "--file", f});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is not a logsink cursor"), std::string::npos) << r.err;

  ASSERT_EQ(unlink(f.c_str()), 0);
  {
    TestRing again(f);  // recreated: a new identity
    uint32_t site = again.Intern(6, "m%d");
    again.Add(site, "i", Args().i(0).bytes(), kT0);
    again.Close();
  }
  r = RunLogctl({"cat", "--after-cursor", c0, "--file", f});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("belongs to another ring"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// In a sticky shared directory another user creates F.tmp first (a file of
// theirs, or a symlink to a file of root's). Before the fix logctl opened
// F.tmp without O_EXCL and renamed it over F: root's cursor became that
// user's file (or, through a symlink, logctl failed with ELOOP). Now the
// temporary file has a unique name and F.tmp is never opened.
TEST(LogctlCursor, CursorFileIsNeverWrittenThroughAPlantedTempFile) {
  ASSERT_EQ(geteuid(), 0u) << "the test suite runs as root, to act as two users";
  TempDir dir;
  std::string f = dir / "r.ring", cf = dir / "cursor", planted = cf + ".tmp";
  TestRing ring(f);
  uint32_t site = ring.Intern(6, "m%d");
  for (int i = 0; i < 3; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i * kMs);
  ring.Flush();

  WriteFile(planted, "the other user's\n");
  ASSERT_EQ(chown(planted.c_str(), 65534, 65534), 0);
  struct stat pst;
  ASSERT_EQ(lstat(planted.c_str(), &pst), 0);
  for (const char *cmd : {"cat", "tail"}) {
    ASSERT_TRUE(unlink(cf.c_str()) == 0 || errno == ENOENT);
    Result r = RunLogctl({cmd, "--cursor-file", cf, "--file", f});
    ASSERT_EQ(r.status, 0) << cmd << ": " << r.err;
    struct stat st;
    ASSERT_EQ(lstat(cf.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_uid, geteuid()) << cmd << ": the cursor is the other user's file";
    EXPECT_NE(st.st_ino, pst.st_ino) << cmd;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << cmd;
    EXPECT_EQ(ReadFile(cf).rfind("ls1-", 0), 0u) << ReadFile(cf);
    EXPECT_EQ(ReadFile(planted), "the other user's\n") << cmd;
    // Nothing is left behind but the cursor, the ring and the planted file.
    EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"cursor", "cursor.tmp", "r.ring"}));
  }

  // A symlink at F.tmp to a file of root's: not followed, not an error.
  std::string victim = dir / "victim";
  WriteFile(victim, "precious\n");
  ASSERT_EQ(unlink(planted.c_str()), 0);
  ASSERT_EQ(symlink(victim.c_str(), planted.c_str()), 0);
  ASSERT_EQ(unlink(cf.c_str()), 0);
  Result r = RunLogctl({"cat", "--cursor-file", cf, "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(victim), "precious\n");
  EXPECT_EQ(ReadFile(cf).rfind("ls1-", 0), 0u) << ReadFile(cf);
  struct stat lst;
  ASSERT_EQ(lstat(planted.c_str(), &lst), 0);
  EXPECT_TRUE(S_ISLNK(lst.st_mode));
}

// A cursor file of another user is neither read nor replaced; nor is one
// that is not a regular file (a FIFO, a symlink, a directory): a clear
// error, exit status 1, and nothing printed.
TEST(LogctlCursor, RefusesACursorFileOfAnotherUserOrNotARegularFile) {
  ASSERT_EQ(geteuid(), 0u) << "the test suite runs as root, to act as two users";
  TempDir dir;
  std::string f = dir / "r.ring", cf = dir / "cursor";
  TestRing ring(f);
  uint32_t site = ring.Intern(6, "m%d");
  for (int i = 0; i < 3; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i * kMs);
  ring.Flush();
  Result r = RunLogctl({"tail", "-n", "1", "--cursor-file", cf, "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string stored = ReadFile(cf);
  ASSERT_EQ(stored.rfind("ls1-", 0), 0u) << stored;

  ASSERT_EQ(chown(cf.c_str(), 65534, 65534), 0);
  for (const char *cmd : {"cat", "tail"}) {
    r = RunLogctl({cmd, "--cursor-file", cf, "--file", f});
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_EQ(r.out, "") << cmd;
    EXPECT_NE(r.err.find("logctl: " + cf + ": "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("owned by uid 65534"), std::string::npos) << r.err;
    struct stat st;
    ASSERT_EQ(lstat(cf.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u) << cmd;
    EXPECT_EQ(ReadFile(cf), stored) << cmd;
  }
  ASSERT_EQ(unlink(cf.c_str()), 0);

  // A FIFO: before the fix it read as an empty cursor, everything was shown
  // and the FIFO was replaced.
  ASSERT_EQ(mkfifo(cf.c_str(), 0600), 0);
  Proc p({"cat", "--cursor-file", cf, "--file", f});
  r = p.Finish(5000);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("logctl: " + cf + ": not a regular file"), std::string::npos) << r.err;
  struct stat st;
  ASSERT_EQ(lstat(cf.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(unlink(cf.c_str()), 0);

  // A symlink (to a cursor file of root's) and a directory.
  std::string real = dir / "real-cursor";
  WriteFile(real, stored);
  ASSERT_EQ(symlink(real.c_str(), cf.c_str()), 0);
  r = RunLogctl({"cat", "--cursor-file", cf, "--file", f});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("logctl: " + cf + ": not a regular file"), std::string::npos) << r.err;
  ASSERT_EQ(lstat(cf.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(ReadFile(real), stored);
  ASSERT_EQ(unlink(cf.c_str()), 0);
  ASSERT_EQ(mkdir(cf.c_str(), 0700), 0);
  r = RunLogctl({"cat", "--cursor-file", cf, "--file", f});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("logctl: " + cf + ": not a regular file"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace logsink::test
