// scan.h: reading every block slot of a ring file in large sequential chunks
// (the writer's open, Summarize and Verify scan the whole ring). Internal.
#pragma once

#include <functional>

#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::internal {

// Number of slots that start inside a file of file_size bytes (a truncated
// file holds fewer than block_count; the rest count as never written).
uint64_t SlotsInFile(const Layout &l, uint64_t file_size);

// Calls fn(slot, image) for the slots 0..SlotsInFile()-1 (never for slots past
// the end of a truncated file, so a superblock claiming a huge geometry costs
// nothing); image has block_size bytes (zero-filled past the end of the file)
// and is valid during the call.
Status ForEachSlot(File *f, const Layout &l,
                   const std::function<void(uint64_t slot, const uint8_t *image)> &fn);

}  // namespace logsink::storage::internal
