// filter.h: the parts of a reader's filter that are about text. The level
// names and ranges, boot IDs and unit names logctl's options (and
// logsink-forward's --level) take; and --grep, a regular expression
// (POSIX ERE) on the rendered message (MessageMatcher). The filter on the
// records' fields, which a reader also skips blocks by, is storage's
// RecordFilter (logsink/storage/record_filter.h).
#pragma once

#include <regex.h>

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "logsink/storage/record.h"

namespace logsink::render {

// Level shown for a DROPPED entry (it has no call site).
constexpr int kDroppedLevel = storage::kDroppedLevel;

// Parses a level name (emerg alert crit err error warning warn notice info
// debug, in any case) or a number 0..7. Returns -1 if invalid.
int ParseLevel(std::string_view s);
// Parses a --level filter: L (L and more severe, 0..L) or a range FROM..TO as
// journalctl takes it (both ends included, in either order; an empty FROM is
// emerg, an empty TO is debug). Returns false if invalid.
bool ParseLevelRange(std::string_view s, int *lo, int *hi);
const char *LevelName(int level);

// A boot identity (FORMAT.md, "Boots") as 32 lowercase hex digits.
using BootId = std::array<uint8_t, 16>;
std::string BootIdHex(const BootId &id);
// Parses a boot ID as /proc/sys/kernel/random/boot_id prints it
// (8-4-4-4-12 hex digits with dashes) or as 32 hex digits, in any case.
bool ParseBootId(std::string_view s, BootId *id);
// The unit -u/--unit NAME means: NAME itself when it ends in a unit type
// suffix (.service, .socket, .scope, ...), else NAME.service (as journalctl
// and systemctl take a bare name).
std::string UnitName(std::string_view name);

// Decides --grep on a rendered message: a message matches if any pattern
// does (no pattern: every message). A pattern is an extended POSIX regular
// expression; one that is a plain literal (printable ASCII without a
// metacharacter) is found with a substring search instead when
// `literal_fast` is set, which gives regexec's answer in the "C" locale
// (logctl never calls setlocale), where regexec compares bytes and
// REG_ICASE folds the ASCII letters only (in another locale every pattern
// goes through regexec). Not shared between threads: glibc's regexec locks
// the pattern (CopyInto gives each thread its own).
class MessageMatcher {
 public:
  MessageMatcher() = default;
  ~MessageMatcher();
  MessageMatcher(const MessageMatcher &) = delete;
  MessageMatcher &operator=(const MessageMatcher &) = delete;

  // Compiles re and adds it. Returns false with the reason in *why.
  bool Add(const std::string &re, bool ignore_case, bool literal_fast, std::string *why);
  bool empty() const { return pats_.empty(); }
  bool Match(std::string_view msg) const;
  // Adds the same patterns, compiled again, to *out (for another thread).
  void CopyInto(MessageMatcher *out) const;
  // Whether a pattern is searched as a literal (tests).
  static bool IsLiteral(std::string_view re);

 private:
  struct Pattern {
    regex_t re;
    bool literal = false;  // search `text` instead of running re
    bool icase = false;
    std::string text;  // the literal; lowercase with icase
    // As Add was given it (CopyInto).
    std::string source;
    bool literal_fast = false;
  };
  std::deque<Pattern> pats_;  // a deque: a compiled regex_t is never moved
};

}  // namespace logsink::render
