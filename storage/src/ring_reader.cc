// ring_reader.cc: RingReader: reads records oldest -> newest by block
// sequence number, seeks (oldest, last n, time, end) with binary searches over
// block headers, follows a live writer and reports lost and skipped data.
#include <algorithm>
#include <cstring>
#include <vector>

#include "block.h"
#include "scan.h"
#include "strtab.h"
#include "summary.h"
#include "summary_index.h"
#include "superblock.h"
#include "verify.h"

namespace logsink::storage {

using internal::BlockCursor;
using internal::BlockHeader;
using internal::BlockState;

namespace {

// A record as Next returns it: d of the block with header h (opened_ns: when
// its writer opened it), its site looked up in st (reloaded from file when
// the writer interned it since).
void FillRecord(const internal::DecodedRecord &d, const BlockHeader &h, uint64_t opened_ns,
                internal::StringTable *st, File *file, Record *rec) {
  // Every field, one by one (no `*rec = Record()`: per record, a reset of
  // the whole struct costs as much as the rest). A field added to Record
  // must be set here too.
  rec->kind = d.kind;
  rec->seq = h.first_rec + d.seq_off;
  rec->block_seq = h.seq;
  rec->block_opened_ns = opened_ns;
  rec->boot_id = h.boot_id;
  rec->block_open_mono_ns = h.open_mono;
  rec->block_open_real_ns = h.open_real;
  rec->ts_ns = d.ts;
  rec->source_id = d.has_source ? d.source_id : 0;
  if (d.source) {
    rec->pid = d.source->pid;
    rec->uid = d.source->uid;
    rec->gid = d.source->gid;
    rec->app = d.source->app;
    rec->comm = d.source->comm;
    rec->unit = d.source->unit;
  } else {
    rec->pid = rec->uid = rec->gid = 0;
    rec->app = rec->comm = rec->unit = {};
  }
  if (d.kind == Record::Kind::kDropped) {
    rec->dropped_count = d.dropped_count;
    rec->dropped_since_ns = d.dropped_since;
    rec->tid = 0;
    rec->site_id = 0;
    rec->site_known = false;
    rec->site = Site();
    rec->args = {};
    rec->truncated = 0;
    return;
  }
  rec->dropped_count = rec->dropped_since_ns = 0;
  rec->tid = d.tid;
  rec->site_id = d.site_id;
  if (d.site_id == 0) {
    rec->site = d.inline_site;
    rec->site_known = true;
  } else {
    rec->site_known = st->Get(d.site_id, &rec->site);
    // An id above the table's last one: the writer interned it since. (One
    // at or below it that is not there is damaged or lost for good.)
    if (!rec->site_known && d.site_id > st->last_id() && st->Load(file).ok()) {
      rec->site_known = st->Get(d.site_id, &rec->site);
    }
    if (!rec->site_known) rec->site = Site();
  }
  rec->args = std::string_view(reinterpret_cast<const char *>(d.args), d.args_len);
  rec->truncated = d.truncated;
}

uint64_t OpenedNs(const Layout &l, const BlockHeader &bh) {
  return bh.opened ? l.created_ns + uint64_t(bh.opened - 1) * 1000000000ull : 0;
}

// Reads one tier's ring of blocks (FORMAT.md, "Tiers"): the whole of
// RingReader for a file of one tier; RingReader::Impl below chains the
// tiers. In a sparse tier (1 and 2) records are numbered with gaps, which
// are never "lost": the chain reports losses there.
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
    blk_.resize(layout_.block_size);
    tmp_.resize(layout_.block_size);
  }
  Status SeekOldest();
  // The last n records (all of the tier when it holds fewer); *got: how many.
  Status SeekLast(uint64_t n, uint64_t *got);
  Status SeekTime(uint64_t ts_ns);
  Status SeekEnd();
  // quiet: a jump from seq to the first record present is not reported lost.
  Status SeekSeq(uint64_t seq, bool quiet);
  // img: a sealed block whose records would all be returned next may be
  // handed over whole (RingReader::NextOrBlock); nullptr: records only.
  Status Next(Record *rec, BlockImage *img = nullptr, bool *whole = nullptr);
  Status Summarize(RingReader::Summary *out);
  void SetBlockFilter(const BlockFilter *f);
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
  uint64_t skipped_ = 0;        // blocks passed over by their summary
  uint64_t index_skipped_ = 0;  // of those, by their summary index entry (never read)

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
  // The block filter, with its keys hashed once.
  bool filter_on_ = false;
  BlockFilter filter_;
  std::vector<uint64_t> uid_keys_, pid_keys_, app_keys_, unit_keys_;
  bool MayMatch(const BlockHeader &h) const;
  // Block b_ holds nothing the filter wants (h: its header, or its summary
  // index entry): its records count as read, not lost. NotFound when it is
  // partial (read it again when it grows).
  Status PassOver(const BlockHeader &h);
  internal::IndexWindow index_;

  // Position: the block being read, and the next record sequence wanted.
  uint64_t b_ = 0;
  bool loaded_ = false;  // blk_/h_/cursor_ hold block b_
  BlockHeader h_;
  BlockCursor cursor_;
  bool have_expect_ = false;  // false right after a seek: take what the block starts with
  uint64_t expect_ = 0;
  bool gap_ok_ = false;        // a corrupt block was skipped: a jump in records is not "lost"
  uint64_t reported_ = ~0ull;  // block sequence number last reported (report once)
  uint64_t reread_ = ~0ull;    // block re-read once before it counts as damaged (see Next)
  // The newest block the last FindNewest found (0: none yet). The writer only
  // moves forward, so a block below it that fails its check is damage, not a
  // write in progress: Next skips it without searching again, which keeps
  // reading a ring with many damaged blocks linear.
  bool have_newest_ = false;
  uint64_t newest_ = 0;
};

