// timeparse.cc: --since/--until parsing (see timeparse.h).
#include "timeparse.h"

#include <cctype>
#include <cstring>
#include <ctime>

#include "logsink/config/duration.h"

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
    if (!config::ParseDurationNs(s.substr(0, s.size() - 4), &d)) return false;
    *out_ns = d > now_ns ? 0 : now_ns - d;
    return true;
  }
  if (s[0] == '-' || s[0] == '+') {
    if (!config::ParseDurationNs(s.substr(1), &d)) return false;
    *out_ns = s[0] == '-' ? (d > now_ns ? 0 : now_ns - d) : now_ns + d;
    return true;
  }
  return ParseAbsolute(s, now_ns, out_ns);
}

}  // namespace logsink::logctl
