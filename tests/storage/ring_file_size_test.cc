// ring_file_size_test.cc: a ring file whose size is not the one its
// superblock names (FORMAT.md, "Superblock"): the writer refuses it with a
// Corruption naming both sizes; a reader reports it once, where the sizes
// part, and reads every record still there (a file cut short up to its
// end, a grown one up to its superblock's size).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/records.h"
#include "fault_env.h"
#include "logsink/storage/ring.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

const std::string kPath = "/ring";

class FileSize : public testing::Test {
 protected:
  void SetUp() override {
    std::unique_ptr<RingWriter> w = OpenRing(&env_, kPath, 16);
    ASSERT_TRUE(w);
    const uint32_t site = w->Intern(Site{6, 1, "%s", "a.c"});
    for (int i = 0; i < 100; i++)
      ASSERT_TRUE(AppendRecord(w.get(), Source{1, 2, 3, 4, "app", "app"}, site, "s",
                               Args().Str("line").str(), 1000 + i)
                      .ok());
    ASSERT_TRUE(w->Flush().ok());
    size_ = env_.Data(kPath).size();
    ASSERT_EQ(size_, RingSize(16));
  }

  // The writer refuses kPath with why.
  void ExpectWriterRefuses(const std::string &why) {
    WriterOptions o;
    o.codec = LS_CODEC_NONE;
    o.file_size = size_;
    o.block_size = 4096;
    o.strtab_size = 4096;
    std::unique_ptr<RingWriter> w;
    Status s = RingWriter::Open(&env_, kPath, o, &w);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_EQ(s.message(), why);
  }
  // A reader of kPath reports (off, why) once and reads every record.
  void ExpectReaderReportsAndReads(uint64_t off, const std::string &why) {
    RecordingReporter rep;
    std::unique_ptr<RingReader> r = OpenReader(&env_, kPath, &rep);
    ASSERT_TRUE(r);
    EXPECT_EQ(ReadRecords(r.get()).size(), 100u);
    ASSERT_EQ(rep.corruptions(), 1u) << rep.Dump();
    EXPECT_EQ(rep.bad[0].off, off);
    EXPECT_EQ(rep.bad[0].why, why);
  }

  FaultEnv env_;
  uint64_t size_ = 0;
};

TEST_F(FileSize, CutShortOrGrownIsRefusedByTheWriterAndReportedByReaders) {
  std::vector<uint8_t> whole = env_.Data(kPath);
  const uint64_t cut = size_ - 5000;  // inside the last slot; the records are in the first
  env_.Data(kPath).resize(cut);
  ExpectWriterRefuses(kPath + " is " + std::to_string(cut) + " bytes but its superblock says " +
                      std::to_string(size_));
  ExpectReaderReportsAndReads(cut, "the file ends here but its superblock says " +
                                       std::to_string(size_) +
                                       " bytes: what lay beyond is missing");
  env_.Data(kPath).resize(size_ + 4096);
  ExpectWriterRefuses(kPath + " is " + std::to_string(size_ + 4096) +
                      " bytes but its superblock says " + std::to_string(size_));
  ExpectReaderReportsAndReads(size_,
                              "the file goes on 4096 bytes past the size its superblock says (" +
                                  std::to_string(size_) + "); they are not read");
  env_.Data(kPath) = whole;
  RecordingReporter rep;
  std::unique_ptr<RingReader> r = OpenReader(&env_, kPath, &rep);
  ASSERT_TRUE(r);
  EXPECT_EQ(ReadRecords(r.get()).size(), 100u);
  EXPECT_EQ(rep.corruptions(), 0u) << rep.Dump();
}

// A ring that has wrapped, cut in the middle of tier 0's slots (a backup
// that ran out of space): the slots past the end held blocks older than
// the newest, so the walk from the oldest meets them between valid blocks.
// They are gone with the file, reported once at open, and each is not
// reported again as a missing block; what the file still holds reads back
// in order.
TEST(FileSizeWrapped, ACutWrappedRingIsReportedOnceAndReadUpToItsEnd) {
  FaultEnv env;
  std::unique_ptr<RingWriter> w = OpenRing(&env, kPath, 64);
  ASSERT_TRUE(w);
  const uint32_t site = w->Intern(Site{6, 1, "%s", "a.c"});
  for (int i = 0; i < 40000; i++)
    ASSERT_TRUE(AppendRecord(w.get(), Source{1, 2, 3, 4, "app", "app"}, site, "s",
                             Args().Str("line " + std::to_string(i)).str(), 1000 + uint64_t(i))
                    .ok());
  ASSERT_TRUE(w->Flush().ok());
  w.reset();
  std::unique_ptr<RingReader> whole = OpenReader(&env, kPath, nullptr);
  ASSERT_TRUE(whole);
  const Layout t0 = whole->layout().Tier(0);
  const size_t all = ReadRecords(whole.get()).size();
  whole.reset();
  const uint64_t cut = t0.blocks_off + uint64_t(t0.block_count / 2) * t0.block_size;
  ASSERT_LT(cut, env.Data(kPath).size());
  env.Data(kPath).resize(cut);

  RecordingReporter rep;
  std::unique_ptr<RingReader> r = OpenReader(&env, kPath, &rep);
  ASSERT_TRUE(r);
  std::vector<OwnedRecord> recs = ReadRecords(r.get());
  EXPECT_EQ(rep.corruptions(), 1u) << rep.Dump();
  ASSERT_FALSE(recs.empty());
  EXPECT_LT(recs.size(), all);
  for (size_t i = 1; i < recs.size(); i++) ASSERT_LT(recs[i - 1].seq, recs[i].seq) << i;
}

}  // namespace
}  // namespace logsink::test
