// landed.h: counts what a system has put on disk, cheaply enough to poll
// while it is still writing: our lines in a text log, or records in a ring.
#pragma once

#include <cstdint>
#include <string>

namespace logsink::compare {

// Lines of a growing text file that contain `marker`, read incrementally
// (each call reads only the bytes appended since the last one).
class LineCounter {
 public:
  LineCounter(std::string path, std::string marker);
  ~LineCounter();
  uint64_t Count();  // after reading what is there now
  uint64_t bytes() const { return off_; }

 private:
  std::string path_, marker_, carry_;
  int fd_ = -1;
  uint64_t off_ = 0, lines_ = 0;
};

// Records in a logsink ring file, from its block headers.
struct RingCount {
  bool ok = false;
  uint64_t next_seq = 0;         // newest_seq + 1: records ever written to the file
  uint64_t in_ring = 0;          // records (not DROPPED entries) still in the ring
  uint64_t dropped_entries = 0;  // DROPPED entries still in the ring
  uint64_t dropped_count = 0;    // sum of their counts
  uint64_t overwritten = 0;      // records the ring wrapped over (oldest_seq)
  uint64_t block_bytes = 0;      // blocks holding records * block size
  uint64_t entry_bytes = 0;      // used bytes of those blocks
  std::string error;
};

// Newest sequence number + 1 (0 for an empty ring); -1 when unreadable.
int64_t RingNextSeq(const std::string &path);
// A full pass over the ring (SeekOldest .. end).
RingCount CountRing(const std::string &path);

}  // namespace logsink::compare