Status TierReader::ReadHeader(uint64_t slot, BlockHeader *h, bool *plausible) {
  uint8_t buf[LS_BLK_HDR];
  size_t got = 0;
  Status s = file_->PRead(layout_.blocks_off + slot * layout_.block_size, buf, sizeof buf, &got);
  if (!s.ok()) return s;
  if (got < sizeof buf) std::memset(buf + got, 0, sizeof buf - got);
  *h = internal::ParseBlockHeader(buf);
  *plausible = internal::CheckBlockHeader(*h, layout_, slot) == BlockState::kValid;
  return Status::OK();
}

Status TierReader::ReadBlock(uint64_t seq, std::vector<uint8_t> *buf, BlockHeader *h, Got *got,
                             BlockState *state, bool may_race) {
  const uint64_t slot = seq % layout_.block_count;
  uint32_t sleep_us = opts_.crc_retry_sleep_us;
  const int retries = may_race ? opts_.crc_retries : 0;
  for (int attempt = 0;; attempt++) {
    size_t n = 0;
    Status s = file_->PRead(layout_.SlotOffset(seq), buf->data(), layout_.block_size, &n);
    if (!s.ok()) return s;
    if (n < layout_.block_size) std::memset(buf->data() + n, 0, layout_.block_size - n);
    *state = internal::CheckBlock(buf->data(), layout_, slot, h);
    if (*state != BlockState::kBadCrc || attempt >= retries) break;
    // Possibly a read racing the writer's pwrite of this slot: look again.
    if (sleep_us) {
      env_->SleepMicros(sleep_us);
      sleep_us *= 2;
    }
  }
  switch (*state) {
    case BlockState::kValid:
      *got = h->seq == seq ? Got::kValid : h->seq > seq ? Got::kOverwritten : Got::kAbsent;
      break;
    case BlockState::kBadData:
      *got = Got::kBad;
      break;
    case BlockState::kEmpty:
      *got = Got::kAbsent;
      break;
    case BlockState::kBadHeader:
      *got = Got::kBad;
      break;
    case BlockState::kBadCrc:
      // A plausible header naming a later block: the asked one is gone either way.
      *got = h->seq > seq ? Got::kOverwritten : Got::kBad;
      break;
  }
  return Status::OK();
}

// Block sequence numbers increase by one from slot to slot up to the newest
// block, and the slot after it holds an older lap's block (FORMAT.md,
// "Reading"). From an anchor (a whole valid block), binary search for the
// last slot, going forward and wrapping, that continues the anchor's
// sequence. Anchors tried: slots 0..kAnchorSlots-1, then the newest block
// found before, then (a ring damaged at its start) a scan of every slot for
// the newest valid block.
constexpr uint64_t kAnchorSlots = 8;

Status TierReader::FindNewest(bool *found, BlockHeader *out) {
  *found = false;
  const uint64_t count = layout_.block_count;
  BlockHeader h;
  bool ok = false;
  uint64_t anchor = 0;
  // The anchor must be a whole valid block (CRC checked), not just a
  // plausible header: a damaged slot claiming some far-off sequence number
  // would otherwise send the search astray.
  auto try_slot = [&](uint64_t slot) -> Status {
    size_t got = 0;
    Status s = file_->PRead(layout_.blocks_off + slot * layout_.block_size, tmp_.data(),
                            layout_.block_size, &got);
    if (!s.ok()) return s;
    if (got < layout_.block_size) std::memset(tmp_.data() + got, 0, layout_.block_size - got);
    ok = internal::CheckBlock(tmp_.data(), layout_, slot, &h) == BlockState::kValid;
    if (ok) anchor = slot;
    return Status::OK();
  };
  for (uint64_t slot = 0; !ok && slot < std::min<uint64_t>(count, kAnchorSlots); slot++) {
    Status s = try_slot(slot);
    if (!s.ok()) return s;
  }
  if (!ok && have_newest_) {
    Status s = try_slot(newest_ % count);
    if (!s.ok()) return s;
  }
  if (!ok) {
    // Costs one pass over the ring; only a ring whose first slots are all
    // damaged gets here, and the newest block found then anchors later searches.
    Status s = internal::ForEachSlot(file_, layout_, [&](uint64_t slot, const uint8_t *img) {
      BlockHeader bh;
      if (internal::CheckBlock(img, layout_, slot, &bh) != BlockState::kValid) return;
      if (!ok || bh.seq > h.seq) {
        ok = true;
        h = bh;
        anchor = slot;
      }
    });
    if (!s.ok()) return s;
  }
  if (!ok) return Status::OK();  // empty ring
  const uint64_t base = h.seq;
  uint64_t lo = 0, hi = count - 1;  // offsets from the anchor slot
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2;
    Status s = ReadHeader((anchor + mid) % count, &h, &ok);
    if (!s.ok()) return s;
    if (ok && h.seq == base + mid)
      lo = mid;
    else
      hi = mid - 1;
  }
  uint64_t cand = base + lo;
  // In a sound ring the search lands on the newest block; a damaged header
  // can stop it short, so go on while the next slot holds the next block
  // (one extra header read in the sound case).
  for (uint64_t fwd = 0; fwd < count; fwd++) {
    Status s = ReadHeader((cand + 1) % count, &h, &ok);
    if (!s.ok()) return s;
    if (!ok || h.seq != cand + 1) break;
    cand++;
  }
  // The candidate's header is plausible; walk back past torn or corrupt
  // blocks. Only the candidate itself may be racing the writer's pwrite.
  for (uint64_t back = 0; back < count; back++) {
    Got got;
    BlockState st;
    Status s = ReadBlock(cand, &tmp_, &h, &got, &st, back == 0);
    if (!s.ok()) return s;
    if (got == Got::kValid) {
      *found = true;
      *out = h;
      if (!have_newest_ || h.seq > newest_) newest_ = h.seq;
      have_newest_ = true;
      return Status::OK();
    }
    if (cand == 0) break;
    cand--;
  }
  return Status::OK();
}

