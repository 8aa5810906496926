// common.cc: errors, default paths and ring opening for logctl (see common.h).
#include "common.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "daemon_read.h"
#include "daemon_stats.h"
#include "logsink/proto/paths.h"
#include "logsink/render/escape.h"

namespace logsink::logctl {

namespace {
constexpr int kRingQueryMs = 1000;  // a daemon that does not answer: the default ring
}  // namespace

void Error(const std::string &what, const std::string &why) {
  std::fprintf(stderr, "logctl: %s: %s\n", what.c_str(), why.c_str());
}

void Warn(const std::string &text) { std::fprintf(stderr, "logctl: warning: %s\n", text.c_str()); }

void WarnSkipped(const std::string &path, uint64_t off, std::string_view reason) {
  Warn(path + ": offset " + std::to_string(off) + ": " + std::string(reason) + " (skipped)");
}

bool RingPath(const std::string &file, const std::string &socket, std::string *path,
              RingOrigin *origin) {
  if (!file.empty()) {
    *path = file;  // the user's choice: not subject to the per-user rule
    return true;
  }
  const char *env = std::getenv("LOGSINK_FILE");
  if (env && env[0]) {
    *path = env;  // the user's choice too
    return true;
  }
  // The ring of the daemon that `logctl send` and the applications reach.
  // A socket in a per-user directory that fails the safe-path rule is not
  // asked; the same directory's ring is then refused below, as "ring".
  std::string sock, why;
  if (!socket.empty() && !SocketPath(socket, &sock)) return false;
  if (!sock.empty() || SocketPath(socket, &sock, &why)) {
    DaemonRing ring;
    int rc = QueryDaemonRing(sock, kRingQueryMs, &ring, &why);
    // Whatever listens on the socket may not be our daemon: a path that is
    // not absolute or holds control bytes is not taken.
    bool plain = rc == 0 && !ring.path.empty() && ring.path[0] == '/';
    for (unsigned char ch : ring.path) plain = plain && ch >= 0x20 && ch != 0x7f;
    if (plain) {
      *path = ring.path;
      if (origin) {
        origin->socket = sock;
        origin->ring_id = ring.id;
      }
      return true;
    }
    if (rc == 0) why = "not an absolute path";
    // A socket the user named (--socket, $LOGSINK_SOCKET) with no daemon on
    // it is a mistake to report, not a reason to show another log.
    const char *env_sock = std::getenv("LOGSINK_SOCKET");
    if ((rc == -ENOENT || rc == -ECONNREFUSED) && (!socket.empty() || (env_sock && *env_sock))) {
      std::string shown;  // a path from the environment may hold control bytes
      render::AppendTerminalSafe(&shown, sock);
      Error(shown, std::string("no daemon listens on this socket (") + std::strerror(-rc) +
                       "), which " + (socket.empty() ? "$LOGSINK_SOCKET" : "--socket") +
                       " names; to read a ring file without its daemon, give --file PATH");
      return false;
    }
    if (rc != -ENOENT && rc != -ECONNREFUSED) {
      std::string msg = "the daemon on " + sock + " did not say which ring it writes (";
      render::AppendTerminalSafe(&msg, why);
      Warn(msg + "); reading the default ring");
    }
  }
  char buf[4096];
  if (ls_default_ring(buf, sizeof buf) < 0) {
    *path = LS_SYSTEM_RING;
    return true;
  }
  *path = buf;
  char dir[4096];
  struct stat st;
  if (ls_user_dir_of(buf, dir, sizeof dir) > 0) {
    char why[512];
    int rc = ls_user_dir_check(dir, 0, why, sizeof why);
    if (rc == -ENOENT) {
      if (stat(LS_SYSTEM_RING, &st) == 0) *path = LS_SYSTEM_RING;
      return true;
    }
    if (rc < 0) {
      Error("ring", why);
      return false;
    }
  }
  // stat by path is fine here: the directory passed the rule (or is root's).
  if (stat(path->c_str(), &st) != 0 && errno == ENOENT && stat(LS_SYSTEM_RING, &st) == 0)
    *path = LS_SYSTEM_RING;
  return true;
}

bool SocketPath(const std::string &explicit_path, std::string *path, std::string *refused) {
  char buf[4096];
  int in_user_dir = 0;
  if (ls_client_socket(explicit_path.empty() ? nullptr : explicit_path.c_str(), buf, sizeof buf,
                       &in_user_dir) < 0) {
    *path = explicit_path.empty() ? LS_SYSTEM_SOCKET : explicit_path;
    return true;
  }
  *path = buf;
  char dir[4096], why[512];
  // A missing directory is an absent daemon (the connect reports it); any
  // other refusal is reported as such rather than as "not running".
  if (in_user_dir && ls_user_dir(dir, sizeof dir) > 0) {
    int rc = ls_user_dir_check(dir, 0, why, sizeof why);
    if (rc < 0 && rc != -ENOENT) {
      if (refused)
        *refused = why;
      else
        Error("socket", why);
      return false;
    }
  }
  return true;
}

namespace {

// What follows "Permission denied" on the ring: who may read it. The system
// ring is 0640 logsink:logsink in a 0750 logsink:logsink directory
// (logsinkd(8), systemd/logsink.tmpfiles.conf).
std::string AccessHint(const std::string &path) {
  struct stat st;
  std::string hint(" (");
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & S_IRGRP)) {
    struct group *g = getgrgid(st.st_gid);
    hint.append("members of the group ")
        .append(g ? std::string(g->gr_name) : std::to_string(st.st_gid))
        .append(", which owns it, can read it: see logsinkd(8))");
  } else {
    hint.append("members of the logsink group can read the system ring: see logsinkd(8))");
  }
  return hint;
}

