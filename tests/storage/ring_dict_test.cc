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
  return ReadRecords(OpenReader(env, kPath, rep).get());
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

// The tests' file: a writer in a FaultEnv with its seeded random lines.
class Dictionary : public ::testing::Test {
 protected:
  // Opens the writer and appends until it uses its dictionary.
  void StartWithDictionary() {
    ASSERT_NO_FATAL_FAILURE(Attach(&wr_, &env_, Options()));
    ASSERT_NO_FATAL_FAILURE(UntilDictionary(&wr_, rng_));
  }
  // n more records, flushed.
  void AddAndFlush(uint64_t n) {
    ASSERT_TRUE(wr_.Add(rng_, n).ok());
    ASSERT_TRUE(wr_.w->Flush().ok());
  }
  // Reads the file back: every record is the one written with its number
  // and the newest is the last one written; what was reported is in *rep.
  std::vector<OwnedRecord> ReadBackToTheNewest(RecordingReporter *rep) {
    std::vector<OwnedRecord> got = ReadAllFrom(&env_, rep);
    EXPECT_FALSE(got.empty());
    if (!got.empty()) {
      EXPECT_EQ(got.back().seq, wr_.written.size() - 1);
    }
    ExpectExact(got, wr_);
    return got;
  }
  // The dictionary region's bytes as they are now.
  std::vector<uint8_t> Region() {
    const Layout l = FileLayout();
    const std::vector<uint8_t> &d = env_.Data(kPath);
    return {d.begin() + long(l.dict_off), d.begin() + long(l.dict_off + l.dict_size)};
  }

  std::mt19937_64 rng_{TestSeed()};
  FaultEnv env_;
  Writer wr_;
};

// Blocks sealed before the dictionary (zstd) and after it (zstd+dict) read
// back exactly, across a lap; Verify is clean; the dictionary is in its
// region with the id the writer reports.
TEST_F(Dictionary, BlocksBeforeAndAfterItReadBackExactly) {
  ASSERT_NO_FATAL_FAILURE(StartWithDictionary());
  const uint32_t id = wr_.w->stats().dict_id;
  ASSERT_NO_FATAL_FAILURE(AddAndFlush(20000));
  std::map<uint8_t, int> codecs = Codecs(&env_);
  EXPECT_GT(codecs[LS_CODEC_ZSTD], 0);
  EXPECT_GT(codecs[LS_CODEC_ZSTD_DICT], 0);
  const Layout l = FileLayout();
  const uint8_t *region = env_.Data(kPath).data() + l.dict_off;
  EXPECT_EQ(ls_get_u32(region + LS_DICT_OFF_MAGIC), LS_DICT_MAGIC);
  EXPECT_EQ(ls_get_u32(region + LS_DICT_OFF_ID), id);
  EXPECT_EQ(ls_get_u32(region + LS_DICT_OFF_LEN), wr_.w->stats().dict_bytes);

  RecordingReporter rep;
  ReadBackToTheNewest(&rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env_, kPath, &rep, &r).ok());
  EXPECT_TRUE(r->Verify().ok()) << rep.Dump();

  // Lap the ring: every block is then written with the dictionary.
  ASSERT_NO_FATAL_FAILURE(AddAndFlush(250000));
  codecs = Codecs(&env_);
  EXPECT_EQ(codecs[LS_CODEC_ZSTD], 0);
  EXPECT_GT(codecs[LS_CODEC_ZSTD_DICT], 200);
  auto got = ReadBackToTheNewest(&rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  std::printf("[figures] dictionary %u bytes; %zu records in %llu slots\n",
              wr_.w->stats().dict_bytes, got.size(), (unsigned long long)l.block_count);
}