void TierReader::Position(uint64_t block, bool have_expect, uint64_t expect) {
  skip_ = 0;
  b_ = block;
  loaded_ = false;
  have_expect_ = have_expect;
  expect_ = expect;
  gap_ok_ = false;
}

Status TierReader::SeekOldest() {
  bool found;
  BlockHeader h;
  Status s = FindNewestOrRewind(&found, &h);  // empty: every record from 0 on is expected
  if (!s.ok() || !found) return s;
  return PositionAt(Lowest(h.seq));
}

// Positions at the start of block b, expecting its first record (so records
// overwritten before the first Next are reported lost).
Status TierReader::PositionAt(uint64_t b) {
  Got got;
  BlockState st;
  BlockHeader h;
  Status s = ReadBlock(b, &tmp_, &h, &got, &st);
  if (!s.ok()) return s;
  if (got == Got::kValid)
    Position(b, true, h.first_rec);
  else
    Position(b, false, 0);  // damaged or already overwritten: take what comes
  return Status::OK();
}

Status TierReader::SeekEnd() {
  bool found;
  BlockHeader h;
  Status s = FindNewestOrRewind(&found, &h);
  if (s.ok() && found) Position(h.seq, true, h.first_rec + h.count);
  return s;
}

Status TierReader::SeekLast(uint64_t n, uint64_t *got) {
  bool found;
  BlockHeader h;
  *got = 0;
  Status s = FindNewestOrRewind(&found, &h);
  if (!s.ok() || !found) return s;
  if (sparse_) {
    // Numbers have gaps: count records back block by block instead.
    uint64_t b = h.seq, have = h.count, first = h.first_rec;
    const uint64_t lowest = Lowest(h.seq);
    while (have < n && b > lowest) {
      Got g;
      BlockState st;
      BlockHeader prev;
      s = ReadBlock(b - 1, &tmp_, &prev, &g, &st);
      if (!s.ok()) return s;
      if (g != Got::kValid || prev.first_rec >= first) break;
      b--;
      first = prev.first_rec;
      have += prev.count;
    }
    Position(b, true, first);
    gap_ok_ = true;
    skip_ = have > n ? have - n : 0;
    *got = std::min(have, n);
    return Status::OK();
  }
  const uint64_t end = h.first_rec + h.count;
  const uint64_t target = end > n ? end - n : 0;
  const uint64_t lowest = Lowest(h.seq);
  uint64_t b = h.seq, first = h.first_rec;
  // Walk back only as far as the n records need.
  while (first > target && b > lowest) {
    Got got;
    BlockState st;
    BlockHeader prev;
    s = ReadBlock(b - 1, &tmp_, &prev, &got, &st);
    if (!s.ok()) return s;
    if (got != Got::kValid) break;  // overwritten or corrupt: start after it
    // Only a block whose records end where the next one's begin is taken (in
    // a sound ring every one does): a damaged header claiming other numbers
    // must not make "the last n" more than n.
    if (prev.first_rec + prev.count != first) break;
    b--;
    first = prev.first_rec;
  }
  Position(b, true, std::max(target, first));
  *got = end - std::max(target, first);
  return Status::OK();
}

Status TierReader::SeekTime(uint64_t ts_ns) {
  bool found;
  BlockHeader h;
  Status s = FindNewestOrRewind(&found, &h);
  if (!s.ok() || !found) return s;
  const uint64_t from = ts_ns > kClockSlackNs ? ts_ns - kClockSlackNs : 0;
  // Whether block header bh is at or past the time searched for: by its open
  // time when it has one (only grows), else (older files) by its timestamps.
  auto reaches = [&](const BlockHeader &bh) {
    return bh.opened ? OpenedNs(bh) >= from : bh.max_ts >= ts_ns;
  };
  if (!h.opened && h.max_ts < ts_ns) {  // nothing that late yet: follow from the end
    Position(h.seq, true, h.first_rec + h.count);
    return Status::OK();
  }
  // First block that reaches the time.
  const uint64_t lowest = Lowest(h.seq);
  uint64_t lo = lowest, hi = h.seq;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    BlockHeader mh;
    bool ok;
    s = ReadHeader(mid % layout_.block_count, &mh, &ok);
    if (!s.ok()) return s;
    if (ok && mh.seq == mid && reaches(mh))
      hi = mid;
    else
      lo = mid + 1;
  }
  // Records of the block before it may have been received after `from`.
  if (h.opened && lo > lowest) lo--;
  return PositionAt(lo);
}

Status TierReader::SeekSeq(uint64_t seq, bool quiet) {
  bool found;
  BlockHeader h;
  Status s = FindNewestOrRewind(&found, &h);
  if (!s.ok()) return s;
  if (!found) {
    Position(0, true, seq);
    gap_ok_ = quiet;
    return Status::OK();
  }
  if (seq >= h.first_rec) {  // in the newest block, or past it
    Position(h.seq, true, sparse_ ? seq : std::min(seq, h.first_rec + h.count));
    gap_ok_ = quiet;
    return Status::OK();
  }
  // The last block whose first record is <= seq (first records grow with
  // the block sequence number).
  uint64_t lo = Lowest(h.seq), hi = h.seq;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2;
    BlockHeader mh;
    bool ok;
    s = ReadHeader(mid % layout_.block_count, &mh, &ok);
    if (!s.ok()) return s;
    if (ok && mh.seq == mid && mh.first_rec <= seq)
      lo = mid;
    else
      hi = mid - 1;
  }
  // Expecting seq: a block that starts later means seq..first-1 were lost.
  Position(lo, true, seq);
  gap_ok_ = quiet;
  return Status::OK();
}

