// levels.cc: the run-time level rules (levels.h).
#include "levels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

#include "log_escape.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/level_rules.h"

namespace logsink::daemon {

LevelRule LevelRule::From(const ls_level_sel &s) {
  LevelRule r;
  r.which = s.which;
  r.app.assign(s.app, s.app_len);
  r.unit.assign(s.unit, s.unit_len);
  r.file.assign(s.file, s.file_len);
  r.pid = s.pid;
  r.uid = s.uid;
  r.line = s.line;
  r.level = s.level;
  r.by_uid = s.by_uid;
  r.at_ns = s.at_ns;
  return r;
}

ls_level_sel LevelRule::Sel() const {
  ls_level_sel s{};
  s.which = which;
  s.app = app.data();
  s.app_len = app.size();
  s.pid = pid;
  s.unit = unit.data();
  s.unit_len = unit.size();
  s.uid = uid;
  s.file = file.data();
  s.file_len = file.size();
  s.line = line;
  s.level = level;
  s.by_uid = by_uid;
  s.at_ns = at_ns;
  return s;
}

bool LevelRule::SameTarget(const LevelRule &o) const {
  return which == o.which && app == o.app && unit == o.unit && file == o.file && pid == o.pid &&
         uid == o.uid && line == o.line;
}

std::string LevelRule::Piece() const {
  const char *name = ls_level_rules_name(level);
  if (!(which & LS_LSEL_SITE)) return name;
  if (line) return fmt::format("{}:{}={}", file, line, name);
  return fmt::format("{}={}", file, name);
}

std::string LevelRule::Describe() const {
  std::string d;
  if (which & LS_LSEL_APP) d += fmt::format("--app {} ", Quoted(app));
  if (which & LS_LSEL_PID) d += fmt::format("--pid {} ", pid);
  if (which & LS_LSEL_UNIT) d += fmt::format("--unit {} ", Quoted(unit));
  if (which & LS_LSEL_UID) d += fmt::format("--uid {} ", uid);
  if (which & LS_LSEL_SITE)
    d += line ? fmt::format("--site {} ", Quoted(file + ":" + std::to_string(line)))
              : fmt::format("--site {} ", Quoted(file));
  return d + ls_level_rules_name(level);
}

int LevelRules::Authorize(LevelRule *r, uint32_t caller, std::string *msg) const {
  if (caller == 0) return 0;
  if ((r->which & LS_LSEL_UID) && r->uid != caller) {
    *msg = fmt::format(
        "uid {} may change the levels of its own programs only (--uid {}), not "
        "those of uid {}",
        caller, caller, r->uid);
    return EPERM;
  }
  r->which |= LS_LSEL_UID;
  r->uid = caller;
  // Root's rules (set at run time or in the configuration) for this uid's
  // programs are root's to change.
  const auto roots = [&](const LevelRule &o) { return o.by_uid == 0 && o.SameTarget(*r); };
  if (std::any_of(rules_.begin(), rules_.end(), roots) ||
      std::any_of(config_.begin(), config_.end(), roots)) {
    *msg = fmt::format("the rule {}was set by root; only root may change it",
                       r->Describe().substr(0, r->Describe().rfind(' ') + 1));
    return EPERM;
  }
  return 0;
}

int LevelRules::Set(LevelRule r, uint32_t caller, uint64_t now_ns, std::string *msg) {
  if (int e = Authorize(&r, caller, msg)) return e;
  // The site must read back as one rule of the one parser (a FILE with ','
  // or '=' would not; a FILE ending in ":digits" would read as a line).
  if (r.which & LS_LSEL_SITE) {
    ls_level_rules parsed;
    char why[192];
    const std::string piece = r.Piece();
    if (ls_level_rules_parse(piece.c_str(), LS_LEVEL_MAX, &parsed, why, sizeof why) != 0 ||
        parsed.n != 1 || r.file != parsed.rule[0].file || r.line != parsed.rule[0].line) {
      *msg = fmt::format("--site '{}' is not a FILE[:LINE] of level rules{}{}", LogEscape(r.file),
                         parsed.n ? "" : ": ", parsed.n ? "" : why);
      return EINVAL;
    }
  }
  r.by_uid = caller;
  r.at_ns = now_ns;
  auto same = std::find_if(rules_.begin(), rules_.end(),
                           [&](const LevelRule &o) { return o.SameTarget(r); });
  if (same == rules_.end()) {
    const size_t mine = size_t(std::count_if(
        rules_.begin(), rules_.end(), [&](const LevelRule &o) { return o.by_uid == caller; }));
    const size_t users = size_t(std::count_if(rules_.begin(), rules_.end(),
                                              [&](const LevelRule &o) { return o.by_uid != 0; }));
    if (caller != 0 && users >= kMaxUserRules) {
      *msg = fmt::format(
          "users other than root have {} rules in force, the most they may have "
          "together; remove one first (logctl level --reset ...)",
          kMaxUserRules);
      return ENOSPC;
    }
    if (rules_.size() >= kMaxRules) {
      *msg = fmt::format(
          "{} rules were set with logctl level, the most there may be; remove "
          "one first (logctl level --reset ...)",
          kMaxRules);
      return ENOSPC;
    }
    if (caller != 0 && mine >= kMaxPerUser) {
      *msg = fmt::format(
          "uid {} has {} rules in force, the most a user other than root may "
          "have; remove one first (logctl level --reset ...)",
          caller, kMaxPerUser);
      return ENOSPC;
    }
  } else {
    rules_.erase(same);  // set again: it becomes the newest, so it wins
  }
  *msg = fmt::format("level rule set: {}", r.Describe());
  rules_.push_back(std::move(r));
  Rebuild();
  return 0;
}

int LevelRules::Reset(LevelRule r, uint32_t caller, std::string *msg) {
  r.level = 0;
  if (int e = Authorize(&r, caller, msg)) return e;
  auto same = std::find_if(rules_.begin(), rules_.end(),
                           [&](const LevelRule &o) { return o.SameTarget(r); });
  if (same == rules_.end()) {
    std::string d = r.Describe();
    d.resize(d.size() - std::string_view(ls_level_rules_name(0)).size());
    const bool config = std::any_of(config_.begin(), config_.end(),
                                    [&](const LevelRule &o) { return o.SameTarget(r); });
    *msg = fmt::format("no level rule {}was set with logctl level{}",
                       d.empty() ? "without selectors " : "for " + d,
                       config ? " (the one in force is [levels] rules' in logsinkd.toml: change "
                                "it there and send SIGHUP)"
                              : "");
    return ENOENT;
  }
  *msg = fmt::format("level rule removed: {}", same->Describe());
  rules_.erase(same);
  Rebuild();
  return 0;
}

bool LevelRules::Matches(const LevelRule &r, const LevelClient &c) {
  return (!(r.which & LS_LSEL_APP) || r.app == c.app) &&
         (!(r.which & LS_LSEL_PID) || r.pid == c.pid) &&
         (!(r.which & LS_LSEL_UNIT) || r.unit == c.unit) &&
         (!(r.which & LS_LSEL_UID) || r.uid == c.uid);
}

std::string LevelRules::TextFor(const LevelClient &c) const {
  const LevelRule *level = nullptr;
  std::vector<const LevelRule *> sites;
  for (const LevelRule &r : all_) {
    if (!Matches(r, c)) continue;
    if (r.which & LS_LSEL_SITE)
      sites.push_back(&r);
    else
      level = &r;
  }
  std::string text = level ? level->Piece() : std::string();
  const size_t from = sites.size() > LS_LEVEL_RULES_MAX ? sites.size() - LS_LEVEL_RULES_MAX : 0;
  for (size_t i = from; i < sites.size(); i++) {
    if (!text.empty()) text += ',';
    text += sites[i]->Piece();
  }
  return text;
}

namespace {

// A decimal u32 (no sign, no spaces); false otherwise.
bool ParseU32(std::string_view s, uint32_t *out) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + uint64_t(ch - '0');
  }
  if (v > UINT32_MAX) return false;
  *out = uint32_t(v);
  return true;
}

