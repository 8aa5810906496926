// summary_index.cc: the summary index entries (FORMAT.md, "Summary index"):
// encode, decode, write, clear at open, and the reader's window.
#include "summary_index.h"

#include <algorithm>
#include <cstring>

#include "logsink/proto/codec.h"

namespace logsink::storage::internal {

void EncodeIndexEntry(const BlockHeader &h, uint32_t crc, uint8_t *out) {
  std::memset(out, 0, LS_IDX_ENTRY);
  out[LS_IDX_OFF_TIER] = h.tier;
  out[LS_IDX_OFF_LEVELS] = h.levels;
  out[LS_IDX_OFF_FLAGS] = (h.flags & LS_BLK_F_FIELD_KEYS) ? LS_IDX_F_FIELD_KEYS : 0;
  ls_put_u64(out + LS_IDX_OFF_SEQ, h.seq);
  ls_put_u64(out + LS_IDX_OFF_FIRST_REC, h.first_rec);
  ls_put_u32(out + LS_IDX_OFF_COUNT, h.count);
  ls_put_u32(out + LS_IDX_OFF_BLOCK_CRC, crc);
  ls_put_u64(out + LS_IDX_OFF_MIN_TIME, h.min_time);
  ls_put_u64(out + LS_IDX_OFF_MAX_TIME, h.max_time);
  std::memcpy(out + LS_IDX_OFF_BOOT_ID, h.boot_id.data(), h.boot_id.size());
  std::memcpy(out + LS_IDX_OFF_BLOOM, h.bloom.data(), h.bloom.size());
  ls_put_u32(out + LS_IDX_OFF_CRC, Crc32c(out + 4, LS_IDX_ENTRY - 4));
}

bool DecodeIndexEntry(const uint8_t *p, BlockHeader *h, uint32_t *crc) {
  if (ls_get_u32(p + LS_IDX_OFF_CRC) != Crc32c(p + 4, LS_IDX_ENTRY - 4)) return false;
  // (An all-zero entry fails that check: the CRC of 124 zero bytes is not 0.)
  BlockHeader e;
  e.tier = p[LS_IDX_OFF_TIER];
  e.levels = p[LS_IDX_OFF_LEVELS];
  e.seq = ls_get_u64(p + LS_IDX_OFF_SEQ);
  e.first_rec = ls_get_u64(p + LS_IDX_OFF_FIRST_REC);
  e.count = ls_get_u32(p + LS_IDX_OFF_COUNT);
  e.min_time = ls_get_u64(p + LS_IDX_OFF_MIN_TIME);
  e.max_time = ls_get_u64(p + LS_IDX_OFF_MAX_TIME);
  std::memcpy(e.boot_id.data(), p + LS_IDX_OFF_BOOT_ID, e.boot_id.size());
  std::memcpy(e.bloom.data(), p + LS_IDX_OFF_BLOOM, e.bloom.size());
  e.flags = LS_BLK_F_SEALED;
  if (p[LS_IDX_OFF_FLAGS] & LS_IDX_F_FIELD_KEYS) e.flags |= LS_BLK_F_FIELD_KEYS;
  *crc = ls_get_u32(p + LS_IDX_OFF_BLOCK_CRC);
  *h = e;
  return true;
}

Status WriteIndexEntry(File *f, const Layout &tier, const uint8_t *img) {
  if (!tier.index_size) return Status::OK();
  const BlockHeader h = ParseBlockHeader(img);
  uint8_t e[LS_IDX_ENTRY];
  EncodeIndexEntry(h, ls_get_u32(img + LS_BLK_OFF_CRC), e);
  return f->PWrite(tier.IndexOffset(h.seq), e, sizeof e);
}

Status ForEachIndexEntry(File *f, const Layout &tier,
                         const std::function<Status(uint64_t, const uint8_t *)> &fn) {
  if (!tier.index_size) return Status::OK();
  // Entries past the end of the file are never written: a file cut short, or
  // a superblock that claims a huge geometry (FORMAT.md, "Superblock"),
  // costs no walk over entries that cannot be there.
  uint64_t size = 0;
  Status s = f->Size(&size);
  if (!s.ok()) return s;
  const uint64_t in_file =
      size > tier.index_off ? (size - tier.index_off + LS_IDX_ENTRY - 1) / LS_IDX_ENTRY : 0;
  const uint64_t count = std::min<uint64_t>(tier.block_count, in_file);
  constexpr uint64_t kChunk = 1024;  // entries a read (128 KiB): memory does not grow with the file
  std::vector<uint8_t> buf;
  for (uint64_t first = 0; first < count; first += kChunk) {
    const uint64_t n = std::min<uint64_t>(kChunk, count - first);
    buf.assign(n * LS_IDX_ENTRY, 0);
    size_t got = 0;
    s = f->PRead(tier.index_off + first * LS_IDX_ENTRY, buf.data(), buf.size(), &got);
    if (!s.ok()) return s;
    for (uint64_t i = 0; i < n; i++) {
      s = fn(first + i, buf.data() + i * LS_IDX_ENTRY);
      if (!s.ok()) return s;
    }
  }
  return Status::OK();
}

Status ClearIndexFrom(File *f, const Layout &tier, bool found, uint64_t newest, bool *cleared) {
  *cleared = false;
  static const uint8_t kZero[LS_IDX_ENTRY] = {};
  return ForEachIndexEntry(f, tier, [&](uint64_t i, const uint8_t *p) {
    if (std::equal(p, p + LS_IDX_ENTRY, kZero)) return Status::OK();
    BlockHeader h;
    uint32_t crc;
    // A damaged entry (a torn write) is never used; cleared all the same, so
    // that verify does not report it for a lap.
    if (DecodeIndexEntry(p, &h, &crc) && found && h.seq < newest) return Status::OK();
    *cleared = true;
    return f->PWrite(tier.index_off + i * LS_IDX_ENTRY, kZero, sizeof kZero);
  });
}

Status IndexWindow::Get(File *f, const Layout &tier, uint64_t seq, uint64_t below, BlockHeader *h,
                        bool *have) {
  *have = false;
  if (!tier.index_size || seq >= below) return Status::OK();
  if (seq < first_ || seq >= first_ + n_ || below_ != below) {
    // From seq's slot to the end of the tier's entries (the next window
    // starts again at slot 0).
    const uint64_t slot = seq % tier.block_count;
    const uint64_t n = std::min<uint64_t>(kEntries, tier.block_count - slot);
    buf_.resize(n * LS_IDX_ENTRY);
    size_t got = 0;
    Status s = f->PRead(tier.index_off + slot * LS_IDX_ENTRY, buf_.data(), buf_.size(), &got);
    if (!s.ok()) {
      n_ = 0;
      return s;
    }
    if (got < buf_.size()) std::memset(buf_.data() + got, 0, buf_.size() - got);
    first_ = seq;
    n_ = n;
    below_ = below;
  }
  uint32_t crc;
  BlockHeader e;
  if (!DecodeIndexEntry(buf_.data() + (seq - first_) * LS_IDX_ENTRY, &e, &crc)) return Status::OK();
  // The entry of that block, of this tier: anything else (an older lap's, a
  // damaged one that passed by chance) is not used.
  if (e.seq != seq || e.tier != tier.tier || e.count == 0) return Status::OK();
  *h = e;
  *have = true;
  return Status::OK();
}

}  // namespace logsink::storage::internal
