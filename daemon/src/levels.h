// levels.h: the run-time level rules that `logctl level` sets (PROTOCOL.md,
// "Levels at run time"): which rules are in force, who may change which,
// and the rules text each connected client is sent. Pure state on the loop
// thread: no I/O (the server pushes the texts, server_levels.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct ls_level_sel;

namespace logsink::daemon {

// One rule: the clients it applies to (the selectors in `which`, LS_LSEL_*:
// all of them must match; none: every client), the call sites (all, or
// those of `file` and, when line is not 0, that line), the level, and who
// set it when.
struct LevelRule {
  uint8_t which = 0;
  std::string app, unit, file;
  uint32_t pid = 0, uid = 0, line = 0;
  int level = 7;  // -1 (off) .. 7
  uint32_t by_uid = 0;
  uint64_t at_ns = 0;  // 0: a rule of the configuration ([levels] rules)

  // From a decoded LEVEL_REQ rule (strings copied).
  static LevelRule From(const ls_level_sel &s);
  // Its wire form; strings point into this rule.
  ls_level_sel Sel() const;
  // Whether o has the same selectors and site (what RESET names).
  bool SameTarget(const LevelRule &o) const;
  // Its piece of rules text: "debug", "net.c=debug", "net.c:12=off".
  std::string Piece() const;
  // How `logctl level` would set it: "--app web --site net.c debug".
  std::string Describe() const;
};

// What a rule is matched against: a connected client.
struct LevelClient {
  uint32_t pid = 0, uid = 0;
  std::string_view app, unit;
};

class LevelRules {
 public:
  // Bounds: rules set at run time (and rules of the configuration), and
  // rules set at run time for one user other than root.
  static constexpr size_t kMaxRules = 256;
  static constexpr size_t kMaxPerUser = 32;
  // Rules set by users other than root, together: root keeps the rest.
  static constexpr size_t kMaxUserRules = kMaxRules / 2;

  // Sets r (replacing a rule of the same selectors and site) for `caller`
  // (a uid): root may set any rule; another user only rules for the
  // clients of their own uid (a rule without --uid gets theirs), and not
  // one root set for them. Returns 0 or an errno (EPERM, EINVAL, ENOSPC),
  // with what was done or why not in *msg.
  int Set(LevelRule r, uint32_t caller, uint64_t now_ns, std::string *msg);
  // Removes the rule of r's selectors and site (the same permission).
  // 0, EPERM or ENOENT, with *msg.
  int Reset(LevelRule r, uint32_t caller, std::string *msg);

  // The rules text for client c: the last matching rule without a site
  // (the default level) first, then the matching site rules, oldest first,
  // at most the last LS_LEVEL_RULES_MAX of them. Empty when none match.
  std::string TextFor(const LevelClient &c) const;

  // Every rule in force, oldest first: the configuration's (but those a
  // rule set at run time replaces), then those set at run time.
  const std::vector<LevelRule> &rules() const { return all_; }

  // The rules of [levels] rules (logsinkd.toml): "RULE; RULE; ...", each
  // words: one LEVEL and any of app=, unit=, uid=, site=FILE[:LINE]. Fills
  // *out and returns true, or false with the fault in *err.
  static bool ParseConfig(std::string_view text, std::vector<LevelRule> *out, std::string *err);
  // Replaces the configuration's rules with `config` (from ParseConfig).
  void SetConfig(std::vector<LevelRule> config);

 private:
  static bool Matches(const LevelRule &r, const LevelClient &c);
  // Applies the permission rule to r for caller: 0 or EPERM (*msg).
  int Authorize(LevelRule *r, uint32_t caller, std::string *msg) const;

  // all_ from config_ and rules_.
  void Rebuild();

  std::vector<LevelRule> config_;  // [levels] rules, at_ns 0
  std::vector<LevelRule> rules_;   // set at run time, oldest first: a later rule wins
  std::vector<LevelRule> all_;
};

}  // namespace logsink::daemon
