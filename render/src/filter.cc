// filter.cc: level names and ranges, boot IDs, unit names and --grep (see
// filter.h).
#include "logsink/render/filter.h"

#include <clocale>
#include <cstring>

#include "logsink/proto/facility.h"

namespace logsink::render {

int ParseLevel(std::string_view s) { return ls_level_parse_any(s.data(), s.size()); }

bool ParseLevelRange(std::string_view s, int *lo, int *hi) {
  size_t dots = s.find("..");
  if (dots == std::string_view::npos) {
    int l = ParseLevel(s);
    if (l < 0) return false;
    *lo = 0;
    *hi = l;
    return true;
  }
  std::string_view a = s.substr(0, dots), b = s.substr(dots + 2);
  int from = a.empty() ? 0 : ParseLevel(a);
  int to = b.empty() ? 7 : ParseLevel(b);
  if (from < 0 || to < 0) return false;
  *lo = from < to ? from : to;
  *hi = from < to ? to : from;
  return true;
}

const char *LevelName(int level) {
  const char *name = level >= 0 ? ls_level_name(unsigned(level)) : nullptr;
  return name ? name : "?";
}

std::string BootIdHex(const BootId &id) {
  static const char kHex[] = "0123456789abcdef";
  std::string out(32, '0');
  for (size_t i = 0; i < id.size(); i++) {
    out[2 * i] = kHex[id[i] >> 4];
    out[2 * i + 1] = kHex[id[i] & 15];
  }
  return out;
}

bool ParseBootId(std::string_view s, BootId *id) {
  // Dashes only where boot_id has them: 8-4-4-4-12.
  const bool dashed = s.size() == 36;
  if (!dashed && s.size() != 32) return false;
  BootId out{};
  size_t n = 0;
  for (size_t i = 0; i < s.size(); i++) {
    const char c = s[i];
    if (dashed && (i == 8 || i == 13 || i == 18 || i == 23)) {
      if (c != '-') return false;
      continue;
    }
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (v < 0) return false;
    out[n / 2] = uint8_t(out[n / 2] | (n % 2 ? v : v << 4));
    n++;
  }
  if (n != 32) return false;
  *id = out;
  return true;
}

std::string UnitName(std::string_view name) {
  // systemd's unit types (systemd.unit(5)).
  static const char *const kSuffixes[] = {".service",   ".socket", ".device", ".mount",
                                          ".automount", ".swap",   ".target", ".path",
                                          ".timer",     ".slice",  ".scope"};
  for (const char *suffix : kSuffixes) {
    const size_t n = std::strlen(suffix);
    if (name.size() > n && name.substr(name.size() - n) == suffix) return std::string(name);
  }
  return std::string(name) + ".service";
}

MessageMatcher::~MessageMatcher() {
  for (Pattern &p : pats_)
    if (!p.literal) regfree(&p.re);
}

bool MessageMatcher::IsLiteral(std::string_view re) {
  if (re.empty()) return false;
  for (char c : re) {
    if (c < 0x20 || c > 0x7e) return false;
    if (std::strchr(".[]()*+?{}|^$\\", c)) return false;
  }
  return true;
}

bool MessageMatcher::Add(const std::string &re, bool ignore_case, bool literal_fast,
                         std::string *why) {
  Pattern &p = pats_.emplace_back();
  // Compiled even when searched as a literal: the same patterns are refused.
  int rc = regcomp(&p.re, re.c_str(), REG_EXTENDED | REG_NOSUB | (ignore_case ? REG_ICASE : 0));
  if (rc != 0) {
    char buf[256];
    regerror(rc, &p.re, buf, sizeof buf);
    *why = buf;
    pats_.pop_back();
    return false;
  }
  p.source = re;
  p.icase = ignore_case;
  p.literal_fast = literal_fast;
  // Only in the "C" locale (what logctl runs in): there regexec compares
  // bytes, and REG_ICASE folds A-Z alone.
  const char *ctype = setlocale(LC_CTYPE, nullptr);
  const bool c_locale = ctype && (std::strcmp(ctype, "C") == 0 || std::strcmp(ctype, "POSIX") == 0);
  if (literal_fast && c_locale && IsLiteral(re)) {
    regfree(&p.re);
    p.literal = true;
    p.text = re;
    if (ignore_case)
      for (char &c : p.text)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  }
  return true;
}

namespace {
char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

// needle (lowercase) in hay, ASCII letters in either case.
bool FindFolded(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  const size_t last = hay.size() - needle.size();
  for (size_t i = 0; i <= last; i++) {
    if (AsciiLower(hay[i]) != needle[0]) continue;
    size_t k = 1;
    while (k < needle.size() && AsciiLower(hay[i + k]) == needle[k]) k++;
    if (k == needle.size()) return true;
  }
  return false;
}
}  // namespace

bool MessageMatcher::Match(std::string_view msg) const {
  if (pats_.empty()) return true;
  for (const Pattern &p : pats_) {
    if (p.literal) {
      // string_view::find: memchr for the first byte, then a compare (for
      // messages of tens of bytes, cheaper than memmem's setup per call).
      if (p.icase ? FindFolded(msg, p.text) : msg.find(p.text) != std::string_view::npos)
        return true;
      continue;
    }
    // REG_STARTEND: match [0, size) even with embedded NULs, no copy.
    regmatch_t m[1];
    m[0].rm_so = 0;
    m[0].rm_eo = static_cast<regoff_t>(msg.size());
    if (regexec(&p.re, msg.data(), 0, m, REG_STARTEND) == 0) return true;
  }
  return false;
}

void MessageMatcher::CopyInto(MessageMatcher *out) const {
  std::string why;
  for (const Pattern &p : pats_) out->Add(p.source, p.icase, p.literal_fast, &why);
}

}  // namespace logsink::render
