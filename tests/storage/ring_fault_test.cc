// ring_fault_test.cc: fault injection through FaultEnv: a block write cut
// after every possible byte count (a new block over a stale slot, and a
// re-flush of the partial block), a flipped bit in a middle block, a bad
// superblock copy, a stale block of an earlier lap, failed writes and power
// loss. Each asserts exactly which records the reader returns.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fault_env.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

const std::string kPath = "/ring";
constexpr uint32_t kBlocks = 4, kBs = 4096;

// Drives a writer deterministically and keeps the model of what it appended.
struct Driver {
  explicit Driver(FaultEnv *e) : env(e) {}
  FaultEnv *env;
  std::unique_ptr<RingWriter> w;
  std::vector<Model> model;
  Source src{5, 55, 0, 0, "drv", "drv"};
  uint32_t site = 0;

  Status Open() {
    WriterOptions o;
    o.codec = LS_CODEC_NONE;  // the block layout as it is (compression: ring_compress_test)
    o.file_size = RingSize(kBlocks, kBs);
    o.block_size = kBs;
    Status s = RingWriter::Open(env, kPath, o, &w);
    if (s.ok()) site = w->Intern(Site{6, 1, "%s", "f.c"});
    return s;
  }
  // Record i carries a 1000-byte string: 3 records per 4 KiB block.
  Status Add(int i) {
    std::string args = Args().Str(std::string(1000, char('A' + i % 26)) + std::to_string(i)).str();
    RecordIn in;
    in.source = &src;
    in.tid = 1;
    in.site_id = site;
    in.signature = "s";
    in.ts_ns = 1000 + i;
    in.args = reinterpret_cast<const uint8_t *>(args.data());
    in.args_len = args.size();
    uint64_t seq = w->next_record_seq();
    Status s = w->Append(in);
    if (s.ok()) model.push_back(Model{seq, w->current_block_seq(), src.id, 1, 1000u + i, args});
    return s;
  }
};

std::vector<Model> InBlocks(const std::vector<Model> &all, uint64_t lo, uint64_t hi) {
  std::vector<Model> out;
  for (const Model &m : all) {
    if (m.block >= lo && m.block <= hi) out.push_back(m);
  }
  return out;
}

void ExpectRecords(const std::vector<OwnedRecord> &got, const std::vector<Model> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) {
    EXPECT_EQ(got[i].seq, want[i].seq) << i;
    EXPECT_EQ(got[i].args, want[i].args) << i;
  }
}