// The storage library's message without the path it starts with (logctl
// prints the path in front already), and without the internal code name.
std::string Reason(const std::string &path, const storage::Status &s) {
  const std::string &m = s.message();
  if (m.size() > path.size() && m.compare(0, path.size(), path) == 0) {
    std::string rest = m.substr(path.size());
    if (rest.rfind(": ", 0) == 0) return rest.substr(2);
    if (rest.rfind(" is ", 0) == 0) return std::string("the file").append(rest);
  }
  return m.empty() ? std::string("cannot be read as a logsink ring file") : m;
}

}  // namespace

int OpenRing(const std::string &path, storage::Reporter *reporter,
             std::unique_ptr<storage::RingReader> *out) {
  // Opened once, with open(2) so the reason is errno's, not a guess; the
  // descriptor that fstat checked is the one the reader reads (the path is
  // not opened again: a FIFO swapped in after the check would block that
  // second open forever). O_NONBLOCK: opening a FIFO planted at the ring path
  // must not wait for a writer (it is refused below as not a regular file);
  // it is cleared again for the regular file.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    std::string why(std::strerror(e));
    if (e == EACCES) why.append(AccessHint(path));
    Error(path, why);
    return kExitError;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    Error(path, std::strerror(errno));
    close(fd);
    return kExitError;
  }
  if (!S_ISREG(st.st_mode)) {
    Error(path, "not a regular file");
    close(fd);
    return kExitError;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    Error(path, std::strerror(errno));
    close(fd);
    return kExitError;
  }
  storage::Status s = storage::RingReader::FromFile(
      storage::Env::Default(), storage::FileFromFd(fd, path), path, reporter, out);
  if (s.ok()) return kExitOk;
  switch (s.code()) {
    case storage::Status::Code::kNotOurs: {
      // Once: "PATH: not a logsink ring file (no LSRING superblock)".
      std::string why = Reason(path, s);
      if (s.message().empty())
        why = "not a logsink ring file";
      else if (why.rfind("the file is not a logsink ring file", 0) == 0)
        why.erase(0, std::strlen("the file is "));
      else
        why = std::string("not a logsink ring file (").append(why).append(")");
      Error(path, why);
      break;
    }
    case storage::Status::Code::kNotFound:
      Error(path, "No such file or directory");
      break;
    default:
      Error(path, Reason(path, s));
      break;
  }
  return kExitError;
}

int OpenSource(const std::string &path, const RingOrigin &origin, bool follow,
               storage::Reporter *reporter, std::unique_ptr<RecordSource> *out) {
  // Only a decision between two ways to read, by the effective ids: the
  // file is then opened once (OpenRing) or not at all.
  if (!origin.socket.empty() && faccessat(AT_FDCWD, path.c_str(), R_OK, AT_EACCESS) != 0 &&
      errno == EACCES) {
    if (isatty(STDERR_FILENO) == 1)
      std::fprintf(stderr,
                   "logctl: %s is not readable to you: showing your own records (uid %u) "
                   "through the daemon\n",
                   path.c_str(), unsigned(geteuid()));
    *out = std::make_unique<DaemonSource>(origin.socket, origin.ring_id, follow, reporter);
    return kExitOk;
  }
  std::unique_ptr<storage::RingReader> r;
  if (int rc = OpenRing(path, reporter, &r)) return rc;
  *out = std::make_unique<LocalSource>(std::move(r));
  return kExitOk;
}

uint64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

const ReadSwitches &ReadSwitchesFromEnv() {
  static const ReadSwitches s = [] {
    auto on = [](const char *name) {
      const char *v = std::getenv(name);
      return v && v[0] && std::strcmp(v, "0") != 0;
    };
    ReadSwitches r;
    r.no_skip = on("LOGSINK_NO_SKIP");
    r.no_index = on("LOGSINK_NO_INDEX");
    r.plain = on("LOGSINK_PLAIN_READ");
    return r;
  }();
  return s;
}

}  // namespace logsink::logctl
