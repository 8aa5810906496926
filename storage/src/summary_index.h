// summary_index.h: the summary index (FORMAT.md, "Summary index"): one entry
// per slot, a copy of its sealed block's summary, so that a filtered read
// decides to skip a block from a few bytes read in bulk instead of reading the
// block. Internal.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "block.h"
#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::internal {

// Encodes the entry of a sealed block (h: its header, crc: its CRC field).
void EncodeIndexEntry(const BlockHeader &h, uint32_t crc, uint8_t *out);
// Decodes an entry: false when it is all zero (none) or fails its CRC. *h gets
// the summary fields, seq, first_rec, count, tier and the SEALED flag; *crc
// the block's CRC.
bool DecodeIndexEntry(const uint8_t *p, BlockHeader *h, uint32_t *crc);

// Writes the entry of the sealed block whose image (header finished, CRC
// included) is img, at its slot in the tier whose layout is tier.
Status WriteIndexEntry(File *f, const Layout &tier, const uint8_t *img);

// Calls fn(slot, entry bytes) for each of the tier's entries that starts
// inside the file (those past its end are never written), read in pieces of
// 128 KiB.
Status ForEachIndexEntry(File *f, const Layout &tier,
                         const std::function<Status(uint64_t, const uint8_t *)> &fn);

// A writer opening the file: clears every valid entry of the tier that names
// block newest or a later one (any entry when the tier holds no valid block,
// found false), and every entry that fails its CRC. Such an entry outlived its block (a crash lost
// the block, or the writer is about to write that number again) and could describe records the slot
// will not hold. *cleared: whether anything was written (the caller syncs before writing blocks).
Status ClearIndexFrom(File *f, const Layout &tier, bool found, uint64_t newest, bool *cleared);

// A reader's window onto a tier's entries, read in bulk. Get returns an entry
// only for a block below `below`: the newest block a search (FindNewest)
// found before the call. The writer writes a block's entry after the block
// and clears entries at or past its newest block when it opens, so an entry
// for a block below the newest one seen describes that block's records; the
// window is read again when `below` has grown since it was read.
class IndexWindow {
 public:
  // *have: the valid entry of block seq, decoded into *h.
  Status Get(File *f, const Layout &tier, uint64_t seq, uint64_t below, BlockHeader *h, bool *have);
  size_t HeldBytes() const { return buf_.capacity(); }
  static constexpr size_t BoundBytes() { return kEntries * LS_IDX_ENTRY; }

 private:
  static constexpr uint64_t kEntries = 1024;  // 128 KiB a read
  std::vector<uint8_t> buf_;
  uint64_t first_ = 0, n_ = 0;  // the window holds the entries of blocks [first_, first_ + n_)
  uint64_t below_ = 0;          // `below` when it was read
};

}  // namespace logsink::storage::internal
