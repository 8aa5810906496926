// load.cc: reads logsinkd's TOML configuration onto a Config, checking every
// key's name, type and range by the table of settings (settings.h); errors
// name the file, the line and the key.
#include <algorithm>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <toml.hpp>

#include "logsink/config/config.h"
#include "logsink/config/settings.h"

namespace logsink::config {
namespace {

using Value = toml::value;

std::string TypeName(const Value &v) {
  std::ostringstream os;
  os << v.type();
  return os.str();
}

// Reads a size: an integer (bytes) or a string with a unit.
std::string GetSize(const Value &v, uint64_t min, uint64_t max, uint64_t *out) {
  uint64_t n;
  if (v.is_integer()) {
    if (v.as_integer() < 0) return "must not be negative";
    n = uint64_t(v.as_integer());
  } else if (v.is_string()) {
    if (!ParseSize(v.as_string().str, &n))
      return std::string("\"") + v.as_string().str + "\" is not a size: use " + kSizeForms;
  } else {
    return "expected a size (integer or string like \"64MiB\"), got " + TypeName(v);
  }
  if (n < min || n > max)
    return "out of range: " + FormatSize(n) + " (allowed " + FormatSize(min) + " .. " +
           FormatSize(max) + ")";
  *out = n;
  return "";
}

std::string GetDuration(const Value &v, uint64_t min, uint64_t max, uint64_t *out) {
  if (!v.is_string())
    return "expected a duration string like \"100ms\" or \"5s\", got " + TypeName(v);
  uint64_t ms;
  if (!ParseDuration(v.as_string().str, &ms))
    return "\"" + v.as_string().str + "\" is not a duration (a number with ms, s, min or h)";
  if (ms < min || ms > max)
    return "out of range: " + FormatDuration(ms) + " (allowed " + FormatDuration(min) + " .. " +
           FormatDuration(max) + ")";
  *out = ms;
  return "";
}

std::string GetCount(const Value &v, uint64_t min, uint64_t max, uint64_t *out) {
  if (!v.is_integer()) return "expected an integer, got " + TypeName(v);
  int64_t n = v.as_integer();
  if (n < int64_t(min) || n > int64_t(max))
    return "out of range: " + std::to_string(n) + " (allowed " + std::to_string(min) + " .. " +
           std::to_string(max) + ")";
  *out = uint64_t(n);
  return "";
}

std::string GetString(const Value &v, std::string *out) {
  if (!v.is_string()) return "expected a string, got " + TypeName(v);
  *out = v.as_string().str;
  return "";
}

std::string GetShare(const Value &v, double max, double *out) {
  const std::string range = "0 .. " + FormatShare(max);
  double d;
  if (v.is_floating()) {
    d = v.as_floating();
  } else if (v.is_integer()) {
    d = double(v.as_integer());
  } else {
    return "expected a number from 0 to " + FormatShare(max) + ", got " + TypeName(v);
  }
  if (!(d >= 0 && d <= max))
    return "out of range: " + std::to_string(d) + " (allowed " + range + ")";
  *out = d;
  return "";
}

std::string GetMode(const Value &v, uint64_t max, uint64_t *out) {
  int64_t m;
  if (v.is_integer()) {
    m = v.as_integer();
  } else if (v.is_string()) {
    const std::string &s = v.as_string().str;
    if (s.empty() || s.find_first_not_of("01234567") != std::string::npos)
      return "\"" + s + "\" is not an octal mode (write 0o666 or \"0666\")";
    if (s.size() > 12) return "out of range (allowed 0o000 .. " + FormatOctal(max) + ")";
    m = std::stoll(s, nullptr, 8);
  } else {
    return "expected an octal mode like 0o666, got " + TypeName(v);
  }
  if (m < 0 || uint64_t(m) > max) return "out of range (allowed 0o000 .. " + FormatOctal(max) + ")";
  *out = uint64_t(m);
  return "";
}

// "a, b or c"
std::string Alternatives(const char *const *choices) {
  std::string out;
  for (size_t i = 0; choices[i]; i++) {
    if (i > 0) out += choices[i + 1] ? ", " : " or ";
    out += choices[i];
  }
  return out;
}

// Reads the value v of setting s into a string (string kinds), a number
// (sizes, counts, durations, modes), a double (shares) or a bool; returns ""
// or what is wrong.
std::string Parse(const Setting &s, const Value &v, Config *cfg) {
  std::string str;
  uint64_t n = 0;
  double d = 0;
  bool b = false;
  std::string why;
  switch (s.kind) {
    case Kind::kString:
      why = GetString(v, &str);
      break;
    case Kind::kSocketPath:
      if ((why = GetString(v, &str)).empty() && str.size() > s.max)
        why = "path is too long for a Unix socket (max " + std::to_string(s.max) + " bytes)";
      break;
    case Kind::kMode:
      why = GetMode(v, s.max, &n);
      break;
    case Kind::kChoice: {
      if (!(why = GetString(v, &str)).empty()) break;
      bool known = false;
      for (size_t i = 0; s.choices[i]; i++) known |= str == s.choices[i];
      if (!known)
        why = "\"" + str + "\" is not " + s.choice_noun + " (" + Alternatives(s.choices) + ")";
      break;
    }
    case Kind::kLogLevel:
      if ((why = GetString(v, &str)).empty() && !ValidLogLevel(str))
        why = "\"" + str + "\" is not a log level (trace, debug, info, warn, error, critical, off)";
      break;
    case Kind::kLevel: {
      uint8_t l;
      if ((why = GetString(v, &str)).empty() && !ParseLevelName(str, &l))
        why = "\"" + str + "\" is not a level (emerg alert crit err warning notice info debug)";
      break;
    }
    case Kind::kSize:
      if ((why = GetSize(v, s.min, s.max, &n)).empty() && s.power_of_two && (n & (n - 1)))
        why = FormatSize(n) + " is not a power of two";
      break;
    case Kind::kCount:
      why = GetCount(v, s.min, s.max, &n);
      break;
    case Kind::kDuration:
      why = GetDuration(v, s.min, s.max, &n);
      break;
    case Kind::kShare:
      why = GetShare(v, s.max_share, &d);
      break;
    case Kind::kBool:
      if (!v.is_boolean())
        why = "expected true or false, got " + TypeName(v);
      else
        b = v.as_boolean();
      break;
    case Kind::kFsync: {
      if (!v.is_string()) return "expected \"never\", \"block\" or a duration, got " + TypeName(v);
      FsyncPolicy p;
      if (!ParseFsync(v.as_string().str, &p, &n))
        return "\"" + v.as_string().str +
               "\" is not \"never\", \"block\" or a duration like \"1s\"";
      if (p == FsyncPolicy::kInterval && n > s.max)
        return "out of range (allowed 1ms .. " + FormatDuration(s.max) + ")";
      cfg->*std::get<FsyncPolicy Config::*>(s.member) = p;
      cfg->fsync_interval_ms = n;
      return "";
    }
  }
  if (!why.empty()) return why;
  std::visit(
      [&](auto m) {
        using T = std::remove_reference_t<decltype(cfg->*m)>;
        if constexpr (std::is_same_v<T, std::string>)
          cfg->*m = std::move(str);
        else if constexpr (std::is_same_v<T, double>)
          cfg->*m = d;
        else if constexpr (std::is_same_v<T, bool>)
          cfg->*m = b;
        else if constexpr (std::is_integral_v<T>)
          cfg->*m = T(n);  // the table's limits fit the field
      },
      s.member);
  return "";
}

std::string KnownSections() {
  std::string out;
  for (std::string_view s : Sections()) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

std::string Where(const Value &v, const std::string &fallback_file) {
  auto loc = v.location();
  std::string file = loc.file_name();
  if (file.empty() || file == "unknown file") file = fallback_file;
  return file + ":" + std::to_string(loc.line());
}

bool Apply(const Value &root, const std::string &name, Config *cfg, std::string *error) {
  if (!root.is_table()) {
    *error = name + ": the top level must be a table";
    return false;
  }
  for (const auto &[section, table] : root.as_table()) {
    const std::vector<std::string_view> sections = Sections();
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      *error = Where(table, name) + ": " + section +
               ": unknown section (known: " + KnownSections() + ")";
      return false;
    }
    if (!table.is_table()) {
      *error = Where(table, name) + ": " + section + ": must be a table ([" + section + "])";
      return false;
    }
    for (const auto &[key, v] : table.as_table()) {
      const Setting *found = FindSetting(section, key);
      if (!found) {
        *error = Where(v, name) + ": " + section + "." + key + ": unknown key";
        return false;
      }
      std::string why = Parse(*found, v, cfg);
      if (!why.empty()) {
        *error = Where(v, name) + ": " + section + "." + key + ": " + why;
        return false;
      }
    }
  }
  return Validate(*cfg, error);
}

bool ParseAndApply(std::istream &is, const std::string &name, Config *cfg, std::string *error) {
  Value root;
  try {
    root = toml::parse(is, name);
  } catch (const std::exception &e) {
    *error = name + ": TOML syntax error: " + e.what();
    return false;
  }
  try {
    return Apply(root, name, cfg, error);
  } catch (const std::exception &e) {  // toml11 accessors throw on misuse
    *error = name + ": " + e.what();
    return false;
  }
}

}  // namespace

bool LoadFile(const std::string &path, Config *cfg, std::string *error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open the configuration file";
    return false;
  }
  return ParseAndApply(in, path, cfg, error);
}

bool LoadString(std::string_view text, const std::string &name, Config *cfg, std::string *error) {
  std::istringstream in{std::string(text)};
  return ParseAndApply(in, name, cfg, error);
}

}  // namespace logsink::config
