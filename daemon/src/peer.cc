// peer.cc: see peer.h.
#include "peer.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
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

std::vector<uint32_t> PeerGroups(int fd) {
  // SO_PEERGROUPS says ERANGE and the size it needs when the buffer is small.
  std::vector<gid_t> g(32);
  for (int i = 0; i < 2; i++) {
    socklen_t len = socklen_t(g.size() * sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g.data(), &len) == 0) {
      g.resize(len / sizeof(gid_t));
      return std::vector<uint32_t>(g.begin(), g.end());
    }
    if (errno != ERANGE) break;
    g.resize(len / sizeof(gid_t) + 1);
  }
  return {};
}

bool MayReadFile(const Peer &p, uint32_t owner, uint32_t group, uint32_t mode) {
  if (p.uid == 0) return true;
  if (p.uid == owner) return (mode & 0400) != 0;
  bool member = p.gid == group;
  for (uint32_t g : p.groups) member = member || g == group;
  if (member) return (mode & 0040) != 0;
  return (mode & 0004) != 0;
}

std::string ReadProcFile(uint32_t pid, const char *name, size_t max) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%u/%s", pid, name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out(max, '\0');
  size_t n = 0;
  ssize_t r;
  while (n < max && (r = read(fd, out.data() + n, max - n)) > 0) n += size_t(r);
  close(fd);
  out.resize(n);
  return out;
}

bool IsChildOf(uint32_t pid, uint32_t parent, uint32_t uid) {
  if (pid == 0 || parent == 0 || pid == parent) return false;
  // "pid (comm) state ppid ...": comm may hold anything, ')' too, so the
  // fields start after the last ')'.
  const std::string stat = ReadProcFile(pid, "stat", kProcFileMax);
  size_t close_paren = stat.rfind(')');
  unsigned ppid = 0;
  char state = 0;
  if (close_paren == std::string::npos ||
      std::sscanf(stat.c_str() + close_paren + 1, " %c %u", &state, &ppid) != 2 || ppid != parent)
    return false;
  const std::string status = ReadProcFile(pid, "status", kProcFileMax);
  size_t at = status.find("\nUid:");
  unsigned real = 0, effective = 0;
  if (at == std::string::npos ||
      std::sscanf(status.c_str() + at + 5, " %u %u", &real, &effective) != 2)
    return false;
  return real == uid && effective == uid;
}

std::string ReadComm(uint32_t pid) {
  std::string comm = ReadProcFile(pid, "comm", 64);
  while (!comm.empty() && (comm.back() == '\n' || comm.back() == '\0')) comm.pop_back();
  return comm;
}

}  // namespace logsink::daemon
