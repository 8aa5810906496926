// ring_dict_test.cc: the file's compression dictionary (FORMAT.md,
// "Dictionary"): blocks before and after it read back exactly, a reopened
// writer takes it up again (and continues a partial block compressed with
// it), a damaged or foreign dictionary makes its blocks reported, never
// decoded into garbage, a region lost before use is trained again, one that
// blocks need is never written over, and power loss keeps it before the
// blocks that use it.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/records.h"
#include "common/seed.h"
#include "fault_env.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"
#include "logsink/storage/ring.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

const std::string kPath = "/ring";
constexpr uint32_t kBs = 8192;
constexpr uint64_t kFile = 2ull << 20;  // 247 slots after a dictionary region

WriterOptions Options(uint32_t train = 128 * 1024) {
  WriterOptions o;
  o.file_size = kFile;
  o.block_size = kBs;
  o.dictionary_train_bytes = train;
  return o;
}

std::unique_ptr<RingWriter> OpenW(FaultEnv *env, const WriterOptions &o) {
  std::unique_ptr<RingWriter> w;
  Status s = RingWriter::Open(env, kPath, o, &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return w;
}

// Log lines of a few shapes with varying numbers: what a dictionary helps.
std::string Line(std::mt19937_64 &rng, uint64_t i) {
  switch (rng() % 3) {
    case 0:
      return "GET /api/v1/items/" + std::to_string(rng() % 100000) +
             " HTTP/1.1 status=200 bytes=" + std::to_string(rng() % 50000) + " rt=0." +
             std::to_string(rng() % 1000);
    case 1:
      return R"({"level":"info","svc":"orders","msg":"order placed","order_id":)" +
             std::to_string(100000 + i) + R"(,"user_id":)" + std::to_string(rng() % 200000) + "}";
    default:
      return "sshd[" + std::to_string(1000 + rng() % 9000) +
             "]: Accepted publickey for deploy from 10.0." + std::to_string(rng() % 256) + "." +
             std::to_string(rng() % 256) + " port " + std::to_string(1024 + rng() % 60000);
  }
}

struct Writer {
  std::unique_ptr<RingWriter> w;
  uint32_t site = 0;
  Source src{1, 100, 1000, 1000, "app", "appd"};
  std::vector<std::string> written;  // args by record sequence number
  uint64_t ts = 1000;

  Status Add(std::mt19937_64 &rng, uint64_t n) {
    for (uint64_t k = 0; k < n; k++) {
      std::string args = Args().Str(Line(rng, written.size())).str();
      Status s = AppendRecord(w.get(), src, site, "s", args, ts++);
      if (!s.ok()) return s;
      written.push_back(args);
    }
    return Status::OK();
  }
};

void Attach(Writer *wr, FaultEnv *env, const WriterOptions &o) {
  wr->w = OpenW(env, o);
  ASSERT_TRUE(wr->w);
  wr->site = wr->w->Intern(Site{6, 1, "%s", "d.c"});
  ASSERT_NE(wr->site, 0u);
}

// Appends until the writer has trained and uses its dictionary.
void UntilDictionary(Writer *wr, std::mt19937_64 &rng) {
  for (int round = 0; round < 200 && wr->w->stats().dict_id == 0; round++) {
    ASSERT_TRUE(wr->Add(rng, 500).ok());
    ASSERT_TRUE(wr->w->FinishDictionary().ok());
  }
  ASSERT_NE(wr->w->stats().dict_id, 0u) << "no dictionary after 100,000 records";
}

std::vector<OwnedRecord> ReadAllFrom(FaultEnv *env, RecordingReporter *rep) {
  std::unique_ptr<RingReader> r;
  ReaderOptions ro;
  ro.crc_retries = 0;
  Status s = RingReader::Open(env, kPath, rep, ro, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<OwnedRecord> out;
  if (r) {
    EXPECT_TRUE(ReadAllRecords(r.get(), &out).ok());
  }
  return out;
}

// Blocks of the file by codec (tier 0: these files have no tiers).
std::map<uint8_t, int> Codecs(FaultEnv *env) {
  Layout l;
  EXPECT_TRUE(Layout::Compute(kFile, kBs, 0, &l).ok());
  const std::vector<uint8_t> &d = env->Data(kPath);
  std::map<uint8_t, int> n;
  for (uint64_t i = 0; i < l.block_count; i++) {
    const uint8_t *p = d.data() + l.blocks_off + i * kBs;
    if (ls_get_u32(p) == LS_BLK_MAGIC) n[p[LS_BLK_OFF_CODEC]]++;
  }
  return n;
}

Layout FileLayout() {
  Layout l;
  EXPECT_TRUE(Layout::Compute(kFile, kBs, 0, &l).ok());
  return l;
}

// Every record read back is the one written with its number.
void ExpectExact(const std::vector<OwnedRecord> &got, const Writer &wr) {
  for (const OwnedRecord &r : got) {
    ASSERT_LT(r.seq, wr.written.size());
    ASSERT_EQ(r.args, wr.written[r.seq]) << "record " << r.seq;
  }
}

// Blocks sealed before the dictionary (zstd) and after it (zstd+dict) read
// back exactly, across a lap; Verify is clean; the dictionary is in its
// region with the id the writer reports.
TEST(Dictionary, BlocksBeforeAndAfterItReadBackExactly) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  Writer wr;
  Attach(&wr, &env, Options());
  UntilDictionary(&wr, rng);
  const uint32_t id = wr.w->stats().dict_id;
  ASSERT_TRUE(wr.Add(rng, 20000).ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  std::map<uint8_t, int> codecs = Codecs(&env);
  EXPECT_GT(codecs[LS_CODEC_ZSTD], 0);
  EXPECT_GT(codecs[LS_CODEC_ZSTD_DICT], 0);
  const Layout l = FileLayout();
  const uint8_t *region = env.Data(kPath).data() + l.dict_off;
  EXPECT_EQ(ls_get_u32(region + LS_DICT_OFF_MAGIC), LS_DICT_MAGIC);
  EXPECT_EQ(ls_get_u32(region + LS_DICT_OFF_ID), id);
  EXPECT_EQ(ls_get_u32(region + LS_DICT_OFF_LEN), wr.w->stats().dict_bytes);

  RecordingReporter rep;
  auto got = ReadAllFrom(&env, &rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().seq, wr.written.size() - 1);
  ExpectExact(got, wr);
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env, kPath, &rep, &r).ok());
  EXPECT_TRUE(r->Verify().ok()) << rep.Dump();

  // Lap the ring: every block is then written with the dictionary.
  ASSERT_TRUE(wr.Add(rng, 250000).ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  codecs = Codecs(&env);
  EXPECT_EQ(codecs[LS_CODEC_ZSTD], 0);
  EXPECT_GT(codecs[LS_CODEC_ZSTD_DICT], 200);
  got = ReadAllFrom(&env, &rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  EXPECT_EQ(got.back().seq, wr.written.size() - 1);
  ExpectExact(got, wr);
  std::printf("[figures] dictionary %u bytes; %zu records in %llu slots\n",
              wr.w->stats().dict_bytes, got.size(), (unsigned long long)l.block_count);
}

// A reopened writer takes the file's dictionary up again (no new training,
// the region unchanged) and continues a partial block compressed with it.
TEST(Dictionary, ReopenedWriterContinuesWithTheSameDictionary) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  Writer wr;
  Attach(&wr, &env, Options());
  UntilDictionary(&wr, rng);
  const uint32_t id = wr.w->stats().dict_id;
  ASSERT_TRUE(wr.Add(rng, 3000).ok());
  ASSERT_TRUE(wr.Add(rng, 7).ok());
  ASSERT_TRUE(wr.w->Flush().ok());  // a partial block, stored zstd+dict
  const Layout l = FileLayout();
  const std::vector<uint8_t> region(env.Data(kPath).begin() + long(l.dict_off),
                                    env.Data(kPath).begin() + long(l.dict_off + l.dict_size));
  wr.w.reset();
  Attach(&wr, &env, Options());
  EXPECT_EQ(wr.w->stats().dict_id, id);
  ASSERT_TRUE(wr.Add(rng, 30000).ok());
  ASSERT_TRUE(wr.w->FinishDictionary().ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  EXPECT_EQ(wr.w->stats().dict_id, id);
  EXPECT_TRUE(std::equal(region.begin(), region.end(), env.Data(kPath).begin() + long(l.dict_off)));
  RecordingReporter rep;
  auto got = ReadAllFrom(&env, &rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  EXPECT_EQ(got.back().seq, wr.written.size() - 1);
  for (size_t i = 1; i < got.size(); i++) ASSERT_EQ(got[i].seq, got[i - 1].seq + 1);
  ExpectExact(got, wr);
}

// A damaged dictionary: the blocks that need it are reported and skipped,
// the others still read, nothing read is garbage; Verify names the region;
// a writer reopening it neither trains again nor writes over it.
TEST(Dictionary, DamagedDictionaryIsReportedNeverGarbage) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  Writer wr;
  Attach(&wr, &env, Options());
  UntilDictionary(&wr, rng);
  ASSERT_TRUE(wr.Add(rng, 20000).ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  wr.w.reset();
  const Layout l = FileLayout();
  const std::vector<uint8_t> good = env.Data(kPath);
  const size_t good_n = wr.written.size();
  for (uint64_t off : {uint64_t(LS_DICT_HDR + 100), uint64_t(LS_DICT_OFF_LEN)}) {
    std::vector<uint8_t> &d = env.Data(kPath);
    d[l.dict_off + off] ^= 0x20;
    RecordingReporter rep;
    auto got = ReadAllFrom(&env, &rep);
    EXPECT_FALSE(rep.bad.empty());
    ASSERT_FALSE(got.empty());  // the blocks from before the dictionary
    ExpectExact(got, wr);
    EXPECT_LT(got.back().seq, wr.written.size() - 1);
    std::unique_ptr<RingReader> r;
    RecordingReporter vrep;
    ASSERT_TRUE(RingReader::Open(&env, kPath, &vrep, &r).ok());
    EXPECT_FALSE(r->Verify().ok());
    EXPECT_NE(vrep.Dump().find("dictionary"), std::string::npos) << vrep.Dump();

    const std::vector<uint8_t> damaged(d.begin() + long(l.dict_off),
                                       d.begin() + long(l.dict_off + l.dict_size));
    Attach(&wr, &env, Options());
    EXPECT_EQ(wr.w->stats().dict_id, 0u);
    ASSERT_TRUE(wr.Add(rng, 30000).ok());
    ASSERT_TRUE(wr.w->FinishDictionary().ok());
    ASSERT_TRUE(wr.w->Flush().ok());
    EXPECT_EQ(wr.w->stats().dict_id, 0u);
    EXPECT_TRUE(
        std::equal(damaged.begin(), damaged.end(), env.Data(kPath).begin() + long(l.dict_off)));
    // The writer went on after the newest block (which it could not
    // decode), not back over it: what it wrote now is the newest readers see.
    RecordingReporter rep2;
    auto after = ReadAllFrom(&env, &rep2);
    ASSERT_FALSE(after.empty());
    EXPECT_EQ(after.back().seq, wr.written.size() - 1);
    ExpectExact(after, wr);
    wr.w.reset();
    env.Put(kPath, good);
    wr.written.resize(good_n);
  }
}

// A region whose header reads back as zeros while blocks need it: the
// writer never trains a new dictionary over it.
TEST(Dictionary, ZeroedRegionThatBlocksNeedIsNeverWrittenOver) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  Writer wr;
  Attach(&wr, &env, Options());
  UntilDictionary(&wr, rng);
  ASSERT_TRUE(wr.Add(rng, 20000).ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  wr.w.reset();
  const Layout l = FileLayout();
  std::vector<uint8_t> d = env.Data(kPath);
  std::fill(d.begin() + long(l.dict_off), d.begin() + long(l.dict_off + LS_DICT_HDR), 0);
  env.Put(kPath, d);
  const std::vector<uint8_t> region(d.begin() + long(l.dict_off),
                                    d.begin() + long(l.dict_off + l.dict_size));
  Attach(&wr, &env, Options());
  ASSERT_TRUE(wr.Add(rng, 30000).ok());
  ASSERT_TRUE(wr.w->FinishDictionary().ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  EXPECT_EQ(wr.w->stats().dict_id, 0u);
  EXPECT_TRUE(std::equal(region.begin(), region.end(), env.Data(kPath).begin() + long(l.dict_off)));
  RecordingReporter rep;
  auto got = ReadAllFrom(&env, &rep);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().seq, wr.written.size() - 1);
  ExpectExact(got, wr);
}

// The dictionary reaches the disk (synced) before the writer uses it: a
// power loss right after it was taken into use keeps it.
TEST(Dictionary, IsSyncedBeforeUse) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  Writer wr;
  Attach(&wr, &env, Options());
  UntilDictionary(&wr, rng);
  const uint32_t id = wr.w->stats().dict_id;
  env.PowerLoss();
  const Layout l = FileLayout();
  const uint8_t *region = env.Data(kPath).data() + l.dict_off;
  EXPECT_EQ(ls_get_u32(region + LS_DICT_OFF_MAGIC), LS_DICT_MAGIC);
  EXPECT_EQ(ls_get_u32(region + LS_DICT_OFF_ID), id);
}

// A tiered file: blocks of every tier use the one dictionary (kept records
// compressed again with it, whole blocks copied as they are); everything
// reads back exactly and Verify is clean.
TEST(Dictionary, EveryTierReadsBackWithIt) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  WriterOptions o = Options();
  o.kept_share = o.error_share = 0.125;
  std::unique_ptr<RingWriter> w = OpenW(&env, o);
  ASSERT_TRUE(w);
  const uint32_t info = w->Intern(Site{6, 1, "%s", "d.c"});
  const uint32_t err = w->Intern(Site{3, 2, "%s", "d.c"});
  Source a{1, 100, 1000, 1000, "chatty", "chattyd"}, b{2, 200, 1001, 1001, "quiet", "quietd"};
  std::vector<std::string> written;
  for (uint64_t i = 0; i < 400000; i++) {
    const bool quiet = i % 10 == 0;
    std::string args = Args().Str(Line(rng, i)).str();
    ASSERT_TRUE(
        AppendRecord(w.get(), quiet ? b : a, i % 50 == 0 ? err : info, "s", args, 1000 + i).ok());
    written.push_back(args);
    if (i == 20000) {
      ASSERT_TRUE(w->FinishDictionary().ok());
    }
  }
  ASSERT_TRUE(w->Flush().ok());
  ASSERT_NE(w->stats().dict_id, 0u);
  EXPECT_GT(w->stats().kept[0] + w->stats().kept[1] + w->stats().kept[2], 0u);
  EXPECT_GT(Codecs(&env)[LS_CODEC_ZSTD_DICT], 200);
  RecordingReporter rep;
  auto got = ReadAllFrom(&env, &rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().seq, written.size() - 1);
  size_t older = 0;
  for (const OwnedRecord &r : got) {
    ASSERT_LT(r.seq, written.size());
    ASSERT_EQ(r.args, written[r.seq]) << "record " << r.seq;
    older += r.seq + 60000 < written.size();  // kept far behind tier 0
  }
  EXPECT_GT(older, 0u);
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env, kPath, &rep, &r).ok());
  EXPECT_TRUE(r->Verify().ok()) << rep.Dump();
}

