// logger4.cc: the Logger4 baseline (see logger4.h): an 8 KiB text staging
// buffer flushed into a std::fstream that is kept physically chronological by
// shifting the newest bytes to the front when full.
#include "logger4.h"

#include <algorithm>
#include <cstring>

namespace logsink::bench {

Logger4::Logger4(const std::string &path, uint64_t max_size)
    : max_size_(max_size), staging_(kStagingSize), shift_buf_(max_size) {
  file_.open(path, std::ios::in | std::ios::out | std::ios::binary);
  if (!file_.is_open()) {
    // in|out does not create: create the file, then reopen it in|out.
    { std::ofstream create(path, std::ios::out | std::ios::binary); }
    file_.open(path, std::ios::in | std::ios::out | std::ios::binary);
  }
  if (!file_.is_open()) {
    ok_ = false;
    return;
  }
  file_.seekg(0, std::ios::end);
  size_ = static_cast<uint64_t>(file_.tellg());
}

Logger4::~Logger4() {
  if (ok_) Flush();
}

void Logger4::Log(std::string_view msg) {
  size_t n = std::min(msg.size(), kStagingSize - 1);
  if (staged_ + n + 1 > kStagingSize) Flush();
  std::memcpy(staging_.data() + staged_, msg.data(), n);
  staged_ += n;
  staging_[staged_++] = '\n';
}

void Logger4::Flush() {
  if (staged_ == 0 || !ok_) return;
  flushes_++;
  if (size_ + staged_ > max_size_) {
    // Keep the newest (size - excess) bytes: move them to the front.
    uint64_t excess = size_ + staged_ - max_size_;
    uint64_t keep = excess < size_ ? size_ - excess : 0;
    file_.seekg(static_cast<std::streamoff>(size_ - keep));
    file_.read(shift_buf_.data(), static_cast<std::streamsize>(keep));
    file_.seekp(0);
    file_.write(shift_buf_.data(), static_cast<std::streamsize>(keep));
    bytes_moved_ += 2 * keep;
    size_ = keep;
  }
  file_.seekp(static_cast<std::streamoff>(size_));
  file_.write(staging_.data(), static_cast<std::streamsize>(staged_));
  file_.flush();
  if (!file_) ok_ = false;
  size_ += staged_;
  staged_ = 0;
}

}  // namespace logsink::bench
