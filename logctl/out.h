// out.h: buffered output to a file descriptor without stdio: lines are
// appended to one big buffer that is written in large chunks, so printing a
// record costs no system call. A closed pipe (EPIPE) is remembered, not fatal.
#pragma once

#include <string>

namespace logsink::logctl {

class Out {
 public:
  static constexpr size_t kChunk = 256 * 1024;
  explicit Out(int fd) : fd_(fd) { buf_.reserve(kChunk + 8192); }
  ~Out() { Flush(); }

  std::string *buf() { return &buf_; }
  // Writes the buffer if it is big enough.
  void MaybeFlush() {
    if (buf_.size() >= kChunk) Flush();
  }
  // Writes everything buffered. Returns false on a write error (errno kept in
  // error()); the buffer is dropped either way.
  bool Flush();
  // True once the reader went away (EPIPE) or a write failed.
  bool failed() const { return error_ != 0; }
  int error() const { return error_; }

 private:
  int fd_;
  int error_ = 0;
  std::string buf_;
};

}  // namespace logsink::logctl
