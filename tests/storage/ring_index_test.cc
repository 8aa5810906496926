// ring_index_test.cc: the summary index (FORMAT.md, "Summary index"): each
// sealed block's entry says what its header says, filtered reads give the
// same records with the index, without it and without any skipping while
// reading only the blocks that may match, and no damaged, stale, forged-ahead
// or newest-block entry ever hides a record that matches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/asan.h"
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
constexpr uint64_t kFile = 2ull << 20;  // 241 slots

WriterOptions Options() {
  WriterOptions o;
  o.file_size = kFile;
  o.block_size = kBs;
  o.codec = LS_CODEC_ZSTD;
  o.dictionary_train_bytes = 0;  // the index does not depend on it; no thread
  return o;
}

// A writer with ten ordinary sources and one rare one ("rare", uid 4242,
// pid 77, its records at err).
struct Writer {
  std::unique_ptr<RingWriter> w;
  uint32_t info = 0, err = 0;
  std::vector<std::string> apps;
  uint64_t ts = 1000, n = 0;

  void Open(FaultEnv *env, const WriterOptions &o = Options()) {
    Status s = RingWriter::Open(env, kPath, o, &w);
    ASSERT_TRUE(s.ok()) << s.ToString();
    info = w->Intern(Site{6, 1, "%s", "i.c"});
    err = w->Intern(Site{3, 2, "%s", "i.c"});
    ASSERT_NE(info, 0u);
    ASSERT_NE(err, 0u);
    for (int i = 0; i < 10; i++) apps.push_back("app" + std::to_string(i));
  }
  Status Common(std::mt19937_64 &rng) {
    const uint32_t k = uint32_t(rng() % 10);
    Source src{1 + k, 100 + k, 1000 + k, 1000, apps[k], apps[k]};
    return Add(src, info, "line " + std::to_string(n) + " " + std::to_string(rng() % 100000));
  }
  Status Rare() {
    Source src{50, 77, 4242, 4242, "rare", "rare"};
    return Add(src, err, "rare " + std::to_string(n));
  }
  Status Add(const Source &src, uint32_t site, const std::string &text) {
    n++;
    return AppendRecord(w.get(), src, site, "s", Args().Str(text).str(), ts++);
  }
};

bool IsRare(const OwnedRecord &r) { return r.app == "rare"; }

std::vector<OwnedRecord> Read(FaultEnv *env, const RecordFilter *f, RecordingReporter *rep,
                              uint64_t *index_skipped = nullptr, uint64_t *block_reads = nullptr,
                              bool use_index = true) {
  std::unique_ptr<RingReader> r = OpenReader(env, kPath, rep);
  int64_t reads = 0;
  env->before_read = [&reads] { reads++; };
  std::vector<OwnedRecord> out = ReadRecords(r.get(), f, use_index);
  env->before_read = nullptr;
  if (index_skipped && r) *index_skipped = r->blocks_skipped_by_index();
  if (block_reads) *block_reads = uint64_t(reads);
  return out;
}

std::vector<OwnedRecord> Only(const std::vector<OwnedRecord> &all,
                              bool (*keep)(const OwnedRecord &)) {
  std::vector<OwnedRecord> out;
  for (const auto &r : all)
    if (keep(r)) out.push_back(r);
  return out;
}

std::vector<uint64_t> Seqs(const std::vector<OwnedRecord> &v) {
  std::vector<uint64_t> out;
  for (const auto &r : v) out.push_back(r.seq);
  return out;
}

Layout LayoutOf(FaultEnv *env) {
  std::unique_ptr<RingReader> r;
  EXPECT_TRUE(RingReader::Open(env, kPath, nullptr, &r).ok());
  return r ? r->layout() : Layout();
}

// The file after about 1.5 laps (compressed, a block holds ~1,300 of these
// records), with a rare record every 20,011th: most blocks hold none.
void Fill(FaultEnv *env, Writer *wr, uint64_t seed, uint64_t records = 450000) {
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < records; i++) {
    Status s = i % 20011 == 500 ? wr->Rare() : wr->Common(rng);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_TRUE(wr->w->Flush().ok());
  (void)env;
}

