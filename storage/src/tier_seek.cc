// tier_seek.cc: places in one tier: its newest block (a binary search over
// block headers from a valid anchor), the positions Seek* start reading at
// (oldest, last n, time, end, a record number), and the passes over every
// header of the tier (ListBoots, Summarize).
#include <algorithm>
#include <cstring>
#include <vector>

#include "ring_reader_impl.h"
#include "scan.h"
#include "summary.h"

namespace logsink::storage {

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
  if (opts_.tails_from) {
    // The writer's word (ReaderOptions::tails_from): its last sealed block,
    // or, while it has sealed none, block 0 or nothing.
    const uint64_t cur = opts_.tails_from->current_block_seq(int(layout_.tier));
    Status s = try_slot(cur > 0 ? (cur - 1) % count : 0);
    if (!s.ok()) return s;
    if (!ok && cur == 0) return Status::OK();  // nothing in this tier
  }
  if (!ok && seen_empty_) {
    // A tier seen empty gets its first block in slot 0 (and keeps one there
    // once it wraps): while that slot was never written (no byte of a
    // header), the tier still is empty. Anything else there (a block, a
    // torn write) ends the shortcut: searched as any tier.
    Status s = try_slot(0);
    if (!s.ok()) return s;
    if (!ok &&
        std::all_of(tmp_.begin(), tmp_.begin() + LS_BLK_HDR, [](uint8_t b) { return b == 0; }))
      return Status::OK();
    seen_empty_ = false;
  }
  for (uint64_t slot = 0; !ok && slot < std::min<uint64_t>(count, kAnchorSlots); slot++) {
    Status s = try_slot(slot);
    if (!s.ok()) return s;
  }
  if (!ok && have_newest_) {
    Status s = try_slot(newest_ % count);
    if (!s.ok()) return s;
  }
  if (!ok) {
    // Costs one pass over the ring: a ring whose first slots are all
    // damaged, or a tier never written (tiers 1 and 2 until tier 0 first
    // wraps; the daemon's readers know from the writer and do not get
    // here; another reader makes this pass once, see seen_empty_). The
    // newest block found anchors later searches.
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
    seen_empty_ = !ok;
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
  // can stop it short, so go on while the next slot holds the next block,
  // or the slot after it the block after that (one damaged block between
  // valid ones must not hide the newer ones). Two extra header reads in the
  // sound case.
  for (uint64_t fwd = 0; fwd + 2 < count; fwd++) {
    Status s = ReadHeader((cand + 1) % count, &h, &ok);
    if (!s.ok()) return s;
    if (ok && h.seq == cand + 1) {
      cand++;
      continue;
    }
    s = ReadHeader((cand + 2) % count, &h, &ok);
    if (!s.ok()) return s;
    if (!ok || h.seq != cand + 2) break;
    cand += 2;
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

Status TierReader::StartLast(uint64_t n) {
  bool found;
  BlockHeader h;
  last_ = LastWalk();
  Status s = FindNewestOrRewind(&found, &h);
  if (!s.ok() || !found) return s;  // nothing: positioned at the start
  last_.on = true;
  last_.n = n;
  last_.b = h.seq;
  last_.first = h.first_rec;
  last_.have = h.count;
  last_.end = h.first_rec + h.count;
  last_.target = last_.end > n ? last_.end - n : 0;
  last_.lowest = Lowest(h.seq);
  return Status::OK();
}

Status TierReader::StepLast(uint64_t *budget, bool *done, uint64_t *got) {
  *done = false;
  *got = 0;
  LastWalk &w = last_;
  if (!w.on) {  // an empty tier
    *done = true;
    return Status::OK();
  }
  // Walk back only as far as the n records need. Sparse tiers (numbers with
  // gaps) count records back block by block; tier 0 walks to the block
  // holding record end - n. Only a block whose records end where the next
  // one's begin (sparse: below the next one's first) is taken (in a sound
  // ring every one is): a damaged header claiming other numbers must not
  // make "the last n" more than n.
  auto more = [&] { return (sparse_ ? w.have < w.n : w.first > w.target) && w.b > w.lowest; };
  while (more()) {
    if (*budget == 0) return Status::OK();  // on at the next step
    --*budget;
    Got g;
    BlockState st;
    BlockHeader prev;
    Status s = ReadBlock(w.b - 1, &tmp_, &prev, &g, &st);
    if (!s.ok()) return s;
    if (g != Got::kValid) break;  // overwritten or corrupt: start after it
    if (sparse_ ? prev.first_rec >= w.first : prev.first_rec + prev.count != w.first) break;
    w.b--;
    w.first = prev.first_rec;
    w.have += prev.count;
  }
  w.on = false;
  *done = true;
  if (sparse_) {
    Position(w.b, true, w.first);
    gap_ok_ = true;
    skip_ = w.have > w.n ? w.have - w.n : 0;
    *got = std::min(w.have, w.n);
  } else {
    Position(w.b, true, std::max(w.target, w.first));
    *got = w.end - std::max(w.target, w.first);
  }
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

}  // namespace logsink::storage