void TierReader::SkipDamaged(Got got, BlockState state, const BlockHeader &h) {
  // A block older than the newest is missing or corrupt: report it once and
  // go on after it (a jump in record numbers there is not "lost").
  if (reported_ != b_) {
    std::string why;
    if (got == Got::kBad) {
      why = internal::BlockStateName(state);
    } else {
      why = "block ";
      why += std::to_string(b_);
      why += " is missing (slot holds ";
      if (state == BlockState::kEmpty) {
        why += "nothing";
      } else {
        why += "block ";
        why += std::to_string(h.seq);
      }
      why += ")";
    }
    Report(layout_.SlotOffset(b_), why);
    reported_ = b_;
  }
  gap_ok_ = true;
  b_++;
}

// Next is a loop over one question: "what is in block b_ now?". Each pass
// does exactly one of these, and every `continue` has moved the position:
//   1. loaded_ (block b_ is decoded in cursor_): return its next record with
//      sequence >= expect_; at the end of a sealed block, or at a malformed
//      entry (reported once), go to b_ + 1; a partial block falls to 2.
//   2. read block b_. Valid: load it (a partial block that did not grow is
//      "no new records"), first counting a jump in sequence numbers as lost
//      unless gap_ok_ says a damaged block was skipped just before.
//   3. not valid: ask FindNewest. Lapped by the writer -> jump to the oldest
//      block present; b_ is newest now -> read again; b_ is past the newest
//      -> caught up ("no new records"; a torn newest block is reported once);
//      else b_ is missing between valid blocks -> read it once more (reread_:
//      the writer may have been mid-write), then report it and skip it.
// The state: b_ (block), expect_/have_expect_ (next record wanted; unset after
// a seek), gap_ok_ (skipped damage: a jump is not loss), reported_ (report a
// block once), reread_ (re-read a block once). The guard only turns a damaged
// ring that would loop forever into Corruption; a sound ring never nears it.
Status TierReader::Next(Record *rec, BlockImage *img, bool *whole) {
  if (whole) *whole = false;
  const uint64_t count = layout_.block_count;
  for (int guard = 0; guard < 4 * int(std::min<uint64_t>(count, 1 << 20)) + 16; guard++) {
    if (loaded_) {
      internal::DecodedRecord d;
      BlockCursor::Result r;
      while ((r = cursor_.Next(&d)) == BlockCursor::kRecord) {
        uint64_t seq = h_.first_rec + d.seq_off;
        if (have_expect_ && seq < expect_) continue;  // already returned (or before the seek)
        if (skip_) {
          skip_--;
          continue;
        }
        FillRecord(d, h_, OpenedNs(h_), st_, file_, rec);
        have_expect_ = true;
        expect_ = seq + 1;
        return Status::OK();
      }
      if (r == BlockCursor::kMalformed) {
        if (reported_ != b_) {
          Report(layout_.SlotOffset(b_) + cursor_.pos(), "malformed entry");
          reported_ = b_;
        }
        gap_ok_ = true;
        b_++;
        loaded_ = false;
        continue;
      }
      if (h_.sealed()) {
        b_++;
        loaded_ = false;
        continue;
      }
      // A partial block: re-read it below and see whether it grew.
    }

    Got got;
    BlockState state;
    BlockHeader h;
    Status s;
    // Below the newest block found, a filtered read asks the summary index
    // first (FORMAT.md, "Summary index"): an entry that cannot match passes
    // the block over without reading it; no entry, or one that may match,
    // reads the block as always.
    // (Not where the newest block seen says the writer lapped b_: reading
    // it finds out, and reports the records lost.)
    if (filter_on_ && filter_.use_index && !loaded_ && have_newest_ && b_ < newest_ &&
        b_ + count > newest_) {
      bool have = false;
      s = index_.Get(file_, layout_, b_, newest_, &h, &have);
      if (!s.ok()) return s;
      if (have && !MayMatch(h)) {
        index_skipped_++;
        s = PassOver(h);
        if (!s.ok()) return s;
        guard--;  // a pass-over always moves on by one block: not a loop
        continue;
      }
    }
    s = ReadBlock(b_, &blk_, &h, &got, &state, !have_newest_ || b_ >= newest_);
    if (!s.ok()) return s;
    if (got == Got::kValid && !MayMatch(h)) {
      s = PassOver(h);
      if (!s.ok()) return s;
      guard--;  // as above
      continue;
    }
    if (got == Got::kValid) {
      // Records are only appended: the same count is the same block.
      if (loaded_ && h.count == h_.count && h.raw == h_.raw && h.flags == h_.flags) {
        return Status::NotFound("no new records");  // the partial block did not grow
      }
      // The next record wanted once this block is taken, and the records
      // the writer overwrote before it.
      uint64_t expect = expect_, lost = 0;
      if (!gap_ok_ && have_expect_ && h.first_rec > expect) {
        lost = h.first_rec - expect;
        expect = h.first_rec;
      }
      if (!have_expect_ || gap_ok_) expect = std::max(gap_ok_ ? expect : 0, h.first_rec);
      // Every record of a sealed block is wanted: hand it over undecoded.
      const bool hand = img && h.sealed() && !sparse_ && skip_ == 0 && expect == h.first_rec;
      const uint8_t *entries = hand ? nullptr : expander_.Expand(blk_.data(), h);
      if (!hand && !entries) {
        // The CRC passed, so this is no write in progress: damage (or a crafted file).
        loaded_ = false;
        SkipDamaged(Got::kBad, BlockState::kBadData, h);
        continue;
      }
      if (lost && reporter_ && !sparse_) reporter_->Lost(lost);
      have_expect_ = true;
      expect_ = expect;
      gap_ok_ = false;
      if (hand) {
        img->bytes.assign(blk_.begin(), blk_.end());
        img->block_seq = h.seq;
        img->first_seq = h.first_rec;
        img->count = h.count;
        img->offset = layout_.SlotOffset(b_);
        expect_ = h.first_rec + h.count;
        loaded_ = false;
        b_++;
        *whole = true;
        return Status::OK();
      }
      h_ = h;
      cursor_.Reset(entries, h_);
      loaded_ = true;
      continue;  // the cursor skips records before expect_
    }
    loaded_ = false;

    // Below the newest block seen and not lapped by it: the writer is done
    // with block b_, so this is damage (or the writer lapping b_ right now,
    // which the re-read shows as a valid newer block). A slot whose damaged
    // header claims a newer block is damage too: only a valid newer block
    // proves a lap, or a slot holding the block right after the newest (the
    // writer's write in progress, or torn by a crash): both take the search
    // below. Otherwise no search, so each damaged block costs two reads.
    const bool maybe_lap =
        got == Got::kOverwritten && (state == BlockState::kValid || h.seq == newest_ + 1);
    if (!maybe_lap && have_newest_ && b_ < newest_ && b_ + count > newest_) {
      if (reread_ != b_) {
        reread_ = b_;
        continue;
      }
      SkipDamaged(got, state, h);
      continue;
    }

    bool found;
    BlockHeader newest;
    s = FindNewest(&found, &newest);
    if (!s.ok()) return s;
    if (got == Got::kOverwritten || (found && b_ + count <= newest.seq)) {
      // Lapped by the writer: go on at the oldest block present. The records
      // skipped are reported as lost when the next block is read.
      uint64_t lowest = found ? Lowest(newest.seq) : b_ + 1;
      b_ = std::max(b_ + 1, lowest);
      continue;
    }
    if (found && newest.seq == b_) continue;  // it became valid meanwhile: read it again
    if (!found || b_ > newest.seq) {
      // Caught up: block b_ is not written yet (or is being written).
      if (got == Got::kBad && h.seq == b_ && state == BlockState::kBadCrc && reported_ != b_) {
        Report(layout_.SlotOffset(b_),
               "newest block " + std::to_string(b_) + " fails its CRC (torn write?)");
        reported_ = b_;
      }
      return Status::NotFound("no new records");
    }
    // Block b_ looked missing, but a newer block exists now. The writer
    // writes block b_ before it starts b_ + 1, so the first read may simply
    // have raced that write: read b_ once more before calling it missing.
    if (reread_ != b_) {
      reread_ = b_;
      continue;
    }
    SkipDamaged(got, state, h);
  }
  return Status::Corruption(path_ + ": no progress while reading (damaged ring?)");
}

