// daemon_stats.cc: the STATS_REQ client used by `logctl stats`.
#include "daemon_stats.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "logsink/proto/codec.h"
#include "logsink/proto/wire.h"

namespace logsink::logctl {
namespace {

constexpr uint32_t kMaxStatsFrame = 1u << 20;  // a STATS frame is a few KB

int64_t NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// Reads exactly n bytes before the deadline.
int ReadFull(int fd, uint8_t *p, size_t n, int64_t deadline) {
  while (n) {
    int64_t left = deadline - NowMs();
    if (left <= 0) return -ETIMEDOUT;
    struct pollfd pfd = {fd, POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(left));
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) return -ETIMEDOUT;
    ssize_t got = read(fd, p, n);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return -errno;
    }
    if (got == 0) return -ECONNRESET;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return 0;
}

void PutFrame(std::string *buf, uint8_t type, const std::string &payload) {
  uint8_t hdr[LS_FRAME_HDR];
  ls_put_u32(hdr, static_cast<uint32_t>(1 + payload.size()));
  hdr[4] = type;
  buf->append(reinterpret_cast<char *>(hdr), sizeof hdr);
  buf->append(payload);
}

bool GetStr(const uint8_t *&p, const uint8_t *end, std::string *s) {
  uint64_t len;
  size_t n = ls_get_varint(p, end, &len);
  if (!n || len > static_cast<uint64_t>(end - p) - n) return false;
  s->assign(reinterpret_cast<const char *>(p + n), len);
  p += n + len;
  return true;
}

}  // namespace

int QueryDaemonStats(const std::string &socket_path, int timeout_ms, Counters *out,
                     std::string *why) {
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    *why = "socket path too long";
    return -ENAMETOOLONG;
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *why = std::strerror(errno);
    return -errno;
  }
  int64_t deadline = NowMs() + timeout_ms;
  int rc = 0;
  do {
    if (connect(fd, reinterpret_cast<struct sockaddr *>(&addr), sizeof addr) != 0) {
      rc = -errno;
      *why = std::strerror(errno);
      break;
    }
    // STATS_REQ needs no HELLO (PROTOCOL.md): a query is not a logging client.
    std::string req;
    PutFrame(&req, LS_F_STATS_REQ, "");
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
      rc = -errno;
      *why = std::string("send: ") + std::strerror(errno);
      break;
    }
    for (;;) {
      uint8_t hdr[LS_FRAME_HDR];
      rc = ReadFull(fd, hdr, sizeof hdr, deadline);
      if (rc < 0) {
        *why = rc == -ETIMEDOUT ? "no answer within the timeout" : std::strerror(-rc);
        break;
      }
      uint32_t len = ls_get_u32(hdr);
      if (len == 0 || len > kMaxStatsFrame) {
        rc = -EPROTO;
        *why = "bad frame length " + std::to_string(len);
        break;
      }
      std::string payload(len - 1, '\0');
      rc = ReadFull(fd, reinterpret_cast<uint8_t *>(payload.data()), payload.size(), deadline);
      if (rc < 0) {
        *why = rc == -ETIMEDOUT ? "no answer within the timeout" : std::strerror(-rc);
        break;
      }
      const auto *p = reinterpret_cast<const uint8_t *>(payload.data());
      const auto *end = p + payload.size();
      if (hdr[4] == LS_F_REFUSE) {
        std::string reason;
        if (payload.size() >= 4) {
          p += 4;
          GetStr(p, end, &reason);
        }
        rc = -EPROTO;
        *why = "the daemon refused: " + reason;
        break;
      }
      if (hdr[4] != LS_F_STATS) continue;  // nothing else is sent unasked; skip
      uint64_t n;
      size_t k = ls_get_varint(p, end, &n);
      if (!k) {
        rc = -EPROTO;
        *why = "malformed STATS frame";
        break;
      }
      p += k;
      out->clear();
      for (uint64_t i = 0; i < n; i++) {
        std::string name;
        uint64_t value;
        if (!GetStr(p, end, &name) || !(k = ls_get_varint(p, end, &value))) {
          rc = -EPROTO;
          *why = "malformed STATS frame";
          break;
        }
        p += k;
        out->emplace_back(std::move(name), value);
      }
      break;
    }
  } while (false);
  close(fd);
  return rc;
}

}  // namespace logsink::logctl
