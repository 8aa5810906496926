// record_filter_test.cc: RecordFilter (logsink/storage/record_filter.h), the
// one filter a reader skips blocks by and decides records with: Match on
// each field, and RingReader::SetFilter skipping only blocks that hold no
// record Match accepts (a filtered read keeps exactly the records a full
// read keeps), while selective filters do skip blocks.
#include "logsink/storage/record_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/records.h"
#include "common/seed.h"
#include "fault_env.h"
#include "logsink/storage/ring.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

const std::string kPath = "/ring";
constexpr uint64_t kSec = 1000000000ull;

Record At(uint8_t level) {
  Record r;
  r.site.level = level;
  r.site_known = true;
  r.site.file = "a.c";
  r.app = "web";
  r.comm = "nginx";
  r.unit = "web.service";
  r.pid = 10;
  r.uid = 1000;
  r.boot_id = {7};
  r.ts_ns = 1000 * kSec;
  return r;
}

TEST(RecordFilter, EachFieldDecidesAlone) {
  RecordFilter f;
  EXPECT_FALSE(f.any());
  EXPECT_TRUE(f.Match(At(0)));
  EXPECT_TRUE(f.Match(At(7)));
  EXPECT_FALSE(f.Match(At(8))) << "a site that claims level 8 matches no filter";

  f.levels = RecordFilter::LevelRange(3, 4);
  EXPECT_EQ(f.levels, 0x18);
  EXPECT_TRUE(f.any());
  EXPECT_FALSE(f.Match(At(2)));
  EXPECT_TRUE(f.Match(At(3)));
  EXPECT_FALSE(f.Match(At(5)));
  Record dropped = At(7);
  dropped.kind = Record::Kind::kDropped;  // counts as warning
  EXPECT_TRUE(f.Match(dropped));
  f.levels = RecordFilter::LevelRange(0, 3);
  EXPECT_FALSE(f.Match(dropped));

  f = RecordFilter();
  f.apps = {"sshd", "web"};
  EXPECT_TRUE(f.Match(At(6)));
  f.apps = {"nginx"};
  EXPECT_FALSE(f.Match(At(6))) << "comm counts only when the label is empty";
  Record unlabelled = At(6);
  unlabelled.app = {};
  EXPECT_TRUE(f.Match(unlabelled));
  // An empty name matches a record with neither a label nor a comm only.
  f.apps = {""};
  EXPECT_FALSE(f.Match(unlabelled)) << "its comm is nginx";
  Record nameless = unlabelled;
  nameless.comm = {};
  EXPECT_TRUE(f.Match(nameless));

  f = RecordFilter();
  f.pids = {11};
  EXPECT_FALSE(f.Match(At(6)));
  f.pids = {11, 10};
  EXPECT_TRUE(f.Match(At(6)));
  f.uids = {0};
  EXPECT_FALSE(f.Match(At(6))) << "different fields must all match";

  f = RecordFilter();
  f.units = {"web"};
  EXPECT_FALSE(f.Match(At(6))) << "units compare exactly";
  f.units = {"web.service"};
  EXPECT_TRUE(f.Match(At(6)));

  f = RecordFilter();
  f.boots = {{8}};
  EXPECT_FALSE(f.Match(At(6)));
  f.boots.push_back({7});
  EXPECT_TRUE(f.Match(At(6)));

  f = RecordFilter();
  f.kernel_only = true;
  EXPECT_TRUE(f.any());
  EXPECT_FALSE(f.Match(At(6)));
  Record kernel = At(6);
  kernel.site.file = "kernel";
  EXPECT_TRUE(f.Match(kernel));
  kernel.site_known = false;
  EXPECT_FALSE(f.Match(kernel));
}

TEST(RecordFilter, TimesAreTheOnesTheWriterVouchesFor) {
  RecordFilter f;
  f.since_ns = 2000 * kSec;
  Record r = At(6);
  r.ts_ns = 2000 * kSec;
  EXPECT_TRUE(f.Match(r));
  r.ts_ns = 2000 * kSec - 1;
  EXPECT_FALSE(f.Match(r));
  // A clock far behind the writer's: the block's open time counts.
  r.ts_ns = 5 * kSec;
  r.block_opened_ns = 2100 * kSec;
  EXPECT_TRUE(f.Match(r));
  f.until_ns = 2050 * kSec;
  EXPECT_FALSE(f.Match(r));
  r.block_opened_ns = 0;
  EXPECT_FALSE(f.Match(r));
}

