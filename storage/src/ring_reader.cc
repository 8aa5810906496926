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
#include "superblock.h"
#include "verify.h"

namespace logsink::storage {

using internal::BlockCursor;
using internal::BlockHeader;
using internal::BlockState;

class RingReader::Impl {
 public:
  Status Open(Env *env, const std::string &path, Reporter *reporter, const ReaderOptions &opts);
  // Open with a file already open (RingReader::FromFile).
  Status Init(Env *env, std::unique_ptr<File> file, const std::string &path, Reporter *reporter,
              const ReaderOptions &opts);
  Status SeekOldest();
  Status SeekLast(uint64_t n);
  Status SeekTime(uint64_t ts_ns);
  Status SeekEnd();
  Status SeekSeq(uint64_t seq);
  Status Next(Record *rec);
  Status Summarize(Summary *out);
  void SetBlockFilter(const BlockFilter *f);
  Status ListBoots(std::vector<BootInfo> *out);
  uint64_t skipped_ = 0;
  Status Verify(const std::function<void(uint64_t, uint64_t)> &progress) {
    return internal::VerifyRing(file_.get(), path_, reporter_, progress);
  }

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
  // A block's open time in ns since the epoch (0: not recorded).
  uint64_t OpenedNs(const BlockHeader &bh) const {
    return bh.opened ? layout_.created_ns + uint64_t(bh.opened - 1) * 1000000000ull : 0;
  }
  void Position(uint64_t block, bool have_expect, uint64_t expect);
  Status PositionAt(uint64_t block);
  void Report(uint64_t off, const std::string &why) {
    if (reporter_) reporter_->Corruption(off, why);
  }
  void Fill(const internal::DecodedRecord &d, Record *rec);
  // Reports block b_ (once) as damaged or missing and moves past it.
  void SkipDamaged(Got got, BlockState state, const BlockHeader &h);

