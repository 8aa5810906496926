// timefmt.h: fast timestamp formatting for output: local time with
// microseconds ("2026-11-23T10:00:00.123456+0100") and RFC 3339 UTC with
// nanoseconds ("2026-11-23T09:00:00.123456789Z"). The broken-down time is
// cached per second, so a burst of records costs no localtime_r each.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace logsink::render {

class TimeFormatter {
 public:
  // utc: show short timestamps in UTC (+0000) instead of local time.
  explicit TimeFormatter(bool utc = false) : utc_(utc) {}

  // "YYYY-MM-DDTHH:MM:SS.uuuuuu+hhmm"
  void AppendShort(uint64_t ts_ns, std::string *out) { AppendLocal(ts_ns, 6, out); }
  // "YYYY-MM-DDTHH:MM:SS[.f]+hhmm" with `digits` (0 to 9) fraction digits
  // (short-iso: 0, short-precise: 9). Fractions are cut, never rounded up
  // (a rounding could carry into the seconds shown).
  void AppendLocal(uint64_t ts_ns, int digits, std::string *out);
  // "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ"
  void AppendRfc3339(uint64_t ts_ns, std::string *out);
  // "YYYY-MM-DD HH:MM:SS.mmm +hhmm" (for stats and messages).
  void AppendHuman(uint64_t ts_ns, std::string *out);

 private:
  struct Cache {
    int64_t sec = INT64_MIN;
    char text[32];  // "YYYY-MM-DDTHH:MM:SS"
    char zone[8];   // "+hhmm"
  };
  void Fill(Cache *c, int64_t sec, bool utc);
  // The cache for ts_ns's second, in UTC or local time, filled if needed.
  const Cache &At(uint64_t ts_ns, bool utc);
  bool utc_;
  Cache local_, gmt_;
};

}  // namespace logsink::render
