// logctl_file_size_test.cc: the real logctl binary against a ring file
// whose superblock names another size than the file has (FORMAT.md,
// "Superblock"): one claiming 1 TiB on a 1 MiB file, and a file grown past
// its size. Every command that reads the ring warns once, naming where the
// sizes part and the superblock's size, and reads on (verify counts it as a
// problem and exits 1); none prints an empty log without a word.
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

  // Every reading command warns with `why` at offset `off` and reads on:
  // cat prints `records` records; verify exits 1 naming both sizes.
  void ExpectWarned(uint64_t off, const std::string &why, size_t records, uint64_t size,
                    uint64_t claim) {
    const std::string want =
        "logctl: warning: " + f_ + ": offset " + std::to_string(off) + ": " + why + " (skipped)\n";
    const std::vector<std::vector<std::string>> commands = {
        {"cat"},   {"tail"},   {"tail", "-n", "5"},     {"cat", "-p", "err"},
        {"stats"}, {"export"}, {"cat", "--list-boots"}, {"cat", "--output", "json"}};
    for (std::vector<std::string> args : commands) {
      std::string cmd;
      for (const std::string &a : args) cmd += a + " ";
      args.insert(args.end(), {"--file", f_, "--socket", dir_.File("no.sock")});
      Result r = RunLogctl(args);
      EXPECT_EQ(r.status, 0) << cmd << r.err;
      EXPECT_EQ(r.err, want) << cmd;
      if (args[0] == "cat" && args[1] == "--file") {
        EXPECT_EQ(Lines(r.out).size(), records) << cmd;
      }
    }
    Result v = RunLogctl({"verify", "--file", f_});
    EXPECT_EQ(v.status, 1) << v.out << v.err;
    EXPECT_NE(v.out.find("file is " + std::to_string(size) + " bytes, superblock says " +
                         std::to_string(claim)),
              std::string::npos)
        << v.out;
  }

  std::string f_;
};

TEST_F(FileSizeTest, ASuperblockClaimingMoreThanTheFileIsReported) {
  ClaimSize(f_, kTiB);
  // The geometry of 1 TiB puts every block slot past the file's end.
  ExpectWarned(kMiB,
               "the file ends here but its superblock says " + std::to_string(kTiB) +
                   " bytes: what lay beyond is missing",
               0, kMiB, kTiB);
}

TEST_F(FileSizeTest, AFileGrownPastItsSizeIsReportedAndReadAtItsSize) {
  ASSERT_EQ(truncate(f_.c_str(), off_t(kMiB + 4096)), 0);
  ExpectWarned(kMiB,
               "the file goes on 4096 bytes past the size its superblock says (" +
                   std::to_string(kMiB) + "); they are not read",
               500, kMiB + 4096, kMiB);
}

}  // namespace
}  // namespace logsink::test
