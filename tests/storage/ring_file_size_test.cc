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

}  // namespace
}  // namespace logsink::test
