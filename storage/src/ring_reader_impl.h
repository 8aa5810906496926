// ring_reader_impl.h: RingReader's parts shared by its files: TierReader,
// the reader of one tier's ring of blocks (its walk in tier_walk.cc, its
// positioning and whole-tier passes in tier_seek.cc; ring_reader.cc chains
// the tiers), and BlockDecoder's state. Internal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block.h"
#include "logsink/storage/ring.h"
#include "scan.h"
#include "strtab.h"
#include "summary_filter.h"
#include "summary_index.h"

namespace logsink::storage {

using internal::BlockCursor;
using internal::BlockHeader;
using internal::BlockState;

// When the writer opened block bh, by its clock (0: not recorded).
inline uint64_t OpenedNs(const Layout &l, const BlockHeader &bh) {
  return bh.opened ? l.created_ns + uint64_t(bh.opened - 1) * 1000000000ull : 0;
}

// Reads one tier's ring of blocks (FORMAT.md, "Tiers"): the whole of
// RingReader for a file of one tier; RingReader::Impl (ring_reader.cc)
// chains the tiers. In a sparse tier (1 and 2) records are numbered with
// gaps, which are never "lost": the chain reports losses there.
class TierReader {
 public:
  void Init(Env *env, File *file, const std::string &path, internal::StringTable *st,
            const Layout &tier, Reporter *reporter, const ReaderOptions &opts) {
    env_ = env;
    file_ = file;
    path_ = path;
    st_ = st;
    layout_ = tier;
    reporter_ = reporter;
    opts_ = opts;
    sparse_ = tier.tier != 0;
    expander_.UseDictionaryOf(file, tier);
    uint64_t size = 0;
    slots_in_file_ =
        file->Size(&size).ok() ? internal::SlotsInFile(tier, size) : uint64_t(tier.block_count);
    blk_.resize(layout_.block_size);
    tmp_.resize(layout_.block_size);
  }
  Status SeekOldest();
  // At the last n records (all of the tier when it holds fewer), in steps:
  // StartLast(n) finds the newest block (a binary search over headers), each
  // StepLast walks back at most *budget blocks (less what it read: *budget)
  // and says *done with *got (how many) once positioned.
  Status StartLast(uint64_t n);
  Status StepLast(uint64_t *budget, bool *done, uint64_t *got);
  Status SeekTime(uint64_t ts_ns);
  Status SeekEnd();
  // quiet: a jump from seq to the first record present is not reported lost.
  Status SeekSeq(uint64_t seq, bool quiet);
  // img: a sealed block whose records would all be returned next may be
  // handed over whole (RingReader::NextOrBlock); nullptr: records only.
  // bounded: at most opts.pass_over_per_next blocks passed over, then Yield.
  Status Next(Record *rec, BlockImage *img = nullptr, bool *whole = nullptr, bool bounded = false);
  Status Summarize(RingReader::Summary *out);
  // Skip the blocks f rules out (nullptr: none); see RingReader::SetFilter.
  void SetFilter(const internal::SummaryFilter *f, bool use_index);
  Status ListBoots(std::vector<BootInfo> *out);
  // The newest valid block's header (found false: the tier is empty).
  Status Newest(bool *found, BlockHeader *h) { return FindNewest(found, h); }
  // The number of the oldest record present (its block's first; the newest
  // block's when the oldest cannot be read).
  Status OldestRecord(bool *found, uint64_t *first) {
    BlockHeader h;
    Status s = FindNewest(found, &h);
    if (!s.ok() || !*found) return s;
    *first = h.first_rec;
    Got got;
    BlockState st;
    BlockHeader oh;
    s = ReadBlock(Lowest(h.seq), &tmp_, &oh, &got, &st);
    if (s.ok() && got == Got::kValid) *first = oh.first_rec;
    return s;
  }
  uint64_t OpenedNs(const BlockHeader &bh) const { return storage::OpenedNs(layout_, bh); }
  // The next record number wanted (0 before any was positioned).
  uint64_t expect() const { return have_expect_ ? expect_ : 0; }
  // The heap this tier's reader holds now, and the most it holds reading
  // blocks as the writer writes them (RingReader::HeldBytes, BoundBytes).
  size_t HeldBytes() const {
    return blk_.capacity() + tmp_.capacity() + expander_.HeldBytes() + cursor_.HeldBytes() +
           index_.HeldBytes();
  }
  size_t BoundBytes() const;
  uint64_t skipped_ = 0;          // blocks passed over by their summary
  uint64_t skipped_records_ = 0;  // the records they held
  uint64_t index_skipped_ = 0;    // of those, by their summary index entry (never read)

  Layout layout_;