Status TierReader::PassOver(const BlockHeader &h) {
  if (!sparse_ && !gap_ok_ && have_expect_ && h.first_rec > expect_ && reporter_) {
    reporter_->Lost(h.first_rec - expect_);
  }
  have_expect_ = true;
  // (A sparse block's last number is not in its header; the next block
  // starts after it.)
  expect_ = std::max(expect_, h.first_rec + (sparse_ ? std::min<uint64_t>(h.count, 1) : h.count));
  skip_ = 0;
  gap_ok_ = false;
  loaded_ = false;
  skipped_++;
  if (!h.sealed()) return Status::NotFound("no new records");  // read again when it grows
  b_++;
  return Status::OK();
}

void TierReader::SetBlockFilter(const BlockFilter *f) {
  filter_on_ = f != nullptr;
  uid_keys_.clear();
  pid_keys_.clear();
  app_keys_.clear();
  unit_keys_.clear();
  if (!f) return;
  for (const std::string &u : f->units)
    unit_keys_.push_back(internal::BloomStr(LS_BLOOM_KEY_UNIT, u));
  filter_ = *f;
  for (uint32_t u : f->uids) uid_keys_.push_back(internal::BloomU32(LS_BLOOM_KEY_UID, u));
  for (uint32_t p : f->pids) pid_keys_.push_back(internal::BloomU32(LS_BLOOM_KEY_PID, p));
  for (const std::string &a : f->apps) {
    app_keys_.push_back(internal::BloomStr(LS_BLOOM_KEY_APP, a));
    app_keys_.push_back(internal::BloomStr(LS_BLOOM_KEY_COMM, a));
  }
}

// False only when the summary proves no record of the block can match. The
// summary is inside the CRC the block just passed; the writer may have
// over-claimed (a split block keeps its summary), never under-claimed.
bool TierReader::MayMatch(const BlockHeader &h) const {
  if (!filter_on_ || h.count == 0) return true;
  if (!(h.levels & filter_.levels)) return false;
  if (h.max_time < filter_.since_ns || h.min_time > filter_.until_ns) return false;
  auto any = [&h](const std::vector<uint64_t> &keys) {
    if (keys.empty()) return true;
    for (uint64_t k : keys) {
      if (internal::BloomMayHave(h.bloom.data(), k)) return true;
    }
    return false;
  };
  if (!filter_.boots.empty() &&
      std::find(filter_.boots.begin(), filter_.boots.end(), h.boot_id) == filter_.boots.end()) {
    return false;  // a block holds one boot's records
  }
  return any(uid_keys_) && any(pid_keys_) && any(app_keys_) && any(unit_keys_);
}

Status TierReader::ListBoots(std::vector<BootInfo> *out) {
  out->clear();
  bool found;
  BlockHeader newest;
  Status s = FindNewest(&found, &newest);
  if (!s.ok() || !found) return s;
  const uint64_t lowest = Lowest(newest.seq);
  std::vector<BlockHeader> blocks;
  s = internal::ForEachSlot(file_, layout_, [&](uint64_t slot, const uint8_t *img) {
    BlockHeader h;
    if (internal::CheckBlock(img, layout_, slot, &h) != BlockState::kValid) return;
    if (h.seq < lowest || h.seq > newest.seq || h.count == 0) return;  // not what a reader shows
    blocks.push_back(h);
  });
  if (!s.ok()) return s;
  std::sort(blocks.begin(), blocks.end(),
            [](const BlockHeader &a, const BlockHeader &b) { return a.seq < b.seq; });
  for (const BlockHeader &h : blocks) {
    if (out->empty() || out->back().boot_id != h.boot_id) {
      BootInfo b;
      b.boot_id = h.boot_id;
      b.first_block = h.seq;
      b.first_seq = h.first_rec;
      b.first_ns = h.min_time;
      out->push_back(b);
    }
    BootInfo &b = out->back();
    b.last_block = h.seq;
    b.last_seq = h.first_rec + h.count - 1;
    b.first_ns = std::min(b.first_ns, h.min_time);
    b.last_ns = std::max(b.last_ns, h.max_time);
    b.records += h.count;
  }
  return Status::OK();
}

