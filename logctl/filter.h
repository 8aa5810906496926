// filter.h: which records `logctl tail`/`cat` show: level, pid, uid, app,
// time range and a regular expression on the rendered message (POSIX ERE).
#pragma once

#include <regex.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "logsink/storage/ring.h"

namespace logsink::logctl {

// Level shown for a DROPPED entry (it has no call site).
constexpr int kDroppedLevel = 4;

// Parses a level name (emerg alert crit err error warning warn notice info
// debug, in any case) or a number 0..7. Returns -1 if invalid.
int ParseLevel(std::string_view s);
// Parses a --level filter: L (L and more severe, 0..L) or a range FROM..TO as
// journalctl takes it (both ends included, in either order; an empty FROM is
// emerg, an empty TO is debug). Returns false if invalid.
bool ParseLevelRange(std::string_view s, int *lo, int *hi);
const char *LevelName(int level);

class Filter {
 public:
  Filter() = default;
  ~Filter();
  Filter(const Filter &) = delete;
  Filter &operator=(const Filter &) = delete;

  int min_level = 0;  // show records with min_level <= level <= max_level
  int max_level = 7;  // (a smaller level is more severe)
  // A repeated option: the record matches if it matches any of the values
  // (empty: any record). Different fields must all match.
  std::vector<uint32_t> pids, uids;
  std::vector<std::string> apps;  // the app label, or comm when the label is empty
  std::optional<uint64_t> since_ns, until_ns;

  // Compiles a regular expression (extended POSIX) and adds it: a message
  // matches if any of them matches. Returns false with the reason in *why.
  bool AddGrep(const std::string &re, bool ignore_case, std::string *why);

  bool any() const {
    return min_level > 0 || max_level < 7 || !pids.empty() || !uids.empty() || !apps.empty() ||
           since_ns || until_ns || !res_.empty();
  }
  bool needs_message() const { return !res_.empty(); }
  // Everything except the regular expression.
  bool MatchFields(const storage::Record &r) const;
  bool MatchMessage(std::string_view msg) const;

 private:
  std::deque<regex_t> res_;  // a deque: a compiled regex_t is never moved
};

}  // namespace logsink::logctl
