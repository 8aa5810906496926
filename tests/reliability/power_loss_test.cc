// power_loss_test.cc: storage's RingWriter driven the way each logsinkd fsync
// policy drives it (never: no Sync; block: Sync after every sealed block;
// interval: Sync every K appends as a proxy for the timer), with a flush of
// the partial block every F appends (the flush timer) and sometimes a write
// cut mid-way (the process dies); then power is lost at a random point (the
// fault-injecting Env keeps only synced bytes) and the ring is reopened: it
// opens, verifies, holds no garbage (exactly a prefix of what was appended)
// and lost no more than the policy promises.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "logsink/storage/ring.h"
#include "reliability/rel_util.h"
#include "storage/fault_env.h"
#include "storage/ring_test_util.h"

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

const std::string kPath = "/ring";
constexpr uint32_t kBlocks = 64, kBs = 4096;

enum class Policy { kNever, kBlock, kInterval };
const char *Name(Policy p) {
  return p == Policy::kNever ? "never" : p == Policy::kBlock ? "block" : "interval";
}
const char *Promise(Policy p) {
  switch (p) {
    case Policy::kNever:
      return "anything not synced may be lost (here: everything after creation)";
    case Policy::kBlock:
      return "at most the current partial block + the block being written";
    default:
      return "at most what was appended since the last sync";
  }
}

struct Worst {
  uint64_t trials = 0, appended = 0, recovered = 0, max_loss = 0, max_loss_blocks = 0, cuts = 0;
  uint64_t max_unsynced = 0;  // largest loss the promise allowed
};

