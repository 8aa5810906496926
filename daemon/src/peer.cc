// peer.cc: see peer.h.
#include "peer.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>

namespace logsink::daemon {

Peer PeerOf(int fd) {
  Peer peer;
  struct ucred cr;
  socklen_t len = sizeof cr;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0) {
    peer.pid = uint32_t(cr.pid);
    peer.uid = uint32_t(cr.uid);
    peer.gid = uint32_t(cr.gid);
  }
  return peer;
}

std::string ReadComm(uint32_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%u/comm", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[64];
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return "";
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0')) n--;
  return std::string(buf, size_t(n));
}

}  // namespace logsink::daemon
