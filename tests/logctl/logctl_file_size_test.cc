// logctl_file_size_test.cc: the real logctl binary against a ring file
// whose superblock names another size than the file has (FORMAT.md,
// "Superblock"): one claiming 1 TiB on a 1 MiB file, and a file grown past
// its size. Every command that reads the ring refuses it with an error that
// names both sizes and exits 1, as for any file it cannot read; none prints
// an empty log as if the ring held no records.
#include "cli_fixture.h"

namespace logsink::test {
namespace {

constexpr uint64_t kMiB = 1ull << 20, kTiB = 1ull << 40;

// Rewrites both superblock copies of the ring at path to claim a file of
// `claim` bytes: the geometry Layout::Compute gives for that size (block
// size and string table kept), CRCs fixed, so each copy is valid on its own.
void ClaimSize(const std::string &path, uint64_t claim) {
  int fd = open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  for (uint64_t off : {uint64_t{0}, uint64_t{LS_SB_SLOT}}) {
    uint8_t sb[LS_SB_SIZE];
    ASSERT_EQ(pread(fd, sb, sizeof sb, off_t(off)), ssize_t(sizeof sb));
    Layout l;
    ASSERT_TRUE(Layout::Compute(claim, ls_get_u32(sb + LS_SB_OFF_BLOCK_SIZE),
                                ls_get_u64(sb + LS_SB_OFF_STRTAB_SIZE), &l)
                    .ok());
    ls_put_u64(sb + LS_SB_OFF_FILE_SIZE, l.file_size);
    ls_put_u32(sb + LS_SB_OFF_BLOCK_COUNT, l.block_count);
    ls_put_u64(sb + LS_SB_OFF_STRTAB_OFF, l.strtab_off);
    ls_put_u64(sb + LS_SB_OFF_BLOCKS_OFF, l.blocks_off);
    ls_put_u32(sb + LS_SB_OFF_DICT_SIZE, l.dict_size);
    ls_put_u64(sb + LS_SB_OFF_INDEX_SIZE, l.index_size);
    ls_put_u32(sb + LS_SB_OFF_CRC, Crc32c(sb + 16, LS_SB_SIZE - 16));
    ASSERT_EQ(pwrite(fd, sb, sizeof sb, off_t(off)), ssize_t(sizeof sb));
  }
  close(fd);
}

class FileSizeTest : public LogctlTest {
 protected:
  void SetUp() override {
    f_ = dir_.File("r.ring");
    TestRing ring(f_, kMiB);
    WriteNumbered(&ring, 500);
    ring.Close();
    Result r = RunLogctl({"cat", "--file", f_});
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(Lines(r.out).size(), 500u);
  }

  // Every reading command refuses the file with `why` (after "PATH: ").
  void ExpectRefused(const std::string &why) {
    const std::string want = "logctl: " + f_ + ": " + why + "\n";
    const std::vector<std::vector<std::string>> commands = {
        {"cat"},    {"tail"},   {"tail", "-n", "5"},     {"cat", "-p", "err"}, {"stats"},
        {"verify"}, {"export"}, {"cat", "--list-boots"}, {"tail", "-f"}};
    for (std::vector<std::string> args : commands) {
      const std::string cmd = args[0] + (args.size() > 1 ? " " + args[1] : "");
      args.insert(args.end(), {"--file", f_, "--socket", dir_.File("no.sock")});
      Result r = RunLogctl(args);
      EXPECT_EQ(r.status, 1) << cmd;
      EXPECT_EQ(r.err, want) << cmd;
      EXPECT_EQ(r.out, "") << cmd;
    }
  }

  std::string f_;
};

TEST_F(FileSizeTest, ASuperblockClaimingMoreThanTheFileIsRefused) {
  ClaimSize(f_, kTiB);
  ExpectRefused("the file is " + std::to_string(kMiB) + " bytes but its superblock says " +
                std::to_string(kTiB));
}

TEST_F(FileSizeTest, AFileGrownPastItsSizeIsRefused) {
  ASSERT_EQ(truncate(f_.c_str(), off_t(kMiB + 4096)), 0);
  ExpectRefused("the file is " + std::to_string(kMiB + 4096) + " bytes but its superblock says " +
                std::to_string(kMiB));
}

}  // namespace
}  // namespace logsink::test
