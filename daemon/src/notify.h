// notify.h: messages to the service manager ($NOTIFY_SOCKET, sd_notify(3))
// that never make the loop wait. libsystemd's sd_notify sends on a
// blocking socket, so a manager that reads late (or a launcher that stops
// reading after READY=1) would stop the loop in sendmsg once the notify
// socket's queue is full. Here a message goes with MSG_DONTWAIT on a socket
// made once; one that does not fit is dropped, and the caller counts it
// (notify_dropped). Only addresses sd_notify(3) documents as paths and
// abstract names ("/..." and "@...") are sent this way; any other (e.g.
// "vsock:") goes through sd_notify.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <string_view>

namespace logsink::daemon {

class Notifier {
 public:
  Notifier();  // reads $NOTIFY_SOCKET; without it Send does nothing
  ~Notifier();
  Notifier(const Notifier &) = delete;
  Notifier &operator=(const Notifier &) = delete;

  // Sends msg; false when it was dropped (the manager's queue was full, or
  // the send failed).
  bool Send(std::string_view msg);

 private:
  int fd_ = -1;
  bool through_library_ = false;  // an address of another kind: sd_notify
  sockaddr_un addr_{};
  socklen_t addr_len_ = 0;
};

}  // namespace logsink::daemon
