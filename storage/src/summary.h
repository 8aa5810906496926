// summary.h: SummarizeRing, the full scan behind RingReader::Summarize.
// Internal.
#pragma once

#include <functional>

#include "block.h"
#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"
#include "strtab.h"

namespace logsink::storage::internal {

// The reader's search for the newest valid block (RingReader's FindNewest).
using FindNewestFn = std::function<Status(bool *found, BlockHeader *h)>;

// Scans every slot and summarizes the blocks a reader would show: those from
// the newest block find_newest gives back one lap. NotFound on an empty ring.
Status SummarizeRing(File *file, const Layout &layout, StringTable *st,
                     const FindNewestFn &find_newest, RingReader::Summary *out);

}  // namespace logsink::storage::internal
