// locked_file.h: a File whose reads and writes are made under a lock: the
// writer thread's (RingWriter, WriterOptions::queue_bytes), and a reader's
// of the same file in the same process, so that no read sees a block half
// written. Internal.
#pragma once

#include <memory>
#include <mutex>

#include "logsink/storage/env.h"

namespace logsink::storage {

// base, with each PRead and PWrite made under *mu.
std::unique_ptr<File> LockFile(std::unique_ptr<File> base, std::mutex *mu);

}  // namespace logsink::storage