Status TierReader::Summarize(RingReader::Summary *out) {
  // The newest block is the one a reader finds (FindNewest), so the summary
  // describes exactly the blocks a reader shows.
  return internal::SummarizeRing(
      file_, layout_, st_, [this](bool *found, BlockHeader *h) { return FindNewest(found, h); },
      out);
}

}  // namespace

// ---- RingReader::Impl: the tiers in order -----------------------------------

// Every record of tier 2 is older (numbered lower) than every record of tier
// 1, and those than tier 0's (FORMAT.md, "Tiers"): reading the tiers one
// after the other, oldest first, gives the records in order. The chain keeps
// the next number wanted (next_) and enters each tier at it; losses are
// reported here: a jump the reader was asked to make (SeekSeq) and a lap of
// tier 0, after looking for the records it skipped in the older tiers (they
// may have been kept there).
class RingReader::Impl {
 public:
  File *file() const { return file_.get(); }
  Status Open(Env *env, const std::string &path, Reporter *reporter, const ReaderOptions &opts) {
    std::unique_ptr<File> file;
    Status s = env->OpenFile(path, false, &file);
    if (!s.ok()) return s;
    return Init(env, std::move(file), path, reporter, opts);
  }
  Status Init(Env *env, std::unique_ptr<File> file, const std::string &path, Reporter *reporter,
              const ReaderOptions &opts) {
    path_ = path;
    reporter_ = reporter;
    file_ = std::move(file);
    internal::Superblock sb;
    Status s = internal::ReadSuperblock(file_.get(), path, &sb);
    if (!s.ok()) return s;
    layout_ = sb.layout;
    st_.Init(layout_.strtab_off, layout_.strtab_size);
    s = st_.Load(file_.get());
    if (!s.ok()) return s;
    // Damage between string-table entries, once, when the file is opened
    // (FORMAT.md, "String table"). Damage after the last entry ends the
    // table unreported: a reader cannot tell it from an entry being written.
    if (reporter_) {
      for (const auto &[off, len] : st_.damage())
        reporter_->Corruption(
            off, "damaged string-table bytes (" + std::to_string(len) + ") before the next entry");
    }
    proxy_.chain = this;
    for (int t = int(LS_TIERS) - 1; t >= 0; t--) {  // oldest records first
      if (!layout_.TierBlocks(t)) continue;
      tiers_.push_back(std::make_unique<TierReader>());
      tiers_.back()->Init(env, file_.get(), path, &st_, layout_.Tier(t), &proxy_, opts);
    }
    return SeekOldest();
  }

  Status SeekOldest() {
    Reset(0);
    return tiers_[0]->SeekOldest();
  }
  Status SeekEnd() {
    Reset(tiers_.size() - 1);
    return tiers_.back()->SeekEnd();
  }
  Status SeekSeq(uint64_t seq) {
    // At or after tier 0's oldest record: tier 0 alone, which reports what
    // was overwritten exactly as a ring of one tier does.
    bool found = false;
    uint64_t oldest = 0;
    Status s = tiers_.back()->OldestRecord(&found, &oldest);
    if (!s.ok()) return s;
    if (tiers_.size() == 1 || !found || seq >= oldest) {
      Reset(tiers_.size() - 1);
      have_next_ = true;
      next_ = seq;
      strict_ = true;
      return tiers_.back()->SeekSeq(seq, false);
    }
    // Older: from the oldest tier on, every number not returned being lost.
    Reset(0);
    have_next_ = true;
    next_ = seq;
    strict_ = true;
    return tiers_[0]->SeekSeq(seq, true);
  }
  Status SeekLast(uint64_t n) {
    // From the newest tier back, each giving what it has until n are found.
    size_t at = tiers_.size() - 1;
    for (size_t i = tiers_.size(); i-- > 0;) {
      uint64_t got = 0;
      Status s = tiers_[i]->SeekLast(n, &got);
      if (!s.ok()) return s;
      if (got) at = i;
      n -= std::min(n, got);
      if (n == 0) break;
    }
    Reset(at);
    return Status::OK();
  }
  Status SeekTime(uint64_t ts_ns) {
    // The first tier (oldest first) whose newest block reaches the time.
    const uint64_t from = ts_ns > kClockSlackNs ? ts_ns - kClockSlackNs : 0;
    for (size_t i = 0; i + 1 < tiers_.size(); i++) {
      bool found;
      BlockHeader h;
      Status s = tiers_[i]->Newest(&found, &h);
      if (!s.ok()) return s;
      // A kept block's open time is its first record's block's, and it
      // keeps taking records: its summary's largest time says how late it
      // reaches.
      if (found && (h.max_time >= ts_ns ||
                    (h.opened ? tiers_[i]->OpenedNs(h) >= from : h.max_ts >= ts_ns))) {
        Reset(i);
        return tiers_[i]->SeekTime(ts_ns);
      }
    }
    Reset(tiers_.size() - 1);
    return tiers_.back()->SeekTime(ts_ns);
  }