// Puts a valid entry (its CRC computed as FORMAT.md says) at entry slot i.
void PutEntry(std::vector<uint8_t> &f, const Layout &l, uint64_t i, uint8_t tier, uint64_t seq,
              uint64_t first_rec, uint32_t count, uint8_t levels) {
  uint8_t *e = f.data() + l.index_off + i * LS_IDX_ENTRY;
  std::memset(e, 0, LS_IDX_ENTRY);
  e[LS_IDX_OFF_TIER] = tier;
  e[LS_IDX_OFF_LEVELS] = levels;
  ls_put_u64(e + LS_IDX_OFF_SEQ, seq);
  ls_put_u64(e + LS_IDX_OFF_FIRST_REC, first_rec);
  ls_put_u32(e + LS_IDX_OFF_COUNT, count);
  ls_put_u64(e + LS_IDX_OFF_MAX_TIME, ~0ull);  // any time; the filter (no bits) cannot match
  ls_put_u32(e + LS_IDX_OFF_CRC, Crc32c(e + 4, LS_IDX_ENTRY - 4));
}

TEST(RingIndex, GeometryFollowsFormatMd) {
  FaultEnv env;
  Writer wr;
  wr.Open(&env);
  const Layout l = LayoutOf(&env);
  // FORMAT.md, "Layout": n = rest / (block_size + 128) + 1 entries, rounded up to 4 KiB.
  const uint64_t index_off = l.dict_off + l.dict_size;
  const uint64_t rest = kFile - index_off;
  const uint64_t size = ((rest / (kBs + 128) + 1) * 128 + 4095) / 4096 * 4096;
  EXPECT_EQ(l.index_off, index_off);
  EXPECT_EQ(l.index_size, size);
  EXPECT_EQ(l.blocks_off, index_off + size);
  EXPECT_LE(uint64_t(l.block_count) * LS_IDX_ENTRY, l.index_size);
  // The superblock says so too (offset 112).
  EXPECT_EQ(ls_get_u64(env.Data(kPath).data() + LS_SB_OFF_INDEX_SIZE), size);
}

