// filter.cc: record filters for tail and cat (see filter.h).
#include "logsink/render/filter.h"

#include <algorithm>
#include <clocale>
#include <cstring>

#include "logsink/proto/facility.h"
#include "logsink/proto/text_kinds.h"

namespace logsink::render {

int ParseLevel(std::string_view s) {
  if (s.size() == 1 && s[0] >= '0' && s[0] <= '7') return s[0] - '0';
  if (s.size() > 16) return -1;
  char low[16];
  for (size_t i = 0; i < s.size(); i++)
    low[i] = s[i] >= 'A' && s[i] <= 'Z' ? char(s[i] - 'A' + 'a') : s[i];
  s = std::string_view(low, s.size());
  if (int l = ls_level_parse(s.data(), s.size()); l >= 0) return l;
  // The other spellings journalctl and logger(1) take.
  if (s == "error") return 3;
  if (s == "warn") return 4;
  if (s == "emergency") return 0;
  if (s == "critical") return 2;
  return -1;
}

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
  // Only in the "C" locale (what logctl runs in): there regexec compares
  // bytes, and REG_ICASE folds A-Z alone.
  const char *ctype = setlocale(LC_CTYPE, nullptr);
  const bool c_locale = ctype && (std::strcmp(ctype, "C") == 0 || std::strcmp(ctype, "POSIX") == 0);
  if (literal_fast && c_locale && IsLiteral(re)) {
    regfree(&p.re);
    p.literal = true;
    p.icase = ignore_case;
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

bool Filter::AddGrep(const std::string &re, bool ignore_case, bool literal_fast, std::string *why) {
  literal_fast_ = literal_fast;
  if (!matcher_.Add(re, ignore_case, literal_fast_, why)) return false;
  greps_.push_back({re, ignore_case});
  return true;
}

void Filter::NewMatcher(MessageMatcher *out) const {
  std::string why;
  for (const GrepSource &g : greps_) out->Add(g.re, g.ignore_case, literal_fast_, &why);
}

bool Filter::MatchFields(const storage::Record &r) const {
  int level = r.kind == storage::Record::Kind::kDropped ? kDroppedLevel : r.site.level;
  if (level < min_level || level > max_level) return false;
  if (!pids.empty() && std::find(pids.begin(), pids.end(), r.pid) == pids.end()) return false;
  if (!uids.empty() && std::find(uids.begin(), uids.end(), r.uid) == uids.end()) return false;
  if (!apps.empty() && std::none_of(apps.begin(), apps.end(), [&](const std::string &a) {
        return r.app == a || (r.app.empty() && r.comm == a);
      }))
    return false;
  if (!units.empty() && std::find(units.begin(), units.end(), r.unit) == units.end()) return false;
  if (!boots.empty() && std::find(boots.begin(), boots.end(), r.boot_id) == boots.end())
    return false;
  if (kernel_only && (r.kind != storage::Record::Kind::kRecord || !r.site_known ||
                      ls_text_kind_of(r.site.file.data(), r.site.file.size()) != LS_TEXT_KERNEL))
    return false;
  // Times the writer can vouch for, not the client's alone (ring.h).
  if (since_ns && storage::FilterTime(r) < *since_ns) return false;
  if (until_ns && storage::FilterTime(r) > *until_ns) return false;
  return true;
}

bool Filter::ToBlockFilter(storage::BlockFilter *out) const {
  *out = storage::BlockFilter();
  uint8_t levels = 0;
  for (int l = std::max(min_level, 0); l <= std::min(max_level, 7); l++)
    levels = uint8_t(levels | 1u << l);
  // A record whose call site is missing from the string table (damaged)
  // is filtered by Site's default level (info), while its block's summary
  // has its real level: when that default passes, no block can be skipped
  // by its levels without hiding such records (-k passes none of them: they
  // have no site file).
  const int unknown_site_level = storage::Site().level;
  if (!kernel_only && unknown_site_level >= min_level && unknown_site_level <= max_level)
    levels = 0xff;
  out->levels = levels;
  if (since_ns) out->since_ns = *since_ns;
  if (until_ns) out->until_ns = *until_ns;
  out->uids = uids;
  out->pids = pids;
  out->apps = apps;
  out->units = units;
  out->boots = boots;
  return levels != 0xff || since_ns || until_ns || !uids.empty() || !pids.empty() ||
         !apps.empty() || !units.empty() || !boots.empty();
}

}  // namespace logsink::render
