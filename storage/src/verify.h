// verify.h: VerifyRing, the full consistency check behind RingReader::Verify
// (superblocks, string table, every block and entry). Internal.
#pragma once

#include <functional>
#include <string>

#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::internal {

// Reports every problem with its file offset; Corruption if any was found.
// progress (may be empty) hears (slots checked, slots in the file) after
// each slot.
Status VerifyRing(File *f, const std::string &path, Reporter *reporter,
                  const std::function<void(uint64_t, uint64_t)> &progress = {});

}  // namespace logsink::storage::internal
