// refusal.cc: see refusal.h. The frame is decoded with proto's codec.
#include "refusal.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdint>

#include "logsink/proto/frame.h"

namespace logsink::logctl {
namespace {

constexpr size_t kMaxRefuse = 4096;  // a REFUSE frame is its version and a short reason

}  // namespace

bool WaitingRefusal(int fd, std::string *reason) {
  uint8_t buf[kMaxRefuse];
  size_t have = 0;
  while (have < sizeof buf) {
    ssize_t k = recv(fd, buf + have, sizeof buf - have, MSG_DONTWAIT);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;  // the end of what the peer sent, or nothing waiting
    have += size_t(k);
  }
  ls_frame f = {};
  ls_refuse r;
  if (ls_frame_parse(buf, have, kMaxRefuse, &f) <= 0 || f.type != LS_F_REFUSE ||
      ls_refuse_decode(f.payload, f.len, &r) != 0)
    return false;
  reason->assign(r.reason, r.reason_len);
  return true;
}

}  // namespace logsink::logctl
