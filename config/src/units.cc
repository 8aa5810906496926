// units.cc: parsing and printing of sizes ("64MiB"), durations ("100ms"),
// fsync policies and log level names used by the configuration.
#include <cstdint>
#include <string>
#include <string_view>

#include "logsink/config/config.h"
#include "logsink/config/duration.h"

namespace logsink::config {
namespace {

// Splits "123abc" into 123 and "abc". False when there is no digit or the
// number overflows.
bool SplitNumber(std::string_view s, uint64_t *num, std::string_view *unit) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    uint64_t d = uint64_t(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
    i++;
  }
  if (i == 0) return false;
  std::string_view rest = s.substr(i);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  *num = v;
  *unit = rest;
  return true;
}

bool MulOk(uint64_t a, uint64_t b, uint64_t *out) {
  if (b != 0 && a > UINT64_MAX / b) return false;
  *out = a * b;
  return true;
}

}  // namespace

bool ParseSize(std::string_view s, uint64_t *bytes) {
  uint64_t n;
  std::string_view u;
  // No space between the number and the unit, and only the units below:
  // "1GB" or "1gb" could mean 10^9 to a reader, so they are refused rather
  // than silently taken as 2^30.
  if (s.empty() || s.front() < '0' || s.front() > '9' || s.find(' ') != s.npos) return false;
  if (!SplitNumber(s, &n, &u)) return false;
  uint64_t mul;
  if (u.empty())
    mul = 1;
  else if (u == "K" || u == "KiB")
    mul = 1ull << 10;
  else if (u == "M" || u == "MiB")
    mul = 1ull << 20;
  else if (u == "G" || u == "GiB")
    mul = 1ull << 30;
  else if (u == "T" || u == "TiB")
    mul = 1ull << 40;
  else
    return false;
  return MulOk(n, mul, bytes);
}

// The shared grammar (duration.h) in whole milliseconds, with a unit on every
// term: in a file a bare "100" could mean ms or s, so it is refused.
bool ParseDuration(std::string_view s, uint64_t *ms) {
  constexpr uint64_t kNsPerMs = 1000000;
  uint64_t ns;
  bool unitless;
  if (!ParseDurationNs(s, &ns, &unitless) || unitless || ns % kNsPerMs != 0) return false;
  *ms = ns / kNsPerMs;
  return true;
}

std::string FormatSize(uint64_t bytes) {
  static const char *const kUnits[] = {"TiB", "GiB", "MiB", "KiB"};
  static const unsigned kShifts[] = {40, 30, 20, 10};
  if (bytes == 0) return "0";
  for (int i = 0; i < 4; i++) {
    uint64_t m = 1ull << kShifts[i];
    if (bytes % m == 0) return std::to_string(bytes / m) + kUnits[i];
  }
  return std::to_string(bytes);
}

std::string FormatDuration(uint64_t ms) {
  if (ms != 0 && ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
  if (ms != 0 && ms % 60000 == 0) return std::to_string(ms / 60000) + "min";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

bool ParseFsync(std::string_view s, FsyncPolicy *policy, uint64_t *interval_ms) {
  if (s == "never") {
    *policy = FsyncPolicy::kNever;
    *interval_ms = 0;
    return true;
  }
  if (s == "block") {
    *policy = FsyncPolicy::kBlock;
    *interval_ms = 0;
    return true;
  }
  uint64_t ms;
  if (!ParseDuration(s, &ms) || ms == 0) return false;
  *policy = FsyncPolicy::kInterval;
  *interval_ms = ms;
  return true;
}

std::string FormatFsync(FsyncPolicy policy, uint64_t interval_ms) {
  switch (policy) {
    case FsyncPolicy::kNever:
      return "never";
    case FsyncPolicy::kBlock:
      return "block";
    case FsyncPolicy::kInterval:
      return FormatDuration(interval_ms);
  }
  return "never";
}

bool ValidLogLevel(std::string_view s) {
  return s == "trace" || s == "debug" || s == "info" || s == "warn" || s == "error" ||
         s == "critical" || s == "off";
}

}  // namespace logsink::config
