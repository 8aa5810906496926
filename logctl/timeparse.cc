// timeparse.cc: --since/--until parsing (see timeparse.h).
#include "timeparse.h"

#include <cctype>
#include <cstring>
#include <ctime>

namespace logsink::logctl {
namespace {

constexpr uint64_t kNs = 1000000000ull;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Reads up to max_digits digits; returns false if none.
bool Digits(std::string_view s, size_t *i, size_t min_digits, size_t max_digits, int64_t *v) {
  size_t start = *i;
  int64_t x = 0;
  while (*i < s.size() && *i - start < max_digits &&
         std::isdigit(static_cast<unsigned char>(s[*i]))) {
    x = x * 10 + (s[*i] - '0');
    (*i)++;
  }
  if (*i - start < min_digits) return false;
  *v = x;
  return true;
}

// ".123456789" -> ns (at most 9 digits kept, more are ignored).
bool Fraction(std::string_view s, size_t *i, uint64_t *ns) {
  *ns = 0;
  if (*i >= s.size() || (s[*i] != '.' && s[*i] != ',')) return true;
  (*i)++;
  size_t start = *i;
  uint64_t scale = 100000000;
  while (*i < s.size() && std::isdigit(static_cast<unsigned char>(s[*i]))) {
    *ns += static_cast<uint64_t>(s[*i] - '0') * scale;
    scale /= 10;
    (*i)++;
  }
  return *i > start;
}

uint64_t UnitNs(std::string_view u, bool *ok) {
  *ok = true;
  static const struct {
    const char *name;
    uint64_t ns;
  } kUnits[] = {
      {"ns", 1},
      {"nsec", 1},
      {"us", 1000},
      {"usec", 1000},
      {"ms", 1000000},
      {"msec", 1000000},
      {"s", kNs},
      {"sec", kNs},
      {"secs", kNs},
      {"second", kNs},
      {"seconds", kNs},
      {"m", 60 * kNs},
      {"min", 60 * kNs},
      {"mins", 60 * kNs},
      {"minute", 60 * kNs},
      {"minutes", 60 * kNs},
      {"h", 3600 * kNs},
      {"hr", 3600 * kNs},
      {"hour", 3600 * kNs},
      {"hours", 3600 * kNs},
      {"d", 86400 * kNs},
      {"day", 86400 * kNs},
      {"days", 86400 * kNs},
      {"w", 604800 * kNs},
      {"week", 604800 * kNs},
      {"weeks", 604800 * kNs},
  };
  for (const auto &e : kUnits)
    if (u == e.name) return e.ns;
  *ok = false;
  return 0;
}

// Local midnight of the day containing now (+ day_offset days).
uint64_t LocalMidnight(uint64_t now_ns, int day_offset) {
  time_t t = static_cast<time_t>(now_ns / kNs);
  struct tm tm;
  localtime_r(&t, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_mday += day_offset;
  tm.tm_isdst = -1;
  time_t m = mktime(&tm);
  return m < 0 ? 0 : static_cast<uint64_t>(m) * kNs;
}

// "YYYY-MM-DD[( |T)HH:MM[:SS[.frac]]][Z|(+|-)HH[:]MM]" or "HH:MM[:SS]" (today).
bool ParseAbsolute(std::string_view s, uint64_t now_ns, uint64_t *out) {
  struct tm tm = {};
  size_t i = 0;
  int64_t v;
  bool have_date = false;
  if (s.size() >= 10 && s[4] == '-') {
    if (!Digits(s, &i, 4, 4, &v)) return false;
    tm.tm_year = static_cast<int>(v) - 1900;
    if (i >= s.size() || s[i++] != '-' || !Digits(s, &i, 2, 2, &v)) return false;
    tm.tm_mon = static_cast<int>(v) - 1;
    if (i >= s.size() || s[i++] != '-' || !Digits(s, &i, 2, 2, &v)) return false;
    tm.tm_mday = static_cast<int>(v);
    if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31) return false;
    have_date = true;
    if (i < s.size()) {
      if (s[i] != ' ' && s[i] != 'T' && s[i] != 't') return false;
      i++;
    }
  } else {
    time_t t = static_cast<time_t>(now_ns / kNs);
    localtime_r(&t, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  }
  uint64_t frac = 0;
  if (i < s.size()) {
    if (!Digits(s, &i, 2, 2, &v)) return false;
    tm.tm_hour = static_cast<int>(v);
    if (i >= s.size() || s[i++] != ':' || !Digits(s, &i, 2, 2, &v)) return false;
    tm.tm_min = static_cast<int>(v);
    if (i < s.size() && s[i] == ':') {
      i++;
      if (!Digits(s, &i, 2, 2, &v)) return false;
      tm.tm_sec = static_cast<int>(v);
      if (!Fraction(s, &i, &frac)) return false;
    }
    if (tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60) return false;
  } else if (!have_date) {
    return false;
  }
  bool zoned = false;
  int64_t offset = 0;
  if (i < s.size()) {
    if (s[i] == 'Z' || s[i] == 'z') {
      zoned = true;
      i++;
    } else if (s[i] == '+' || s[i] == '-') {
      int sign = s[i++] == '-' ? -1 : 1;
      int64_t hh, mm = 0;
      if (!Digits(s, &i, 2, 2, &hh)) return false;
      if (i < s.size() && s[i] == ':') i++;
      if (i < s.size() && !Digits(s, &i, 2, 2, &mm)) return false;
      if (hh > 23 || mm > 59) return false;
      offset = sign * (hh * 3600 + mm * 60);
      zoned = true;
    }
  }
  if (i != s.size()) return false;
  time_t t;
  if (zoned) {
    t = timegm(&tm) - offset;
  } else {
    tm.tm_isdst = -1;
    t = mktime(&tm);
  }
  if (t < 0) return false;
  *out = static_cast<uint64_t>(t) * kNs + frac;
  return true;
}

}  // namespace

bool ParseDuration(std::string_view s, uint64_t *out_ns) {
  s = Trim(s);
  if (s.empty()) return false;
  uint64_t total = 0;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') i++;
    if (i >= s.size()) break;
    size_t start = i;
    uint64_t whole = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (whole > 1000000000000ull) return false;
      whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
      i++;
    }
    if (i == start) return false;
    uint64_t frac = 0;  // ns-scaled fraction of one unit, in billionths
    if (i < s.size() && s[i] == '.' && !Fraction(s, &i, &frac)) return false;
    while (i < s.size() && s[i] == ' ') i++;
    size_t ustart = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) i++;
    bool ok;
    uint64_t unit = i == ustart ? kNs : UnitNs(s.substr(ustart, i - ustart), &ok);
    if (i != ustart && !ok) return false;
    if (unit && whole > UINT64_MAX / unit / 2) return false;
    total += whole * unit + static_cast<uint64_t>(static_cast<long double>(frac) * unit / kNs);
  }
  *out_ns = total;
  return true;
}

