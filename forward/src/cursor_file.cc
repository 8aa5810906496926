// cursor_file.cc: see cursor_file.h. File format (one line, LF-terminated):
//   logsink-forward-cursor 1 <ring id> <next seq, decimal>
#include "cursor_file.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "logsink/storage/small_file.h"

namespace logsink::forward {
namespace {

constexpr const char *kMagic = "logsink-forward-cursor 1 ";

bool IsHex(const std::string &s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

int ReadPosition(const std::string &path, Position *out, std::string *error) {
  // Only a regular file of our own: never another user's file, a symlink or
  // a FIFO (which would block the start in open(2)).
  std::string text, why;
  int got = storage::ReadSmallFile(path, 255, &text, &why);
  if (got == 0) return 0;
  if (got < 0) {
    *error = fmt::format("the cursor file {}: {}", path, why);
    return -1;
  }
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
  // storage/small_file.h: a new file of a unique name beside path (O_EXCL |
  // O_NOFOLLOW, never a fixed "path.tmp" someone else may have created
  // first), fsynced, renamed over path, the directory fsynced; refused when
  // path is another user's file or not a regular file.
  storage::SmallFileOptions opts;
  opts.mode = 0640;
  opts.durable = true;
  std::string why;
  if (!storage::WriteSmallFile(path, fmt::format("{}{} {}\n", kMagic, pos.ring_id, pos.next_seq),
                               opts, &why)) {
    *error = fmt::format("cannot write the cursor file {}: {}", path, why);
    return false;
  }
  return true;
}

}  // namespace logsink::forward