std::vector<OwnedRecord> Read(FaultEnv *env, RecordingReporter *rep) {
  std::unique_ptr<RingReader> r;
  ReaderOptions ro;
  ro.crc_retries = 0;  // nothing races in these tests
  Status s = RingReader::Open(env, kPath, rep, ro, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return s.ok() ? ReadAll(r.get()) : std::vector<OwnedRecord>();
}

std::vector<uint8_t> Slot(FaultEnv *env, uint64_t block) {
  auto &d = env->Data(kPath);
  uint64_t off = 8192 + 4096 + (block % kBlocks) * kBs;
  return std::vector<uint8_t>(d.begin() + off, d.begin() + off + kBs);
}

// Block S = 5 is sealed over the stale slot of block 1 (second lap). Its one
// pwrite is cut after every K in [0, 4096]: the reader returns exactly the
// blocks whose images are intact.
TEST(Fault, SealWriteCutAtEveryByte) {
  constexpr int kSealTrigger = 18;  // record 18 is the first of block 6: it seals block 5
  FaultEnv ref_env;
  Driver ref(&ref_env);
  ASSERT_TRUE(ref.Open().ok());
  for (int i = 0; i < kSealTrigger; i++) {
    ASSERT_TRUE(ref.Add(i).ok());
  }
  ASSERT_EQ(ref.w->current_block_seq(), 5u);
  const std::vector<uint8_t> old_img = Slot(&ref_env, 5);  // block 1, lap 0
  const int64_t seal_write = ref_env.writes;
  ASSERT_TRUE(ref.Add(kSealTrigger).ok());
  ASSERT_EQ(ref_env.writes, seal_write + 1);  // exactly one pwrite sealed block 5
  const std::vector<uint8_t> new_img = Slot(&ref_env, 5);
  ASSERT_NE(old_img, new_img);

  int torn = 0;
  for (size_t k = 0; k <= kBs; k++) {
    SCOPED_TRACE(testing::Message() << "cut after " << k << " bytes");
    FaultEnv env;
    env.cut_write = seal_write;
    env.cut_after = k;
    Driver d(&env);
    ASSERT_TRUE(d.Open().ok());
    for (int i = 0; i < kSealTrigger; i++) {
      ASSERT_TRUE(d.Add(i).ok());
    }
    ASSERT_FALSE(d.Add(kSealTrigger).ok());  // the process "dies" in this write
    std::vector<uint8_t> img = Slot(&env, 5);
    std::vector<Model> want;
    if (img == new_img) {
      want = InBlocks(ref.model, 2, 5);
    } else if (img == old_img) {
      want = InBlocks(ref.model, 1, 4);
    } else {
      want = InBlocks(ref.model, 2, 4);
      torn++;
    }
    RecordingReporter rep;
    ExpectRecords(Read(&env, &rep), want);
    EXPECT_EQ(rep.lost, 0u);
    for (const auto &b : rep.bad) EXPECT_EQ(b.off, 8192u + 4096 + 1 * kBs) << b.why;
    if (img == new_img || img == old_img) {
      EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
    }

    // Restart the writer on what is left: sequence numbers continue after the
    // newest intact block, and new records are readable after them.
    env.fail_writes = false;
    env.cut_write = -1;
    Driver d2(&env);
    ASSERT_TRUE(d2.Open().ok());
    EXPECT_EQ(d2.w->next_record_seq(), want.back().seq + 1);
    for (int i = 100; i < 104; i++) {
      ASSERT_TRUE(d2.Add(i).ok());
    }
    ASSERT_TRUE(d2.w->Flush().ok());
    RecordingReporter rep2;
    auto got = Read(&env, &rep2);
    ASSERT_GE(got.size(), 4u);
    for (size_t i = 1; i < got.size(); i++) {
      ASSERT_EQ(got[i].seq, got[i - 1].seq + 1);
    }
    EXPECT_EQ(got.back().args, d2.model.back().args);
    EXPECT_TRUE(rep2.bad.empty()) << rep2.Dump();
  }
  // Every cut short of the block's used bytes tears it (but the first bytes,
  // equal in both images, and the last ones when they happen to match).
  const uint32_t used = ls_get_u32(new_img.data() + LS_BLK_OFF_USED);
  EXPECT_LE(torn, int(used));
  EXPECT_GT(torn, int(used) - 16);
}

// Block 6 (slot 2) was flushed with one record; the flush with two records is
// cut after every K. Torn: block 6 is lost whole (its first flush too).
TEST(Fault, PartialFlushCutAtEveryByte) {
  constexpr int kFirst = 18;  // records 0..17 fill blocks 0..5; 18 starts block 6
  FaultEnv ref_env;
  Driver ref(&ref_env);
  ASSERT_TRUE(ref.Open().ok());
  for (int i = 0; i <= kFirst; i++) {
    ASSERT_TRUE(ref.Add(i).ok());
  }
  ASSERT_TRUE(ref.w->Flush().ok());
  const std::vector<uint8_t> old_img = Slot(&ref_env, 6);
  ASSERT_TRUE(ref.Add(kFirst + 1).ok());
  const int64_t flush_write = ref_env.writes;
  ASSERT_TRUE(ref.w->Flush().ok());
  ASSERT_EQ(ref_env.writes, flush_write + 1);
  const std::vector<uint8_t> new_img = Slot(&ref_env, 6);
  ASSERT_EQ(ref.model.back().block, 6u);

  int torn = 0;
  for (size_t k = 0; k <= kBs; k++) {
    SCOPED_TRACE(testing::Message() << "cut after " << k << " bytes");
    FaultEnv env;
    env.cut_write = flush_write;
    env.cut_after = k;
    Driver d(&env);
    ASSERT_TRUE(d.Open().ok());
    for (int i = 0; i <= kFirst; i++) {
      ASSERT_TRUE(d.Add(i).ok());
    }
    ASSERT_TRUE(d.w->Flush().ok());
    ASSERT_TRUE(d.Add(kFirst + 1).ok());
    ASSERT_FALSE(d.w->Flush().ok());
    std::vector<uint8_t> img = Slot(&env, 6);
    std::vector<Model> want;
    if (img == new_img) {
      want = InBlocks(ref.model, 3, 6);
    } else if (img == old_img) {
      want = InBlocks(ref.model, 3, 6);
      want.pop_back();  // only the first flush's record of block 6
    } else {
      want = InBlocks(ref.model, 3, 5);
      torn++;
    }
    RecordingReporter rep;
    ExpectRecords(Read(&env, &rep), want);
    EXPECT_EQ(rep.lost, 0u);
    EXPECT_LE(rep.bad.size(), 1u) << rep.Dump();
    for (const auto &b : rep.bad) EXPECT_EQ(b.off, 8192u + 4096 + 2 * kBs) << b.why;
  }
  const uint32_t used = ls_get_u32(new_img.data() + LS_BLK_OFF_USED);
  EXPECT_LE(torn, int(used));
  EXPECT_GT(torn, int(used) - 16);
}

TEST(Fault, FlippedBitInMiddleBlockSkippedAndReported) {
  FaultEnv env;
  Driver d(&env);
  ASSERT_TRUE(d.Open().ok());
  for (int i = 0; i < 20; i++) {
    ASSERT_TRUE(d.Add(i).ok());
  }
  ASSERT_TRUE(d.w->Flush().ok());  // blocks 3..6 in the ring; block 4 is slot 0
  const uint64_t off = 8192 + 4096 + 0 * kBs;
  env.Data(kPath)[off + 700] ^= 0x10;
  RecordingReporter rep;
  auto got = Read(&env, &rep);
  std::vector<Model> want = InBlocks(d.model, 3, 3), rest = InBlocks(d.model, 5, 6);
  want.insert(want.end(), rest.begin(), rest.end());
  ExpectRecords(got, want);
  ASSERT_EQ(rep.bad.size(), 1u) << rep.Dump();
  EXPECT_EQ(rep.bad[0].off, off);
  EXPECT_NE(rep.bad[0].why.find("CRC"), std::string::npos) << rep.bad[0].why;
  EXPECT_EQ(rep.lost, 0u);  // corruption is not "lost to the writer"
}

TEST(Fault, StaleBlockOfEarlierLapNeverShown) {
  FaultEnv env;
  Driver d(&env);
  ASSERT_TRUE(d.Open().ok());
  for (int i = 0; i < 12; i++) {  // blocks 0..3 (3 sealed)
    ASSERT_TRUE(d.Add(i).ok());
  }
  ASSERT_TRUE(d.w->Flush().ok());
  std::vector<uint8_t> stale = Slot(&env, 1);  // block 1, lap 0
  for (int i = 12; i < 20; i++) {
    ASSERT_TRUE(d.Add(i).ok());
  }
  ASSERT_TRUE(d.w->Flush().ok());  // blocks 3..6; block 5 is in slot 1
  // As if the write of block 5 never reached the disk.
  std::copy(stale.begin(), stale.end(), env.Data(kPath).begin() + 8192 + 4096 + 1 * kBs);
  RecordingReporter rep;
  auto got = Read(&env, &rep);
  std::vector<Model> want = InBlocks(d.model, 3, 4), rest = InBlocks(d.model, 6, 6);
  want.insert(want.end(), rest.begin(), rest.end());
  ExpectRecords(got, want);
  ASSERT_EQ(rep.bad.size(), 1u) << rep.Dump();
  EXPECT_EQ(rep.bad[0].off, 8192u + 4096 + 1 * kBs);
  EXPECT_NE(rep.bad[0].why.find("missing"), std::string::npos) << rep.bad[0].why;
}

TEST(Fault, BadSuperblockCopyUsesTheOther) {
  FaultEnv env;
  Driver d(&env);
  ASSERT_TRUE(d.Open().ok());
  for (int i = 0; i < 5; i++) {
    ASSERT_TRUE(d.Add(i).ok());
  }
  ASSERT_TRUE(d.w->Flush().ok());
  d.w.reset();
  for (uint64_t copy : {0u, 1u}) {
    SCOPED_TRACE(copy);
    FaultEnv e2;
    e2.Put(kPath, env.Data(kPath));
    e2.Data(kPath)[copy * LS_SB_SLOT + 30] ^= 1;  // inside the CRC-covered bytes
    RecordingReporter rep;
    ExpectRecords(Read(&e2, &rep), d.model);
    std::unique_ptr<RingReader> r;
    ASSERT_TRUE(RingReader::Open(&e2, kPath, &rep, &r).ok());
    EXPECT_EQ(r->Verify().code(), Status::Code::kCorruption);
    ASSERT_EQ(rep.bad.size(), 1u) << rep.Dump();
    EXPECT_EQ(rep.bad[0].off, copy * LS_SB_SLOT);
    Driver d2(&e2);
    ASSERT_TRUE(d2.Open().ok());  // the writer opens on the good copy too
    EXPECT_EQ(d2.w->next_record_seq(), 5u);
  }
  // Both copies bad: refused as corrupt (it is ours, so not NotOurs).
  FaultEnv e3;
  e3.Put(kPath, env.Data(kPath));
  e3.Data(kPath)[30] ^= 1;
  e3.Data(kPath)[LS_SB_SLOT + 30] ^= 1;
  std::unique_ptr<RingReader> r;
  EXPECT_EQ(RingReader::Open(&e3, kPath, nullptr, &r).code(), Status::Code::kCorruption);
  Driver d3(&e3);
  EXPECT_EQ(d3.Open().code(), Status::Code::kCorruption);
}

TEST(Fault, SuperblockAlternatesOnWrap) {
  FaultEnv env;
  Driver d(&env);
  ASSERT_TRUE(d.Open().ok());
  for (int i = 0; i < 40; i++) {  // 13 blocks: 3 wraps
    ASSERT_TRUE(d.Add(i).ok());
  }
  EXPECT_EQ(d.w->stats().wraps, 3u);
  auto &data = env.Data(kPath);
  uint64_t gen0 = ls_get_u64(data.data() + LS_SB_OFF_GENERATION);
  uint64_t gen1 = ls_get_u64(data.data() + LS_SB_SLOT + LS_SB_OFF_GENERATION);
  EXPECT_EQ(std::max(gen0, gen1), 4u);  // created with 0 and 1, +1 per wrap
  EXPECT_EQ(std::min(gen0, gen1), 3u);
  EXPECT_EQ(gen0 % 2, 0u);
  uint64_t hint = ls_get_u64(data.data() + (gen0 > gen1 ? 0 : LS_SB_SLOT) + LS_SB_OFF_TAIL_HINT);
  EXPECT_EQ(hint, 12u);  // block 12 started the last lap
}

TEST(Fault, FailedWritesLoseNothingOnceTheyWorkAgain) {
  FaultEnv env;
  Driver d(&env);
  ASSERT_TRUE(d.Open().ok());
  for (int i = 0; i < 3; i++) {
    ASSERT_TRUE(d.Add(i).ok());
  }
  env.fail_writes = true;
  EXPECT_EQ(d.w->Flush().code(), Status::Code::kIOError);
  EXPECT_TRUE(d.w->dirty());
  EXPECT_EQ(d.Add(3).code(), Status::Code::kIOError);  // needs the seal of block 0
  EXPECT_EQ(d.w->next_record_seq(), 3u);
  env.fail_writes = false;
  ASSERT_TRUE(d.Add(3).ok());
  ASSERT_TRUE(d.w->Flush().ok());
  RecordingReporter rep;
  ExpectRecords(Read(&env, &rep), d.model);
  EXPECT_EQ(d.model.size(), 4u);
  EXPECT_TRUE(rep.bad.empty());
}

TEST(Fault, PowerLossKeepsWhatWasSynced) {
  FaultEnv env;
  Driver d(&env);
  ASSERT_TRUE(d.Open().ok());
  for (int i = 0; i < 8; i++) {
    ASSERT_TRUE(d.Add(i).ok());
  }
  ASSERT_TRUE(d.w->Flush().ok());
  ASSERT_TRUE(d.w->Sync().ok());
  std::vector<Model> synced = d.model;
  for (int i = 8; i < 14; i++) {
    ASSERT_TRUE(d.Add(i).ok());
  }
  ASSERT_TRUE(d.w->Flush().ok());
  d.w.reset();
  env.PowerLoss();
  RecordingReporter rep;
  ExpectRecords(Read(&env, &rep), synced);
  EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
  Driver d2(&env);
  ASSERT_TRUE(d2.Open().ok());
  EXPECT_EQ(d2.w->next_record_seq(), 8u);  // the lost records' numbers are reused
  ASSERT_TRUE(d2.Add(50).ok());
  ASSERT_TRUE(d2.w->Flush().ok());
  auto got = Read(&env, &rep);
  ASSERT_EQ(got.size(), 9u);
  EXPECT_EQ(got.back().seq, 8u);
  EXPECT_EQ(got.back().args, d2.model.back().args);
}

// A reader that races the writer's pwrite of the newest block sees a torn
// image; the write completes before the reader's retry, so with retries it
// returns every record and reports nothing; without, it reports the block.
TEST(Fault, CrcFailureOnNewestBlockIsRetried) {
  FaultEnv env;
  Driver d(&env);
  ASSERT_TRUE(d.Open().ok());
  for (int i = 0; i < 4; i++) {  // block 0 sealed, block 1 partial
    ASSERT_TRUE(d.Add(i).ok());
  }
  ASSERT_TRUE(d.w->Flush().ok());
  const std::vector<uint8_t> first = Slot(&env, 1);
  ASSERT_TRUE(d.Add(4).ok());
  ASSERT_TRUE(d.w->Flush().ok());
  const std::vector<uint8_t> second = Slot(&env, 1);
  const uint64_t off = 8192 + 4096 + 1 * kBs;

  for (int retries : {0, 3}) {
    SCOPED_TRACE(retries);
    std::unique_ptr<RingReader> r;
    RecordingReporter rep;
    ReaderOptions ro;
    ro.crc_retries = retries;
    ro.crc_retry_sleep_us = 0;
    // The slot holds the first flush; the reader reads records 0..3.
    std::copy(first.begin(), first.end(), env.Data(kPath).begin() + off);
    ASSERT_TRUE(RingReader::Open(&env, kPath, &rep, ro, &r).ok());
    auto got = ReadAll(r.get());
    ASSERT_EQ(got.size(), 4u);
    // Now a torn image (new header, old tail): the next read of the slot
    // fails its CRC; the write "completes" right after that read.
    std::vector<uint8_t> torn = first;
    std::copy(second.begin(), second.begin() + 100, torn.begin());
    std::copy(torn.begin(), torn.end(), env.Data(kPath).begin() + off);
    int slot_reads = 0;
    env.before_read = [&] {
      // With retries the 2nd read is the retry of the slot: the write lands just before it.
      if (++slot_reads == 2 && retries) {
        std::copy(second.begin(), second.end(), env.Data(kPath).begin() + off);
      }
    };
    Record rec;
    Status s = r->Next(&rec);
    env.before_read = nullptr;
    if (retries) {
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(slot_reads, 2);  // the torn read and its retry, no search for the tail
      EXPECT_EQ(rec.seq, 4u);
      EXPECT_TRUE(rep.bad.empty()) << rep.Dump();
    } else {
      EXPECT_TRUE(s.IsNotFound());
      ASSERT_EQ(rep.bad.size(), 1u);
      EXPECT_EQ(rep.bad[0].off, off);
      std::copy(second.begin(), second.end(), env.Data(kPath).begin() + off);
      ASSERT_TRUE(r->Next(&rec).ok());  // the write has completed since
      EXPECT_EQ(rec.seq, 4u);
    }
  }
}

// SeekLast reads O(log blocks + n) blocks, not the ring.
// Writes 256 * 3 + 100 records of about 1000 bytes into a ring of 256
// blocks: it wraps once, so the newest block is in the middle.
void WriteWrappedRing(FaultEnv *env) {
  std::unique_ptr<RingWriter> w = OpenRing(env, kPath, 256, kBs);
  ASSERT_TRUE(w);
  uint32_t site = w->Intern(Site{6, 1, "%s", "f.c"});
  Source src{1, 1, 1, 1, "a", "b"};
  std::string args = Args().Str(std::string(1000, 'z')).str();
  for (int i = 0; i < 256 * 3 + 100; i++)
    ASSERT_TRUE(AppendRecord(w.get(), src, site, "s", args, 0, 0).ok());
  ASSERT_TRUE(w->Flush().ok());
}

TEST(Fault, SeekLastDoesNotScanTheRing) {
  FaultEnv env;
  ASSERT_NO_FATAL_FAILURE(WriteWrappedRing(&env));
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env, kPath, nullptr, &r).ok());
  for (uint64_t n : {1u, 10u}) {
    env.reads = 0;
    ASSERT_TRUE(r->SeekLast(n).ok());
    auto got = ReadAll(r.get());
    ASSERT_EQ(got.size(), n);
    EXPECT_EQ(got.back().seq, 256u * 3 + 99);
    // Binary search: 2 + log2(256) header reads, the candidate, n / 3 + 1
    // blocks back, their reads by Next, and a final "nothing more" probe.
    EXPECT_LE(env.reads, int64_t(2 + 8 + 1 + 2 * (n / 3 + 2) + 14)) << n;
  }
}