// One rule of [levels] rules: words separated by spaces or tabs.
bool ParseConfigRule(std::string_view text, LevelRule *r, std::string *err) {
  bool have_level = false;
  size_t at = 0;
  while (at < text.size()) {
    if (text[at] == ' ' || text[at] == '\t') {
      at++;
      continue;
    }
    size_t end = text.find_first_of(" \t", at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(at, end - at);
    at = end;
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) {
      const int l = ls_level_rules_level(word.data(), word.size());
      if (l == -2 || have_level) {
        *err = have_level ? fmt::format("a second level '{}'", LogEscape(word))
                          : fmt::format(
                                "'{}' is not a level (emerg .. debug, 0..7 or off) nor "
                                "app=, unit=, uid= or site=",
                                LogEscape(word));
        return false;
      }
      r->level = l;
      have_level = true;
      continue;
    }
    const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
    uint8_t bit = 0;
    if (key == "app" && !value.empty() && value.size() <= LS_APP_MAX) {
      bit = LS_LSEL_APP;
      r->app = value;
    } else if (key == "unit" && !value.empty() && value.size() <= LS_LEVEL_UNIT_MAX) {
      bit = LS_LSEL_UNIT;
      r->unit = value;
    } else if (key == "uid" && ParseU32(value, &r->uid)) {
      bit = LS_LSEL_UID;
    } else if (key == "site" && !value.empty()) {
      bit = LS_LSEL_SITE;
      const size_t colon = value.rfind(':');
      r->file = value;
      r->line = 0;
      if (colon != std::string_view::npos && colon + 1 < value.size() &&
          value.find_first_not_of("0123456789", colon + 1) == std::string_view::npos) {
        if (!ParseU32(value.substr(colon + 1), &r->line) || r->line == 0 ||
            r->line > LS_LEVEL_LINE_MAX) {
          *err = fmt::format("'{}': the line must be 1..{}", LogEscape(word), LS_LEVEL_LINE_MAX);
          return false;
        }
        r->file = value.substr(0, colon);
      }
      if (r->file.empty() || r->file.size() > LS_LEVEL_FILE_MAX) {
        *err =
            fmt::format("'{}': the file must be 1..{} bytes", LogEscape(word), LS_LEVEL_FILE_MAX);
        return false;
      }
    } else {
      *err = fmt::format(
          "'{}' is not app=APP (1..{} bytes), unit=UNIT, uid=UID or "
          "site=FILE[:LINE]",
          LogEscape(word), LS_APP_MAX);
      return false;
    }
    if (r->which & bit) {
      *err = fmt::format("'{}' given twice", std::string(key));
      return false;
    }
    r->which |= bit;
  }
  if (!have_level) {
    *err = "no level (emerg .. debug, 0..7 or off)";
    return false;
  }
  return true;
}

}  // namespace

