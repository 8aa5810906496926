// ring_property_test.cc: wrap the ring many times with random record sizes,
// flushes and writer reopens (several seeds) and compare the reader with a
// model: exactly the records of the last block_count blocks, in order, with
// contiguous sequence numbers; SeekLast/SeekTime agree with the model; the
// file never changes size.
#include <gtest/gtest.h>

#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "common/seed.h"
#include "fault_env.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

struct Case {
  uint32_t seed, blocks, block_size;
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << "seed " << c.seed << ", " << c.blocks << " blocks of " << c.block_size;
}

class Property : public ::testing::TestWithParam<Case> {};

std::vector<Model> Expected(const std::vector<Model> &all, uint32_t block_count) {
  std::vector<Model> out;
  if (all.empty()) return out;
  uint64_t newest = all.back().block;
  for (const Model &m : all) {
    if (m.block + block_count > newest) out.push_back(m);
  }
  return out;
}

void Compare(const std::vector<OwnedRecord> &got, const std::vector<Model> &want,
             const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    SCOPED_TRACE(testing::Message() << what << " record " << i);
    ASSERT_EQ(got[i].seq, want[i].seq);
    EXPECT_EQ(got[i].block_seq, want[i].block);
    EXPECT_EQ(got[i].ts_ns, want[i].ts);
    EXPECT_EQ(got[i].tid, want[i].tid);
    EXPECT_EQ(got[i].source_id, want[i].source);
    EXPECT_EQ(got[i].args, want[i].args);
    EXPECT_TRUE(got[i].site_known);
    EXPECT_EQ(got[i].fmt, "%s");
    if (i) {
      ASSERT_EQ(got[i].seq, got[i - 1].seq + 1);
    }
  }
}

TEST_P(Property, WrapManyTimes) {
  const Case c = GetParam();
  std::mt19937_64 rng(TestSeed(c.seed));
  FaultEnv env;
  const std::string path = "/ring";
  WriterOptions o;
  o.codec = LS_CODEC_NONE;  // the block layout as it is (compression: ring_compress_test)
  o.block_size = c.block_size;
  o.file_size = RingSize(c.blocks, c.block_size) + rng() % c.block_size;  // + tail padding
  std::unique_ptr<RingWriter> w;
  ASSERT_TRUE(RingWriter::Open(&env, path, o, &w).ok());
  const uint32_t count = w->layout().block_count;
  ASSERT_EQ(count, c.blocks);
  uint32_t site = w->Intern(Site{6, 1, "%s", "p.c"});
  Source srcs[3] = {{1, 10, 0, 0, "a", "ca"}, {2, 20, 0, 0, "bb", "cb"}, {3, 30, 0, 0, "", ""}};
  std::vector<Model> model;
  uint64_t ts = 1000;
  const int n = 2500;
  for (int i = 0; i < n; i++) {
    size_t len = rng() % 8 == 0 ? rng() % (c.block_size / 2) : rng() % 120;
    std::string payload(len, char('a' + i % 26));
    std::string args = Args().Str(payload).str();
    const Source &src = srcs[rng() % 3];
    uint64_t tid = rng() % 3;
    ts += rng() % 1000;
    Model m{w->next_record_seq(), 0, src.id, tid, ts, args};
    RecordIn in;
    in.source = &src;
    in.tid = tid;
    in.site_id = site;
    in.signature = "s";
    in.ts_ns = ts;
    in.args = reinterpret_cast<const uint8_t *>(args.data());
    in.args_len = args.size();
    ASSERT_TRUE(w->Append(in).ok());
    m.block = w->current_block_seq();
    model.push_back(m);
    if (rng() % 10 == 0) {
      ASSERT_TRUE(w->Flush().ok());
    }
    if (rng() % 200 == 0) {  // restart the writer: it must continue exactly
      ASSERT_TRUE(w->Flush().ok());
      uint64_t next = w->next_record_seq(), blk = w->current_block_seq();
      w.reset();
      ASSERT_TRUE(RingWriter::Open(&env, path, o, &w).ok());
      ASSERT_EQ(w->next_record_seq(), next);
      ASSERT_EQ(w->current_block_seq(), blk);
      ASSERT_EQ(w->Intern(Site{6, 1, "%s", "p.c"}), site);
    }
    if (i % 500 == 499 || i == n - 1) {
      ASSERT_TRUE(w->Flush().ok());
      RecordingReporter rep;
      std::unique_ptr<RingReader> r;
      ASSERT_TRUE(RingReader::Open(&env, path, &rep, &r).ok());
      auto want = Expected(model, count);
      Compare(ReadAll(r.get()), want, "oldest");
      EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
      EXPECT_EQ(rep.lost, 0u);
      // The last k records, for a few k (including more than stored).
      for (uint64_t k : {uint64_t(0), uint64_t(1), uint64_t(rng() % 50), uint64_t(want.size()),
                         uint64_t(want.size() + 5)}) {
        ASSERT_TRUE(r->SeekLast(k).ok());
        size_t from = want.size() - std::min<size_t>(k, want.size());
        Compare(ReadAll(r.get()), std::vector<Model>(want.begin() + from, want.end()), "last");
      }
      // SeekTime: the reader starts at the first block that may hold ts.
      const Model &pick = want[rng() % want.size()];
      ASSERT_TRUE(r->SeekTime(pick.ts).ok());
      auto from_t = ReadAll(r.get());
      ASSERT_FALSE(from_t.empty());
      EXPECT_LE(from_t.front().seq, pick.seq);  // nothing at or after ts is skipped
      EXPECT_EQ(from_t.back().seq, want.back().seq);
      uint64_t first_block = from_t.front().block_seq;
      EXPECT_EQ(from_t.front().seq, [&] {  // ... and it starts at a block boundary
        for (const Model &m : want)
          if (m.block == first_block) return m.seq;
        return uint64_t(~0ull);
      }());
      for (const Model &m : want) {  // the block before it ends before ts
        if (m.block + 1 == first_block) {
          EXPECT_LT(m.ts, pick.ts);
        }
      }
      EXPECT_TRUE(r->Verify().ok());
      ASSERT_TRUE(r->SeekEnd().ok());
      EXPECT_TRUE(ReadAll(r.get()).empty());
    }
    ASSERT_EQ(env.Data(path).size(), o.file_size);
  }
  EXPECT_GT(model.back().block, uint64_t(count) * 5) << "wrapped several times";
}

INSTANTIATE_TEST_SUITE_P(Seeds, Property,
                         ::testing::Values(Case{1, 8, 4096}, Case{2, 2, 4096}, Case{3, 3, 4096},
                                           Case{4, 16, 4096}, Case{5, 5, 8192}, Case{6, 7, 4096}));

}  // namespace
}  // namespace logsink::test
