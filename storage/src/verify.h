// verify.h: VerifyRing, the full consistency check behind RingReader::Verify
// (superblocks, string table, every block and entry). Internal.
#pragma once

#include <string>

#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::internal {

// Reports every problem with its file offset; Corruption if any was found.
Status VerifyRing(File *f, const std::string &path, Reporter *reporter);

}  // namespace logsink::storage::internal
