// harness.h: helpers of logsinkd's integration tests on top of tests/common:
// the real logsinkd on a temp socket and ring (Daemon), a protocol client over
// a real Unix socket (Client), and logsinkd runs that end by themselves
// (RunDaemon).
#pragma once

#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/daemon_process.h"
#include "common/process.h"
#include "common/ring_check.h"
#include "common/temp_dir.h"
#include "common/unix_socket.h"
#include "logsink/proto/frame.h"
#include "proto/wire_encoder.h"

namespace logsink::test {

// Runs logsinkd to completion (--print-config, config errors, ...).
inline ProcResult RunDaemon(const TempDir &, const std::vector<std::string> &args,
                            const std::function<void()> &child_setup = {}) {
  SubprocessOptions o;
  o.child_setup = child_setup;
  return RunProcess(BinPath("logsinkd"), args, o, kHang);
}

// One client connection speaking the protocol.
class Client {
 public:
  explicit Client(const std::string &socket) : fd_(ConnectUnix(socket)) {}
  ~Client() {
    if (fd_ >= 0) close(fd_);
  }
  Client(const Client &) = delete;
  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool Send(const std::string &bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      off += size_t(n);
    }
    return true;
  }

  // True once the daemon has read everything sent so far (nothing left
  // unread in the socket), within the hang limit.
  bool WaitRead() {
    return WaitUntil([this] {
      int unread = 0;
      return ioctl(fd_, SIOCOUTQ, &unread) == 0 && unread == 0;
    });
  }

  // Reads one whole frame (type + payload) within the hang limit; what
  // came after it in the same read is kept for the next call (answers to
  // requests sent together).
  std::optional<std::pair<uint8_t, std::string>> ReadFrame() {
    std::string &buf = in_;
    auto deadline = Clock::now() + kHang;
    while (Clock::now() < deadline) {
      ls_frame f;
      ptrdiff_t r = ls_frame_parse(reinterpret_cast<const uint8_t *>(buf.data()), buf.size(),
                                   LS_FRAME_MAX, &f);
      if (r > 0) {
        auto frame =
            std::make_pair(f.type, std::string(reinterpret_cast<const char *>(f.payload), f.len));
        buf.erase(0, size_t(r));
        return frame;
      }
      if (r < 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char tmp[65536];
      ssize_t n = recv(fd_, tmp, sizeof tmp, 0);
      if (n <= 0) return std::nullopt;
      buf.append(tmp, size_t(n));
    }
    return std::nullopt;
  }

  // True when the daemon closed the connection (EOF or reset) within the limit.
  bool WaitClosed() {
    auto deadline = Clock::now() + kHang;
    while (Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char tmp[4096];
      ssize_t n = recv(fd_, tmp, sizeof tmp, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    }
    return false;
  }

  // Sends STATS_REQ and returns the counters.
  std::map<std::string, uint64_t> Stats() {
    if (!Send(StatsReq())) return {};
    return ReadStats();
  }

  // Reads one STATS frame (a STATS reply, a text stream's acknowledgment).
  std::map<std::string, uint64_t> ReadStats() {
    auto f = ReadFrame();
    if (!f || f->first != LS_F_STATS) return {};
    return StatsOf(f->second);
  }

  // The counters of a STATS frame's payload (empty when it does not parse).
  static std::map<std::string, uint64_t> StatsOf(const std::string &payload) {
    std::map<std::string, uint64_t> m;
    ls_statsframe_iter it;
    const auto *p = reinterpret_cast<const uint8_t *>(payload.data());
    if (ls_statsframe_begin(p, payload.size(), &it) < 0) return m;
    const char *name;
    size_t len;
    uint64_t v;
    while (ls_statsframe_next(&it, &name, &len, &v) == 1) m[std::string(name, len)] = v;
    return m;
  }

 private:
  int fd_;
  std::string in_;  // bytes read past the last whole frame
};

}  // namespace logsink::test