TEST(RingIndex, EveryEntrySaysWhatItsBlockSays) {
  FaultEnv env;
  Writer wr;
  wr.Open(&env);
  Fill(&env, &wr, TestSeed(1));
  const Layout l = LayoutOf(&env);
  const std::vector<uint8_t> &f = env.Data(kPath);
  int entries = 0, sealed = 0, partial = 0;
  for (uint64_t i = 0; i < l.block_count; i++) {
    SCOPED_TRACE("slot " + std::to_string(i));
    const uint8_t *h = f.data() + l.blocks_off + i * kBs;
    const uint8_t *e = f.data() + l.index_off + i * LS_IDX_ENTRY;
    ASSERT_EQ(ls_get_u32(h), LS_BLK_MAGIC);  // a lap and a half: every slot written
    if (!(ls_get_u32(h + 48) & LS_BLK_F_SEALED)) {
      // The partial newest block has no entry of its own; its slot may
      // still hold the older lap's.
      partial++;
      EXPECT_TRUE(ls_get_u32(e) == 0 || ls_get_u64(e + LS_IDX_OFF_SEQ) < ls_get_u64(h + 8));
      continue;
    }
    sealed++;
    ASSERT_NE(ls_get_u32(e), 0u) << "a sealed block without an entry";
    entries++;
    ASSERT_EQ(ls_get_u32(e), Crc32c(e + 4, LS_IDX_ENTRY - 4));
    EXPECT_EQ(e[LS_IDX_OFF_TIER], h[62]);
    EXPECT_EQ(e[LS_IDX_OFF_LEVELS], h[61]);
    EXPECT_EQ(ls_get_u64(e + LS_IDX_OFF_SEQ), ls_get_u64(h + 8));
    EXPECT_EQ(ls_get_u64(e + LS_IDX_OFF_FIRST_REC), ls_get_u64(h + 16));
    EXPECT_EQ(ls_get_u32(e + LS_IDX_OFF_COUNT), ls_get_u32(h + 44));
    EXPECT_EQ(ls_get_u32(e + LS_IDX_OFF_BLOCK_CRC), ls_get_u32(h + 4));
    EXPECT_EQ(ls_get_u64(e + LS_IDX_OFF_MIN_TIME), ls_get_u64(h + 64));
    EXPECT_EQ(ls_get_u64(e + LS_IDX_OFF_MAX_TIME), ls_get_u64(h + 72));
    EXPECT_EQ(0, std::memcmp(e + LS_IDX_OFF_BOOT_ID, h + 80, 16));
    EXPECT_EQ(0, std::memcmp(e + LS_IDX_OFF_BLOOM, h + 112, 64));
  }
  EXPECT_EQ(partial, 1);
  EXPECT_EQ(entries, sealed);
  EXPECT_GT(entries, int(l.block_count) / 2);
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env, kPath, nullptr, &r).ok());
  Status s = r->Verify();
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(RingIndex, FilteredReadsAgreeAndReadOnlyWhatMayMatch) {
  FaultEnv env;
  Writer wr;
  wr.Open(&env);
  Fill(&env, &wr, TestSeed(2));
  RecordingReporter rep0;
  const std::vector<OwnedRecord> all = Read(&env, nullptr, &rep0);
  const std::vector<OwnedRecord> rare = Only(all, IsRare);
  ASSERT_GE(rare.size(), 5u);
  const Layout l = LayoutOf(&env);

  RecordFilter by_app, by_uid, by_pid, by_level;
  by_app.apps = {"rare"};
  by_uid.uids = {4242};
  by_pid.pids = {77};
  by_level.levels = 1u << 3;
  for (const RecordFilter *f : {&by_app, &by_uid, &by_pid, &by_level}) {
    RecordingReporter rep, rep_off;
    uint64_t skipped = 0, reads = 0, reads_off = 0;
    std::vector<OwnedRecord> got = Read(&env, f, &rep, &skipped, &reads);
    std::vector<OwnedRecord> got_off = Read(&env, f, &rep_off, nullptr, &reads_off, false);
    EXPECT_EQ(Seqs(Only(got, IsRare)), Seqs(rare));
    EXPECT_EQ(Seqs(Only(got_off, IsRare)), Seqs(rare));
    EXPECT_EQ(rep.corruptions() + rep_off.corruptions(), 0u) << rep.Dump() << rep_off.Dump();
    EXPECT_EQ(rep.lost, 0u);
    // Most blocks hold no rare record: passed over by the index, unread.
    EXPECT_GT(skipped, uint64_t(l.block_count) / 2);
    EXPECT_LT(reads, reads_off / 4)
        << "with the index " << reads << " reads, without " << reads_off;
  }
}

