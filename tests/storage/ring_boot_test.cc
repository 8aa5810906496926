// ring_boot_test.cc: boots (FORMAT.md, "Boots"): a ring written across
// reboots lists each boot once, in order, a block filter selects one boot's
// records exactly, and each record's monotonic time is its own boot's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/records.h"
#include "fault_env.h"
#include "logsink/storage/ring.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

const std::string kPath = "/ring";

struct Written {
  std::array<uint8_t, 16> boot;
  uint64_t seq, ts, mono;
};

// Three boots; in each the writer opens the ring, logs, and the machine
// "reboots" (boot id changes, the monotonic clock starts again).
class Boots : public testing::Test {
 protected:
  void SetUp() override {
    Source a{1, 100, 1000, 1000, "alpha", "alphad"};
    uint64_t real = 1700000000000000000ull;
    for (uint8_t boot = 1; boot <= 3; boot++) {
      env_.boot_id = {boot, 0xb0, 0x07};
      env_.mono_ns = 2000000000ull;  // 2 s after boot when the writer starts
      env_.now_ns = real;
      WriterOptions o;
      o.file_size = RingSize(64, 8192);
      o.block_size = 8192;
      std::unique_ptr<RingWriter> w;
      ASSERT_TRUE(RingWriter::Open(&env_, kPath, o, &w).ok());
      const uint32_t site = w->Intern(Site{6, 1, "%s", "b.c"});
      for (int i = 0; i < 3000; i++) {
        // Records are stamped 1 ms apart after the block opened.
        const uint64_t ts = real + uint64_t(i) * 1000000ull;
        std::string args =
            Args().Str("boot " + std::to_string(boot) + " line " + std::to_string(i)).str();
        const uint64_t seq = w->next_record_seq();
        ASSERT_TRUE(AppendRecord(w.get(), a, site, "s", args, ts).ok());
        written_.push_back(Written{env_.boot_id, seq, ts, 0});
      }
      ASSERT_TRUE(w->Flush().ok());
      real += 3600ull * 1000000000ull;  // the next boot an hour later
    }
  }

  FaultEnv env_;
  std::vector<Written> written_;
};

TEST_F(Boots, ListedOnceEachInOrder) {
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env_, kPath, nullptr, &r).ok());
  std::vector<BootInfo> boots;
  ASSERT_TRUE(r->ListBoots(&boots).ok());
  ASSERT_EQ(boots.size(), 3u);
  for (size_t b = 0; b < 3; b++) {
    EXPECT_EQ(boots[b].boot_id[0], b + 1);
    EXPECT_EQ(boots[b].records, 3000u);
    EXPECT_EQ(boots[b].first_seq, 3000u * b);
    EXPECT_EQ(boots[b].last_seq, 3000u * b + 2999);
    EXPECT_EQ(boots[b].first_ns, written_[3000 * b].ts);
    EXPECT_EQ(boots[b].last_ns, written_[3000 * b + 2999].ts);
    if (b) {
      EXPECT_GT(boots[b].first_block, boots[b - 1].last_block);
    }
  }
}

TEST_F(Boots, FilterSelectsOneBootAndMonotonicTimeIsItsOwn) {
  for (uint8_t boot = 1; boot <= 3; boot++) {
    SCOPED_TRACE(int(boot));
    std::unique_ptr<RingReader> r;
    RecordingReporter rep;
    ASSERT_TRUE(RingReader::Open(&env_, kPath, &rep, &r).ok());
    RecordFilter f;
    f.boots.push_back({boot, 0xb0, 0x07});
    r->SetFilter(&f);
    Record rec;
    uint64_t n = 0;
    while (r->Next(&rec).ok()) {
      EXPECT_EQ(rec.boot_id[0], boot);  // blocks hold one boot: nothing else gets through
      // The writer opened its first block 2 s after boot at the first
      // record's time; records follow 1 ms apart.
      const uint64_t i = rec.seq - 3000u * (boot - 1);
      EXPECT_EQ(MonotonicTime(rec), 2000000000ull + i * 1000000ull) << rec.seq;
      n++;
    }
    EXPECT_EQ(n, 3000u);
    EXPECT_EQ(rep.lost, 0u);
    EXPECT_GT(r->blocks_skipped(), 0u);
  }
}

}  // namespace
}  // namespace logsink::test
