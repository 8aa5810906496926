// layout.cc: Layout::Compute, the geometry of a ring file of a given size
// (proto/FORMAT.md, "Layout").
#include <string>

#include "logsink/proto/format.h"
#include "logsink/storage/ring.h"

namespace logsink::storage {
namespace {

constexpr uint64_t kStrtabMin = 4096, kStrtabMax = 16ull << 20;

uint64_t DefaultStrtab(uint64_t file_size) {
  uint64_t s = (file_size / 64 + 4095) / 4096 * 4096;
  if (s < kStrtabMin) s = kStrtabMin;
  if (s > kStrtabMax) s = kStrtabMax;
  return s;
}

// The smallest file that holds the superblocks, the string table and 2 blocks.
uint64_t MinimumSize(uint32_t block_size, uint64_t strtab_size) {
  if (strtab_size != 0) return LS_SB_REGION + strtab_size + 2ull * block_size;
  uint64_t s = LS_SB_REGION + kStrtabMin + 2ull * block_size;
  for (;;) {  // the default table grows with the file: iterate to the fixed point
    uint64_t need = LS_SB_REGION + DefaultStrtab(s) + 2ull * block_size;
    if (need <= s) return s;
    s = need;
  }
}

}  // namespace

Status Layout::Compute(uint64_t file_size, uint32_t block_size, uint64_t strtab_size, Layout *out) {
  if (block_size < LS_BLOCK_SIZE_MIN || block_size > LS_BLOCK_SIZE_MAX ||
      (block_size & (block_size - 1)) != 0) {
    return Status::InvalidArgument("block size " + std::to_string(block_size) +
                                   " is not a power of two from 4096 to 1048576");
  }
  if (strtab_size % 4096 != 0 || strtab_size > kStrtabMax) {
    return Status::InvalidArgument("string table size " + std::to_string(strtab_size) +
                                   " is not a multiple of 4096 up to 16 MiB");
  }
  uint64_t min = MinimumSize(block_size, strtab_size);
  if (file_size < min) {
    return Status::InvalidArgument("ring file size " + std::to_string(file_size) +
                                   " is too small: with block size " + std::to_string(block_size) +
                                   " the minimum is " + std::to_string(min) +
                                   " bytes (superblocks, string table and 2 blocks)");
  }
  Layout l;
  l.file_size = file_size;
  l.block_size = block_size;
  l.strtab_off = LS_SB_REGION;
  l.strtab_size = strtab_size ? strtab_size : DefaultStrtab(file_size);
  l.dict_off = l.strtab_off + l.strtab_size;
  l.dict_size = 0;
  if (file_size >= l.dict_off + LS_DICT_REGION &&
      (file_size - l.dict_off - LS_DICT_REGION) / block_size >= LS_DICT_MIN_BLOCKS) {
    l.dict_size = LS_DICT_REGION;
  }
  // The summary index: an entry for each slot that remains after it (n
  // entries of LS_IDX_ENTRY bytes cover the rest at block_size + LS_IDX_ENTRY
  // per slot), rounded up to 4 KiB; only where the dictionary is, and only if
  // LS_DICT_MIN_BLOCKS slots still remain.
  l.index_off = l.dict_off + l.dict_size;
  l.index_size = 0;
  if (l.dict_size) {
    const uint64_t rest = file_size - l.index_off;
    const uint64_t n = rest / (uint64_t(block_size) + LS_IDX_ENTRY) + 1;
    const uint64_t size = (n * LS_IDX_ENTRY + 4095) / 4096 * 4096;
    if (rest >= size && (rest - size) / block_size >= LS_DICT_MIN_BLOCKS) l.index_size = size;
  }
  l.blocks_off = l.index_off + l.index_size;
  uint64_t count = (file_size - l.blocks_off) / block_size;
  if (count < 2) {  // unreachable given MinimumSize, kept as the invariant's guard
    return Status::InvalidArgument("ring file size " + std::to_string(file_size) +
                                   " holds fewer than 2 blocks");
  }
  if (count > 0xffffffffull) {
    return Status::InvalidArgument("ring file size " + std::to_string(file_size) +
                                   " holds more than 2^32-1 blocks; use a larger block size");
  }
  l.block_count = static_cast<uint32_t>(count);
  *out = l;
  return Status::OK();
}

Layout Layout::Tier(int t) const {
  Layout l = *this;
  uint64_t start = 0;
  for (int i = 0; i < t; i++) start += TierBlocks(i);
  l.blocks_off = blocks_off + start * block_size;
  l.index_off = index_off + start * LS_IDX_ENTRY;
  l.block_count = TierBlocks(t);
  l.kept_blocks = l.error_blocks = 0;
  l.tier = uint8_t(t);
  return l;
}

Status Layout::SetTiers(double kept_share, double error_share) {
  if (!(kept_share >= 0 && kept_share <= 0.5) || !(error_share >= 0 && error_share <= 0.5) ||
      kept_share + error_share > 0.75) {
    return Status::InvalidArgument(
        "tier shares must each be within 0..0.5 and together at most 0.75");
  }
  auto blocks = [this](double share) {
    const uint64_t n = uint64_t(double(block_count) * share);
    return n >= 2 ? uint32_t(n) : 0u;
  };
  kept_blocks = blocks(kept_share);
  error_blocks = blocks(error_share);
  return Status::OK();
}

std::string Layout::RingIdHex() const {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  bool any = false;
  for (uint8_t b : ring_id) {
    any |= b != 0;
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return any ? out : std::string();
}

}  // namespace logsink::storage