// A read bounded to a few pass-overs per Next (ReaderOptions::
// pass_over_per_next, the daemon's reads) yields and, called again, gives
// the same records as an unbounded one, lost nothing, and counts the
// records of the blocks it passed over; at the end it knows the next
// record's number.
TEST(RingIndex, ABoundedFilteredReadYieldsAndGivesTheSameRecords) {
  FaultEnv env;
  Writer wr;
  wr.Open(&env);
  Fill(&env, &wr, TestSeed(5));
  RecordingReporter rep0;
  RecordFilter by_uid;
  by_uid.uids = {4242};
  const std::vector<OwnedRecord> want = Only(Read(&env, &by_uid, &rep0), IsRare);
  ASSERT_GE(want.size(), 5u);
  RecordingReporter rep;
  std::unique_ptr<RingReader> r;
  ReaderOptions ro;
  ro.crc_retries = 0;
  ro.pass_over_per_next = 3;
  ASSERT_TRUE(RingReader::Open(&env, kPath, &rep, ro, &r).ok());
  r->SetFilter(&by_uid);
  std::vector<uint64_t> got;
  uint64_t yields = 0, returned = 0, most = 0;
  Record rec;
  for (;;) {
    const uint64_t before = r->blocks_skipped();
    Status s = r->Next(&rec);
    most = std::max(most, r->blocks_skipped() - before);
    if (s.IsYield()) {
      yields++;
      continue;
    }
    if (s.IsNotFound()) break;
    ASSERT_TRUE(s.ok()) << s.ToString();
    returned++;
    if (rec.app == "rare") got.push_back(rec.seq);
  }
  EXPECT_EQ(got, Seqs(want));
  EXPECT_EQ(rep.lost, 0u);
  EXPECT_EQ(rep.corruptions(), 0u) << rep.Dump();
  EXPECT_LE(most, 3u) << "blocks passed over by one Next";
  EXPECT_GT(yields, 10u) << r->blocks_skipped() << " passed over";
  // Every record present was returned or in a block passed over.
  const std::vector<OwnedRecord> all = Read(&env, nullptr, &rep0);
  EXPECT_EQ(returned + r->records_skipped(), all.size());
  EXPECT_EQ(r->next_seq(), all.back().seq + 1);
}

// The same when the reader is lapped in a file with tiers: a bounded read
// that yields after the lap still looks for the records it missed in the
// older tiers (the rare records at err, kept there), as an unbounded one.
TEST(RingIndex, ABoundedReadLappedFindsTheKeptRecordsAsAnUnboundedOne) {
  FaultEnv env;
  Writer wr;
  WriterOptions o = Options();
  o.kept_share = o.error_share = 0.125;
  wr.Open(&env, o);
  Fill(&env, &wr, TestSeed(6), 100000);
  RecordFilter by_uid;
  by_uid.uids = {4242};
  struct Follower {
    std::unique_ptr<RingReader> r;
    RecordingReporter rep;
    std::vector<uint64_t> seqs;
    // Reads to the end (Yield: again).
    void Drain() {
      Record rec;
      for (;;) {
        Status s = r->Next(&rec);
        if (s.IsYield()) continue;
        if (s.IsNotFound()) return;
        ASSERT_TRUE(s.ok()) << s.ToString();
        if (rec.app == "rare") seqs.push_back(rec.seq);
      }
    }
  } bounded, unbounded;
  for (Follower *rd : {&bounded, &unbounded}) {
    ReaderOptions ro;
    ro.crc_retries = 0;
    ro.pass_over_per_next = rd == &bounded ? 2 : 0;
    ASSERT_TRUE(RingReader::Open(&env, kPath, &rd->rep, ro, &rd->r).ok());
    rd->r->SetFilter(&by_uid);
    ASSERT_NO_FATAL_FAILURE(rd->Drain());
  }
  // The file laps while they wait (every tier: the oldest record present
  // is newer than where they stopped); the rare records written meanwhile
  // are kept in the error tier, most no longer in tier 0.
  const std::vector<uint64_t> before = unbounded.seqs;
  const uint64_t stopped = wr.n;
  Fill(&env, &wr, TestSeed(7), 600000);
  RecordingReporter rep0;
  const std::vector<OwnedRecord> now = Read(&env, nullptr, &rep0);
  ASSERT_FALSE(now.empty());
  // Lapped: every record present but the rare uid's is newer than where
  // they stopped (the rare uid, far under its share of the last tier, keeps
  // its oldest records there: FORMAT.md, "Tiers").
  for (const OwnedRecord &r : now) {
    if (IsRare(r)) continue;
    ASSERT_GT(r.seq, stopped) << "not lapped";
    break;
  }
  std::vector<uint64_t> want = before;
  for (const OwnedRecord &r : now)
    if (IsRare(r) && r.seq >= stopped) want.push_back(r.seq);
  for (Follower *rd : {&bounded, &unbounded}) ASSERT_NO_FATAL_FAILURE(rd->Drain());
  EXPECT_EQ(unbounded.seqs, want);
  EXPECT_EQ(bounded.seqs, want);
  EXPECT_EQ(bounded.rep.lost, unbounded.rep.lost);
  EXPECT_GT(want.size(), before.size() + 5);
}

