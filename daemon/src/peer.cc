// peer.cc: see peer.h.
#include "peer.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

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

namespace {

// The whole (small) file at path, or "" when it cannot be read.
std::string ReadSmall(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[1024];
  ssize_t n;
  while (out.size() < 16384 && (n = read(fd, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  close(fd);
  return out;
}

}  // namespace

bool IsChildOf(uint32_t pid, uint32_t parent, uint32_t uid) {
  if (pid == 0 || parent == 0 || pid == parent) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%u/stat", pid);
  // "pid (comm) state ppid ...": comm may hold anything, ')' too, so the
  // fields start after the last ')'.
  std::string stat = ReadSmall(path);
  size_t close_paren = stat.rfind(')');
  unsigned ppid = 0;
  char state = 0;
  if (close_paren == std::string::npos ||
      std::sscanf(stat.c_str() + close_paren + 1, " %c %u", &state, &ppid) != 2 || ppid != parent)
    return false;
  std::snprintf(path, sizeof path, "/proc/%u/status", pid);
  std::string status = ReadSmall(path);
  size_t at = status.find("\nUid:");
  unsigned real = 0, effective = 0;
  if (at == std::string::npos ||
      std::sscanf(status.c_str() + at + 5, " %u %u", &real, &effective) != 2)
    return false;
  return real == uid && effective == uid;
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
