// ring_file_size_test.cc: a ring file whose size is not the one its
// superblock names (cut short or grown) is refused by the reader, as by the
// writer, with the same Corruption naming both sizes (FORMAT.md,
// "Superblock"); the same file at its size reads again.
#include <gtest/gtest.h>

#include <memory>
#include <string>

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

  // Opens kPath as a reader and as a writer; both must fail with why.
  void ExpectRefused(const std::string &why) {
    std::unique_ptr<RingReader> r;
    Status s = RingReader::Open(&env_, kPath, nullptr, &r);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_EQ(s.message(), why);
    WriterOptions o;
    o.codec = LS_CODEC_NONE;
    o.file_size = size_;
    o.block_size = 4096;
    o.strtab_size = 4096;
    std::unique_ptr<RingWriter> w;
    s = RingWriter::Open(&env_, kPath, o, &w);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_EQ(s.message(), why);
  }

  FaultEnv env_;
  uint64_t size_ = 0;
};

TEST_F(FileSize, CutShortOrGrownIsRefusedByReaderAndWriter) {
  std::vector<uint8_t> whole = env_.Data(kPath);
  env_.Data(kPath).resize(size_ - 5000);
  ExpectRefused(kPath + " is " + std::to_string(size_ - 5000) + " bytes but its superblock says " +
                std::to_string(size_));
  env_.Data(kPath).resize(size_ + 1);
  ExpectRefused(kPath + " is " + std::to_string(size_ + 1) + " bytes but its superblock says " +
                std::to_string(size_));
  env_.Data(kPath) = whole;
  std::unique_ptr<RingReader> r = OpenReader(&env_, kPath, nullptr);
  ASSERT_TRUE(r);
  EXPECT_EQ(ReadRecords(r.get()).size(), 100u);
}

}  // namespace
}  // namespace logsink::test
