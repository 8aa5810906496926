// ring_upgrade_test.cc: a ring of format version 5 or 6 made the current
// version (LS_FORMAT_VERSION) in place by the writer (FORMAT.md,
// "Versions"): both superblock copies, and again at the next open when a
// crash between the two writes left one at the old version; its records
// read the same before and after. The ring is the one the release before
// fields wrote (tests/data/format5).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/records.h"
#include "common/ring_check.h"
#include "common/temp_dir.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

uint32_t CopyVersion(const std::string &path, int copy) {
  const std::string b = ReadFile(path);
  const size_t at = size_t(copy) * LS_SB_SLOT + LS_SB_OFF_VERSION;
  return b.size() >= at + 4 ? ls_get_u32(reinterpret_cast<const uint8_t *>(b.data()) + at) : 0;
}

void SetCopyVersion(const std::string &path, int copy, uint32_t v) {
  std::string b = ReadFile(path);
  ls_put_u32(reinterpret_cast<uint8_t *>(b.data()) + size_t(copy) * LS_SB_SLOT + LS_SB_OFF_VERSION,
             v);
  WriteFile(path, b);
}

std::unique_ptr<RingWriter> OpenWriter(const std::string &path) {
  WriterOptions o;
  o.file_size = 32 << 10;
  o.block_size = 4096;
  std::unique_ptr<RingWriter> w;
  Status s = RingWriter::Open(Env::Default(), path, o, &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return w;
}

TEST(Upgrade, AVersionFiveRingBecomesCurrentInPlaceAndReadsTheSame) {
  TempDir dir;
  const std::string path = dir / "ring";
  WriteFile(path, ReadFile(std::string(LOGSINK_SOURCE_DIR) + "/tests/data/format5/ring"));
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(Env::Default(), path, nullptr, &r).ok());
  EXPECT_EQ(r->format_version(), 5u);
  r.reset();
  const std::vector<OwnedRecord> before = ReadRing(path);
  ASSERT_EQ(before.size(), 11u);

  std::unique_ptr<RingWriter> w = OpenWriter(path);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->upgraded_from(), 5u);
  w.reset();
  EXPECT_EQ(CopyVersion(path, 0), LS_FORMAT_VERSION);
  EXPECT_EQ(CopyVersion(path, 1), LS_FORMAT_VERSION);
  const std::vector<OwnedRecord> after = ReadRing(path);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); i++) {
    EXPECT_EQ(after[i].seq, before[i].seq);
    EXPECT_EQ(after[i].fmt, before[i].fmt);
    EXPECT_EQ(after[i].args, before[i].args);
  }

  // A crash between the two writes: the older generation's copy still
  // says 5 (its CRC does not cover the version). Readers take the newer
  // copy; the next open rewrites the other.
  std::string b = ReadFile(path);
  const uint64_t g0 =
      ls_get_u64(reinterpret_cast<const uint8_t *>(b.data()) + LS_SB_OFF_GENERATION);
  const uint64_t g1 =
      ls_get_u64(reinterpret_cast<const uint8_t *>(b.data()) + LS_SB_SLOT + LS_SB_OFF_GENERATION);
  const int stale = g0 < g1 ? 0 : 1;
  SetCopyVersion(path, stale, 5);
  ASSERT_TRUE(RingReader::Open(Env::Default(), path, nullptr, &r).ok());
  EXPECT_EQ(r->format_version(), LS_FORMAT_VERSION);
  r.reset();
  w = OpenWriter(path);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->upgraded_from(), 0u);  // the file was already the current version
  w.reset();
  EXPECT_EQ(CopyVersion(path, 0), LS_FORMAT_VERSION);
  EXPECT_EQ(CopyVersion(path, 1), LS_FORMAT_VERSION);
  EXPECT_EQ(ReadRing(path).size(), before.size());

  // Both copies at 6 (a version-6 file: no block has FIELD_KEYS), as the
  // release before field keys left it: read as 6, made current in place.
  SetCopyVersion(path, 0, 6);
  SetCopyVersion(path, 1, 6);
  ASSERT_TRUE(RingReader::Open(Env::Default(), path, nullptr, &r).ok());
  EXPECT_EQ(r->format_version(), 6u);
  r.reset();
  w = OpenWriter(path);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->upgraded_from(), 6u);
  w.reset();
  EXPECT_EQ(CopyVersion(path, 0), LS_FORMAT_VERSION);
  EXPECT_EQ(CopyVersion(path, 1), LS_FORMAT_VERSION);
  const std::vector<OwnedRecord> again = ReadRing(path);
  ASSERT_EQ(again.size(), before.size());
  for (size_t i = 0; i < again.size(); i++) EXPECT_EQ(again[i].args, before[i].args);
}

}  // namespace
}  // namespace logsink::test
