// summary.cc: SummarizeRing, the full scan behind RingReader::Summarize
// (record and block ranges, bytes used), beside its sibling full scan Verify.
#include "summary.h"

#include <algorithm>
#include <vector>

#include "block.h"
#include "scan.h"

namespace logsink::storage::internal {

Status SummarizeRing(File *file, const Layout &layout, StringTable *st,
                     const FindNewestFn &find_newest, RingReader::Summary *out) {
  *out = RingReader::Summary();
  Status s = st->Load(file);
  if (!s.ok()) return s;
  out->strings = st->count();
  out->strtab_bytes = st->used_bytes();
  struct Info {
    uint64_t seq, first_rec, count, base_ts, max_ts, used, raw;
  };
  std::vector<Info> blocks;
  s = ForEachSlot(file, layout, [&](uint64_t slot, const uint8_t *img) {
    BlockHeader h;
    if (CheckBlock(img, layout, slot, &h) != BlockState::kValid) return;
    blocks.push_back(Info{h.seq, h.first_rec, h.count, h.base_ts, h.max_ts, h.used, h.raw});
  });
  if (!s.ok()) return s;
  if (blocks.empty()) return Status::NotFound("the ring holds no records");
  // The newest block is the one a reader finds (FindNewest), so the summary
  // describes exactly the blocks a reader shows, even in a damaged ring
  // whose headers disagree with one another.
  bool found = false;
  BlockHeader nh;
  s = find_newest(&found, &nh);
  if (!s.ok()) return s;
  if (!found) return Status::NotFound("the ring holds no records");
  const uint64_t newest = nh.seq;
  const uint64_t lowest = OldestLive(layout, newest);
  const Info *oldest = nullptr, *last = nullptr;
  uint64_t min_rec = ~0ull, end_rec = 0;  // record range [min_rec, end_rec)
  for (const Info &b : blocks) {
    if (b.seq < lowest || b.seq > newest) continue;  // stale, or not what a reader shows
    out->blocks_used++;
    out->bytes_used += b.used;
    out->raw_bytes += LS_BLK_HDR + b.raw;
    if (!oldest || b.seq < oldest->seq) oldest = &b;
    if (b.seq == newest) last = &b;
    min_rec = std::min(min_rec, b.first_rec);
    out->records += b.count;
    if (b.count) end_rec = std::max(end_rec, b.first_rec + b.count);
  }
  if (!oldest || !last) return Status::NotFound("the ring holds no records");
  out->oldest_block = oldest->seq;
  out->newest_block = newest;
  // In a sound ring these are the oldest block's first record and the newest
  // block's last one. Taking the minimum and maximum over the blocks keeps
  // oldest_seq <= newest_seq and oldest_seq <= the first record a reader
  // returns even when a damaged or crafted block claims other numbers.
  out->oldest_seq = min_rec;
  out->newest_seq = end_rec > min_rec ? end_rec - 1 : min_rec;
  out->oldest_ts_ns = oldest->base_ts;
  out->newest_ts_ns = last->max_ts;
  out->wraps = newest / layout.block_count;
  return Status::OK();
}

}  // namespace logsink::storage::internal