// Another file's dictionary in the region (valid, another id): the frames
// name theirs, so the blocks do not decode with it; they are reported.
TEST(Dictionary, ForeignDictionaryDoesNotDecodeTheBlocks) {
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed), rng2(seed + 1);
  FaultEnv env, other;
  Writer wr, wr2;
  Attach(&wr, &env, Options());
  UntilDictionary(&wr, rng);
  ASSERT_TRUE(wr.Add(rng, 5000).ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  Attach(&wr2, &other, Options(64 * 1024));
  UntilDictionary(&wr2, rng2);
  ASSERT_NE(wr.w->stats().dict_id, wr2.w->stats().dict_id);
  wr.w.reset();
  wr2.w.reset();
  const Layout l = FileLayout();
  std::copy(other.Data(kPath).begin() + long(l.dict_off),
            other.Data(kPath).begin() + long(l.dict_off + l.dict_size),
            env.Data(kPath).begin() + long(l.dict_off));
  RecordingReporter rep;
  auto got = ReadAllFrom(&env, &rep);
  EXPECT_FALSE(rep.bad.empty());
  ExpectExact(got, wr);
  EXPECT_LT(got.empty() ? 0 : got.back().seq, wr.written.size() - 1);
}

// A region that never checked and that no block uses (its write was lost)
// is trained and written again.
TEST(Dictionary, RegionLostBeforeUseIsWrittenAgain) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  Writer wr;
  Attach(&wr, &env, Options(0));  // no training: plain zstd blocks
  ASSERT_TRUE(wr.Add(rng, 20000).ok());
  ASSERT_TRUE(wr.w->FinishDictionary().ok());
  EXPECT_EQ(wr.w->stats().dict_id, 0u);
  ASSERT_TRUE(wr.w->Flush().ok());
  wr.w.reset();
  const Layout l = FileLayout();
  std::vector<uint8_t> &d = env.Data(kPath);
  for (uint32_t i = 0; i < 64; i++) d[l.dict_off + i] = uint8_t(0xa5 ^ i);  // garbage header
  env.Put(kPath, d);
  Attach(&wr, &env, Options());
  UntilDictionary(&wr, rng);
  ASSERT_TRUE(wr.Add(rng, 5000).ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  RecordingReporter rep;
  auto got = ReadAllFrom(&env, &rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  EXPECT_EQ(got.back().seq, wr.written.size() - 1);
  ExpectExact(got, wr);
}

// Power loss (every unsynced byte dropped) after blocks were written with
// the dictionary: the dictionary was synced before them, so what survives
// reads back exactly.
TEST(Dictionary, PowerLossKeepsTheDictionaryBeforeItsBlocks) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  Writer wr;
  Attach(&wr, &env, Options());
  UntilDictionary(&wr, rng);
  ASSERT_TRUE(wr.Add(rng, 20000).ok());
  ASSERT_TRUE(wr.w->Sync().ok());  // these blocks, written with it, reach the disk
  ASSERT_TRUE(wr.Add(rng, 20000).ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  std::map<uint8_t, int> before = Codecs(&env);
  env.PowerLoss();
  EXPECT_GT(Codecs(&env)[LS_CODEC_ZSTD_DICT], 0);
  EXPECT_LE(Codecs(&env)[LS_CODEC_ZSTD_DICT], before[LS_CODEC_ZSTD_DICT]);
  RecordingReporter rep;
  auto got = ReadAllFrom(&env, &rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  ExpectExact(got, wr);
  wr.w.reset();
  Attach(&wr, &env, Options());
  EXPECT_NE(wr.w->stats().dict_id, 0u);
}

// A zstd+dict block claiming more than LS_BLK_RAW_FACTOR slots of entries is
// refused before anything is allocated for it (a decompression bomb), and
// reported: the records after it still read.
TEST(Dictionary, BombIsRefused) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  Writer wr;
  Attach(&wr, &env, Options());
  UntilDictionary(&wr, rng);
  ASSERT_TRUE(wr.Add(rng, 20000).ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  wr.w.reset();
  const Layout l = FileLayout();
  std::vector<uint8_t> &d = env.Data(kPath);
  uint8_t *first = nullptr;  // the oldest block written with the dictionary
  for (uint64_t i = 0; i < l.block_count; i++) {
    uint8_t *p = d.data() + l.blocks_off + i * kBs;
    if (ls_get_u32(p) != LS_BLK_MAGIC || p[LS_BLK_OFF_CODEC] != LS_CODEC_ZSTD_DICT) continue;
    if (!first || ls_get_u64(p + LS_BLK_OFF_SEQ) < ls_get_u64(first + LS_BLK_OFF_SEQ)) first = p;
  }
  ASSERT_NE(first, nullptr);
  ls_put_u32(first + LS_BLK_OFF_RAW, LS_BLK_RAW_FACTOR * kBs + 1);
  const uint32_t used = ls_get_u32(first + LS_BLK_OFF_USED);
  ls_put_u32(first + LS_BLK_OFF_CRC, Crc32c(first + 8, used - 8));
  RecordingReporter rep;
  auto got = ReadAllFrom(&env, &rep);
  EXPECT_EQ(rep.bad.size(), 1u) << rep.Dump();
  ExpectExact(got, wr);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().seq, wr.written.size() - 1);
}

}  // namespace
}  // namespace logsink::test