// FORMAT.md, "Reading": the tail search's probes and steps check a block's
// header only, not its CRC, so a block whose payload is damaged still tells
// the search where it is. With every block but the newest damaged so, the
// last record is found in about as many reads as in a sound ring; a search
// that skipped CRC failures would find none of slots 0..7 valid and scan
// every slot.
TEST(Fault, TailSearchPassesOverDamagedPayloads) {
  FaultEnv env;
  ASSERT_NO_FATAL_FAILURE(WriteWrappedRing(&env));
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env, kPath, nullptr, &r).ok());
  const Layout l = r->layout();
  ASSERT_TRUE(r->SeekLast(1).ok());
  auto sound = ReadAll(r.get());
  ASSERT_EQ(sound.size(), 1u);
  const uint64_t newest_block = sound.back().block_seq;
  for (uint64_t b = newest_block - l.block_count + 1; b < newest_block; b++)
    env.Data(kPath)[l.SlotOffset(b) + LS_BLK_HDR + 10] ^= 0x10;  // payload only
  ASSERT_TRUE(RingReader::Open(&env, kPath, nullptr, &r).ok());
  env.reads = 0;
  ASSERT_TRUE(r->SeekLast(1).ok());
  auto got = ReadAll(r.get());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.back().seq, 256u * 3 + 99);
  EXPECT_LE(env.reads, int64_t(2 + 8 + 1 + 2 * 2 + 14));  // as SeekLastDoesNotScanTheRing
}

