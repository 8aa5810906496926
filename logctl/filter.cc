// filter.cc: record filters for tail and cat (see filter.h).
#include "filter.h"

#include <algorithm>
#include <cstring>

namespace logsink::logctl {
namespace {
const char *const kLevelNames[8] = {"emerg",   "alert",  "crit", "err",
                                    "warning", "notice", "info", "debug"};
}

int ParseLevel(std::string_view s) {
  if (s.size() == 1 && s[0] >= '0' && s[0] <= '7') return s[0] - '0';
  if (s.size() > 16) return -1;
  char low[16];
  for (size_t i = 0; i < s.size(); i++)
    low[i] = s[i] >= 'A' && s[i] <= 'Z' ? char(s[i] - 'A' + 'a') : s[i];
  s = std::string_view(low, s.size());
  for (int i = 0; i < 8; i++)
    if (s == kLevelNames[i]) return i;
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

const char *LevelName(int level) { return level >= 0 && level < 8 ? kLevelNames[level] : "?"; }

Filter::~Filter() {
  for (regex_t &re : res_) regfree(&re);
}

bool Filter::AddGrep(const std::string &re, bool ignore_case, std::string *why) {
  regex_t &r = res_.emplace_back();
  int rc = regcomp(&r, re.c_str(), REG_EXTENDED | REG_NOSUB | (ignore_case ? REG_ICASE : 0));
  if (rc != 0) {
    char buf[256];
    regerror(rc, &r, buf, sizeof buf);
    *why = buf;
    res_.pop_back();
    return false;
  }
  return true;
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
  // Times the writer can vouch for, not the client's alone (ring.h).
  if (since_ns && storage::FilterTime(r) < *since_ns) return false;
  if (until_ns && storage::FilterTime(r) > *until_ns) return false;
  return true;
}

bool Filter::MatchMessage(std::string_view msg) const {
  if (res_.empty()) return true;
  for (const regex_t &re : res_) {
    // REG_STARTEND: match [0, size) even with embedded NULs, no copy.
    regmatch_t m[1];
    m[0].rm_so = 0;
    m[0].rm_eo = static_cast<regoff_t>(msg.size());
    if (regexec(&re, msg.data(), 0, m, REG_STARTEND) == 0) return true;
  }
  return false;
}

}  // namespace logsink::logctl