bool LevelRules::ParseConfig(std::string_view text, std::vector<LevelRule> *out, std::string *err) {
  out->clear();
  size_t n = 0;
  for (size_t at = 0; at <= text.size(); n++) {
    size_t end = text.find(';', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view piece = text.substr(at, end - at);
    at = end + 1;
    const size_t first = piece.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;  // empty
    piece = piece.substr(first, piece.find_last_not_of(" \t") + 1 - first);
    LevelRule r;
    std::string why;
    if (!ParseConfigRule(piece, &r, &why)) {
      *err = fmt::format("[levels] rules: rule {} ('{}'): {}", n + 1, LogEscape(piece), why);
      return false;
    }
    // Checked as a rule set at run time is (the site reads back as one).
    LevelRules check;
    if (check.Set(r, 0, 0, &why) != 0) {
      *err = fmt::format("[levels] rules: rule {}: {}", n + 1, why);
      return false;
    }
    auto same =
        std::find_if(out->begin(), out->end(), [&](const LevelRule &o) { return o.SameTarget(r); });
    if (same != out->end()) out->erase(same);  // the later one wins, as at run time
    out->push_back(std::move(r));
  }
  if (out->size() > kMaxRules) {
    *err = fmt::format("[levels] rules: {} rules, more than {}", out->size(), kMaxRules);
    return false;
  }
  return true;
}

void LevelRules::SetConfig(std::vector<LevelRule> config) {
  for (LevelRule &r : config) {
    r.by_uid = 0;
    r.at_ns = 0;
  }
  config_ = std::move(config);
  Rebuild();
}

void LevelRules::Rebuild() {
  all_.clear();
  for (const LevelRule &r : config_) {
    const bool replaced = std::any_of(rules_.begin(), rules_.end(),
                                      [&](const LevelRule &o) { return o.SameTarget(r); });
    if (!replaced) all_.push_back(r);
  }
  all_.insert(all_.end(), rules_.begin(), rules_.end());
}

}  // namespace logsink::daemon
