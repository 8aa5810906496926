// ring_follow_test.cc: a reader following a writer in the same process,
// alternating steps while the writer wraps the ring many times with flushes
// of partial blocks. Asserts the reader never returns a torn, stale or
// out-of-order record and that Lost counts are exact: predicted from a model
// of what is on disk (drain-per-step test), and equal to every gap in the
// returned sequence numbers (record-at-a-time test).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/seed.h"
#include "fault_env.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

const std::string kPath = "/ring";

// A writer plus a model of which of its records are on disk.
class Tracked {
 public:
  Tracked(FaultEnv *env, uint32_t blocks) {
    WriterOptions o;
    o.codec = LS_CODEC_NONE;  // the block layout as it is (compression: ring_compress_test)
    o.file_size = RingSize(blocks);
    o.block_size = 4096;
    EXPECT_TRUE(RingWriter::Open(env, kPath, o, &w_).ok());
    count_ = w_->layout().block_count;
    site_ = w_->Intern(Site{6, 1, "%s", "f.c"});
  }
  void Add(std::mt19937_64 &rng) {
    uint64_t len = rng() % 4 == 0 ? rng() % 2400 : rng() % 200;
    std::string args =
        Args()
            .Str(std::string(len, char('a' + all_.size() % 26)) + std::to_string(all_.size()))
            .str();
    RecordIn in;
    in.source = &src_;
    in.site_id = site_;
    in.signature = "s";
    in.ts_ns = all_.size();
    in.args = reinterpret_cast<const uint8_t *>(args.data());
    in.args_len = args.size();
    uint64_t before = w_->current_block_seq();
    uint64_t seq = w_->next_record_seq();
    ASSERT_TRUE(w_->Append(in).ok());
    uint64_t block = w_->current_block_seq();
    if (block != before) on_disk_[before] = per_block_[before];  // sealed: written whole
    per_block_[block]++;
    all_.push_back(Model{seq, block, src_.id, 0, seq, args});
  }
  void Flush() {
    ASSERT_TRUE(w_->Flush().ok());
    uint64_t b = w_->current_block_seq();
    if (per_block_.count(b)) on_disk_[b] = per_block_[b];
  }
  // Record sequence numbers present on disk now: [first, end).
  void Present(uint64_t *first, uint64_t *end) const {
    *first = *end = 0;
    if (on_disk_.empty()) return;
    uint64_t newest = on_disk_.rbegin()->first;
    uint64_t lowest = newest + 1 >= count_ ? newest + 1 - count_ : 0;
    bool any = false;
    for (const Model &m : all_) {
      auto it = on_disk_.find(m.block);
      if (m.block < lowest || it == on_disk_.end()) continue;
      uint64_t index = m.seq - FirstOf(m.block);
      if (index >= it->second) continue;
      if (!any) {
        *first = m.seq;
        any = true;
      }
      *end = m.seq + 1;
    }
  }
  const std::vector<Model> &all() const { return all_; }
  RingWriter *w() { return w_.get(); }

 private:
  uint64_t FirstOf(uint64_t block) const {
    for (const Model &m : all_) {
      if (m.block == block) return m.seq;
    }
    return 0;
  }
  std::unique_ptr<RingWriter> w_;
  uint32_t count_ = 0, site_ = 0;
  Source src_{1, 2, 3, 4, "follow", "follow"};
  std::vector<Model> all_;
  std::map<uint64_t, uint64_t> per_block_, on_disk_;  // block -> records (appended, on disk)
};

class Follow : public ::testing::TestWithParam<uint32_t> {};

// The reader both follow tests use: a CRC mismatch is reported at once,
// without the re-reads (and their sleeps) a reader racing a writer makes.
Status OpenWithoutRetries(Env *env, Reporter *rep, std::unique_ptr<RingReader> *r) {
  ReaderOptions ro;
  ro.crc_retries = 0;
  return RingReader::Open(env, kPath, rep, ro, r);
}