// Every entry of a block holding a rare record is made to claim "nothing
// here" in a way the rules refuse: a wrong CRC, an older lap's number, the
// other tier. The records are all still found.
TEST(RingIndex, DamagedOrStaleEntriesNeverHideARecord) {
  for (int how = 0; how < 3; how++) {
    SCOPED_TRACE("case " + std::to_string(how));
    FaultEnv env;
    Writer wr;
    wr.Open(&env);
    Fill(&env, &wr, TestSeed(3));
    RecordingReporter rep0;
    const std::vector<OwnedRecord> rare = Only(Read(&env, nullptr, &rep0), IsRare);
    const Layout l = LayoutOf(&env);
    std::vector<uint8_t> &f = env.Data(kPath);
    for (const OwnedRecord &r : rare) {
      const uint64_t b = r.block_seq, i = b % l.block_count;
      const uint8_t *e = f.data() + l.index_off + i * LS_IDX_ENTRY;
      const uint64_t first = ls_get_u64(e + LS_IDX_OFF_FIRST_REC);
      const uint32_t count = ls_get_u32(e + LS_IDX_OFF_COUNT);
      switch (how) {
        case 0:  // damaged: the summary emptied, the CRC left as it was
          f[l.index_off + i * LS_IDX_ENTRY + LS_IDX_OFF_LEVELS] = 0;
          break;
        case 1:  // an older lap's entry (valid, but another number)
          PutEntry(f, l, i, 0, b >= l.block_count ? b - l.block_count : b + l.block_count, first,
                   count, 0);
          break;
        case 2:  // another tier's
          PutEntry(f, l, i, 1, b, first, count, 0);
          break;
      }
    }
    RecordFilter by_app;
    by_app.apps = {"rare"};
    RecordingReporter rep;
    EXPECT_EQ(Seqs(Only(Read(&env, &by_app, &rep), IsRare)), Seqs(rare));
    // verify names the damaged and the misplaced ones.
    std::unique_ptr<RingReader> r;
    ASSERT_TRUE(RingReader::Open(&env, kPath, nullptr, &r).ok());
    if (how == 0 || how == 2) {
      EXPECT_TRUE(r->Verify().IsCorruption());
    }
  }
}

// Entries claiming "no err, no rare source" for the newest block and the
// 19 after it, synced, as a writer that sealed those blocks before a power
// loss kept only their entries would leave them. Returns the newest block.
uint64_t ForgeEntriesAhead(FaultEnv *env) {
  std::unique_ptr<RingReader> r;
  EXPECT_TRUE(RingReader::Open(env, kPath, nullptr, &r).ok());
  RingReader::Summary sum;
  EXPECT_TRUE(r->Summarize(&sum).ok());
  const Layout l = r->layout();
  std::vector<uint8_t> f = env->Data(kPath);
  for (uint64_t b = sum.newest_block; b < sum.newest_block + 20; b++) {
    PutEntry(f, l, b % l.block_count, 0, b, sum.newest_seq + 1, 100, 1u << 6);
  }
  env->Put(kPath, std::move(f));  // on disk: survives a power loss
  return sum.newest_block;
}

