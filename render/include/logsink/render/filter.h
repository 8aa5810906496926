// filter.h: which records a reader shows (`logctl tail`/`cat`): level, pid,
// uid, app, systemd unit, boot, kernel messages, time range and a regular
// expression on the rendered message (POSIX ERE); and the level names (also
// logsink-forward's --level).
#pragma once

#include <regex.h>

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "logsink/storage/ring.h"

namespace logsink::render {

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
// does. A pattern is an extended POSIX regular expression; one that is a
// plain literal (printable ASCII without a metacharacter) is found with a
// substring search instead when `literal_fast` is set, which gives regexec's
// answer in the "C" locale (logctl never calls setlocale), where regexec
// compares bytes and REG_ICASE folds the ASCII letters only (in another
// locale every pattern goes through regexec). Not
// shared between threads: glibc's regexec locks the pattern (Filter::
// NewMatcher gives each thread its own).
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
  // Whether a pattern is searched as a literal (tests).
  static bool IsLiteral(std::string_view re);

 private:
  struct Pattern {
    regex_t re;
    bool literal = false;  // search `text` instead of running re
    bool icase = false;
    std::string text;  // the literal; lowercase with icase
  };
  std::deque<Pattern> pats_;  // a deque: a compiled regex_t is never moved
};

class Filter {
 public:
  Filter() = default;
  ~Filter() = default;
  Filter(const Filter &) = delete;
  Filter &operator=(const Filter &) = delete;

  int min_level = 0;  // show records with min_level <= level <= max_level
  int max_level = 7;  // (a smaller level is more severe)
  // A repeated option: the record matches if it matches any of the values
  // (empty: any record). Different fields must all match.
  std::vector<uint32_t> pids, uids;
  std::vector<std::string> apps;   // the app label, or comm when the label is empty
  std::vector<std::string> units;  // the source's systemd unit, exactly (see UnitName)
  std::vector<BootId> boots;       // the record's block's boot identity
  bool kernel_only = false;        // -k: records whose site file is "kernel"
  std::optional<uint64_t> since_ns, until_ns;

  // Compiles a regular expression (extended POSIX) and adds it: a message
  // matches if any of them matches. Returns false with the reason in *why.
  // Literal patterns are searched as such when literal_fast is set (see
  // MessageMatcher; the same for every pattern of one filter).
  bool AddGrep(const std::string &re, bool ignore_case, bool literal_fast, std::string *why);

  bool any() const {
    return min_level > 0 || max_level < 7 || !pids.empty() || !uids.empty() || !apps.empty() ||
           !units.empty() || !boots.empty() || kernel_only || since_ns || until_ns ||
           !matcher_.empty();
  }
  bool needs_message() const { return !matcher_.empty(); }
  // Everything except the regular expression.
  bool MatchFields(const storage::Record &r) const;
  // The same fields as a storage::BlockFilter, for the reader to skip whole
  // blocks whose summaries prove that no record can pass MatchFields (the
  // regular expressions are decided per record only). Returns false when it
  // could skip nothing (no field is filtered): then leave the reader without
  // one. Records are still filtered one by one either way.
  bool ToBlockFilter(storage::BlockFilter *out) const;
  bool MatchMessage(std::string_view msg) const { return matcher_.Match(msg); }
  // A matcher of the same patterns for another thread (*out empty before).
  void NewMatcher(MessageMatcher *out) const;

 private:
  struct GrepSource {
    std::string re;
    bool ignore_case;
  };
  std::vector<GrepSource> greps_;
  MessageMatcher matcher_;
  bool literal_fast_ = true;
};

}  // namespace logsink::render