// A damaged header that claims a later lap of its slot (CRC failing) is no
// proof that the writer lapped the reader, and a damaged block between valid
// ones does not hide the newer ones: for the block d = 1..8 before the newest
// so damaged, the last record is found, "the last n" are at most n, and a
// read from the oldest reports the damaged block and reads every other
// record up to the newest. (Before: the search could stop short of the
// damaged block and the reader, taking the claim for a lap, read on past
// the block it had found newest: SeekLast(1) gave a whole block.)
TEST(Fault, DamagedHeaderClaimingALapIsNoLap) {
  for (uint64_t d = 1; d <= 8; d++) {
    FaultEnv env;
    ASSERT_NO_FATAL_FAILURE(WriteWrappedRing(&env));
    std::unique_ptr<RingReader> r;
    ASSERT_TRUE(RingReader::Open(&env, kPath, nullptr, &r).ok());
    const Layout l = r->layout();
    ASSERT_TRUE(r->SeekLast(1).ok());
    const uint64_t newest_block = ReadAll(r.get()).back().block_seq;
    uint8_t *hdr = &env.Data(kPath)[l.SlotOffset(newest_block - d)];
    ls_put_u64(hdr + LS_BLK_OFF_SEQ, newest_block - d + 1000 * l.block_count);
    RecordingReporter rep;
    ASSERT_TRUE(RingReader::Open(&env, kPath, &rep, &r).ok());
    for (uint64_t n : {1u, 5u}) {
      ASSERT_TRUE(r->SeekLast(n).ok());
      auto got = ReadAll(r.get());
      ASSERT_FALSE(got.empty()) << d;
      EXPECT_LE(got.size(), n) << d;
      EXPECT_EQ(got.back().seq, 256u * 3 + 99) << d;
    }
    ASSERT_TRUE(r->SeekOldest().ok());
    auto all = ReadAll(r.get());
    ASSERT_FALSE(all.empty()) << d;
    EXPECT_EQ(all.back().seq, 256u * 3 + 99) << d;
    for (const auto &rec : all) EXPECT_NE(rec.block_seq, newest_block - d) << d;
    EXPECT_EQ(rep.bad.size(), 1u) << d << rep.Dump();
  }
}

}  // namespace
}  // namespace logsink::test
