// scan.cc: ForEachSlot, a chunked sequential read of all block slots.
#include "scan.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace logsink::storage::internal {

uint64_t SlotsInFile(const Layout &l, uint64_t file_size) {
  if (file_size <= l.blocks_off) return 0;
  uint64_t n = (file_size - l.blocks_off + l.block_size - 1) / l.block_size;
  return std::min<uint64_t>(n, l.block_count);
}

Status ForEachSlot(File *f, const Layout &l,
                   const std::function<void(uint64_t slot, const uint8_t *image)> &fn) {
  uint64_t size = 0;
  Status s = f->Size(&size);
  if (!s.ok()) return s;
  const uint64_t slots = SlotsInFile(l, size);
  const uint64_t per_chunk = std::max<uint64_t>(1, (1u << 20) / l.block_size);
  std::vector<uint8_t> buf(std::min(per_chunk, std::max<uint64_t>(slots, 1)) * l.block_size);
  for (uint64_t slot = 0; slot < slots; slot += per_chunk) {
    uint64_t n = std::min<uint64_t>(per_chunk, slots - slot);
    size_t want = n * l.block_size, got = 0;
    s = f->PRead(l.SlotOffset(slot), buf.data(), want, &got);
    if (!s.ok()) return s;
    if (got < want) std::memset(buf.data() + got, 0, want - got);
    for (uint64_t i = 0; i < n; i++) fn(slot + i, buf.data() + i * l.block_size);
  }
  return Status::OK();
}

}  // namespace logsink::storage::internal
