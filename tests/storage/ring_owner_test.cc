// ring_owner_test.cc: RingWriter never follows a symlink at the
// ring path into someone else's file, and refuses a ring owned by another
// uid unless WriterOptions::allow_other_owner asks for it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/temp_dir.h"
#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"

namespace logsink::test {
namespace {

using namespace logsink::storage;

class RingOwnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opts_.file_size = 12288 + 4 * 4096;
    opts_.block_size = 4096;
    opts_.strtab_size = 4096;
  }
  // Creates a ring at path and closes it.
  void Create(const std::string &path) {
    std::unique_ptr<RingWriter> w;
    Status s = RingWriter::Open(Env::Default(), path, opts_, &w);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  TempDir tmp_{"ring-owner"};
  const std::string dir_ = tmp_.path();
  WriterOptions opts_;
};

TEST_F(RingOwnerTest, ASymlinkToAnExistingRingIsNotFollowed) {
  const std::string real = dir_ + "/other.ring", link = dir_ + "/logsink.ring";
  Create(real);
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  std::unique_ptr<RingWriter> w;
  Status s = RingWriter::Open(Env::Default(), link, opts_, &w);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Too many levels of symbolic links"), std::string::npos)
      << s.ToString();
  // A dangling link is not created through either.
  const std::string dangling = dir_ + "/dangling.ring", target = dir_ + "/target.ring";
  ASSERT_EQ(symlink(target.c_str(), dangling.c_str()), 0);
  EXPECT_FALSE(RingWriter::Open(Env::Default(), dangling, opts_, &w).ok());
  EXPECT_NE(access(target.c_str(), F_OK), 0);
}

// Needs root to give the file away (the suite runs as root in CI and here);
// as another user the chown fails and the test says so.
TEST_F(RingOwnerTest, ARingOwnedByAnotherUidIsRefusedUnlessAllowed) {
  const std::string path = dir_ + "/logsink.ring";
  Create(path);
  const uid_t other = geteuid() == 65534 ? 65533 : 65534;
  ASSERT_EQ(chown(path.c_str(), other, uid_t(-1)), 0) << "giving the ring away needs root";
  std::unique_ptr<RingWriter> w;
  Status s = RingWriter::Open(Env::Default(), path, opts_, &w);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("is owned by uid " + std::to_string(other)), std::string::npos)
      << s.ToString();
  opts_.allow_other_owner = true;
  s = RingWriter::Open(Env::Default(), path, opts_, &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(RingOwnerTest, OwnRingOpens) {
  const std::string path = dir_ + "/logsink.ring";
  Create(path);
  std::unique_ptr<RingWriter> w;
  Status s = RingWriter::Open(Env::Default(), path, opts_, &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

}  // namespace
}  // namespace logsink::test
