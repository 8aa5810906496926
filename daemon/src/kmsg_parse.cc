// kmsg_parse.cc: see kmsg_parse.h.
#include "kmsg_parse.h"

#include <algorithm>

namespace logsink::daemon {
namespace {

bool Number(std::string_view s, uint64_t *v) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + uint64_t(c - '0');
  }
  *v = n;
  return true;
}

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool ParseKmsg(std::string_view rec, KmsgRecord *out) {
  const size_t semi = rec.find(';');
  if (semi == std::string_view::npos) return false;
  std::string_view prefix = rec.substr(0, semi);
  std::string_view fields[4];
  for (int i = 0; i < 4; i++) {
    const size_t comma = prefix.find(',');
    fields[i] = prefix.substr(0, comma);
    prefix.remove_prefix(comma == std::string_view::npos ? prefix.size() : comma + 1);
    if (comma == std::string_view::npos && i < 3) {
      if (i < 2) return false;  // PRI, SEQ and USEC are required; FLAG may be missing
      break;
    }
  }
  uint64_t pri;
  KmsgRecord r;
  if (!Number(fields[0], &pri) || !Number(fields[1], &r.seq) || !Number(fields[2], &r.usec)) {
    return false;
  }
  r.level = uint8_t(pri & 7);
  r.facility = uint8_t(std::min<uint64_t>(pri >> 3, 23));
  r.continuation = fields[3] == "c" || fields[3] == "+";

  std::string_view body = rec.substr(semi + 1);
  const size_t nl = body.find('\n');
  std::string_view text = body.substr(0, nl);
  std::string_view dict = nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1);
  r.text.reserve(text.size());
  for (size_t i = 0; i < text.size(); i++) {
    int hi, lo;
    if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] == 'x' &&
        (hi = Hex(text[i + 2])) >= 0 && (lo = Hex(text[i + 3])) >= 0) {
      r.text.push_back(char(hi * 16 + lo));
      i += 3;
    } else {
      r.text.push_back(text[i]);
    }
  }
  // Dictionary lines start with a space; keep "KEY=VALUE" lines only.
  while (!dict.empty()) {
    const size_t e = dict.find('\n');
    std::string_view line = dict.substr(0, e);
    dict.remove_prefix(e == std::string_view::npos ? dict.size() : e + 1);
    if (line.size() < 2 || line[0] != ' ' || line.find('=') == std::string_view::npos) continue;
    if (!r.dict.empty()) r.dict.push_back('\n');
    r.dict.append(line.substr(1));
  }
  *out = std::move(r);
  return true;
}

}  // namespace logsink::daemon