  Status Next(Record *rec) { return Next(rec, nullptr, nullptr); }
  Status NextOrBlock(Record *rec, BlockImage *img, bool *whole) {
    *whole = false;
    if (tiers_.size() != 1 || strict_) return Next(rec);
    return Next(rec, img, whole);
  }
  // img: see NextOrBlock (nullptr: records only).
  Status Next(Record *rec, BlockImage *img, bool *whole) {
    for (;;) {
      lost_ = 0;
      Status s = tiers_[cur_]->Next(rec, img, whole);
      if (s.IsNotFound() && cur_ + 1 < tiers_.size()) {
        // This tier is read: the next one from the number wanted on.
        cur_++;
        s = tiers_[cur_]->SeekSeq(have_next_ ? next_ : 0, true);
        if (!s.ok()) return s;
        continue;
      }
      if (!s.ok()) {
        if (lost_ && reporter_) reporter_->Lost(lost_);
        return s;
      }
      if (whole && *whole) {
        // One tier, not strict: what the tier lost is what is reported.
        if (lost_) strict_ = true;
        if (lost_ && reporter_) reporter_->Lost(lost_);
        have_next_ = true;
        next_ = img->first_seq + img->count;
        return Status::OK();
      }
      if (have_next_ && rec->seq < next_) continue;  // returned already
      if (lost_ && have_next_ && cur_ > 0 && !(searched_ && searched_at_ == next_)) {
        // Tier 0 lapped this reader: the records it skipped may be kept in
        // an older tier. Look there first (once per position: a damaged or
        // crafted file must not send the reader round in circles). The
        // record found is returned as it is; that tier goes on after it.
        searched_ = true;
        searched_at_ = next_;
        for (size_t i = 0; i < cur_; i++) {
          s = tiers_[i]->SeekSeq(next_, true);
          if (!s.ok()) return s;
          Record older;
          s = tiers_[i]->Next(&older);
          if (s.IsNotFound()) continue;
          if (!s.ok()) return s;
          if (older.seq >= rec->seq || older.seq < next_) continue;
          cur_ = i;
          lost_ = 0;
          strict_ = true;
          *rec = older;  // its views stay valid until tier i is read again
          break;
        }
      }
      // A reader that was somewhere (a cursor, or lapped) is told of every
      // number it does not get; one that started at the oldest, the last n
      // or a time, only of laps (the gaps between kept records are not its
      // loss). With a filter, blocks skipped leave gaps too: laps only.
      if (lost_) strict_ = true;
      uint64_t n = lost_;
      if (strict_ && !filter_on_ && have_next_) n = rec->seq > next_ ? rec->seq - next_ : 0;
      if (n && reporter_) reporter_->Lost(n);
      have_next_ = true;
      next_ = rec->seq + 1;
      return Status::OK();
    }
  }

  Status Summarize(Summary *out) {
    *out = Summary();
    bool any = false;
    for (size_t i = 0; i < tiers_.size(); i++) {
      Summary t;
      Status s = tiers_[i]->Summarize(&t);
      Summary::Tier ti;
      ti.tier = tiers_[i]->layout_.tier;
      ti.blocks = tiers_[i]->layout_.block_count;
      if (s.ok()) {
        ti.blocks_used = t.blocks_used;
        ti.bytes_used = t.bytes_used;
        ti.raw_bytes = t.raw_bytes;
        ti.records = t.records;
        ti.oldest_seq = t.oldest_seq;
        ti.oldest_ts_ns = t.oldest_ts_ns;
        ti.newest_ts_ns = t.newest_ts_ns;
        if (!any) {
          out->oldest_seq = t.oldest_seq;
          out->oldest_block = t.oldest_block;
          out->oldest_ts_ns = t.oldest_ts_ns;
        }
        any = true;
        out->newest_seq = t.newest_seq;
        out->newest_block = t.newest_block;
        out->newest_ts_ns = t.newest_ts_ns;
        out->wraps = t.wraps;
        out->blocks_used += t.blocks_used;
        out->bytes_used += t.bytes_used;
        out->raw_bytes += t.raw_bytes;
        out->records += t.records;
      } else if (!s.IsNotFound()) {
        return s;
      }
      out->strings = t.strings;
      out->strtab_bytes = t.strtab_bytes;
      out->tiers.push_back(ti);
    }
    std::sort(out->tiers.begin(), out->tiers.end(),
              [](const Summary::Tier &a, const Summary::Tier &b) { return a.tier < b.tier; });
    return any ? Status::OK() : Status::NotFound("the ring holds no records");
  }

  void SetBlockFilter(const BlockFilter *f) {
    filter_on_ = f != nullptr;
    for (auto &t : tiers_) t->SetBlockFilter(f);
  }
  uint64_t skipped() const {
    uint64_t n = 0;
    for (const auto &t : tiers_) n += t->skipped_;
    return n;
  }
  uint64_t index_skipped() const {
    uint64_t n = 0;
    for (const auto &t : tiers_) n += t->index_skipped_;
    return n;
  }
  Status ListBoots(std::vector<BootInfo> *out) {
    out->clear();
    for (auto &t : tiers_) {
      std::vector<BootInfo> part;
      Status s = t->ListBoots(&part);
      if (!s.ok()) return s;
      for (const BootInfo &b : part) {
        if (!out->empty() && out->back().boot_id == b.boot_id) {
          BootInfo &o = out->back();
          o.last_block = b.last_block;
          o.last_seq = b.last_seq;
          o.first_ns = std::min(o.first_ns, b.first_ns);
          o.last_ns = std::max(o.last_ns, b.last_ns);
          o.records += b.records;
        } else {
          out->push_back(b);
        }
      }
    }
    return Status::OK();
  }
  Status Verify(const std::function<void(uint64_t, uint64_t)> &progress) {
    return internal::VerifyRing(file_.get(), path_, reporter_, progress);
  }

  Layout layout_;

 private:
  // Tier readers report corruption straight through; their losses (tier 0
  // only: lapped, or a block that starts later than expected) come here.
  struct Proxy : Reporter {
    Impl *chain = nullptr;
    void Corruption(uint64_t off, std::string_view reason) override {
      if (chain->reporter_) chain->reporter_->Corruption(off, reason);
    }
    void Lost(uint64_t n) override { chain->lost_ += n; }
  };
  void Reset(size_t at) {
    cur_ = at;
    have_next_ = false;
    strict_ = false;
    lost_ = 0;
  }

