// daemon_stats.cc: the STATS_REQ and RING_REQ client used by `logctl stats`
// and to find the daemon's ring, and the one-request one-answer exchange of
// `logctl level`. Frames are
// encoded and decoded with proto's codec; every step, connect included, is
// bounded by the one timeout.
#include "daemon_stats.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "logsink/proto/frame.h"
#include "logsink/proto/frame_encode.h"
#include "refusal.h"

namespace logsink::logctl {
namespace {

constexpr uint32_t kMaxStatsFrame = 1u << 20;  // a STATS frame is a few KB

int64_t NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// Waits for `events` on fd before the deadline. 0, -ETIMEDOUT or -errno.
int WaitFor(int fd, short events, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - NowMs();
    if (left <= 0) return -ETIMEDOUT;
    struct pollfd pfd = {fd, events, 0};
    int r = poll(&pfd, 1, static_cast<int>(left));
    if (r > 0) return 0;
    if (r == 0) return -ETIMEDOUT;
    if (errno != EINTR) return -errno;
  }
}

// Connects the non-blocking fd before the deadline: a blocking connect()
// to a listener whose backlog is full waits without limit.
int ConnectBy(int fd, const struct sockaddr_un &addr, int64_t deadline) {
  if (connect(fd, reinterpret_cast<const struct sockaddr *>(&addr), sizeof addr) == 0) return 0;
  if (errno != EINPROGRESS && errno != EAGAIN && errno != EINTR) return -errno;
  // An AF_UNIX connect() that cannot complete now fails with EAGAIN instead
  // of EINPROGRESS; retry it whenever the socket may have room.
  for (;;) {
    int rc = WaitFor(fd, POLLOUT, deadline);
    if (rc < 0) return rc;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return -errno;
    if (err != 0) return -err;
    if (connect(fd, reinterpret_cast<const struct sockaddr *>(&addr), sizeof addr) == 0 ||
        errno == EISCONN)
      return 0;
    if (errno != EAGAIN && errno != EALREADY && errno != EINPROGRESS && errno != EINTR)
      return -errno;
    // Nothing to wait on for a full backlog: poll reports POLLOUT at once.
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, nullptr);
  }
}

// Reads exactly n bytes before the deadline.
int ReadFull(int fd, uint8_t *p, size_t n, int64_t deadline) {
  while (n) {
    int rc = WaitFor(fd, POLLIN, deadline);
    if (rc < 0) return rc;
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

// Sends all of [p, p + n) before the deadline.
int SendAll(int fd, const uint8_t *p, size_t n, int64_t deadline) {
  while (n) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) return -errno;
      int rc = WaitFor(fd, POLLOUT, deadline);
      if (rc < 0) return rc;
      continue;
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return 0;
}

std::string Reason(int rc) {
  return rc == -ETIMEDOUT ? "no answer within the timeout" : std::strerror(-rc);
}

// Reads one whole frame (at most max_frame bytes of type and payload) into
// *buf before the deadline and parses it into *f, which points into *buf.
int ReadFrame(int fd, int64_t deadline, uint32_t max_frame, std::string *buf, ls_frame *f,
              std::string *why) {
  uint8_t hdr[LS_FRAME_HDR];
  int rc = ReadFull(fd, hdr, sizeof hdr, deadline);
  if (rc < 0) {
    *why = Reason(rc);
    return rc;
  }
  uint32_t len = ls_get_u32(hdr);
  if (len == 0 || len > max_frame) {
    *why = "bad frame length " + std::to_string(len);
    return -EPROTO;
  }
  buf->assign(reinterpret_cast<const char *>(hdr), sizeof hdr);
  buf->resize(4 + size_t(len));
  auto *p = reinterpret_cast<uint8_t *>(buf->data());
  rc = ReadFull(fd, p + sizeof hdr, len - 1, deadline);
  if (rc < 0) {
    *why = Reason(rc);
    return rc;
  }
  if (ls_frame_parse(p, buf->size(), max_frame, f) != ptrdiff_t(buf->size())) {
    *why = "malformed frame";
    return -EPROTO;
  }
  return 0;
}

// A REFUSE frame's reason, as *why. Always -EPROTO.
int Refused(const ls_frame &f, std::string *why) {
  ls_refuse r;
  std::string reason =
      ls_refuse_decode(f.payload, f.len, &r) == 0 ? std::string(r.reason, r.reason_len) : "";
  *why = "the daemon refused: " + reason;
  return -EPROTO;
}

// Reads frames until the STATS answer (when stats) and the RING answer (when
// ring) are in, or a REFUSE, and decodes them.
int ReadAnswers(int fd, int64_t deadline, StatList *stats, DaemonRing *ring, std::string *why) {
  std::string frame;
  while (stats || ring) {
    ls_frame f{};
    if (int rc = ReadFrame(fd, deadline, kMaxStatsFrame, &frame, &f, why); rc < 0) return rc;
    if (f.type == LS_F_REFUSE) return Refused(f, why);
    if (f.type == LS_F_RING && ring) {
      ls_ring r{};
      if (ls_ring_decode(f.payload, f.len, &r) < 0) {
        *why = "malformed RING frame";
        return -EPROTO;
      }
      ring->path.assign(r.path, r.path_len);
      std::memcpy(ring->id.data(), r.ring_id, ring->id.size());
      ring->dev = r.dev;
      ring->ino = r.ino;
      ring = nullptr;
      continue;
    }
    if (f.type != LS_F_STATS || !stats) continue;  // nothing else is sent unasked; skip
    ls_statsframe_iter it;
    const char *name;
    size_t name_len;
    uint64_t value;
    stats->clear();
    int rc = ls_statsframe_begin(f.payload, f.len, &it);
    while (rc == 0 && (rc = ls_statsframe_next(&it, &name, &name_len, &value)) == 1) {
      stats->emplace_back(std::string(name, name_len), value);
      rc = 0;
    }
    if (rc < 0) {
      *why = "malformed STATS frame";
      return -EPROTO;
    }
    stats = nullptr;
  }
  return 0;
}

// Connects to the daemon on socket_path before the deadline and sends the
// n request bytes at req. Returns the connected fd (the caller closes it),
// or a negative errno with the reason in *why: -ENOENT / -ECONNREFUSED
// when nothing listens, -EPROTO when the daemon refused the connection
// before it read the request (its REFUSE's reason).
int ConnectAndSend(const std::string &socket_path, int64_t deadline, const uint8_t *req, size_t n,
                   std::string *why) {
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    *why = "socket path too long";
    return -ENAMETOOLONG;
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *why = std::strerror(errno);
    return -errno;
  }
  int rc = ConnectBy(fd, addr, deadline);
  if (rc < 0) {
    *why = rc == -ETIMEDOUT ? "connect: no answer within the timeout" : std::strerror(-rc);
  } else {
    rc = SendAll(fd, req, n, deadline);
    std::string reason;
    if (rc >= 0) return fd;
    if ((rc == -EPIPE || rc == -ECONNRESET) && WaitingRefusal(fd, &reason)) {
      *why = "the daemon refused: " + reason;  // before it read our request
      rc = -EPROTO;
    } else {
      *why = std::string("send: ") + Reason(rc);
    }
  }
  close(fd);
  return rc;
}

}  // namespace

