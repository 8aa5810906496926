// logctl_verify_test.cc: the real logctl binary against rings written with
// storage's RingWriter (cli_fixture.h): `logctl verify` and reading damaged rings (a flipped byte,
// a damaged string table, a truncated file).
#include "cli_fixture.h"

namespace logsink::test {
namespace {

// Flips one byte inside block slot `slot` (FORMAT.md: slots follow the
// superblocks and the 4 KiB string table in TestRing's geometry).
uint64_t SlotOffset(int slot) { return 8192 + 4096 + uint64_t(slot) * 4096; }
void FlipByte(const std::string &path, uint64_t off) {
  int fd = open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  unsigned char c;
  ASSERT_EQ(pread(fd, &c, 1, off), 1);
  c ^= 0x55;
  ASSERT_EQ(pwrite(fd, &c, 1, off), 1);
  close(fd);
}

TEST_F(LogctlTest, CorruptedBlockFailsVerifyButOtherRecordsStillPrint) {
  std::string f = dir_.File("r.ring");
  // The block layout as it is: a flipped byte of stored entries fails the CRC.
  TestRing ring(f, 12288 + 8 * 4096, 4096, LS_CODEC_NONE);
  WriteNumbered(&ring, 2000);  // about 4 blocks
  uint64_t blocks = ring.writer()->current_block_seq() + 1;
  ring.Close();
  ASSERT_GE(blocks, 3u);
  Result clean = RunLogctl({"verify", "--file", f});
  EXPECT_EQ(clean.status, 0) << clean.out << clean.err;
  EXPECT_NE(clean.out.find(": OK: 2000 records"), std::string::npos) << clean.out;
  Result all = RunLogctl({"cat", "--file", f});
  auto before = Lines(all.out);
  ASSERT_EQ(before.size(), 2000u);

  FlipByte(f, SlotOffset(1) + LS_BLK_HDR + 100);  // inside block 1's entries
  Result v = RunLogctl({"verify", "--file", f});
  EXPECT_EQ(v.status, 1);
  EXPECT_NE(v.out.find("offset " + std::to_string(SlotOffset(1)) + ":"), std::string::npos)
      << v.out;
  EXPECT_NE(v.out.find("CORRUPT"), std::string::npos);

  Result c = RunLogctl({"cat", "--file", f});
  EXPECT_EQ(c.status, 0) << c.err;
  auto after = Lines(c.out);
  EXPECT_LT(after.size(), before.size());
  EXPECT_GT(after.size(), 0u);
  // Every line printed is one of the original lines, in the original order.
  size_t j = 0;
  for (auto &l : after) {
    while (j < before.size() && before[j] != l) j++;
    ASSERT_LT(j, before.size()) << "unexpected line: " << l;
  }
  // The first and the last block are intact.
  EXPECT_EQ(after.front(), before.front());
  EXPECT_EQ(after.back(), before.back());
  EXPECT_NE(c.err.find("offset " + std::to_string(SlotOffset(1))), std::string::npos) << c.err;
}

// With tiers, tier 1 keeps some of the records tier 0 overwrote, so the
// sequence numbers of the records present have gaps: verify counts the
// records present, as cat and stats do, not the span of their numbers.
TEST_F(LogctlTest, VerifyCountsTheRecordsOfARingWithTiers) {
  std::string f = dir_.File("r.ring");
  WriterOptions opts = TestRing::Options(12288 + 32 * 4096, 4096, LS_CODEC_NONE);
  opts.kept_share = 0.25;
  opts.error_share = 0.125;
  TestRing ring(f, opts);
  uint32_t info = ring.Intern(6, "n=%d"), err = ring.Intern(3, "e=%d");
  for (int i = 0; i < 20000; i++)
    ring.Add(i % 50 ? info : err, "i", Args().i(i).bytes(), kT0 + uint64_t(i) * kMs);
  ring.Close();
  const size_t present = Lines(RunLogctl({"cat", "--file", f}).out).size();
  Result st = RunLogctl({"stats", "--json", "--file", f, "--socket", dir_.File("none.sock")});
  json j = ParseJson(st.out);
  ASSERT_EQ(j["records"], present) << st.out;
  ASSERT_EQ(j["tiers"].size(), 3u) << st.out;
  const uint64_t span = j["newest_seq"].get<uint64_t>() - j["oldest_seq"].get<uint64_t>() + 1;
  ASSERT_GT(span, present) << "the numbers of the records present have no gap: " << st.out;
  Result v = RunLogctl({"verify", "--file", f});
  EXPECT_EQ(v.status, 0) << v.out << v.err;
  EXPECT_NE(v.out.find(": OK: " + std::to_string(present) + " records in "), std::string::npos)
      << v.out << "(" << present << " records present, numbers spanning " << span << ")";
}

TEST_F(LogctlTest, DamagedStringTableShowsUnknownFormat) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  uint32_t site = ring.Intern(6, "n=%d");
  ring.Add(site, "i", Args().i(5).bytes(), kT0);
  ring.Close();
  FlipByte(f, 8192 + 20);  // the first string-table entry's format bytes
  Result c = RunLogctl({"cat", "--file", f});
  EXPECT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, Line(0, "testapp(testcomm)[4242]: <info> [unknown format #" +
                               std::to_string(site) + "] args=[hex:0a]\n"));
  Result v = RunLogctl({"verify", "--file", f});
  EXPECT_EQ(v.status, 1) << v.out;
  EXPECT_NE(v.out.find("offset 8192"), std::string::npos) << v.out;
}

TEST_F(LogctlTest, TruncatedFile) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 1000);
  ring.Close();
  // Cut the file in the middle of block slot 2.
  const uint64_t size = 12288 + 8 * 4096, cut = SlotOffset(2) + 1000;
  ASSERT_EQ(truncate(f.c_str(), static_cast<off_t>(cut)), 0);
  Result v = RunLogctl({"verify", "--file", f});
  EXPECT_EQ(v.status, 1) << v.out << v.err;
  EXPECT_NE(v.out.find("file is " + std::to_string(cut) + " bytes, superblock says " +
                       std::to_string(size)),
            std::string::npos)
      << v.out;
  // Read up to its end, with one warning where it ends (FORMAT.md,
  // "Superblock"): blocks 0 and 1 are whole, their records still print, in
  // order.
  Result c = RunLogctl({"cat", "--file", f});
  EXPECT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.err.find("offset " + std::to_string(cut) +
                       ": the file ends here but its superblock says " + std::to_string(size)),
            std::string::npos)
      << c.err;
  auto lines = Lines(c.out);
  ASSERT_GT(lines.size(), 100u) << c.err;
  for (size_t i = 0; i < lines.size(); i++)
    ASSERT_NE(lines[i].find("n=" + std::to_string(i)), std::string::npos) << lines[i];
}

}  // namespace
}  // namespace logsink::test