// Records of several sources, levels, units, boots and clocks in a ring of
// small blocks; then random filters.
class FilteredRead : public testing::Test {
 protected:
  void SetUp() override {
    seed_ = TestSeed();
    std::mt19937_64 rng(seed_);
    const Source sources[] = {
        {1, 10, 1000, 1000, "web", "nginx", "web.service"},
        {2, 11, 1000, 1000, "db", "postgres", "db.service"},
        {3, 12, 1001, 1001, "", "cron", "cron.service"},
        {4, 0, 0, 0, "kernel", "kernel", ""},
        {5, 13, 1002, 1002, "rare", "rare", "rare.scope"},
    };
    uint64_t ts = 1700000000ull * kSec;
    for (uint8_t boot = 1; boot <= 2; boot++) {
      env_.boot_id = {boot};
      env_.now_ns = ts;
      std::unique_ptr<RingWriter> w = OpenRing(&env_, kPath, 128);  // the same ring again
      ASSERT_TRUE(w);
      uint32_t sites[8];
      for (uint8_t l = 0; l < 8; l++)
        sites[l] = w->Intern(Site{l, 1, "%s", l == 3 ? "kernel" : "a.c"});
      for (int i = 0; i < 4000; i++) {
        ts += (1 + rng() % 20) * 1000000ull;
        env_.now_ns = ts;
        // Runs of one source, so that blocks differ in what they hold; now
        // and then a record of a rare one.
        const Source &src = rng() % 1500 == 0 ? sources[4] : sources[(i / 150 + rng() % 2) % 4];
        const uint8_t level = uint8_t(rng() % 100 < 90 ? 6 + rng() % 2 : rng() % 6);
        uint64_t rts = rng() % 50 == 0 ? ts - 3600 * kSec : ts;  // a clock an hour behind
        if (rng() % 300 == 0) {
          ASSERT_TRUE(w->AppendDropped(src, rts, 3, rts).ok());
          continue;
        }
        ASSERT_TRUE(AppendRecord(w.get(), src, sites[level], "s",
                                 Args().Str("line " + std::to_string(i)).str(), rts)
                        .ok());
      }
      ASSERT_TRUE(w->Flush().ok());
      ts += 3600 * kSec;
    }
    first_ts_ = 1700000000ull * kSec;
    last_ts_ = ts;
  }

  // The numbers of the records Match accepts, reading with the filter set
  // (or not), and the blocks the reader skipped.
  std::vector<uint64_t> Read(const RecordFilter &f, bool skip, bool use_index, uint64_t *skipped) {
    std::unique_ptr<RingReader> r = OpenReader(&env_, kPath, &rep_);
    std::vector<uint64_t> out;
    if (!r) return out;
    if (skip) r->SetFilter(&f, use_index);
    Record rec;
    Status s;
    while ((s = r->Next(&rec)).ok()) {
      if (f.Match(rec)) out.push_back(rec.seq);
    }
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
    *skipped = r->blocks_skipped();
    return out;
  }

  FaultEnv env_;
  RecordingReporter rep_;
  uint64_t seed_ = 0, first_ts_ = 0, last_ts_ = 0;
};

TEST_F(FilteredRead, SkipsOnlyBlocksWithoutAMatch) {
  std::mt19937_64 rng(seed_);
  uint64_t skipped_any = 0;
  for (int q = 0; q < 40; q++) {
    RecordFilter f;
    if (rng() % 3 == 0) f.levels = RecordFilter::LevelRange(0, int(rng() % 8));
    if (rng() % 3 == 0) f.apps = {rng() % 2 ? "rare" : rng() % 2 ? "web" : "cron"};
    if (rng() % 4 == 0) f.uids = {uint32_t(1000 + rng() % 3)};
    if (rng() % 4 == 0) f.pids = {uint32_t(10 + rng() % 4)};
    if (rng() % 4 == 0) f.units = {rng() % 2 ? "db.service" : "rare.scope"};
    if (rng() % 4 == 0) f.boots = {{uint8_t(1 + rng() % 2)}};
    if (rng() % 5 == 0) f.kernel_only = true;
    if (rng() % 3 == 0) {
      f.since_ns = first_ts_ + rng() % (last_ts_ - first_ts_);
      if (rng() % 2) f.until_ns = *f.since_ns + rng() % (60 * kSec);
    }
    uint64_t skipped = 0, skipped_none = 0, skipped_headers = 0;
    const std::vector<uint64_t> want = Read(f, false, true, &skipped_none);
    EXPECT_EQ(Read(f, true, true, &skipped), want) << "query " << q;
    EXPECT_EQ(Read(f, true, false, &skipped_headers), want) << "query " << q << " (headers)";
    EXPECT_EQ(skipped_none, 0u);
    if (!f.any()) {
      EXPECT_EQ(skipped, 0u);
    }
    skipped_any += skipped;
  }
  EXPECT_GT(skipped_any, 0u);
  EXPECT_EQ(rep_.corruptions(), 0u) << rep_.Dump();
}

TEST_F(FilteredRead, SelectiveFiltersSkipMostBlocks) {
  std::unique_ptr<RingReader> r = OpenReader(&env_, kPath, nullptr);
  ASSERT_TRUE(r);
  RingReader::Summary sum;
  ASSERT_TRUE(r->Summarize(&sum).ok());
  RecordFilter rare;
  rare.apps = {"rare"};
  uint64_t skipped = 0, all = 0;
  Read(rare, true, true, &skipped);
  Read(RecordFilter(), true, true, &all);
  EXPECT_EQ(all, 0u) << "a filter that matches everything skips nothing";
  EXPECT_GT(skipped, sum.blocks_used / 2) << "of " << sum.blocks_used;
}

}  // namespace
}  // namespace logsink::test