// One power loss trial; fails the test on a broken promise.
void Trial(Policy pol, std::mt19937 &rng, Worst *w) {
  auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  FaultEnv env;
  WriterOptions o;
  o.codec = LS_CODEC_NONE;  // the block layout as it is (compression: ring_compress_test)
  o.file_size = RingSize(kBlocks, kBs);
  o.block_size = kBs;
  std::unique_ptr<RingWriter> wr;
  ASSERT_TRUE(RingWriter::Open(&env, kPath, o, &wr).ok());
  Source src{1, 100, 1000, 1000, "pl", "pl"};
  const Site site{6, 7, "pl %d %s", "power.c"};
  uint32_t sid = wr->Intern(site);
  ASSERT_NE(sid, 0u);
  ASSERT_TRUE(
      wr->Sync()
          .ok());  // the daemon's start: the interned site reaches the disk with the first sync

  const int n = rnd(1, 900);           // appends before the power goes (no lap: ~1200 fit)
  const int flush_every = rnd(1, 60);  // flush timer proxy
  const int sync_every = rnd(5, 120);  // interval policy proxy
  if (rnd(0, 1)) {                     // the process dies inside a later write
    env.cut_write = env.writes + rnd(0, 40);
    env.cut_after = size_t(rnd(0, int(kBs)));
    w->cuts++;
  }
  std::vector<std::string> model;     // args of each appended record, by seq
  std::vector<uint64_t> model_block;  // the block each record went into
  uint64_t written = 0;               // records whose bytes reached the file (page cache)
  uint64_t durable = 0;               // records the policy promises to keep
  uint64_t block = wr->current_block_seq();
  for (int i = 0; i < n; i++) {
    std::string args =
        Args().Int(i).Str(std::string(size_t(rnd(0, 300)), char('a' + i % 26))).str();
    RecordIn in;
    in.source = &src;
    in.tid = 1;
    in.site_id = sid;
    in.signature = "is";
    in.ts_ns = 1000 + uint64_t(i);
    in.args = reinterpret_cast<const uint8_t *>(args.data());
    in.args_len = args.size();
    if (!wr->Append(in).ok()) break;  // died while sealing a block
    model.push_back(args);
    model_block.push_back(wr->current_block_seq());
    if (wr->current_block_seq() != block) {  // a block was sealed and written
      block = wr->current_block_seq();
      written = model.size() - 1;
      if (pol == Policy::kBlock) {
        if (!wr->Sync().ok()) break;
        durable = written;
      }
    }
    if ((i + 1) % flush_every == 0) {
      if (!wr->Flush().ok()) break;
      written = model.size();
    }
    if (pol == Policy::kInterval && (i + 1) % sync_every == 0) {
      if (!wr->Sync().ok()) break;
      durable = written;
    }
  }
  wr.reset();  // the process is gone; nothing more is written
  env.PowerLoss();
  env.fail_writes = false;
  env.cut_write = -1;

  // The ring opens and verifies.
  RecordingReporter rep;
  std::unique_ptr<RingReader> r;
  ReaderOptions ro;
  ro.crc_retries = 0;
  Status s = RingReader::Open(&env, kPath, &rep, ro, &r);
  ASSERT_TRUE(s.ok()) << Name(pol) << ": " << s.ToString();
  s = r->Verify();
  ASSERT_TRUE(s.ok()) << Name(pol) << ": " << s.ToString() << "\n" << rep.Dump();
  ASSERT_TRUE(r->SeekOldest().ok());
  std::vector<OwnedRecord> got = ReadAll(r.get());
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();

  // No garbage: exactly a prefix of what was appended, in order.
  ASSERT_LE(got.size(), model.size());
  for (size_t k = 0; k < got.size(); k++) {
    ASSERT_EQ(got[k].seq, k) << Name(pol);
    ASSERT_EQ(got[k].args, model[k]) << Name(pol) << " record " << k;
    ASSERT_EQ(got[k].fmt, "pl %d %s");
  }
  // The promise.
  EXPECT_GE(got.size(), durable) << Name(pol) << ": lost records the policy promised to keep";
  uint64_t loss = model.size() - got.size();
  uint64_t lost_blocks = 0;
  if (loss)
    lost_blocks =
        model_block.back() - model_block[got.size()] + 1;  // blocks the lost records were in
  if (pol == Policy::kBlock) {
    EXPECT_LE(lost_blocks, 2u) << "block policy lost more than 2 blocks";
  }

  // A writer reopens on it and continues the sequence after the last kept record.
  std::unique_ptr<RingWriter> w2;
  ASSERT_TRUE(RingWriter::Open(&env, kPath, o, &w2).ok());
  EXPECT_EQ(w2->next_record_seq(), got.size()) << Name(pol);

  w->trials++;
  w->appended += model.size();
  w->recovered += got.size();
  w->max_loss = std::max(w->max_loss, loss);
  w->max_loss_blocks = std::max(w->max_loss_blocks, lost_blocks);
  w->max_unsynced = std::max(w->max_unsynced, uint64_t(model.size() - durable));
}

class PowerLoss : public ::testing::TestWithParam<Policy> {};

TEST_P(PowerLoss, LossStaysWithinThePolicysPromise) {
  const Policy pol = GetParam();
  const int trials = int(Scaled(400, 100));
  std::mt19937 rng(TestSeed());
  Worst w;
  for (int t = 0; t < trials; t++) {
    Trial(pol, rng, &w);
    if (HasFatalFailure() || HasFailure()) return;
  }
  Figures(
      "power_loss policy=%s trials=%llu (write cut mid-way in %llu) promise: %s; "
      "appended=%llu recovered=%llu worst loss=%llu records in %llu block(s) "
      "(worst allowed by the promise in a trial: %llu records)",
      Name(pol), (unsigned long long)w.trials, (unsigned long long)w.cuts, Promise(pol),
      (unsigned long long)w.appended, (unsigned long long)w.recovered,
      (unsigned long long)w.max_loss, (unsigned long long)w.max_loss_blocks,
      (unsigned long long)w.max_unsynced);
}

INSTANTIATE_TEST_SUITE_P(Policies, PowerLoss,
                         ::testing::Values(Policy::kNever, Policy::kBlock, Policy::kInterval),
                         [](const auto &info) { return std::string(Name(info.param)); });

}  // namespace
}  // namespace logsink::test
