// netns.cc: see netns.h.
#include "common/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "common/unix_socket.h"

namespace logsink::test {

namespace {

// Writes s to path; 0 or errno. System calls only (it runs after fork).
int WriteProc(const char *path, const char *s) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = write(fd, s, strlen(s));
  int e = n == ssize_t(strlen(s)) ? 0 : (n < 0 ? errno : EIO);
  close(fd);
  return e;
}

}  // namespace

int EnterNetworkNamespace(int qlen) {
  if (geteuid() == 0) {
    if (unshare(CLONE_NEWNET) != 0) return errno;
  } else {
    // Unprivileged: this uid and gid become 0 in a new user namespace, which
    // owns the new network namespace and so may set its sysctls.
    char uid_map[64], gid_map[64];
    snprintf(uid_map, sizeof uid_map, "0 %u 1\n", unsigned(geteuid()));
    snprintf(gid_map, sizeof gid_map, "0 %u 1\n", unsigned(getegid()));
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return errno;
    if (int e = WriteProc("/proc/self/setgroups", "deny")) return e;
    if (int e = WriteProc("/proc/self/uid_map", uid_map)) return e;
    if (int e = WriteProc("/proc/self/gid_map", gid_map)) return e;
  }
  char v[32];
  snprintf(v, sizeof v, "%d\n", qlen);
  return WriteProc("/proc/sys/net/unix/max_dgram_qlen", v);
}

int BindDatagramWithQueue(const std::string &path, int qlen, std::string *err) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) {
    *err = std::string("socketpair: ") + strerror(errno);
    return -1;
  }
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) {
    *err = "path too long: " + path;
    close(pair[0]);
    close(pair[1]);
    return -1;
  }
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  pid_t pid = fork();
  if (pid < 0) {
    *err = std::string("fork: ") + strerror(errno);
    close(pair[0]);
    close(pair[1]);
    return -1;
  }
  if (pid == 0) {
    // The child sends either the socket or one int: the errno and the step
    // that failed (1 namespace, 2 socket, 3 bind).
    int e = EnterNetworkNamespace(qlen);
    int code = e ? 1 : 0;
    int fd = -1;
    if (!code) {
      fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd < 0) code = 2, e = errno;
    }
    if (!code && bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) code = 3, e = errno;
    int msg[2] = {code, e};
    _exit(SendWithFd(pair[1], msg, sizeof msg, code ? -1 : fd) ? 0 : 1);
  }
  close(pair[1]);
  int msg[2] = {-1, 0};
  iovec iov{msg, sizeof msg};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  ssize_t n;
  do n = recvmsg(pair[0], &mh, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  close(pair[0]);
  int fd = -1;
  for (cmsghdr *cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      std::memcpy(&fd, CMSG_DATA(cm), sizeof fd);
  if (fd >= 0) return fd;
  static const char *const kStep[] = {"?", "a new network namespace", "socket", "bind"};
  *err =
      std::string("cannot make a datagram socket with a queue of ") + std::to_string(qlen) + ": ";
  if (n == ssize_t(sizeof msg) && msg[0] >= 1 && msg[0] <= 3)
    *err += std::string(kStep[msg[0]]) + ": " + strerror(msg[1]) +
            (msg[0] == 1 ? " (needs root, or unprivileged user namespaces)" : "");
  else
    *err +=
        "the helper process ended without an answer (wait status " + std::to_string(status) + ")";
  return -1;
}

}  // namespace logsink::test
