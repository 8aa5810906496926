// cursor_file.cc: see cursor_file.h. File format (one line, LF-terminated):
//   logsink-forward-cursor 1 <ring id> <next seq, decimal>
#include "cursor_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace logsink::forward {
namespace {

constexpr const char *kMagic = "logsink-forward-cursor 1 ";

bool IsHex(const std::string &s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string DirOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

int ReadPosition(const std::string &path, Position *out, std::string *error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    *error = fmt::format("cannot open the cursor file {}: {}", path, std::strerror(errno));
    return -1;
  }
  char buf[256];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n < 0) {
    *error = fmt::format("cannot read the cursor file {}: {}", path, std::strerror(errno));
    return -1;
  }
  std::string text(buf, size_t(n));
  size_t mlen = std::strlen(kMagic);
  std::string rest = text.compare(0, mlen, kMagic) == 0 ? text.substr(mlen) : "";
  size_t sp = rest.find(' ');
  size_t nl = rest.find('\n');
  if (sp == std::string::npos || nl == std::string::npos || nl < sp || !IsHex(rest.substr(0, sp))) {
    *error = fmt::format("{} is not a logsink-forward cursor file", path);
    return -1;
  }
  std::string num = rest.substr(sp + 1, nl - sp - 1);
  if (num.empty() || num.size() > 20 || num.find_first_not_of("0123456789") != std::string::npos) {
    *error = fmt::format("{} is not a logsink-forward cursor file", path);
    return -1;
  }
  out->ring_id = rest.substr(0, sp);
  out->next_seq = std::strtoull(num.c_str(), nullptr, 10);
  return 1;
}

bool WritePosition(const std::string &path, const Position &pos, std::string *error) {
  std::string tmp = path + ".tmp";
  std::string text = fmt::format("{}{} {}\n", kMagic, pos.ring_id, pos.next_seq);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) {
    *error = fmt::format("cannot create {}: {}", tmp, std::strerror(errno));
    return false;
  }
  bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size()) && fsync(fd) == 0;
  int saved = errno;
  close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) saved = errno;
    unlink(tmp.c_str());
    *error = fmt::format("cannot write the cursor file {}: {}", path, std::strerror(saved));
    return false;
  }
  int dfd = open(DirOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return true;
}

}  // namespace logsink::forward
