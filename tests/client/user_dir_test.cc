// user_dir_test.cc: the safe-path rule for per-user directories
// (ls_user_dir_check in proto/paths.h), which liblogsink, logctl and logsinkd
// apply to /tmp/logsink-<uid>/ and $XDG_RUNTIME_DIR/logsink: a symlink, a
// directory of another uid, one writable by others and a regular file are
// refused with a reason naming the path; a missing one is created 0700 when
// asked and left alone otherwise; a good one is accepted. Ownership cases
// need root (to chown to 65534), as the test suite runs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "common/temp_dir.h"
#include "logsink/proto/paths.h"

namespace logsink::test {
namespace {

constexpr uid_t kNobody = 65534;

struct Check {
  int rc;
  std::string why;
};

Check CheckDir(const std::string &dir, unsigned flags = 0) {
  char why[512] = "";
  int rc = ls_user_dir_check(dir.c_str(), flags, why, sizeof why);
  return {rc, why};
}

std::string Me() { return std::to_string(geteuid()); }

TEST(UserDirTest, SymlinkToOwnDirectoryIsRefused) {
  TempDir t;
  std::string real = t / "real", link = t / "logsink";
  ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  Check c = CheckDir(link, LS_USER_DIR_CREATE);
  EXPECT_EQ(c.rc, -ELOOP);
  EXPECT_EQ(c.why, link + " is a symbolic link: refusing it");
}

TEST(UserDirTest, DirectoryOfAnotherUidIsRefused) {
  ASSERT_EQ(geteuid(), 0u) << "the test suite runs as root, to chown to another uid";
  TempDir t;
  std::string dir = t / "logsink";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(chown(dir.c_str(), kNobody, kNobody), 0);
  Check c = CheckDir(dir, LS_USER_DIR_CREATE);
  EXPECT_EQ(c.rc, -EPERM);
  EXPECT_EQ(c.why, dir + " is owned by uid 65534, not " + Me() + ": refusing it");
}

TEST(UserDirTest, WorldWritableDirectoryIsRefused) {
  TempDir t;
  std::string dir = t / "logsink";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  Check c = CheckDir(dir);
  EXPECT_EQ(c.rc, -EPERM);
  EXPECT_EQ(c.why, dir + " is writable by group or others (mode 0777): refusing it");
  ASSERT_EQ(chmod(dir.c_str(), 0770), 0);
  EXPECT_EQ(CheckDir(dir).rc, -EPERM) << "group-writable";
}

TEST(UserDirTest, RegularFileIsRefused) {
  TempDir t;
  std::string file = t / "logsink";
  WriteFile(file, "");
  Check c = CheckDir(file, LS_USER_DIR_CREATE);
  EXPECT_EQ(c.rc, -ENOTDIR);
  EXPECT_EQ(c.why, file + " is not a directory: refusing it");
}

TEST(UserDirTest, MissingDirectoryIsCreated0700OnlyWhenAsked) {
  TempDir t;
  std::string dir = t / "logsink";
  EXPECT_EQ(CheckDir(dir).rc, -ENOENT);
  struct stat st;
  EXPECT_NE(lstat(dir.c_str(), &st), 0) << "created without LS_USER_DIR_CREATE";
  // Even a umask that takes the owner's own bits leaves it 0700.
  mode_t old = umask(0277);
  Check c = CheckDir(dir, LS_USER_DIR_CREATE);
  umask(old);
  EXPECT_EQ(c.rc, 0) << c.why;
  ASSERT_EQ(lstat(dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, geteuid());
}

TEST(UserDirTest, OwnDirectoryIsAccepted) {
  TempDir t;
  std::string dir = t / "logsink";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  EXPECT_EQ(CheckDir(dir).rc, 0);
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0);  // readable by others is fine
  EXPECT_EQ(CheckDir(dir, LS_USER_DIR_CREATE).rc, 0);
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u) << "an existing directory's mode is not changed";
  EXPECT_EQ(ls_user_dir_check(dir.c_str(), 0, nullptr, 0), 0) << "why may be NULL";
}

TEST(UserDirTest, MissingParentIsReported) {
  TempDir t;
  std::string dir = t / "absent/logsink";
  Check c = CheckDir(dir, LS_USER_DIR_CREATE);
  EXPECT_EQ(c.rc, -ENOENT);
  EXPECT_EQ(c.why.rfind("cannot create " + dir + ": ", 0), 0u) << c.why;
}

TEST(UserDirTest, UserDirOfNamesTheDirectoryOfDefaultPathsOnly) {
  char dir[256];
  EXPECT_EQ(ls_user_dir_of("/run/logsink/logsink.sock", dir, sizeof dir), 0) << "root's paths";
  // As a non-root user (in a child, with its own environment).
  pid_t pid = fork();
  if (pid == 0) {
    setenv("XDG_RUNTIME_DIR", "/run/user/65534", 1);
    if (setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(10);
    int code = 0;
    if (ls_user_dir_of("/run/user/65534/logsink/logsink.sock", dir, sizeof dir) != 23 ||
        std::string(dir) != "/run/user/65534/logsink")
      code |= 1;
    if (ls_user_dir_of("/run/user/65534/logsinkX/logsink.sock", dir, sizeof dir) != 0) code |= 2;
    if (ls_user_dir_of("/srv/logsink.sock", dir, sizeof dir) != 0) code |= 4;
    _exit(code);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bit 1: the default path, 2: a sibling, 4: elsewhere";
}

}  // namespace
}  // namespace logsink::test