 private:
  // What a slot holds relative to the block sequence number asked for.
  enum class Got {
    kValid,        // that block, CRC checked
    kOverwritten,  // a newer block (or one being written): the asked one is gone
    kAbsent,       // never written, or an older lap's block: not written yet
    kBad,          // corrupt or torn (after retries)
  };
  // Reads block seq. may_race: the writer may be writing that slot right
  // now (the newest block, or the one after it), so a CRC failure is re-read
  // (ReaderOptions) before it counts; elsewhere one read decides.
  Status ReadBlock(uint64_t seq, std::vector<uint8_t> *buf, BlockHeader *h, Got *got,
                   BlockState *state, bool may_race = false);
  Status ReadHeader(uint64_t slot, BlockHeader *h, bool *plausible);
  // The newest valid block now (binary search over headers, then CRC).
  Status FindNewest(bool *found, BlockHeader *h);
  // FindNewest for the Seek* calls: an empty ring positions at its start
  // (record 0, following), so the caller only handles *found.
  Status FindNewestOrRewind(bool *found, BlockHeader *h) {
    Status s = FindNewest(found, h);
    if (s.ok() && !*found) Position(0, true, 0);
    return s;
  }
  uint64_t Lowest(uint64_t newest) const { return internal::OldestLive(layout_, newest); }
  void Position(uint64_t block, bool have_expect, uint64_t expect);
  Status PositionAt(uint64_t block);
  void Report(uint64_t off, const std::string &why) {
    if (reporter_) reporter_->Corruption(off, why);
  }
  // Reports block b_ (once) as damaged or missing and moves past it.
  void SkipDamaged(Got got, BlockState state, const BlockHeader &h);
  // Block b_ is damaged or missing: the first time read it again (the
  // writer may have been writing it), the second SkipDamaged.
  void RereadOrSkip(Got got, BlockState state, const BlockHeader &h);

  // What one pass of Next did (see the comment above Next in tier_walk.cc).
  enum class Step {
    kRecord,      // *rec holds the next record
    kBlock,       // *img holds the next block, whole
    kCaughtUp,    // no new records now
    kAgain,       // moved on (or loaded block b_, or will read it again): another pass
    kPassedOver,  // passed block b_ over by its summary: another pass (always progress)
  };
  // Step 1: the loaded block's next record, or on past its end; false for a
  // partial block read to its end (read it again: it may have grown).
  bool TakeLoaded(Record *rec, Step *step);
  // Steps 2 to 4: a pass of Next that reads block b_ (or its index entry).
  Status ReadStep(BlockImage *img, bool *whole, Step *step);
  // Step 2: *passed when the summary index passed block b_ over.
  Status PassOverByIndex(Step *step, bool *passed);
  // Step 3: block b_ (header h) is valid and may match: load it into the
  // cursor, or hand it over whole in *img.
  Step TakeBlock(const BlockHeader &h, BlockImage *img, bool *whole);
  // Step 4: block b_ is not valid (got, state; h: what the slot claims).
  Status Missing(Got got, BlockState state, const BlockHeader &h, Step *step);

  std::string path_;
  Env *env_ = nullptr;
  File *file_ = nullptr;
  Reporter *reporter_ = nullptr;
  ReaderOptions opts_;
  internal::StringTable *st_ = nullptr;
  bool sparse_ = false;  // tiers 1 and 2: records numbered with gaps
  uint64_t skip_ = 0;    // records Next passes over first (SeekLast in a sparse tier)
  std::vector<uint8_t> blk_, tmp_;
  internal::BlockExpander expander_;
  // The filter blocks are skipped by (filter_on_: there is one), and
  // whether the summary index is asked before a block is read.
  bool filter_on_ = false;
  internal::SummaryFilter filter_;
  bool use_index_ = true;
  bool MayMatch(const BlockHeader &h) const { return !filter_on_ || filter_.MayMatch(h); }
  // Block b_ holds nothing the filter wants (h: its header, or its summary
  // index entry): its records count as read, not lost. kCaughtUp when it is
  // partial (read it again when it grows), else kPassedOver.
  Step PassOver(const BlockHeader &h);
  internal::IndexWindow index_;

  // A SeekLast under way (StartLast, StepLast): the n records wanted, the
  // block reached, its first record, the records counted (sparse) or the
  // one to start at (end - n), and the lowest block there is.
  struct LastWalk {
    bool on = false;
    uint64_t n = 0, b = 0, first = 0, have = 0, end = 0, target = 0, lowest = 0;
  } last_;

  // Position: the block being read, and the next record sequence wanted.
  uint64_t b_ = 0;
  bool loaded_ = false;  // blk_/h_/cursor_ hold block b_
  BlockHeader h_;
  BlockCursor cursor_;
  bool have_expect_ = false;  // false right after a seek: take what the block starts with
  uint64_t expect_ = 0;
  bool gap_ok_ = false;  // a corrupt block was skipped: a jump in records is not "lost"
  // Slots that start inside the file: fewer than block_count in a file cut
  // short (FORMAT.md, "Superblock"); the others hold nothing (Missing).
  uint64_t slots_in_file_ = 0;
  uint64_t reported_ = ~0ull;  // block sequence number last reported (report once)
  uint64_t reread_ = ~0ull;    // block re-read once before it counts as damaged (see Next)
  // The newest block the last FindNewest found (0: none yet). The writer only
  // moves forward, so a block below it that fails its check is damage, not a
  // write in progress: Next skips it without searching again, which keeps
  // reading a ring with many damaged blocks linear.
  bool have_newest_ = false;
  // A pass over all slots found no valid block (FindNewest): the tier was
  // empty. Its first block goes to slot 0, so later searches look no
  // further than the first slots while they still hold no valid block.
  bool seen_empty_ = false;
  uint64_t newest_ = 0;
};

class BlockDecoder::Impl {
 public:
  File *file_ = nullptr;
  Layout layout_;  // the tier's
  internal::StringTable st_;
  bool loaded_ = false;  // st_ read
  internal::BlockExpander expander_;
  BlockCursor cursor_;
};

}  // namespace logsink::storage
