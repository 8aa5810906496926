// ring_damage_cost_test.cc: reading a damaged ring costs work linear in the
// blocks read, however many are damaged (each damaged block used to
// trigger newest-block searches and CRC retries with sleeps, so 400 bad
// blocks of an 8 MiB ring took 100 s to `cat`). Cost is counted in reads
// through FaultEnv and in the reader's retry sleeps, never timed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/seed.h"
#include "fault_env.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

const std::string kPath = "/ring";
constexpr uint32_t kBlocks = 512, kBs = 4096;

struct Cost {
  int64_t reads = 0, sleeps = 0;
  std::vector<OwnedRecord> records;
  size_t corruptions = 0;
  uint64_t lost = 0;
};

// Fills a ring of about 512 blocks past one lap (the newest block sits
// mid-ring), four 950-byte records per block. Returns its layout and the
// newest block.
void Fill(FaultEnv *env, Layout *layout, uint64_t *newest) {
  std::unique_ptr<RingWriter> w = OpenRing(env, kPath, kBlocks, kBs);
  ASSERT_TRUE(w);
  uint32_t site = w->Intern(Site{6, 1, "%s", "f.c"});
  Source src{1, 1, 1, 1, "a", "b"};
  std::string args = Args().Str(std::string(950, 'z')).str();
  for (int i = 0; i < int(kBlocks) * 6; i++)
    ASSERT_TRUE(AppendRecord(w.get(), src, site, "s", args, 1000 + uint64_t(i)).ok());
  ASSERT_TRUE(w->Flush().ok());
  *layout = w->layout();
  *newest = w->current_block_seq();
}

// Reads everything with the default reader options (as logctl does).
Cost ReadCost(FaultEnv *env) {
  RecordingReporter rep;
  std::unique_ptr<RingReader> r;
  Cost c;
  env->reads = 0;
  env->sleeps = 0;
  EXPECT_TRUE(RingReader::Open(env, kPath, &rep, &r).ok());
  if (!r) return c;
  c.records = ReadAll(r.get());
  c.reads = env->reads;
  c.sleeps = env->sleeps;
  c.corruptions = rep.corruptions();
  c.lost = rep.lost;
  return c;
}

TEST(DamageCost, ReadsStayLinearInDamagedBlocks) {
  FaultEnv env;
  Layout l;
  uint64_t newest = 0;
  Fill(&env, &l, &newest);
  ASSERT_GT(newest, uint64_t(l.block_count));  // lapped: the newest block is mid-ring
  const Cost intact = ReadCost(&env);
  ASSERT_EQ(intact.corruptions, 0u);
  ASSERT_EQ(intact.records.size(), 4u * l.block_count);
  std::map<uint64_t, size_t> per_block;  // block -> records in it
  for (const OwnedRecord &r : intact.records) per_block[r.block_seq]++;
  uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  // Damage 50, then 200, then 400 distinct blocks, never the newest two: a
  // reader treats damage there as a write it raced (it retries) and stops.
  std::vector<uint64_t> blocks;
  for (uint64_t b = newest + 1 - l.block_count; b + 2 <= newest; b++) blocks.push_back(b);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  size_t damaged = 0, lost_records = 0;
  for (size_t want : {50u, 200u, 400u}) {
    for (; damaged < want; damaged++) {
      // One flipped byte in the body: the header stays intact, only the CRC tells.
      const uint64_t b = blocks[damaged];
      env.Data(kPath)[l.SlotOffset(b) + 1000] ^= 0x5a;
      lost_records += per_block[b];
    }
    const Cost c = ReadCost(&env);
    std::printf(
        "[figures] %zu damaged of %u blocks: %lld reads (intact %lld), %zu records, "
        "%zu reported\n",
        want, l.block_count, (long long)c.reads, (long long)intact.reads, c.records.size(),
        c.corruptions);
    EXPECT_EQ(c.corruptions, want);
    EXPECT_EQ(c.records.size(), intact.records.size() - lost_records);
    EXPECT_EQ(c.lost, 0u);  // damage is reported, never counted as lost
    // Each damaged block costs a bounded number of reads of its own (the
    // block and one re-read): no newest-block search per damaged block.
    EXPECT_LE(c.reads, intact.reads + int64_t(4 * want)) << want;
    // Nobody is writing: no pause to wait for a write in progress.
    EXPECT_EQ(c.sleeps, 0) << want;
  }
}

// The newest 100 blocks damaged (a torn tail after a crash, or worse): each
// could be a write in progress, so the reader pauses and re-reads, but a
// bounded number of times for the whole read, not once per damaged block.
TEST(DamageCost, DamagedNewestBlocksCostBoundedRetries) {
  FaultEnv env;
  Layout l;
  uint64_t newest = 0;
  Fill(&env, &l, &newest);
  const Cost intact = ReadCost(&env);
  std::map<uint64_t, size_t> per_block;
  for (const OwnedRecord &r : intact.records) per_block[r.block_seq]++;
  size_t lost_records = 0;
  for (uint64_t b = newest - 99; b <= newest; b++) {
    env.Data(kPath)[l.SlotOffset(b) + 1000] ^= 0x5a;
    lost_records += per_block[b];
  }
  const Cost c = ReadCost(&env);
  std::printf("[figures] newest 100 of %u blocks damaged: %lld reads (intact %lld), %lld pauses\n",
              l.block_count, (long long)c.reads, (long long)intact.reads, (long long)c.sleeps);
  EXPECT_EQ(c.records.size(), intact.records.size() - lost_records);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_GE(c.corruptions, 1u);  // the torn newest block is reported
  // The newest-block search runs at open, at the slot that claims the block
  // after the newest found, and at the end of the read: each walks back over
  // the 100 blocks, pausing only at the top; the last block read pauses too.
  const int retries = ReaderOptions().crc_retries;
  EXPECT_LE(c.sleeps, 4 * retries);
  EXPECT_LE(c.reads, intact.reads + 4 * (100 + retries) + 64);
}

}  // namespace
}  // namespace logsink::test
