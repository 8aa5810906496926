// cursor.cc: see cursor.h.
#include "logsink/storage/cursor.h"

namespace logsink::storage {
namespace {

bool LowerHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return !s.empty();
}

}  // namespace

std::string FormatCursor(const std::string &ring_id, uint64_t seq) {
  static const char kHex[] = "0123456789abcdef";
  char num[16];
  size_t n = 0;
  do {
    num[n++] = kHex[seq & 15];
    seq >>= 4;
  } while (seq);
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict for
  // operator+ chains and insert at the front.
  std::string out;
  out.reserve(4 + ring_id.size() + 1 + n);
  out.append("ls1-");
  out.append(ring_id);
  out.push_back('-');
  while (n > 0) out.push_back(num[--n]);
  return out;
}

bool ParseCursor(std::string_view s, Cursor *out, std::string *why) {
  std::string_view id = s.size() > 4 ? s.substr(4, 32) : std::string_view();
  std::string_view num = s.size() > 37 ? s.substr(37) : std::string_view();
  if (s.substr(0, 4) != "ls1-" || id.size() != 32 || !LowerHex(id) || s.size() < 38 ||
      s[36] != '-' || num.size() > 16 || !LowerHex(num)) {
    why->assign(1, '"');
    why->append(s.substr(0, 80));
    why->append("\" is not a logsink cursor (ls1-RINGID-SEQ)");
    return false;
  }
  uint64_t v = 0;
  for (char c : num) v = v * 16 + uint64_t(c <= '9' ? c - '0' : c - 'a' + 10);
  out->ring_id = std::string(id);
  out->seq = v;
  return true;
}

Status CheckCursor(const Cursor &c, const Layout &layout, const std::string &path) {
  std::string have = layout.RingIdHex();
  if (have.empty())
    return Status::InvalidArgument(path +
                                   " has no ring identity yet (a file from an older logsink; "
                                   "it gets one the next time logsinkd opens it)");
  if (c.ring_id != have)
    return Status::InvalidArgument("the cursor belongs to another ring (" + c.ring_id + ") than " +
                                   path + " (" + have + "): it was recreated or is another file");
  return Status::OK();
}

}  // namespace logsink::storage
