// out.cc: chunked writes of the output buffer (see out.h).
#include "out.h"

#include <unistd.h>

#include <cerrno>

namespace logsink::logctl {

bool Out::Flush() {
  size_t off = 0;
  while (off < buf_.size() && error_ == 0) {
    ssize_t n = write(fd_, buf_.data() + off, buf_.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      break;
    }
    off += static_cast<size_t>(n);
  }
  buf_.clear();
  return error_ == 0;
}

}  // namespace logsink::logctl
