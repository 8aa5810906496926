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
#include <vector>

#include "logsink/proto/codec.h"
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

// Reads one frame (within timeout_ms): the daemon's answer to the HELLO.
// True for the STATS frame that confirms the stream; false with *why for a
// REFUSE (its reason), the daemon's close, or anything else.
bool ReadConfirmation(int fd, int timeout_ms, std::string *why) {
  if (!SetTimeout(fd, SO_RCVTIMEO, timeout_ms)) {
    *why = Errno("setsockopt", errno);
    return false;
  }
  std::string buf;
  size_t want = LS_FRAME_HDR;
  while (buf.size() < want) {
    char tmp[512];
    ssize_t k = recv(fd, tmp, std::min(sizeof tmp, want - buf.size()), 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      *why = k == 0 || errno == ECONNRESET ? std::string(kClosedAtHello)
                                           : Errno("waiting for the daemon's answer", errno);
      return false;
    }
    buf.append(tmp, size_t(k));
    if (buf.size() == LS_FRAME_HDR) {
      uint32_t len = ls_get_u32(reinterpret_cast<const uint8_t *>(buf.data()));
      if (len == 0 || len > kMaxAck) {
        *why = "malformed answer from the daemon";
        return false;
      }
      want = 4 + size_t(len);
    }
  }
  ls_frame f = {};
  const auto *p = reinterpret_cast<const uint8_t *>(buf.data());
  if (ls_frame_parse(p, buf.size(), kMaxAck, &f) != ptrdiff_t(buf.size())) {
    *why = "malformed answer from the daemon";
    return false;
  }
  if (f.type == LS_F_REFUSE) {
    ls_refuse r;
    *why = ls_refuse_decode(f.payload, f.len, &r) == 0
               ? "the daemon refused: " + std::string(r.reason, r.reason_len)
               : "the daemon refused (malformed reason)";
    return false;
  }
  if (f.type != LS_F_STATS) {
    *why = "unexpected answer from the daemon";
    return false;
  }
  return true;
}

}  // namespace

int OpenTextStream(const std::string &socket_path, std::string_view app, uint32_t flags,
                   int timeout_ms, std::string *why, uint32_t relay_pid,
                   const TextStreamFields *fields) {
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
  flags |= LS_HELLO_CONFIRM;  // so that a refusal is known before any text is written
  if (relay_pid) flags |= LS_HELLO_RELAY;
  // The field list as on the wire: varint n | n x (str name | str value).
  std::string list;
  if (fields && !fields->empty()) {
    flags |= LS_HELLO_FIELDS;
    auto put = [&list](uint64_t v) {
      uint8_t b[LS_VARINT_MAX];
      list.append(reinterpret_cast<const char *>(b), ls_put_varint(b, v));
    };
    put(fields->size());
    for (const auto &[name, value] : *fields) {
      put(name.size());
      list += name;
      put(value.size());
      list += value;
    }
  }
  std::vector<uint8_t> hello(LS_FRAME_HDR + 8 + LS_VARINT_MAX + LS_APP_MAX + 4 + list.size());
  // A label over LS_APP_MAX bytes is cut as the daemon cuts one: on a
  // UTF-8 character boundary (PROTOCOL.md, HELLO).
  const size_t app_len =
      ls_utf8_cut(reinterpret_cast<const uint8_t *>(app.data()), app.size(), LS_APP_MAX);
  // Version 1: a text stream uses nothing of version 2 (PROTOCOL.md).
  ls_hello h = {LS_PROTO_VERSION_MIN,
                flags,
                app.data(),
                app_len,
                relay_pid,
                0,
                nullptr,
                0,
                reinterpret_cast<const uint8_t *>(list.data()),
                list.size()};
  ptrdiff_t n = ls_hello_encode(hello.data(), hello.size(), &h);
  if (n < 0) {
    *why = "bad HELLO flags or fields";
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
  // The daemon answers a refused connection with REFUSE (its reason) and an
  // accepted text stream that asked (LS_HELLO_CONFIRM) with one STATS frame.
  // When the HELLO cannot even be sent, a REFUSE may already be waiting:
  // its reason is the one to give.
  std::string sent_why;
  bool sent = WriteText(
      fd, std::string_view(reinterpret_cast<const char *>(hello.data()), size_t(n)), &sent_why);
  std::string answer_why;
  const bool confirmed = ReadConfirmation(fd, timeout_ms, &answer_why);
  if (!sent && answer_why.rfind("the daemon refused", 0) != 0) answer_why = sent_why;
  if (!sent || !confirmed || !SetTimeout(fd, SO_SNDTIMEO, 0) || !SetTimeout(fd, SO_RCVTIMEO, 0)) {
    *why = !answer_why.empty() ? answer_why : Errno("setsockopt", errno);
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

bool FinishTextStream(int fd, int timeout_ms, TextAck *ack, std::string *why, bool *unanswered) {
  bool closed = false;
  std::string buf;
  if (unanswered) *unanswered = false;
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
        closed = true;
        break;
      }
      if (!AddToAck(&buf, std::string_view(tmp, size_t(k)), why)) break;
    }
  }
  close(fd);
  return closed && ParseTextAck(buf, ack, why, unanswered);
}

bool AddToAck(std::string *buf, std::string_view got, std::string *why) {
  if (buf->size() + got.size() > kMaxAck) {
    *why = "the daemon's acknowledgment is too long";
    return false;
  }
  buf->append(got);
  return true;
}

bool ParseTextAck(const std::string &buf, TextAck *ack, std::string *why, bool *unanswered) {
  if (unanswered) *unanswered = false;
  ls_frame f = {};
  ls_statsframe_iter it = {};
  const auto *p = reinterpret_cast<const uint8_t *>(buf.data());
  if (buf.empty() || ls_frame_parse(p, buf.size(), kMaxAck, &f) != ptrdiff_t(buf.size()) ||
      f.type != LS_F_STATS || ls_statsframe_begin(f.payload, f.len, &it) != 0) {
    *why = buf.empty() ? "the daemon closed the stream without an acknowledgment"
                       : "malformed acknowledgment";
    if (unanswered) *unanswered = buf.empty();
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
    if (k == "lines_without_fields") ack->lines_without_fields = v;
  }
  if (rc < 0) {
    *why = "malformed acknowledgment";
    return false;
  }
  return true;
}

}  // namespace logsink::logctl
