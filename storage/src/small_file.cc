// small_file.cc: see small_file.h.
#include "logsink/storage/small_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace logsink::storage {
namespace {

std::string Errno(const char *what, int err) { return std::string(what) + std::strerror(err); }

// "not a regular file" for what lstat/fstat found, or "" when it is one owned
// by the effective uid.
std::string Refusal(const struct stat &st) {
  if (S_ISLNK(st.st_mode)) return "not a regular file (a symbolic link)";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  const uid_t me = geteuid();
  if (st.st_uid != me)
    return "owned by uid " + std::to_string(st.st_uid) + ", not by uid " + std::to_string(me) +
           " running this: refusing to use another user's file";
  return "";
}

// Six characters nobody can guess: getrandom, or (should it fail) the clock,
// the pid and a counter. O_EXCL makes a guessed name harmless anyway: the
// open fails and another name is tried.
std::string Suffix() {
  static const char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char r[6];
  if (getrandom(r, sizeof r, GRND_NONBLOCK) != ssize_t(sizeof r)) {
    static std::atomic<uint64_t> counter{0};
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = uint64_t(ts.tv_nsec) ^ (uint64_t(ts.tv_sec) << 30) ^ (uint64_t(getpid()) << 20) ^
                 (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
    for (unsigned char &c : r) {
      c = static_cast<unsigned char>(x);
      x = (x >> 8) | (x << 56);
    }
  }
  std::string s;
  for (unsigned char c : r) s.push_back(kChars[c % (sizeof kChars - 1)]);
  return s;
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data.remove_prefix(size_t(n));
  }
  return true;
}

}  // namespace

bool WriteSmallFile(const std::string &path, std::string_view data, const SmallFileOptions &opts,
                    std::string *why) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") {
    *why = "not a file name";
    return false;
  }
  // In the same directory (rename(2) stays in one file system), hidden.
  const std::string prefix =
      (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + "." + base + ".";
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
    tmp = prefix + Suffix();
    do {
      fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  mode_t(opts.mode & 07777));
    } while (fd < 0 && errno == EINTR);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    *why = "cannot create a temporary file in " + dir + ": " + std::strerror(errno);
    return false;
  }
  auto fail = [&](const std::string &reason) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    *why = reason;
    return false;
  };
  if (!WriteAll(fd, data)) return fail(Errno(("cannot write " + tmp + ": ").c_str(), errno));
  if (opts.durable) {
    while (::fsync(fd) != 0)
      if (errno != EINTR) return fail(Errno(("cannot fsync " + tmp + ": ").c_str(), errno));
  }
  int rc = ::close(fd);
  fd = -1;
  if (rc != 0 && errno != EINTR) return fail(Errno(("cannot write " + tmp + ": ").c_str(), errno));
  if (opts.only_own_regular) {
    // What is at path now: replaced only if it is our own regular file. (The
    // rename replaces the name; nothing is ever written through it.)
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0) {
      std::string no = Refusal(st);
      if (!no.empty()) return fail(no);
    } else if (errno != ENOENT) {
      return fail(Errno("cannot be examined (stat): ", errno));
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail(Errno(("cannot rename " + tmp + " over it: ").c_str(), errno));
  if (opts.durable) {
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }
  return true;
}

int ReadSmallFile(const std::string &path, size_t max, std::string *out, std::string *why) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return 0;
    struct stat st;
    if (e == ELOOP && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      *why = Refusal(st);
      return -1;
    }
    *why = Errno("cannot be opened: ", e);
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    *why = Errno("cannot be examined (stat): ", errno);
    ::close(fd);
    return -1;
  }
  std::string no = Refusal(st);
  if (!no.empty()) {
    *why = no;
    ::close(fd);
    return -1;
  }
  out->assign(max, '\0');
  size_t got = 0;
  while (got < max) {
    ssize_t n = ::read(fd, out->data() + got, max - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = Errno("cannot be read: ", errno);
      ::close(fd);
      return -1;
    }
    if (n == 0) break;
    got += size_t(n);
  }
  ::close(fd);
  out->resize(got);
  return 1;
}

}  // namespace logsink::storage
