// layout_test.cc: Layout::Compute edge cases (proto/FORMAT.md, "Layout").
#include <gtest/gtest.h>

#include "logsink/proto/format.h"
#include "logsink/storage/ring.h"

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

TEST(Layout, DefaultGeometry64MiB) {
  Layout l;
  ASSERT_TRUE(Layout::Compute(64ull << 20, 8192, 0, &l).ok());
  EXPECT_EQ(l.strtab_off, 8192u);
  EXPECT_EQ(l.strtab_size, 1ull << 20);       // 64 MiB / 64
  EXPECT_EQ(l.dict_off, 8192u + (1u << 20));  // the dictionary region after the table
  EXPECT_EQ(l.dict_size, LS_DICT_REGION);
  // The summary index after it (FORMAT.md, "Layout"): rest = 66,019,328
  // bytes, n = rest / (8192 + 128) + 1 = 7,936 entries of 128 bytes.
  EXPECT_EQ(l.index_off, 8192u + (1u << 20) + LS_DICT_REGION);
  EXPECT_EQ(l.index_size, 7936u * 128u);
  EXPECT_EQ(l.blocks_off, l.index_off + l.index_size);
  EXPECT_EQ(l.block_count, ((64ull << 20) - l.blocks_off) / 8192);
  EXPECT_EQ(l.block_count, 7935u);  // one entry to spare
  EXPECT_EQ(l.IndexOffset(l.block_count + 3), l.index_off + 3 * LS_IDX_ENTRY);
  EXPECT_EQ(l.SlotOffset(0), l.blocks_off);
  EXPECT_EQ(l.SlotOffset(l.block_count + 3), l.blocks_off + 3 * 8192);
  EXPECT_EQ(l.capacity(), uint64_t(l.block_count) * 8192);
}

// A file gets a dictionary region only when LS_DICT_MIN_BLOCKS slots remain
// after it: a small ring keeps all its slots.
TEST(Layout, DictionaryRegionOnlyWhereBlocksRemain) {
  Layout l;
  ASSERT_TRUE(Layout::Compute(256 * 1024, 4096, 0, &l).ok());
  EXPECT_EQ(l.dict_size, 0u);
  EXPECT_EQ(l.blocks_off, l.strtab_off + l.strtab_size);
  // The smallest 8 KiB-block file with one (a 4 KiB table): 64 slots after it.
  const uint64_t edge = 8192 + 4096 + LS_DICT_REGION + 64 * 8192;
  ASSERT_TRUE(Layout::Compute(edge, 8192, 4096, &l).ok());
  EXPECT_EQ(l.dict_size, LS_DICT_REGION);
  EXPECT_EQ(l.dict_off, 8192u + 4096u);
  EXPECT_EQ(l.blocks_off, 8192u + 4096u + LS_DICT_REGION);
  EXPECT_EQ(l.block_count, 64u);
  EXPECT_EQ(l.index_size, 0u);  // an index would leave fewer than 64 slots
  // Three 4 KiB pages more, and it has one: n = 540,672 / 8,320 + 1 = 65
  // entries, 8,320 bytes rounded up to 12,288; 64 slots remain.
  ASSERT_TRUE(Layout::Compute(edge + 8192, 8192, 4096, &l).ok());
  EXPECT_EQ(l.index_size, 0u);
  ASSERT_TRUE(Layout::Compute(edge + 12288, 8192, 4096, &l).ok());
  EXPECT_EQ(l.index_size, 12288u);
  EXPECT_EQ(l.block_count, 64u);
  ASSERT_TRUE(Layout::Compute(edge - 1, 8192, 4096, &l).ok());
  EXPECT_EQ(l.dict_size, 0u);
  EXPECT_EQ(l.blocks_off, 8192u + 4096u);
  EXPECT_EQ(l.block_count, (edge - 1 - 8192 - 4096) / 8192);
}

TEST(Layout, StrtabClampedAndRounded) {
  Layout l;
  ASSERT_TRUE(Layout::Compute(100000, 4096, 0, &l).ok());
  EXPECT_EQ(l.strtab_size, 4096u);  // 100000/64 = 1562 -> 4096 minimum
  ASSERT_TRUE(Layout::Compute(300000, 4096, 0, &l).ok());
  EXPECT_EQ(l.strtab_size, 8192u);  // 4687 rounded up to 4 KiB
  ASSERT_TRUE(Layout::Compute(4ull << 30, 8192, 0, &l).ok());
  EXPECT_EQ(l.strtab_size, 16ull << 20);  // clamped at 16 MiB
  ASSERT_TRUE(Layout::Compute(1 << 20, 4096, 65536, &l).ok());
  EXPECT_EQ(l.strtab_size, 65536u);
}

TEST(Layout, TailPaddingIsUnused) {
  Layout l;
  ASSERT_TRUE(Layout::Compute(8192 + 4096 + 3 * 4096 + 4095, 4096, 0, &l).ok());
  EXPECT_EQ(l.block_count, 3u);  // the 4095 bytes left over are padding
}

TEST(Layout, TooSmallSaysTheMinimum) {
  Layout l;
  // superblocks 8192 + table 4096 + 2 blocks of 4096 = 20480.
  EXPECT_TRUE(Layout::Compute(20480, 4096, 0, &l).ok());
  EXPECT_EQ(l.block_count, 2u);
  Status s = Layout::Compute(20479, 4096, 0, &l);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("minimum is 20480"), std::string::npos) << s.ToString();
  s = Layout::Compute(0, 8192, 0, &l);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("minimum is 28672"), std::string::npos) << s.ToString();
}

TEST(Layout, MinimumWithLargeBlocksAccountsForTheDefaultTable) {
  Layout l;
  // 1 MiB blocks: 8192 + 2 MiB + table(size/64 rounded) must fit.
  Status s = Layout::Compute(2u << 20, 1u << 20, 0, &l);
  ASSERT_EQ(s.code(), Status::Code::kInvalidArgument);
  auto pos = s.message().find("minimum is ");
  ASSERT_NE(pos, std::string::npos);
  uint64_t min = std::stoull(s.message().substr(pos + 11));
  EXPECT_TRUE(Layout::Compute(min, 1u << 20, 0, &l).ok()) << min;
  EXPECT_EQ(l.block_count, 2u);
  EXPECT_FALSE(Layout::Compute(min - 1, 1u << 20, 0, &l).ok()) << min;
}

TEST(Layout, BlockSizeMustBePowerOfTwoInRange) {
  Layout l;
  for (uint32_t bs : {0u, 2048u, 4095u, 6144u, 12288u, 2u << 20}) {
    Status s = Layout::Compute(64ull << 20, bs, 0, &l);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << bs;
    EXPECT_NE(s.message().find("power of two"), std::string::npos) << s.ToString();
  }
  ASSERT_TRUE(Layout::Compute(64ull << 20, 4096, 0, &l).ok());
  EXPECT_EQ(l.block_size, 4096u);
  ASSERT_TRUE(Layout::Compute(64ull << 20, 1u << 20, 0, &l).ok());
  EXPECT_EQ(l.block_size, 1u << 20);
  EXPECT_EQ(l.block_count, ((64ull << 20) - 8192 - (1u << 20)) >> 20);
}

TEST(Layout, StrtabSizeMustBeMultipleOf4096) {
  Layout l;
  EXPECT_EQ(Layout::Compute(1 << 20, 4096, 5000, &l).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(Layout::Compute(1 << 20, 4096, 32ull << 20, &l).code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace logsink::test
