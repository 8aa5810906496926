// kmsg.h: the kernel's log in the ring (daemon/KERNEL.md). /dev/kmsg is read
// on the loop, non-blocking, one record per read(2); each record becomes a
// free-text record of the "kernel" site (text_record.h) from one source
// (pid 0, uid 0, app and comm "kernel"), stamped with the realtime the
// kernel's monotonic timestamp corresponds to. The kernel's sequence numbers
// find what it overwrote before it was read (a DROPPED entry with the count)
// and what the ring already holds after a restart (skipped).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "context.h"
#include "logsink/storage/ring.h"

namespace logsink::daemon {

// The largest record /dev/kmsg hands out (a read with less fails EINVAL):
// the kernel's 1 KiB text limit plus the dictionary, escaped, with room.
constexpr size_t kKmsgBuffer = 16u << 10;

// The app label and comm of the kernel's source (KERNEL.md): how the ring's
// kernel records are found again after a restart (LastKernelSeq).
constexpr char kKernelName[] = "kernel";

class KmsgReader {
 public:
  // fd: /dev/kmsg (or a test's stand-in) opened O_RDONLY | O_NONBLOCK; -1
  // when the caller only calls Store. after_seq: the newest kernel sequence
  // number of this boot the ring already holds (records up to it are
  // skipped), none when it holds none.
  KmsgReader(Context *ctx, int fd, std::optional<uint64_t> after_seq);
  KmsgReader(const KmsgReader &) = delete;
  KmsgReader &operator=(const KmsgReader &) = delete;

  // Reads records until none is left or max_records were read. Returns true
  // when it stopped on the budget (more may be waiting).
  bool ReadSome(size_t max_records);
  // Stores one record as read at realtime now_real and CLOCK_MONOTONIC
  // now_mono (ns).
  void Store(std::string_view rec, uint64_t now_real, uint64_t now_mono);

 private:
  Context *ctx_;
  int fd_;
  std::optional<uint64_t> after_seq_;
  bool have_next_ = false;
  uint64_t next_seq_ = 0;  // the sequence number the next record should have
  std::vector<char> buf_;
  storage::Source src_;
};

// The newest kernel sequence number of boot `boot` among the ring's kernel
// records (site file "kernel"); none when there is none or the ring cannot
// be read. Skips blocks by their summaries (app "kernel", the boot).
std::optional<uint64_t> LastKernelSeq(const std::string &ring, const std::array<uint8_t, 16> &boot);

}  // namespace logsink::daemon
