// logger4.h: our own re-implementation of "Logger4", the fixed-size
// chronological text logger of a published blog post, used as the baseline in
// bench/ring_bench.cc. Not logsink code: it exists only to be measured.
//
// How it works (as described in the post): messages are appended as text to an
// 8 KiB staging buffer; when the next message does not fit, the buffer is
// flushed. A flush that would grow the file past its maximum first shifts the
// newest (size - excess) bytes of the file to offset 0 (read into a
// preallocated buffer, written back at 0), then writes the staging buffer after
// them, so the file stays physically chronological and never exceeds the
// maximum. The cost of a flush on a full file is O(file size). The file is a
// std::fstream opened in|out|binary, as in the original.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace logsink::bench {

class Logger4 {
 public:
  static constexpr size_t kStagingSize = 8192;

  // Opens path (creating it empty if it does not exist) for a log of at most
  // max_size bytes; an existing file is continued at its current size.
  Logger4(const std::string &path, uint64_t max_size);
  ~Logger4();  // flushes
  Logger4(const Logger4 &) = delete;
  Logger4 &operator=(const Logger4 &) = delete;

  bool ok() const { return ok_; }
  // Appends msg and a '\n'. Flushes first when the staging buffer is full.
  void Log(std::string_view msg);
  // Writes the staging buffer to the file (shifting old bytes out if full).
  void Flush();

  uint64_t file_size() const { return size_; }
  uint64_t flushes() const { return flushes_; }
  uint64_t bytes_moved() const { return bytes_moved_; }  // read + rewritten by shifts

 private:
  std::fstream file_;
  uint64_t max_size_;
  uint64_t size_ = 0;
  size_t staged_ = 0;
  bool ok_ = true;
  uint64_t flushes_ = 0;
  uint64_t bytes_moved_ = 0;
  std::vector<char> staging_;
  std::vector<char> shift_buf_;  // preallocated: max_size bytes
};

}  // namespace logsink::bench
