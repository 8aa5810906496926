// duration.cc: ParseDurationNs, the one duration grammar (see duration.h).
#include "logsink/config/duration.h"

#include <cctype>

namespace logsink::config {
namespace {

constexpr uint64_t kNs = 1000000000ull;

// ns per unit, or 0 for an unknown unit.
uint64_t UnitNs(std::string_view u) {
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
  return 0;
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

}  // namespace

bool ParseDurationNs(std::string_view s, uint64_t *ns, bool *unitless) {
  if (unitless) *unitless = false;
  uint64_t total = 0;
  size_t i = 0, terms = 0;
  for (;;) {
    while (i < s.size() && IsSpace(s[i])) i++;
    if (i == s.size()) break;
    // Whole part; bounded so that whole * unit below cannot overflow silently.
    size_t start = i;
    uint64_t whole = 0;
    while (i < s.size() && IsDigit(s[i])) {
      if (whole > 1000000000000ull) return false;
      whole = whole * 10 + static_cast<uint64_t>(s[i++] - '0');
    }
    if (i == start) return false;
    // Fraction: billionths of one unit (digits past the ninth are ignored).
    uint64_t frac = 0;
    if (i < s.size() && s[i] == '.') {
      size_t fstart = ++i;
      for (uint64_t scale = 100000000; i < s.size() && IsDigit(s[i]); i++, scale /= 10)
        frac += static_cast<uint64_t>(s[i] - '0') * scale;
      if (i == fstart) return false;
    }
    while (i < s.size() && s[i] == ' ') i++;
    size_t ustart = i;
    while (i < s.size() && IsAlpha(s[i])) i++;
    uint64_t unit = kNs;
    if (i == ustart) {
      if (unitless) *unitless = true;
    } else if ((unit = UnitNs(s.substr(ustart, i - ustart))) == 0) {
      return false;
    }
    if (whole > UINT64_MAX / unit / 2) return false;
    uint64_t term =
        whole * unit + static_cast<uint64_t>(static_cast<long double>(frac) * unit / kNs);
    if (term > UINT64_MAX - total) return false;
    total += term;
    terms++;
  }
  if (terms == 0) return false;
  *ns = total;
  return true;
}

}  // namespace logsink::config