// A reopened writer takes the file's dictionary up again (no new training,
// the region unchanged) and continues a partial block compressed with it.
TEST_F(Dictionary, ReopenedWriterContinuesWithTheSameDictionary) {
  ASSERT_NO_FATAL_FAILURE(StartWithDictionary());
  const uint32_t id = wr_.w->stats().dict_id;
  ASSERT_TRUE(wr_.Add(rng_, 3000).ok());
  ASSERT_NO_FATAL_FAILURE(AddAndFlush(7));  // a partial block, stored zstd+dict
  const std::vector<uint8_t> region = Region();
  wr_.w.reset();
  Attach(&wr_, &env_, Options());
  EXPECT_EQ(wr_.w->stats().dict_id, id);
  ASSERT_TRUE(wr_.Add(rng_, 30000).ok());
  ASSERT_TRUE(wr_.w->FinishDictionary().ok());
  ASSERT_TRUE(wr_.w->Flush().ok());
  EXPECT_EQ(wr_.w->stats().dict_id, id);
  EXPECT_EQ(Region(), region);
  RecordingReporter rep;
  auto got = ReadBackToTheNewest(&rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  for (size_t i = 1; i < got.size(); i++) ASSERT_EQ(got[i].seq, got[i - 1].seq + 1);
}

// A damaged dictionary: the blocks that need it are reported and skipped,
// the others still read, nothing read is garbage; Verify names the region;
// a writer reopening it neither trains again nor writes over it.
TEST_F(Dictionary, DamagedDictionaryIsReportedNeverGarbage) {
  ASSERT_NO_FATAL_FAILURE(StartWithDictionary());
  ASSERT_NO_FATAL_FAILURE(AddAndFlush(20000));
  wr_.w.reset();
  const Layout l = FileLayout();
  const std::vector<uint8_t> good = env_.Data(kPath);
  const size_t good_n = wr_.written.size();
  for (uint64_t off : {uint64_t(LS_DICT_HDR + 100), uint64_t(LS_DICT_OFF_LEN)}) {
    env_.Data(kPath)[l.dict_off + off] ^= 0x20;
    RecordingReporter rep;
    auto got = ReadAllFrom(&env_, &rep);
    EXPECT_FALSE(rep.bad.empty());
    ASSERT_FALSE(got.empty());  // the blocks from before the dictionary
    ExpectExact(got, wr_);
    EXPECT_LT(got.back().seq, wr_.written.size() - 1);
    std::unique_ptr<RingReader> r;
    RecordingReporter vrep;
    ASSERT_TRUE(RingReader::Open(&env_, kPath, &vrep, &r).ok());
    EXPECT_FALSE(r->Verify().ok());
    EXPECT_NE(vrep.Dump().find("dictionary"), std::string::npos) << vrep.Dump();

    const std::vector<uint8_t> damaged = Region();
    Attach(&wr_, &env_, Options());
    EXPECT_EQ(wr_.w->stats().dict_id, 0u);
    ASSERT_TRUE(wr_.Add(rng_, 30000).ok());
    ASSERT_TRUE(wr_.w->FinishDictionary().ok());
    ASSERT_TRUE(wr_.w->Flush().ok());
    EXPECT_EQ(wr_.w->stats().dict_id, 0u);
    EXPECT_EQ(Region(), damaged);
    // The writer went on after the newest block (which it could not
    // decode), not back over it: what it wrote now is the newest readers see.
    RecordingReporter rep2;
    ReadBackToTheNewest(&rep2);
    wr_.w.reset();
    env_.Put(kPath, good);
    wr_.written.resize(good_n);
  }
}

// A region whose header reads back as zeros while blocks need it: the
// writer never trains a new dictionary over it.
TEST_F(Dictionary, ZeroedRegionThatBlocksNeedIsNeverWrittenOver) {
  ASSERT_NO_FATAL_FAILURE(StartWithDictionary());
  ASSERT_NO_FATAL_FAILURE(AddAndFlush(20000));
  wr_.w.reset();
  const Layout l = FileLayout();
  std::vector<uint8_t> d = env_.Data(kPath);
  std::fill(d.begin() + long(l.dict_off), d.begin() + long(l.dict_off + LS_DICT_HDR), 0);
  env_.Put(kPath, d);
  const std::vector<uint8_t> region = Region();
  Attach(&wr_, &env_, Options());
  ASSERT_TRUE(wr_.Add(rng_, 30000).ok());
  ASSERT_TRUE(wr_.w->FinishDictionary().ok());
  ASSERT_TRUE(wr_.w->Flush().ok());
  EXPECT_EQ(wr_.w->stats().dict_id, 0u);
  EXPECT_EQ(Region(), region);
  RecordingReporter rep;
  ReadBackToTheNewest(&rep);
}

// The dictionary reaches the disk (synced) before the writer uses it: a
// power loss right after it was taken into use keeps it.
TEST_F(Dictionary, IsSyncedBeforeUse) {
  ASSERT_NO_FATAL_FAILURE(StartWithDictionary());
  const uint32_t id = wr_.w->stats().dict_id;
  env_.PowerLoss();
  const Layout l = FileLayout();
  const uint8_t *region = env_.Data(kPath).data() + l.dict_off;
  EXPECT_EQ(ls_get_u32(region + LS_DICT_OFF_MAGIC), LS_DICT_MAGIC);
  EXPECT_EQ(ls_get_u32(region + LS_DICT_OFF_ID), id);
}

// A tiered file: blocks of every tier use the one dictionary (kept records
// compressed again with it, whole blocks copied as they are); everything
// reads back exactly and Verify is clean.
TEST_F(Dictionary, EveryTierReadsBackWithIt) {
  WriterOptions o = Options();
  o.kept_share = o.error_share = 0.125;
  std::unique_ptr<RingWriter> w = OpenW(&env_, o);
  ASSERT_TRUE(w);
  const uint32_t info = w->Intern(Site{6, 1, "%s", "d.c"});
  const uint32_t err = w->Intern(Site{3, 2, "%s", "d.c"});
  Source a{1, 100, 1000, 1000, "chatty", "chattyd"}, b{2, 200, 1001, 1001, "quiet", "quietd"};
  std::vector<std::string> &written = wr_.written;
  for (uint64_t i = 0; i < 400000; i++) {
    const bool quiet = i % 10 == 0;
    std::string args = Args().Str(Line(rng_, i)).str();
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
  EXPECT_GT(Codecs(&env_)[LS_CODEC_ZSTD_DICT], 200);
  RecordingReporter rep;
  auto got = ReadBackToTheNewest(&rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  size_t older = 0;
  for (const OwnedRecord &r : got)
    older += r.seq + 60000 < written.size();  // kept far behind tier 0
  EXPECT_GT(older, 0u);
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env_, kPath, &rep, &r).ok());
  EXPECT_TRUE(r->Verify().ok()) << rep.Dump();

  // What a reader holds stays within its bound (RingReader::BoundBytes, the
  // daemon's charge for a read): per tier the slot, the block decoded,
  // zstd's context and the dictionary, and with a filter the summary
  // index's window (these blocks declare two sources, a few bytes).
  for (bool filtered : {false, true}) {
    std::unique_ptr<RingReader> h;
    ASSERT_TRUE(RingReader::Open(&env_, kPath, &rep, &h).ok());
    RecordFilter f;
    f.uids = {1001};
    if (filtered) h->SetFilter(&f);
    const size_t bound = h->BoundBytes();
    size_t most = 0, n = 0;
    Record rec;
    while (h->Next(&rec).ok()) {
      n++;
      most = std::max(most, h->HeldBytes());
      ASSERT_LE(h->HeldBytes(), bound) << "after record " << rec.seq;
    }
    EXPECT_GT(n, 0u);
    EXPECT_GT(most, bound / 4) << "a bound far above what is held";
    std::printf("[figures] reader of 3 tiers%s: held at most %zu bytes, bound %zu\n",
                filtered ? " (filtered)" : "", most, bound);
  }
}

// Another file's dictionary in the region (valid, another id): the frames
// name theirs, so the blocks do not decode with it; they are reported.
TEST_F(Dictionary, ForeignDictionaryDoesNotDecodeTheBlocks) {
  std::mt19937_64 rng2(rng_());
  FaultEnv other;
  Writer wr2;
  ASSERT_NO_FATAL_FAILURE(StartWithDictionary());
  ASSERT_NO_FATAL_FAILURE(AddAndFlush(5000));
  Attach(&wr2, &other, Options(64 * 1024));
  UntilDictionary(&wr2, rng2);
  ASSERT_NE(wr_.w->stats().dict_id, wr2.w->stats().dict_id);
  wr_.w.reset();
  wr2.w.reset();
  const Layout l = FileLayout();
  std::copy(other.Data(kPath).begin() + long(l.dict_off),
            other.Data(kPath).begin() + long(l.dict_off + l.dict_size),
            env_.Data(kPath).begin() + long(l.dict_off));
  RecordingReporter rep;
  auto got = ReadAllFrom(&env_, &rep);
  EXPECT_FALSE(rep.bad.empty());
  ExpectExact(got, wr_);
  EXPECT_LT(got.empty() ? 0 : got.back().seq, wr_.written.size() - 1);
}

// A region that never checked and that no block uses (its write was lost)
// is trained and written again.
TEST_F(Dictionary, RegionLostBeforeUseIsWrittenAgain) {
  Attach(&wr_, &env_, Options(0));  // no training: plain zstd blocks
  ASSERT_TRUE(wr_.Add(rng_, 20000).ok());
  ASSERT_TRUE(wr_.w->FinishDictionary().ok());
  EXPECT_EQ(wr_.w->stats().dict_id, 0u);
  ASSERT_TRUE(wr_.w->Flush().ok());
  wr_.w.reset();
  const Layout l = FileLayout();
  std::vector<uint8_t> &d = env_.Data(kPath);
  for (uint32_t i = 0; i < 64; i++) d[l.dict_off + i] = uint8_t(0xa5 ^ i);  // garbage header
  env_.Put(kPath, d);
  ASSERT_NO_FATAL_FAILURE(StartWithDictionary());
  ASSERT_NO_FATAL_FAILURE(AddAndFlush(5000));
  RecordingReporter rep;
  ReadBackToTheNewest(&rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
}

// Power loss (every unsynced byte dropped) after blocks were written with
// the dictionary: the dictionary was synced before them, so what survives
// reads back exactly.
TEST_F(Dictionary, PowerLossKeepsTheDictionaryBeforeItsBlocks) {
  ASSERT_NO_FATAL_FAILURE(StartWithDictionary());
  ASSERT_TRUE(wr_.Add(rng_, 20000).ok());
  ASSERT_TRUE(wr_.w->Sync().ok());  // these blocks, written with it, reach the disk
  ASSERT_NO_FATAL_FAILURE(AddAndFlush(20000));
  std::map<uint8_t, int> before = Codecs(&env_);
  env_.PowerLoss();
  EXPECT_GT(Codecs(&env_)[LS_CODEC_ZSTD_DICT], 0);
  EXPECT_LE(Codecs(&env_)[LS_CODEC_ZSTD_DICT], before[LS_CODEC_ZSTD_DICT]);
  RecordingReporter rep;
  auto got = ReadAllFrom(&env_, &rep);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  ExpectExact(got, wr_);
  wr_.w.reset();
  Attach(&wr_, &env_, Options());
  EXPECT_NE(wr_.w->stats().dict_id, 0u);
}

// A zstd+dict block claiming more than LS_BLK_RAW_FACTOR slots of entries is
// refused before anything is allocated for it (a decompression bomb), and
// reported: the records after it still read.
TEST_F(Dictionary, BombIsRefused) {
  ASSERT_NO_FATAL_FAILURE(StartWithDictionary());
  ASSERT_NO_FATAL_FAILURE(AddAndFlush(20000));
  wr_.w.reset();
  const Layout l = FileLayout();
  std::vector<uint8_t> &d = env_.Data(kPath);
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
  ReadBackToTheNewest(&rep);
  EXPECT_EQ(rep.bad.size(), 1u) << rep.Dump();
}

}  // namespace
}  // namespace logsink::test