TEST_P(Follow, DrainEachStepLostIsExact) {
  std::mt19937_64 rng(TestSeed(GetParam()));
  FaultEnv env;
  Tracked t(&env, 4);
  RecordingReporter rep;
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(OpenWithoutRetries(&env, &rep, &r).ok());
  // Opened on an empty ring: every record from 0 on is expected.
  uint64_t next = 0, total_lost = 0, returned = 0;
  int lost_steps = 0;
  for (int step = 0; step < 400; step++) {
    int n = int(rng() % (step % 50 < 5 ? 60 : 8));  // now and then a burst that laps the reader
    for (int i = 0; i < n; i++) {
      t.Add(rng);
    }
    if (rng() % 2) {
      t.Flush();
    }
    uint64_t first, end;
    t.Present(&first, &end);
    uint64_t want_lost = next < first ? first - next : 0;
    uint64_t want_from = std::max(next, first);
    uint64_t lost_before = rep.lost;
    auto got = ReadAll(r.get());
    ASSERT_EQ(rep.lost - lost_before, want_lost) << "step " << step;
    if (want_lost) lost_steps++;
    ASSERT_EQ(got.size(), end > want_from ? end - want_from : 0) << "step " << step;
    for (size_t i = 0; i < got.size(); i++) {
      ASSERT_EQ(got[i].seq, want_from + i);
      ASSERT_EQ(got[i].args, t.all()[got[i].seq].args) << "seq " << got[i].seq;
    }
    if (!got.empty()) next = got.back().seq + 1;
    total_lost += want_lost;
    returned += got.size();
  }
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  EXPECT_GT(t.w()->stats().wraps, 10u);
  EXPECT_GT(lost_steps, 3);  // the bursts did lap the reader
  EXPECT_EQ(rep.lost, total_lost);
  // Every record appended and flushed was either returned or reported lost.
  t.Flush();
  auto rest = ReadAll(r.get());
  returned += rest.size();
  EXPECT_EQ(returned + rep.lost, t.all().size());
}

TEST_P(Follow, RecordAtATimeGapsEqualLost) {
  std::mt19937_64 rng(TestSeed(GetParam() * 7919));
  FaultEnv env;
  Tracked t(&env, 3);
  RecordingReporter rep;
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(OpenWithoutRetries(&env, &rep, &r).ok());
  uint64_t expect = 0, returned = 0;  // opened on an empty ring: expects record 0 first
  Record rec;
  for (int step = 0; step < 3000; step++) {
    if (rng() % 2) {
      int n = int(rng() % (step % 300 < 10 ? 30 : 3));
      for (int i = 0; i < n; i++) {
        t.Add(rng);
      }
      if (rng() % 3 == 0) {
        t.Flush();
      }
      continue;
    }
    int reads = int(rng() % 4);
    for (int i = 0; i < reads; i++) {
      uint64_t lost_before = rep.lost;
      Status s = r->Next(&rec);
      if (s.IsNotFound()) break;
      ASSERT_TRUE(s.ok()) << s.ToString();
      returned++;
      // Contents are exactly what was appended under that number.
      ASSERT_LT(rec.seq, t.all().size());
      ASSERT_EQ(std::string(rec.args), t.all()[rec.seq].args) << rec.seq;
      ASSERT_EQ(rec.ts_ns, t.all()[rec.seq].ts);
      ASSERT_GE(rec.seq, expect) << "out of order";
      ASSERT_EQ(rep.lost - lost_before, rec.seq - expect) << "gap vs Lost at " << rec.seq;
      expect = rec.seq + 1;
    }
  }
  t.Flush();
  auto rest = ReadAll(r.get());
  returned += rest.size();
  ASSERT_FALSE(rest.empty() && rest.back().seq + 1 != t.all().size());
  EXPECT_EQ(returned + rep.lost, t.all().size());
  EXPECT_GT(rep.lost, 0u);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
}

TEST(FollowBasic, PartialBlockGrowthReturnsOnlyNewRecords) {
  FaultEnv env;
  Tracked t(&env, 4);
  std::mt19937_64 rng(TestSeed(1));
  std::unique_ptr<RingReader> r;
  RecordingReporter rep;
  ASSERT_TRUE(RingReader::Open(&env, kPath, &rep, &r).ok());
  Record rec;
  EXPECT_TRUE(r->Next(&rec).IsNotFound());  // empty ring
  t.Add(rng);
  EXPECT_TRUE(r->Next(&rec).IsNotFound());  // not flushed yet
  t.Flush();
  ASSERT_TRUE(r->Next(&rec).ok());
  EXPECT_EQ(rec.seq, 0u);
  EXPECT_TRUE(r->Next(&rec).IsNotFound());
  t.Add(rng);
  t.Add(rng);
  t.Flush();
  ASSERT_TRUE(r->Next(&rec).ok());
  EXPECT_EQ(rec.seq, 1u);
  ASSERT_TRUE(r->Next(&rec).ok());
  EXPECT_EQ(rec.seq, 2u);
  EXPECT_EQ(rec.block_seq, 0u);
  EXPECT_TRUE(r->Next(&rec).IsNotFound());
  // SeekEnd then follow: only records appended afterwards.
  ASSERT_TRUE(r->SeekEnd().ok());
  EXPECT_TRUE(r->Next(&rec).IsNotFound());
  t.Add(rng);
  t.Flush();
  ASSERT_TRUE(r->Next(&rec).ok());
  EXPECT_EQ(rec.seq, 3u);
  EXPECT_EQ(rep.lost, 0u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, Follow, ::testing::Values(1u, 2u, 3u, 4u));

}  // namespace
}  // namespace logsink::test
