// small_file_test.cc: storage/small_file.h, the one safe atomic write (and
// owner-checked read) of small state files that logctl's --cursor-file and
// logsink-forward's cursor and status files use: a temporary file of a
// unique name, never a planted one; another user's file, a symlink, a FIFO
// or a directory at the path is refused (or, for the status file, replaced
// without being written through).
#include "logsink/storage/small_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/temp_dir.h"

namespace logsink::test {
namespace {

using storage::ReadSmallFile;
using storage::SmallFileOptions;
using storage::WriteSmallFile;

mode_t Umask() {
  mode_t m = umask(0);
  umask(m);
  return m;
}

TEST(SmallFile, WritesReplacesAndReadsBackLeavingNothingBehind) {
  TempDir dir;
  std::string f = dir / "state", got, why;
  EXPECT_EQ(ReadSmallFile(f, 100, &got, &why), 0);
  SmallFileOptions o;
  o.mode = 0640;
  ASSERT_TRUE(WriteSmallFile(f, "one\n", o, &why)) << why;
  struct stat st;
  ASSERT_EQ(lstat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u & ~Umask());
  ino_t first = st.st_ino;
  o.durable = true;
  ASSERT_TRUE(WriteSmallFile(f, "two, longer\n", o, &why)) << why;
  ASSERT_EQ(lstat(f.c_str(), &st), 0);
  EXPECT_NE(st.st_ino, first);  // a new file renamed over the old one
  ASSERT_EQ(ReadSmallFile(f, 100, &got, &why), 1) << why;
  EXPECT_EQ(got, "two, longer\n");
  ASSERT_EQ(ReadSmallFile(f, 3, &got, &why), 1) << why;
  EXPECT_EQ(got, "two");
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"state"});
  // A relative path: the temporary file is made in the working directory.
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(dir.path().c_str()), 0);
  bool ok = WriteSmallFile("rel", "r\n", o, &why);
  EXPECT_EQ(chdir(cwd), 0);
  ASSERT_TRUE(ok) << why;
  EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"rel", "state"}));
}

// Whatever someone planted at the names a fixed scheme would use is never
// opened: a file of another user and a symlink to a file of ours.
TEST(SmallFile, NeverOpensAPlantedTemporaryName) {
  ASSERT_EQ(geteuid(), 0u) << "the test suite runs as root, to act as two users";
  TempDir dir;
  std::string f = dir / "c", victim = dir / "victim", why;
  WriteFile(victim, "precious\n");
  WriteFile(f + ".tmp", "theirs\n");
  ASSERT_EQ(chown((f + ".tmp").c_str(), 65534, 65534), 0);
  ASSERT_EQ(symlink(victim.c_str(), (dir / ".c.tmp").c_str()), 0);
  for (int i = 0; i < 20; i++) ASSERT_TRUE(WriteSmallFile(f, "x\n", {}, &why)) << why;
  struct stat st;
  ASSERT_EQ(lstat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(ReadFile(f + ".tmp"), "theirs\n");
  EXPECT_EQ(ReadFile(victim), "precious\n");
  EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{".c.tmp", "c", "c.tmp", "victim"}));
}

TEST(SmallFile, RefusesAnotherUsersFileAndWhatIsNotARegularFile) {
  ASSERT_EQ(geteuid(), 0u) << "the test suite runs as root, to act as two users";
  TempDir dir;
  std::string theirs = dir / "theirs", got, why;
  WriteFile(theirs, "theirs\n");
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  EXPECT_EQ(ReadSmallFile(theirs, 100, &got, &why), -1);
  EXPECT_EQ(why,
            "owned by uid 65534, not by uid 0 running this: refusing to use another "
            "user's file");
  why.clear();
  EXPECT_FALSE(WriteSmallFile(theirs, "ours\n", {}, &why));
  EXPECT_EQ(why.rfind("owned by uid 65534", 0), 0u) << why;
  EXPECT_EQ(ReadFile(theirs), "theirs\n");

  std::string fifo = dir / "fifo", link = dir / "link", sub = dir / "sub";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(symlink(theirs.c_str(), link.c_str()), 0);
  ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
  for (const std::string &p : {fifo, link, sub}) {
    why.clear();
    EXPECT_EQ(ReadSmallFile(p, 100, &got, &why), -1) << p;  // a FIFO: at once
    EXPECT_EQ(why.rfind("not a regular file", 0), 0u) << p << ": " << why;
    why.clear();
    EXPECT_FALSE(WriteSmallFile(p, "x\n", {}, &why)) << p;
    EXPECT_EQ(why.rfind("not a regular file", 0), 0u) << p << ": " << why;
  }
  EXPECT_EQ(ReadSmallFile(link, 100, &got, &why), -1);
  EXPECT_EQ(why, "not a regular file (a symbolic link)");
  // Nothing was left behind by the refused writes.
  EXPECT_EQ(Names(dir.path()), (std::vector<std::string>{"fifo", "link", "sub", "theirs"}));

  // Without the check (a status file): a symlink at the path is replaced,
  // its target untouched.
  SmallFileOptions o;
  o.only_own_regular = false;
  ASSERT_TRUE(WriteSmallFile(link, "status\n", o, &why)) << why;
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(ReadFile(theirs), "theirs\n");
}

TEST(SmallFile, ADirectoryItCannotWriteInIsAClearError) {
  TempDir dir;
  std::string why;
  EXPECT_FALSE(WriteSmallFile(dir / "missing/c", "x\n", {}, &why));
  EXPECT_EQ(why, "cannot create a temporary file in " + (dir / "missing") +
                     ": No such file or directory");
  EXPECT_FALSE(WriteSmallFile(dir.path() + "/", "x\n", {}, &why));
  EXPECT_EQ(why, "not a file name");
}

}  // namespace
}  // namespace logsink::test
