// unix_socket.cc: Unix-domain socket helpers (see unix_socket.h).
#include "common/unix_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "common/process.h"

namespace logsink::test {

namespace {
bool Address(const std::string &path, sockaddr_un *a) {
  *a = sockaddr_un{};
  a->sun_family = AF_UNIX;
  if (path.size() >= sizeof a->sun_path) return false;
  std::memcpy(a->sun_path, path.c_str(), path.size() + 1);
  return true;
}
}  // namespace

int ConnectUnix(const std::string &path) {
  sockaddr_un a;
  if (!Address(path, &a)) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int BindUnix(const std::string &path, int type) {
  sockaddr_un a;
  if (!Address(path, &a)) return -1;
  int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int ListenUnix(const std::string &path, int backlog) {
  int fd = BindUnix(path, SOCK_STREAM);
  if (fd >= 0 && listen(fd, backlog) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendWithFd(int sock, const void *bytes, size_t len, int fd) {
  iovec iov{const_cast<void *>(bytes), len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (fd >= 0) {
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cm), &fd, sizeof fd);
  }
  return sendmsg(sock, &mh, MSG_NOSIGNAL) == ssize_t(len);
}

bool SendDatagram(const std::string &path, const std::string &bytes) {
  sockaddr_un a;
  if (!Address(path, &a)) return false;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int big = 1 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  ssize_t n = sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr *>(&a), sizeof a);
  close(fd);
  return n == ssize_t(bytes.size());
}

int AcceptWithin(int lfd) {
  struct pollfd p = {lfd, POLLIN, 0};
  if (poll(&p, 1, int(kHang.count())) != 1) return -1;
  return accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
}

bool ReadFrameWithin(int fd, std::vector<uint8_t> *buf, ls_frame *f) {
  buf->clear();
  uint8_t tmp[1];
  for (;;) {
    ptrdiff_t n = ls_frame_parse(buf->data(), buf->size(), LS_FRAME_MAX, f);
    if (n > 0) return true;
    if (n < 0) return false;
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, int(kHang.count())) != 1) return false;
    ssize_t r = read(fd, tmp, 1);
    if (r <= 0) return false;
    buf->insert(buf->end(), tmp, tmp + r);
  }
}

}  // namespace logsink::test