int QueryDaemonStatsAndRing(const std::string &socket_path, int timeout_ms, StatList *stats,
                            DaemonRing *ring, std::string *why) {
  // RING_REQ and STATS_REQ need no HELLO (PROTOCOL.md): a query is not a
  // logging client.
  uint8_t req[2 * LS_FRAME_HDR];
  size_t n = 0;
  if (ring) n += size_t(ls_ring_req_encode(req + n, sizeof req - n));
  if (stats) n += size_t(ls_stats_req_encode(req + n, sizeof req - n));
  const int64_t deadline = NowMs() + timeout_ms;
  const int fd = ConnectAndSend(socket_path, deadline, req, n, why);
  if (fd < 0) return fd;
  const int rc = ReadAnswers(fd, deadline, stats, ring, why);
  close(fd);
  return rc;
}

int QueryDaemonFrame(const std::string &socket_path, int timeout_ms, const uint8_t *req,
                     size_t req_len, uint8_t want, uint32_t max_frame, std::string *payload,
                     std::string *why) {
  const int64_t deadline = NowMs() + timeout_ms;
  const int fd = ConnectAndSend(socket_path, deadline, req, req_len, why);
  if (fd < 0) return fd;
  std::string frame;
  int rc;
  for (;;) {
    ls_frame f{};
    if ((rc = ReadFrame(fd, deadline, max_frame, &frame, &f, why)) < 0) {
      if (rc == -ECONNRESET) *why = "the daemon closed the connection without answering";
      break;
    }
    if (f.type == LS_F_REFUSE) {
      rc = Refused(f, why);
      break;
    }
    if (f.type != want) continue;  // nothing else is sent unasked; skip
    payload->assign(reinterpret_cast<const char *>(f.payload), f.len);
    break;
  }
  close(fd);
  return rc;
}

int QueryDaemonStats(const std::string &socket_path, int timeout_ms, StatList *out,
                     std::string *why) {
  return QueryDaemonStatsAndRing(socket_path, timeout_ms, out, nullptr, why);
}

int QueryDaemonRing(const std::string &socket_path, int timeout_ms, DaemonRing *out,
                    std::string *why) {
  return QueryDaemonStatsAndRing(socket_path, timeout_ms, nullptr, out, why);
}

}  // namespace logsink::logctl