bool ParseTime(std::string_view s, uint64_t now_ns, uint64_t *out_ns, std::string *why) {
  s = Trim(s);
  *why =
      "expected a time like \"2026-11-23 10:00:00\", \"@1763892000\", \"10min ago\", "
      "\"today\"";
  if (s.empty()) return false;
  if (s == "now") return *out_ns = now_ns, true;
  if (s == "today") return *out_ns = LocalMidnight(now_ns, 0), true;
  if (s == "yesterday") return *out_ns = LocalMidnight(now_ns, -1), true;
  if (s == "tomorrow") return *out_ns = LocalMidnight(now_ns, 1), true;
  if (s[0] == '@') {
    size_t i = 1;
    int64_t sec;
    uint64_t frac;
    if (!Digits(s, &i, 1, 12, &sec) || !Fraction(s, &i, &frac) || i != s.size()) return false;
    *out_ns = static_cast<uint64_t>(sec) * kNs + frac;
    return true;
  }
  uint64_t d;
  if (s.size() > 4 && s.substr(s.size() - 4) == " ago") {
    if (!ParseDuration(s.substr(0, s.size() - 4), &d)) return false;
    *out_ns = d > now_ns ? 0 : now_ns - d;
    return true;
  }
  if (s[0] == '-' || s[0] == '+') {
    if (!ParseDuration(s.substr(1), &d)) return false;
    *out_ns = s[0] == '-' ? (d > now_ns ? 0 : now_ns - d) : now_ns + d;
    return true;
  }
  return ParseAbsolute(s, now_ns, out_ns);
}

}  // namespace logsink::logctl
