// ring_block_test.cc: whole blocks handed over by RingReader::NextOrBlock
// and decoded by a BlockDecoder give exactly the records, losses and damage
// reports that Next gives: for every codec, across laps, flushes and a
// partial newest block, for a reader lapped while it reads, with damage
// inside a block, decoded on a second thread, and in a tiered file (records
// only).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/records.h"
#include "common/seed.h"
#include "fault_env.h"
#include "logsink/proto/codec.h"
#include "logsink/storage/ring.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

const std::string kPath = "/ring";
constexpr uint32_t kBs = 8192;

std::unique_ptr<RingWriter> Open(FaultEnv *env, uint8_t codec, uint32_t blocks,
                                 double kept_share = 0) {
  WriterOptions o;
  o.codec = codec;
  o.file_size = RingSize(blocks, kBs);
  o.block_size = kBs;
  o.kept_share = kept_share;
  o.dictionary_train_bytes = 64 * 1024;  // blocks with and without the dictionary
  std::unique_ptr<RingWriter> w;
  Status s = RingWriter::Open(env, kPath, o, &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return w;
}

std::unique_ptr<RingReader> Reader(FaultEnv *env, Reporter *rep) {
  std::unique_ptr<RingReader> r;
  ReaderOptions ro;
  ro.crc_retries = 0;  // nothing races here
  Status s = RingReader::Open(env, kPath, rep, ro, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return r;
}

// What Next and the decoder say, in the order they say it.
struct Read {
  std::vector<OwnedRecord> recs;
  std::vector<std::string> events;  // "lost N" and "bad OFF: WHY", in order
  uint64_t whole = 0;               // blocks that came whole
  uint64_t single = 0;              // records that came one by one
};

class EventReporter : public Reporter {
 public:
  explicit EventReporter(Read *r) : r_(r) {}
  void Corruption(uint64_t off, std::string_view why) override {
    r_->events.push_back("bad " + std::to_string(off) + ": " + std::string(why));
  }
  void Lost(uint64_t n) override { r_->events.push_back("lost " + std::to_string(n)); }

 private:
  Read *r_;
};

// Reads from r's position to the end: with Next (blocks false) or with
// NextOrBlock, decoding each whole block with a decoder of r (on a second
// thread when `threaded`: the one that reads goes on meanwhile).
void Drain(RingReader *r, Read *out, bool blocks, bool threaded = false) {
  auto dec = r->NewDecoder();
  EventReporter rep(out);
  for (;;) {
    Record rec;
    BlockImage img;
    bool whole = false;
    Status s = blocks ? r->NextOrBlock(&rec, &img, &whole) : r->Next(&rec);
    if (s.IsNotFound()) return;
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (!whole) {
      out->recs.push_back(Copy(rec));
      out->single++;
      continue;
    }
    out->whole++;
    EXPECT_EQ(img.bytes.size(), kBs);
    std::vector<Record> recs;
    std::string problem;
    uint64_t off = 0;
    if (threaded) {
      std::thread t([&] { dec->Decode(img, &recs, &problem, &off); });
      t.join();
    } else {
      dec->Decode(img, &recs, &problem, &off);
    }
    for (const Record &d : recs) out->recs.push_back(Copy(d));
    if (problem.empty()) {
      EXPECT_EQ(recs.size(), img.count);
    }
    if (!recs.empty()) {
      EXPECT_EQ(recs.front().seq, img.first_seq);
    }
    if (!problem.empty()) rep.Corruption(off, problem);
  }
}

// Reads the ring in env from its oldest record (see Drain).
void ReadRing(FaultEnv *env, Read *out, bool blocks, bool threaded = false) {
  EventReporter rep(out);
  auto r = Reader(env, &rep);
  ASSERT_TRUE(r);
  Drain(r.get(), out, blocks, threaded);
}

void ExpectSame(const Read &a, const Read &b) {
  ASSERT_EQ(a.recs.size(), b.recs.size());
  for (size_t i = 0; i < a.recs.size(); i++) {
    const OwnedRecord &x = a.recs[i], &y = b.recs[i];
    SCOPED_TRACE("record " + std::to_string(x.seq));
    ASSERT_EQ(x.seq, y.seq);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.block_seq, y.block_seq);
    EXPECT_EQ(x.ts_ns, y.ts_ns);
    EXPECT_EQ(x.tid, y.tid);
    EXPECT_EQ(x.source_id, y.source_id);
    EXPECT_EQ(x.pid, y.pid);
    EXPECT_EQ(x.uid, y.uid);
    EXPECT_EQ(x.app, y.app);
    EXPECT_EQ(x.comm, y.comm);
    EXPECT_EQ(x.unit, y.unit);
    EXPECT_EQ(x.site_id, y.site_id);
    EXPECT_EQ(x.site_known, y.site_known);
    EXPECT_EQ(x.level, y.level);
    EXPECT_EQ(x.fmt, y.fmt);
    EXPECT_EQ(x.file, y.file);
    EXPECT_EQ(x.args, y.args);
    EXPECT_EQ(x.truncated, y.truncated);
    EXPECT_EQ(x.dropped_count, y.dropped_count);
  }
  EXPECT_EQ(a.events, b.events);
}

// Writes n records of varied text from two sources over several sites,
// flushing now and then; the last block stays partial.
void Fill(RingWriter *w, std::mt19937_64 &rng, uint64_t n) {
  const uint32_t sites[] = {w->Intern(Site{6, 1, "GET /items/%s", "a.c"}),
                            w->Intern(Site{3, 2, "failed: %s", "b.c"}),
                            w->Intern(Site{5, 3, "%s", "c.c"})};
  Source a{1, 100, 1000, 1000, "alpha", "alphad", "alpha.service"};
  Source b{2, 200, 0, 0, "beta", "betad"};
  for (uint64_t i = 0; i < n; i++) {
    std::string p = std::to_string(rng() % 100000) + " user=u" + std::to_string(rng() % 13);
    if (rng() % 50 == 0) p.append(200 + rng() % 2000, char('a' + rng() % 26));
    ASSERT_TRUE(AppendRecord(w, rng() % 3 ? a : b, sites[rng() % 3], "s", Args().Str(p).str(),
                             1000 + i, 1 + rng() % 4)
                    .ok());
    if (rng() % 700 == 0) {
      ASSERT_TRUE(w->Flush().ok());
    }
  }
  ASSERT_TRUE(w->Flush().ok());
}

class Codecs : public testing::TestWithParam<uint8_t> {};

// Across laps, flushes and a partial newest block: the same records as
// Next, most of them from whole blocks, the partial block as records.
TEST_P(Codecs, WholeBlocksDecodeToWhatNextReturns) {
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  FaultEnv env;
  auto w = Open(&env, GetParam(), 24);
  ASSERT_TRUE(w);
  Fill(w.get(), rng, 60000);
  Read plain, blocks;
  ReadRing(&env, &plain, false);
  ReadRing(&env, &blocks, true);
  ExpectSame(plain, blocks);
  EXPECT_EQ(plain.whole, 0u);
  EXPECT_GT(blocks.whole, 10u);
  EXPECT_GT(blocks.single, 0u);  // the partial newest block
  ASSERT_FALSE(blocks.recs.empty());
  EXPECT_EQ(blocks.recs.back().seq, 60000u - 1);
}

INSTANTIATE_TEST_SUITE_P(All, Codecs, testing::Values(LS_CODEC_NONE, LS_CODEC_ZSTD, LS_CODEC_LZ4),
                         [](const auto &info) { return std::string(CodecName(info.param)); });

// A reader the writer laps between two reads is told the same losses, and
// then reads records (strict), with both calls.
TEST(WholeBlocks, LappedReaderIsToldTheSameLosses) {
  const uint64_t seed = TestSeed();
  Read got[2];
  for (int blocks = 0; blocks < 2; blocks++) {
    std::mt19937_64 rng(seed);
    FaultEnv env;
    auto w = Open(&env, LS_CODEC_ZSTD, 8);
    ASSERT_TRUE(w);
    Fill(w.get(), rng, 3000);
    EventReporter rep(&got[blocks]);
    auto r = Reader(&env, &rep);
    ASSERT_TRUE(r);
    Drain(r.get(), &got[blocks], blocks);
    Fill(w.get(), rng, 40000);  // laps the 8 slots many times
    Drain(r.get(), &got[blocks], blocks);
  }
  ExpectSame(got[0], got[1]);
  ASSERT_FALSE(got[1].events.empty());
  EXPECT_EQ(got[1].events.front().rfind("lost ", 0), 0u) << got[1].events.front();
  EXPECT_GT(got[1].whole, 0u);
}

// Damage under a matching CRC (a crafted file) inside a whole block: the
// decoder tells it as Next does, with the same offset, and returns the
// records before it.
TEST(WholeBlocks, DamageInsideABlockIsToldAsNextTellsIt) {
  for (int kind = 0; kind < 2; kind++) {
    SCOPED_TRACE(kind == 0 ? "payload that does not decode" : "malformed entry");
    std::mt19937_64 rng(7);
    FaultEnv env;
    auto w = Open(&env, kind == 0 ? LS_CODEC_ZSTD : LS_CODEC_NONE, 8);
    ASSERT_TRUE(w);
    Fill(w.get(), rng, kind == 0 ? 4000 : 600);
    const uint64_t slot0 = w->layout().blocks_off;
    uint8_t *p = env.Data(kPath).data() + slot0;
    const uint32_t used = ls_get_u32(p + LS_BLK_OFF_USED);
    if (kind == 0) {
      ls_put_u32(p + LS_BLK_OFF_USED, used - 10);
    } else {
      p[LS_BLK_HDR + 1] |= 0x80;  // the first entry's head byte (a one-byte length before it)
    }
    ls_put_u32(p + LS_BLK_OFF_CRC, Crc32c(p + 8, ls_get_u32(p + LS_BLK_OFF_USED) - 8));
    Read plain, blocks;
    ReadRing(&env, &plain, false);
    ReadRing(&env, &blocks, true, /*threaded=*/true);
    ExpectSame(plain, blocks);
    ASSERT_EQ(blocks.events.size(), 1u);
    // The block's slot; a malformed entry's own offset (the first entry's).
    const uint64_t off = slot0 + (kind == 0 ? 0 : LS_BLK_HDR);
    EXPECT_EQ(blocks.events[0].rfind("bad " + std::to_string(off) + ": ", 0), 0u)
        << blocks.events[0];
    EXPECT_GT(blocks.whole, 0u);
  }
}

// A tiered file: NextOrBlock returns records only, the same as Next.
TEST(WholeBlocks, TieredFileReturnsRecordsOnly) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  auto w = Open(&env, LS_CODEC_ZSTD, 24, 0.25);
  ASSERT_TRUE(w);
  Fill(w.get(), rng, 40000);
  Read plain, blocks;
  ReadRing(&env, &plain, false);
  ReadRing(&env, &blocks, true);
  ExpectSame(plain, blocks);
  EXPECT_EQ(blocks.whole, 0u);
  EXPECT_FALSE(blocks.recs.empty());
}

}  // namespace
}  // namespace logsink::test
