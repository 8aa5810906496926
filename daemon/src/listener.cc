// listener.cc: creates the listening Unix socket (see listener.h).
#include "listener.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace logsink::daemon {
namespace {

std::string Errno(int e) { return std::strerror(e); }

bool FillAddr(const std::string &path, sockaddr_un *a) {
  std::memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (path.size() >= sizeof a->sun_path) return false;
  std::memcpy(a->sun_path, path.c_str(), path.size() + 1);
  return true;
}

// 1: something receives at path (accepts connections, or datagrams for
// type SOCK_DGRAM); 0: nobody (stale); -errno.
int Probe(const std::string &path, int type) {
  sockaddr_un a;
  if (!FillAddr(path, &a)) return -ENAMETOOLONG;
  int fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -errno;
  int rc = connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
  int e = errno;
  close(fd);
  if (rc == 0 || e == EAGAIN || e == EINPROGRESS) return 1;  // EAGAIN: backlog full, but alive
  if (e == ECONNREFUSED || e == ENOENT) return 0;
  return -e;
}

// Gives the socket file just bound at path to group gid without following
// a link: fchownat(AT_SYMLINK_NOFOLLOW) in the socket's directory changes the
// directory entry itself, and the entry must still be a socket (whoever
// swapped it for anything else is refused). Returns 0 or an errno value.
int ChownBoundSocket(const std::string &path, gid_t gid) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  int dfd = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno;
  struct stat st;
  int e = 0;
  if (fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    e = errno;
  else if (!S_ISSOCK(st.st_mode))
    e = ESTALE;  // replaced by something else since bind
  else if (fchownat(dfd, name.c_str(), uid_t(-1), gid, AT_SYMLINK_NOFOLLOW) != 0)
    e = errno;
  close(dfd);
  return e;
}

}  // namespace

int MakeParentDirs(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return 0;
  std::string dir = path.substr(0, slash);
  for (size_t i = 1; i <= dir.size(); i++) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0755) < 0 && errno != EEXIST) return -errno;
  }
  return 0;
}

bool TakeActivatedSockets(Activated *out, std::string *error) {
  *out = Activated();
  int n = sd_listen_fds(1);
  if (n < 0) {
    *error = "sd_listen_fds: " + Errno(-n);
    return false;
  }
  for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
    if (sd_is_socket_unix(fd, SOCK_STREAM, 1, nullptr, 0) > 0 && out->stream < 0) {
      out->stream = fd;
    } else if (sd_is_socket_unix(fd, SOCK_DGRAM, -1, nullptr, 0) > 0 && out->dgram < 0) {
      out->dgram = fd;
    } else {
      *error = "socket " + std::to_string(fd - SD_LISTEN_FDS_START + 1) + " of " +
               std::to_string(n) +
               " passed by systemd is not the one listening Unix stream socket or the one Unix "
               "datagram socket";
      return false;
    }
  }
  if (n > 0 && out->stream < 0) {
    *error = "the sockets passed by systemd include no listening Unix stream socket";
    return false;
  }
  return true;
}

ListenError OpenListener(const std::string &path, unsigned mode, const std::string &group,
                         Listener *out, std::string *error) {
  Activated act;
  if (!TakeActivatedSockets(&act, error)) return ListenError::kOther;
  return OpenSocket(path, SOCK_STREAM, mode, group, act.stream, out, error);
}

ListenError OpenSocket(const std::string &path, int type, unsigned mode, const std::string &group,
                       int activated, Listener *out, std::string *error) {
  // systemd socket activation: use the socket we were handed.
  if (activated >= 0) {
    int fl = fcntl(activated, F_GETFL);
    if (fl < 0 || fcntl(activated, F_SETFL, fl | O_NONBLOCK) < 0) {
      *error = "cannot make the systemd socket non-blocking: " + Errno(errno);
      return ListenError::kOther;
    }
    out->fd = activated;
    out->from_systemd = true;
    return ListenError::kNone;
  }

  sockaddr_un addr;
  if (!FillAddr(path, &addr)) {
    *error = "socket path " + path + " is too long";
    return ListenError::kOther;
  }
  if (int rc = MakeParentDirs(path); rc < 0) {
    *error = "cannot create the directory of " + path + ": " + Errno(-rc);
    return ListenError::kOther;
  }
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      *error = path + " exists and is not a socket; refusing to remove it";
      return ListenError::kOther;
    }
    int alive = Probe(path, type);
    if (alive > 0) {
      *error = type == SOCK_DGRAM ? "another process receives datagrams on " + path
                                  : "another logsinkd is listening on " + path;
      return ListenError::kInUse;
    }
    if (alive < 0) {
      *error = "cannot check the existing socket " + path + ": " + Errno(-alive);
      return ListenError::kOther;
    }
    if (unlink(path.c_str()) < 0 && errno != ENOENT) {
      *error = "cannot remove the stale socket " + path + ": " + Errno(errno);
      return ListenError::kOther;
    }
  }
  int fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = "socket: " + Errno(errno);
    return ListenError::kOther;
  }
  // A datagram socket asks for senders' credentials before it has a name, so
  // no datagram can arrive without them.
  int on = 1;
  if (type == SOCK_DGRAM && setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
    *error = "SO_PASSCRED: " + Errno(errno);
    close(fd);
    return ListenError::kOther;
  }
  // The socket file gets its mode as bind creates it (0777 & ~umask): a
  // chmod by path afterwards would follow whatever someone with write access
  // to the directory swapped in meanwhile (a symlink to /etc/shadow, say).
  // umask is per process; nothing else runs yet while the listener opens.
  mode_t old_umask = umask(~mode & 0777);
  int bound = bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr);
  int bind_errno = errno;
  umask(old_umask);
  if (bound < 0) {
    close(fd);
    *error = "cannot bind " + path + ": " + Errno(bind_errno);
    return bind_errno == EADDRINUSE ? ListenError::kInUse : ListenError::kOther;
  }
  auto fail = [&](std::string msg) {
    unlink(path.c_str());
    close(fd);
    *error = std::move(msg);
    return ListenError::kOther;
  };
  if (!group.empty()) {
    std::vector<char> buf(16384);
    struct group gr, *res = nullptr;
    int rc = getgrnam_r(group.c_str(), &gr, buf.data(), buf.size(), &res);
    if (rc != 0 || !res) return fail("socket group '" + group + "' does not exist");
    if (int e = ChownBoundSocket(path, res->gr_gid); e != 0)
      return fail("cannot give " + path + " to group " + group + ": " + Errno(e));
  }
  if (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0) return fail("listen: " + Errno(errno));
  if (lstat(path.c_str(), &st) == 0) out->inode = st.st_ino;
  out->fd = fd;
  out->path = path;
  out->from_systemd = false;
  return ListenError::kNone;
}

void UnlinkListener(Listener *l) {
  // Only unlink the file we bound (same inode): a daemon started after us may
  // already have replaced it with its own socket.
  struct stat st;
  if (!l->path.empty() && lstat(l->path.c_str(), &st) == 0 && st.st_ino == l->inode)
    unlink(l->path.c_str());
  l->path.clear();
}

void CloseListener(Listener *l) {
  if (l->fd < 0) return;
  UnlinkListener(l);
  if (!l->from_systemd) close(l->fd);
  l->fd = -1;
}

}  // namespace logsink::daemon