  std::string path_;
  Env *env_ = nullptr;
  std::unique_ptr<File> file_;
  Reporter *reporter_ = nullptr;
  ReaderOptions opts_;
  internal::StringTable st_;
  std::vector<uint8_t> blk_, tmp_;
  internal::BlockExpander expander_;
  // The block filter, with its keys hashed once.
  bool filter_on_ = false;
  BlockFilter filter_;
  std::vector<uint64_t> uid_keys_, pid_keys_, app_keys_, unit_keys_;
  bool MayMatch(const BlockHeader &h) const;

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

Status RingReader::Impl::Open(Env *env, const std::string &path, Reporter *reporter,
                              const ReaderOptions &opts) {
  std::unique_ptr<File> file;
  Status s = env->OpenFile(path, false, &file);
  if (!s.ok()) return s;
  return Init(env, std::move(file), path, reporter, opts);
}

Status RingReader::Impl::Init(Env *env, std::unique_ptr<File> file, const std::string &path,
                              Reporter *reporter, const ReaderOptions &opts) {
  path_ = path;
  env_ = env;
  reporter_ = reporter;
  opts_ = opts;
  file_ = std::move(file);
  internal::Superblock sb;
  Status s = internal::ReadSuperblock(file_.get(), path, &sb);
  if (!s.ok()) return s;
  layout_ = sb.layout;
  st_.Init(layout_.strtab_off, layout_.strtab_size);
  s = st_.Load(file_.get());
  if (!s.ok()) return s;
  blk_.resize(layout_.block_size);
  tmp_.resize(layout_.block_size);
  return SeekOldest();
}

Status RingReader::Impl::ReadHeader(uint64_t slot, BlockHeader *h, bool *plausible) {
  uint8_t buf[LS_BLK_HDR];
  size_t got = 0;
  Status s = file_->PRead(layout_.blocks_off + slot * layout_.block_size, buf, sizeof buf, &got);
  if (!s.ok()) return s;
  if (got < sizeof buf) std::memset(buf + got, 0, sizeof buf - got);
  *h = internal::ParseBlockHeader(buf);
  *plausible = internal::CheckBlockHeader(*h, layout_, slot) == BlockState::kValid;
  return Status::OK();
}

Status RingReader::Impl::ReadBlock(uint64_t seq, std::vector<uint8_t> *buf, BlockHeader *h,
                                   Got *got, BlockState *state, bool may_race) {
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

Status RingReader::Impl::FindNewest(bool *found, BlockHeader *out) {
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
    Status s = internal::ForEachSlot(file_.get(), layout_, [&](uint64_t slot, const uint8_t *img) {
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

void RingReader::Impl::Position(uint64_t block, bool have_expect, uint64_t expect) {
  b_ = block;
  loaded_ = false;
  have_expect_ = have_expect;
  expect_ = expect;
  gap_ok_ = false;
}

Status RingReader::Impl::SeekOldest() {
  bool found;
  BlockHeader h;
  Status s = FindNewestOrRewind(&found, &h);  // empty: every record from 0 on is expected
  if (!s.ok() || !found) return s;
  return PositionAt(Lowest(h.seq));
}

// Positions at the start of block b, expecting its first record (so records
// overwritten before the first Next are reported lost).
Status RingReader::Impl::PositionAt(uint64_t b) {
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

Status RingReader::Impl::SeekEnd() {
  bool found;
  BlockHeader h;
  Status s = FindNewestOrRewind(&found, &h);
  if (s.ok() && found) Position(h.seq, true, h.first_rec + h.count);
  return s;
}

Status RingReader::Impl::SeekLast(uint64_t n) {
  bool found;
  BlockHeader h;
  Status s = FindNewestOrRewind(&found, &h);
  if (!s.ok() || !found) return s;
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
  return Status::OK();
}

Status RingReader::Impl::SeekTime(uint64_t ts_ns) {
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

Status RingReader::Impl::SeekSeq(uint64_t seq) {
  bool found;
  BlockHeader h;
  Status s = FindNewestOrRewind(&found, &h);
  if (!s.ok()) return s;
  if (!found) {
    Position(0, true, seq);
    return Status::OK();
  }
  if (seq >= h.first_rec) {  // in the newest block, or past it
    Position(h.seq, true, std::min(seq, h.first_rec + h.count));
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
  return Status::OK();
}

void RingReader::Impl::SkipDamaged(Got got, BlockState state, const BlockHeader &h) {
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

void RingReader::Impl::Fill(const internal::DecodedRecord &d, Record *rec) {
  *rec = Record();
  rec->kind = d.kind;
  rec->seq = h_.first_rec + d.index;
  rec->block_seq = h_.seq;
  rec->block_opened_ns = OpenedNs(h_);
  rec->boot_id = h_.boot_id;
  rec->block_open_mono_ns = h_.open_mono;
  rec->block_open_real_ns = h_.open_real;
  rec->ts_ns = d.ts;
  rec->source_id = d.has_source ? d.source_id : 0;
  if (d.source) {
    rec->pid = d.source->pid;
    rec->uid = d.source->uid;
    rec->gid = d.source->gid;
    rec->app = d.source->app;
    rec->comm = d.source->comm;
    rec->unit = d.source->unit;
  }
  if (d.kind == Record::Kind::kDropped) {
    rec->dropped_count = d.dropped_count;
    rec->dropped_since_ns = d.dropped_since;
    return;
  }
  rec->tid = d.tid;
  rec->site_id = d.site_id;
  if (d.site_id == 0) {
    rec->site = d.inline_site;
    rec->site_known = true;
  } else {
    rec->site_known = st_.Get(d.site_id, &rec->site);
    // An id above the table's last one: the writer interned it since. (One
    // at or below it that is not there is damaged or lost for good.)
    if (!rec->site_known && d.site_id > st_.last_id() && st_.Load(file_.get()).ok()) {
      rec->site_known = st_.Get(d.site_id, &rec->site);
    }
  }
  rec->args = std::string_view(reinterpret_cast<const char *>(d.args), d.args_len);
  rec->truncated = d.truncated;
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
Status RingReader::Impl::Next(Record *rec) {
  const uint64_t count = layout_.block_count;
  for (int guard = 0; guard < 4 * int(std::min<uint64_t>(count, 1 << 20)) + 16; guard++) {
    if (loaded_) {
      internal::DecodedRecord d;
      BlockCursor::Result r;
      while ((r = cursor_.Next(&d)) == BlockCursor::kRecord) {
        uint64_t seq = h_.first_rec + d.index;
        if (have_expect_ && seq < expect_) continue;  // already returned (or before the seek)
        Fill(d, rec);
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
    Status s = ReadBlock(b_, &blk_, &h, &got, &state, !have_newest_ || b_ >= newest_);
    if (!s.ok()) return s;
    if (got == Got::kValid && !MayMatch(h)) {
      // Nothing in it can match: its records count as read, not lost.
      if (!gap_ok_ && have_expect_ && h.first_rec > expect_ && reporter_) {
        reporter_->Lost(h.first_rec - expect_);
      }
      have_expect_ = true;
      expect_ = std::max(expect_, h.first_rec + h.count);
      gap_ok_ = false;
      loaded_ = false;
      skipped_++;
      if (!h.sealed()) return Status::NotFound("no new records");  // read again when it grows
      b_++;
      continue;
    }
    if (got == Got::kValid) {
      // Records are only appended: the same count is the same block.
      if (loaded_ && h.count == h_.count && h.raw == h_.raw && h.flags == h_.flags) {
        return Status::NotFound("no new records");  // the partial block did not grow
      }
      const uint8_t *entries = expander_.Expand(blk_.data(), h);
      if (!entries) {
        // The CRC passed, so this is no write in progress: damage (or a crafted file).
        loaded_ = false;
        SkipDamaged(Got::kBad, BlockState::kBadData, h);
        continue;
      }
      if (!gap_ok_ && have_expect_ && h.first_rec > expect_) {
        if (reporter_) reporter_->Lost(h.first_rec - expect_);
        expect_ = h.first_rec;
      }
      if (!have_expect_ || gap_ok_) {
        have_expect_ = true;
        expect_ = std::max(gap_ok_ ? expect_ : 0, h.first_rec);
      }
      gap_ok_ = false;
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

void RingReader::Impl::SetBlockFilter(const BlockFilter *f) {
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
bool RingReader::Impl::MayMatch(const BlockHeader &h) const {
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

Status RingReader::Impl::ListBoots(std::vector<BootInfo> *out) {
  out->clear();
  bool found;
  BlockHeader newest;
  Status s = FindNewest(&found, &newest);
  if (!s.ok() || !found) return s;
  const uint64_t lowest = Lowest(newest.seq);
  std::vector<BlockHeader> blocks;
  s = internal::ForEachSlot(file_.get(), layout_, [&](uint64_t slot, const uint8_t *img) {
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

Status RingReader::Impl::Summarize(Summary *out) {
  // The newest block is the one a reader finds (FindNewest), so the summary
  // describes exactly the blocks a reader shows.
  return internal::SummarizeRing(
      file_.get(), layout_, &st_,
      [this](bool *found, BlockHeader *h) { return FindNewest(found, h); }, out);
}

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
Status RingReader::Summarize(Summary *out) { return impl_->Summarize(out); }
void RingReader::SetBlockFilter(const BlockFilter *f) { impl_->SetBlockFilter(f); }
uint64_t RingReader::blocks_skipped() const { return impl_->skipped_; }
Status RingReader::ListBoots(std::vector<BootInfo> *out) { return impl_->ListBoots(out); }
Status RingReader::Verify() { return impl_->Verify({}); }
Status RingReader::Verify(const std::function<void(uint64_t, uint64_t)> &progress) {
  return impl_->Verify(progress);
}

}  // namespace logsink::storage
