// notify.cc: see notify.h.
#include "notify.h"

#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

namespace logsink::daemon {

Notifier::Notifier() {
  const char *e = std::getenv("NOTIFY_SOCKET");
  if (!e || !*e) return;
  const size_t n = std::strlen(e);
  if ((e[0] != '/' && e[0] != '@') || n >= sizeof addr_.sun_path || n < 2) {
    through_library_ = true;
    return;
  }
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) {
    through_library_ = true;
    return;
  }
  addr_.sun_family = AF_UNIX;
  std::memcpy(addr_.sun_path, e, n);
  if (e[0] == '@') addr_.sun_path[0] = '\0';  // an abstract name: no terminating NUL
  addr_len_ = socklen_t(offsetof(sockaddr_un, sun_path) + n + (e[0] == '/' ? 1 : 0));
}

Notifier::~Notifier() {
  if (fd_ >= 0) close(fd_);
}

bool Notifier::Send(std::string_view msg) {
  if (through_library_) return sd_notify(0, std::string(msg).c_str()) > 0;
  if (fd_ < 0) return true;  // no manager asked to be told
  for (;;) {
    ssize_t r = sendto(fd_, msg.data(), msg.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                       reinterpret_cast<const sockaddr *>(&addr_), addr_len_);
    if (r >= 0) return true;
    if (errno != EINTR) return false;
  }
}

}  // namespace logsink::daemon
