// text_stream.cc: see text_stream.h. Blocking I/O bounded by SO_SNDTIMEO
// (which also bounds an AF_UNIX connect) and SO_RCVTIMEO; both are cleared
// before the descriptor is handed out, as `logctl run` gives it to a program
// that must not see its writes time out.
#include "text_stream.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "logsink/proto/frame.h"
#include "logsink/proto/frame_encode.h"

namespace logsink::logctl {
namespace {

constexpr size_t kMaxAck = 4096;  // the acknowledgment is a STATS frame of 3 entries

bool SetTimeout(int fd, int opt, int ms) {
  struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
  return setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv) == 0;
}

std::string Errno(const char *what, int err) {
  return std::string(what) + ": " +
         (err == EAGAIN || err == EWOULDBLOCK ? "no answer within the timeout"
                                              : std::strerror(err));
}

}  // namespace

int OpenTextStream(const std::string &socket_path, std::string_view app, uint32_t flags,
                   int timeout_ms, std::string *why) {
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    *why = "socket path too long: " + socket_path;
    return -1;
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *why = Errno("socket", errno);
    return -1;
  }
  uint8_t hello[LS_FRAME_HDR + 8 + LS_VARINT_MAX + LS_APP_MAX];
  ls_hello h = {LS_PROTO_VERSION, flags, app.data(), std::min<size_t>(app.size(), LS_APP_MAX)};
  ptrdiff_t n = ls_hello_encode(hello, sizeof hello, &h);
  if (n < 0) {
    *why = "bad HELLO flags";
    close(fd);
    return -1;
  }
  if (!SetTimeout(fd, SO_SNDTIMEO, timeout_ms) ||
      connect(fd, reinterpret_cast<const struct sockaddr *>(&addr), sizeof addr) != 0) {
    int err = errno;
    *why = err == ENOENT || err == ECONNREFUSED
               ? "daemon not running (socket " + socket_path + ")"
               : Errno("connect", err) + " (socket " + socket_path + ")";
    close(fd);
    return -1;
  }
  if (!WriteText(fd, std::string_view(reinterpret_cast<const char *>(hello), size_t(n)), why) ||
      !SetTimeout(fd, SO_SNDTIMEO, 0)) {
    close(fd);
    return -1;
  }
  return fd;
}

bool WriteText(int fd, std::string_view s, std::string *why) {
  while (!s.empty()) {
    ssize_t k = send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR) continue;
      *why = Errno("send", errno);
      return false;
    }
    s.remove_prefix(size_t(k));
  }
  return true;
}

bool FinishTextStream(int fd, int timeout_ms, TextAck *ack, std::string *why) {
  bool ok = false;
  std::string buf;
  if (shutdown(fd, SHUT_WR) != 0 || !SetTimeout(fd, SO_RCVTIMEO, timeout_ms)) {
    *why = Errno("shutdown", errno);
  } else {
    char tmp[512];
    for (;;) {  // read to the daemon's close: the acknowledgment is all it sends
      ssize_t k = recv(fd, tmp, sizeof tmp, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) {
        *why = Errno("waiting for the daemon's acknowledgment", errno);
        break;
      }
      if (k == 0) {
        ok = true;
        break;
      }
      if (buf.size() + size_t(k) > kMaxAck) {
        *why = "the daemon's acknowledgment is too long";
        break;
      }
      buf.append(tmp, size_t(k));
    }
  }
  close(fd);
  if (!ok) return false;
  ls_frame f = {};
  ls_statsframe_iter it = {};
  const auto *p = reinterpret_cast<const uint8_t *>(buf.data());
  if (buf.empty() || ls_frame_parse(p, buf.size(), kMaxAck, &f) != ptrdiff_t(buf.size()) ||
      f.type != LS_F_STATS || ls_statsframe_begin(f.payload, f.len, &it) != 0) {
    *why = buf.empty() ? "the daemon closed the stream without an acknowledgment"
                       : "malformed acknowledgment";
    return false;
  }
  const char *name;
  size_t len;
  uint64_t v;
  int rc;
  while ((rc = ls_statsframe_next(&it, &name, &len, &v)) == 1) {
    std::string_view k(name, len);
    if (k == "lines") ack->lines = v;
    if (k == "lines_cut") ack->lines_cut = v;
    if (k == "partial_lines") ack->partial_lines = v;
  }
  if (rc < 0) {
    *why = "malformed acknowledgment";
    return false;
  }
  return true;
}

}  // namespace logsink::logctl