  std::string path_;
  std::unique_ptr<File> file_;
  Reporter *reporter_ = nullptr;
  internal::StringTable st_;
  Proxy proxy_;
  std::vector<std::unique_ptr<TierReader>> tiers_;  // oldest records first
  size_t cur_ = 0;                                  // the tier being read
  bool have_next_ = false;
  uint64_t next_ = 0;      // the next record number wanted
  bool strict_ = false;    // every number skipped is lost (after SeekSeq or a lap)
  bool searched_ = false;  // the lapped reader's search ran at searched_at_
  uint64_t searched_at_ = 0;
  bool filter_on_ = false;
  uint64_t lost_ = 0;  // tier 0's losses during this Next
};

// ---- RingReader -------------------------------------------------------------

RingReader::RingReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RingReader::~RingReader() = default;

Status RingReader::Open(Env *env, const std::string &path, Reporter *reporter,
                        std::unique_ptr<RingReader> *out) {
  return Open(env, path, reporter, ReaderOptions(), out);
}

Status RingReader::Open(Env *env, const std::string &path, Reporter *reporter,
                        const ReaderOptions &opts, std::unique_ptr<RingReader> *out) {
  auto impl = std::make_unique<Impl>();
  Status s = impl->Open(env, path, reporter, opts);
  if (!s.ok()) return s;
  out->reset(new RingReader(std::move(impl)));
  return Status::OK();
}

Status RingReader::FromFile(Env *env, std::unique_ptr<File> file, const std::string &path,
                            Reporter *reporter, std::unique_ptr<RingReader> *out) {
  auto impl = std::make_unique<Impl>();
  Status s = impl->Init(env, std::move(file), path, reporter, ReaderOptions());
  if (!s.ok()) return s;
  out->reset(new RingReader(std::move(impl)));
  return Status::OK();
}

const Layout &RingReader::layout() const { return impl_->layout_; }
Status RingReader::SeekOldest() { return impl_->SeekOldest(); }
Status RingReader::SeekLast(uint64_t n) { return impl_->SeekLast(n); }
Status RingReader::SeekTime(uint64_t ts_ns) { return impl_->SeekTime(ts_ns); }
Status RingReader::SeekEnd() { return impl_->SeekEnd(); }
Status RingReader::SeekSeq(uint64_t seq) { return impl_->SeekSeq(seq); }
Status RingReader::Next(Record *rec) { return impl_->Next(rec); }
Status RingReader::NextOrBlock(Record *rec, BlockImage *img, bool *whole) {
  return impl_->NextOrBlock(rec, img, whole);
}

// ---- BlockDecoder -----------------------------------------------------------

class BlockDecoder::Impl {
 public:
  File *file_ = nullptr;
  Layout layout_;  // the tier's
  internal::StringTable st_;
  bool loaded_ = false;  // st_ read
  internal::BlockExpander expander_;
  BlockCursor cursor_;
};

BlockDecoder::BlockDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockDecoder::~BlockDecoder() = default;

std::unique_ptr<BlockDecoder> RingReader::NewDecoder() const {
  auto d = std::make_unique<BlockDecoder::Impl>();
  d->file_ = impl_->file();
  d->layout_ = impl_->layout_.Tier(0);
  d->st_.Init(impl_->layout_.strtab_off, impl_->layout_.strtab_size);
  d->expander_.UseDictionaryOf(d->file_, d->layout_);
  return std::unique_ptr<BlockDecoder>(new BlockDecoder(std::move(d)));
}

void BlockDecoder::Decode(const BlockImage &img, std::vector<Record> *out, std::string *problem,
                          uint64_t *problem_off) {
  Impl &d = *impl_;
  problem->clear();
  *problem_off = 0;
  // (A failed read is tried again at the next block; meanwhile a site not
  // loaded is tried again as Next tries one the writer interned since.)
  if (!d.loaded_) d.loaded_ = d.st_.Load(d.file_).ok();
  const BlockHeader h = internal::ParseBlockHeader(img.bytes.data());
  const uint8_t *entries = d.expander_.Expand(img.bytes.data(), h);
  if (!entries) {
    *problem = internal::BlockStateName(BlockState::kBadData);
    *problem_off = img.offset;
    out->clear();
    return;
  }
  d.cursor_.Reset(entries, h);
  const uint64_t opened = OpenedNs(d.layout_, h);
  // The records of the last block are overwritten, not made anew (FillRecord
  // sets every field).
  internal::DecodedRecord r;
  BlockCursor::Result res;
  size_t n = 0;
  while ((res = d.cursor_.Next(&r)) == BlockCursor::kRecord) {
    if (n == out->size()) out->emplace_back();
    FillRecord(r, h, opened, &d.st_, d.file_, &(*out)[n++]);
  }
  out->resize(n);
  if (res == BlockCursor::kMalformed) {
    *problem = "malformed entry";
    *problem_off = img.offset + d.cursor_.pos();
  }
}
Status RingReader::Summarize(Summary *out) { return impl_->Summarize(out); }
void RingReader::SetBlockFilter(const BlockFilter *f) { impl_->SetBlockFilter(f); }
uint64_t RingReader::blocks_skipped() const { return impl_->skipped(); }
uint64_t RingReader::blocks_skipped_by_index() const { return impl_->index_skipped(); }
Status RingReader::ListBoots(std::vector<BootInfo> *out) { return impl_->ListBoots(out); }
Status RingReader::Verify() { return impl_->Verify({}); }
Status RingReader::Verify(const std::function<void(uint64_t, uint64_t)> &progress) {
  return impl_->Verify(progress);
}

}  // namespace logsink::storage
