// common.cc: errors, default paths and ring opening for logctl (see common.h).
#include "common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "logsink/proto/paths.h"

namespace logsink::logctl {

void Error(const std::string &what, const std::string &why) {
  std::fprintf(stderr, "logctl: %s: %s\n", what.c_str(), why.c_str());
}

void Warn(const std::string &text) { std::fprintf(stderr, "logctl: warning: %s\n", text.c_str()); }

bool RingPath(const std::string &file, std::string *path) {
  if (!file.empty()) {
    *path = file;  // the user's choice: not subject to the per-user rule
    return true;
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

bool SocketPath(const std::string &explicit_path, std::string *path) {
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
      Error("socket", why);
      return false;
    }
  }
  return true;
}

int OpenRing(const std::string &path, storage::Reporter *reporter,
             std::unique_ptr<storage::RingReader> *out) {
  // Check with open(2) first so the reason is errno's, not a guess.
  // O_NONBLOCK: opening a FIFO planted at the ring path must not wait for a
  // writer (it is refused below as not a regular file); it changes nothing
  // for a regular file.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    Error(path, std::strerror(errno));
    return kExitError;
  }
  struct stat st;
  int rc = fstat(fd, &st);
  close(fd);
  if (rc != 0) {
    Error(path, std::strerror(errno));
    return kExitError;
  }
  if (!S_ISREG(st.st_mode)) {
    Error(path, "not a regular file");
    return kExitError;
  }
  storage::Status s = storage::RingReader::Open(storage::Env::Default(), path, reporter, out);
  if (s.ok()) return kExitOk;
  switch (s.code()) {
    case storage::Status::Code::kNotOurs:
      Error(path,
            "not a logsink ring file" + (s.message().empty() ? "" : " (" + s.message() + ")"));
      break;
    case storage::Status::Code::kNotFound:
      Error(path, "No such file or directory");
      break;
    default:
      Error(path, s.ToString());
      break;
  }
  return kExitError;
}

uint64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace logsink::logctl
