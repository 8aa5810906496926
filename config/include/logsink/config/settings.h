// settings.h: the one table of logsinkd's settings. Each row names a
// setting (TOML section and key), its kind of value, the Config field it
// lives in, its default, its limits, whether SIGHUP changes it live, and a
// line of help. The loader (load.cc), --print-config (print.cc), the
// defaults of Config, the live reload (Server::ApplyLive) and the check of
// the shipped logsinkd.toml (config_test) all follow from it: a new setting
// is one row here, one field in Config and its paragraph in logsinkd.toml.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "logsink/config/config.h"

namespace logsink::config {

// What a setting's value is, in TOML and in Config.
enum class Kind : uint8_t {
  kString,      // any string
  kSocketPath,  // a string of at most `max` bytes (a Unix socket path)
  kMode,        // permission bits: an integer (0o666) or an octal string, 0 .. `max`
  kChoice,      // one of `choices`
  kLogLevel,    // trace debug info warn error critical off (ValidLogLevel)
  kLevel,       // a syslog level name (ParseLevelName)
  kSize,        // bytes: an integer or a string with a unit, `min` .. `max`
  kCount,       // an integer, `min` .. `max`
  kDuration,    // a duration string, whole ms, `min` .. `max`
  kShare,       // a number, 0 .. `max_share`
  kBool,        // true or false
  kFsync,       // "never", "block" or a duration of 1ms .. `max`
};

// The Config field a setting is stored in. kFsync stores the policy in
// `member` and the interval in Config::fsync_interval_ms.
using Member = std::variant<std::string Config::*, uint32_t Config::*, uint64_t Config::*,
                            double Config::*, bool Config::*, FsyncPolicy Config::*>;

// A default in the field's own type; kFsync's is the text ("never").
using Default = std::variant<const char *, uint64_t, double, bool>;

struct Setting {
  const char *section;
  const char *key;
  Kind kind;
  Member member;
  Default def;
  uint64_t min = 0, max = 0;             // kSize, kCount, kDuration, kMode, kSocketPath, kFsync
  double max_share = 0;                  // kShare
  bool power_of_two = false;             // kSize
  const char *const *choices = nullptr;  // kChoice: nullptr-terminated
  const char *choice_noun = "";          // kChoice, in "\"x\" is not NOUN (a, b or c)"
  bool live = false;                     // SIGHUP applies it without a restart
  // The value logsinkd.toml shows when the default ("") is resolved at start.
  const char *documented = nullptr;
  const char *help = "";
};

// Every setting, grouped by section, in the order --print-config prints
// them.
std::span<const Setting> Settings();
// The sections in that order.
std::vector<std::string_view> Sections();
// nullptr when there is no such setting.
const Setting *FindSetting(std::string_view section, std::string_view key);
// "section.key", as messages name it.
std::string SettingName(const Setting &s);

// Per setting: its default into *cfg; its value in cfg as a TOML value
// (what --print-config writes); whether a and b hold the same value; the
// value of `from` into *to.
void SetDefault(const Setting &s, Config *cfg);
std::string FormatValue(const Setting &s, const Config &cfg);
bool SameValue(const Setting &s, const Config &a, const Config &b);
void CopyValue(const Setting &s, const Config &from, Config *to);

// A share as the shortest decimal that reads back as the same double, as a
// TOML float ("0.125", "0.0"); permission bits as a TOML octal ("0o666").
std::string FormatShare(double d);
std::string FormatOctal(uint64_t mode);

// The settings whose values differ between a and b, in table order.
std::vector<const Setting *> Changed(const Config &a, const Config &b);
// Copies exactly the live settings of `from` into *to (a SIGHUP reload).
void CopyLive(const Config &from, Config *to);

}  // namespace logsink::config