// The writer clears such entries when it opens, and syncs that before it
// writes a block: a power loss right after the open keeps them cleared, and
// a filtered read finds the records the writer wrote under those numbers.
TEST(RingIndex, EntriesAheadOfTheNewestBlockAreClearedAtOpen) {
  FaultEnv env;
  Writer wr;
  wr.Open(&env);
  Fill(&env, &wr, TestSeed(4), 50000);
  ASSERT_TRUE(wr.w->Sync().ok());
  wr.w.reset();
  const uint64_t newest = ForgeEntriesAhead(&env);
  const Layout l = LayoutOf(&env);
  Writer again;
  again.Open(&env);
  env.PowerLoss();  // what the open synced is all that is left
  for (uint64_t b = newest; b < newest + 20; b++) {
    const uint8_t *e = env.Data(kPath).data() + l.IndexOffset(b);
    if (b == newest && ls_get_u32(e) != 0) {
      // The newest block, if sealed, has its own entry again.
      EXPECT_EQ(ls_get_u64(e + LS_IDX_OFF_SEQ), b);
      EXPECT_NE(ls_get_u32(e + LS_IDX_OFF_COUNT), 100u);
      continue;
    }
    EXPECT_EQ(ls_get_u32(e), 0u) << "the entry of block " << b << " survived the open";
  }
  again.w.reset();
  again.Open(&env);
  again.n = 50000;
  again.ts = 1000000;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; i++) {
    Status s = i % 997 == 0 ? again.Rare() : again.Common(rng);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_TRUE(again.w->Flush().ok());
  RecordingReporter rep0, rep;
  const std::vector<OwnedRecord> rare = Only(Read(&env, nullptr, &rep0), IsRare);
  RecordFilter by_app;
  by_app.apps = {"rare"};
  EXPECT_EQ(Seqs(Only(Read(&env, &by_app, &rep), IsRare)), Seqs(rare));
  EXPECT_GT(rare.size(), 15u);
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env, kPath, nullptr, &r).ok());
  Status s = r->Verify();
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// A filtered reader that read the forged entries before the writer opened
// (and cleared them) reads them again once it has found a newer newest
// block: it never judges the new blocks by what it held in memory.
TEST(RingIndex, AFollowingReaderRereadsEntriesTheWriterCleared) {
  FaultEnv env;
  Writer wr;
  wr.Open(&env);
  Fill(&env, &wr, TestSeed(7), 50000);
  ASSERT_TRUE(wr.w->Sync().ok());
  wr.w.reset();
  ForgeEntriesAhead(&env);
  std::unique_ptr<RingReader> r;
  ReaderOptions ro;
  ro.crc_retries = 0;
  RecordingReporter rep;
  ASSERT_TRUE(RingReader::Open(&env, kPath, &rep, ro, &r).ok());
  RecordFilter by_app;
  by_app.apps = {"rare"};
  r->SetFilter(&by_app);
  std::vector<OwnedRecord> got;
  ASSERT_TRUE(ReadAllRecords(r.get(), &got).ok());  // to the end: the window is read
  const size_t before = Only(got, IsRare).size();
  Writer again;
  again.Open(&env);
  again.n = 50000;
  again.ts = 1000000;
  std::mt19937_64 rng(8);
  for (int i = 0; i < 20000; i++) {
    Status s = i % 997 == 0 ? again.Rare() : again.Common(rng);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_TRUE(again.w->Flush().ok());
  ASSERT_TRUE(ReadAllRecords(r.get(), &got).ok());  // follows on
  RecordingReporter rep0;
  const std::vector<OwnedRecord> rare = Only(Read(&env, nullptr, &rep0), IsRare);
  EXPECT_EQ(Only(got, IsRare).size() - before, 21u);  // i = 0, 997, ..., 19940
  EXPECT_EQ(Seqs(Only(got, IsRare)), Seqs(rare));
  // From the start again: the search finds the new newest block, and the
  // blocks below it are judged by the entries as they are now.
  ASSERT_TRUE(r->SeekOldest().ok());
  std::vector<OwnedRecord> again_all;
  ASSERT_TRUE(ReadAllRecords(r.get(), &again_all).ok());
  EXPECT_EQ(Seqs(Only(again_all, IsRare)), Seqs(rare));
  EXPECT_EQ(rep.corruptions(), 0u) << rep.Dump();
}

// The newest block is never judged by an entry, even a valid one naming it
// (a reader cannot know its records are final).
TEST(RingIndex, TheNewestBlockIsAlwaysRead) {
  FaultEnv env;
  Writer wr;
  wr.Open(&env);
  std::mt19937_64 rng(6);
  for (int i = 0; i < 30000; i++) ASSERT_TRUE(wr.Common(rng).ok());
  ASSERT_TRUE(wr.Rare().ok());
  ASSERT_TRUE(wr.w->Flush().ok());
  const Layout l = LayoutOf(&env);
  RecordingReporter rep0;
  const std::vector<OwnedRecord> rare = Only(Read(&env, nullptr, &rep0), IsRare);
  ASSERT_EQ(rare.size(), 1u);
  const uint64_t b = rare[0].block_seq;
  PutEntry(env.Data(kPath), l, b % l.block_count, 0, b, rare[0].seq, 1, 1u << 6);
  RecordFilter by_app;
  by_app.apps = {"rare"};
  RecordingReporter rep;
  EXPECT_EQ(Seqs(Only(Read(&env, &by_app, &rep), IsRare)), Seqs(rare));
}

// Random sources, levels, reopenings and filters: the index never changes
// which records a filtered read returns.
TEST(RingIndex, RandomFiltersGiveTheSameRecordsWithAndWithoutTheIndex) {
  std::mt19937_64 rng(TestSeed());
  FaultEnv env;
  Writer wr;
  wr.Open(&env);
  const uint32_t warn = wr.w->Intern(Site{4, 3, "%s", "i.c"});
  for (int round = 0; round < 4; round++) {
    const uint64_t n = 20000 + rng() % 60000;
    for (uint64_t i = 0; i < n; i++) {
      const uint32_t k = uint32_t(rng() % 40);
      const std::string app = "a" + std::to_string(k % 13);
      Source src{1 + k, 10 + k % 7, 1000 + k % 5, 1000, app, app};
      const uint32_t r = uint32_t(rng() % 1000);
      const uint32_t site = r < 2 ? wr.err : r < 20 ? warn : wr.info;
      ASSERT_TRUE(wr.Add(src, site, "x" + std::to_string(rng() % 1000000)).ok());
    }
    ASSERT_TRUE(wr.w->Flush().ok());
    if (rng() % 2) {  // a restart
      wr.w.reset();
      Status s = RingWriter::Open(&env, kPath, Options(), &wr.w);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }
  const int queries = kAsanBuild ? 5 : 12;  // each reads the file three times
  for (int q = 0; q < queries; q++) {
    RecordFilter f;
    if (rng() % 2) f.apps = {"a" + std::to_string(rng() % 13)};
    if (rng() % 3 == 0) f.uids = {uint32_t(1000 + rng() % 5)};
    if (rng() % 3 == 0) f.pids = {uint32_t(10 + rng() % 7)};
    if (rng() % 2) f.levels = uint8_t(1u << (rng() % 2 ? 3 : 4));
    auto keep = [&f](const OwnedRecord &r) {
      auto in = [](const auto &v, const auto &x) {
        return v.empty() || std::find(v.begin(), v.end(), x) != v.end();
      };
      return (f.levels >> r.level & 1) && in(f.apps, r.app) && in(f.uids, r.uid) &&
             in(f.pids, r.pid);
    };
    auto filtered = [&](const std::vector<OwnedRecord> &v) {
      std::vector<uint64_t> out;
      for (const auto &r : v)
        if (keep(r)) out.push_back(r.seq);
      return out;
    };
    RecordingReporter a, b, c;
    const auto want = filtered(Read(&env, nullptr, &a));
    EXPECT_EQ(filtered(Read(&env, &f, &b)), want) << "query " << q;
    EXPECT_EQ(filtered(Read(&env, &f, &c, nullptr, nullptr, false)), want) << "query " << q;
    EXPECT_EQ(b.corruptions(), 0u) << b.Dump();
  }
}

}  // namespace
}  // namespace logsink::test
