// load.cc: reads logsinkd's TOML configuration onto a Config, checking every
// key's name, type and range; errors name the file, the line and the key.
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <toml.hpp>

#include "logsink/config/config.h"

namespace logsink::config {
namespace {

using Value = toml::value;

// One known key: how to apply its value. Returns "" or what is wrong.
using Setter = std::string (*)(const Value &v, Config *cfg);

struct Key {
  const char *section;
  const char *name;
  Setter set;
};

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

std::string GetCount(const Value &v, int64_t min, int64_t max, uint32_t *out) {
  if (!v.is_integer()) return "expected an integer, got " + TypeName(v);
  int64_t n = v.as_integer();
  if (n < min || n > max)
    return "out of range: " + std::to_string(n) + " (allowed " + std::to_string(min) + " .. " +
           std::to_string(max) + ")";
  *out = uint32_t(n);
  return "";
}

std::string GetString(const Value &v, std::string *out);

std::string GetShare(const Value &v, double *out) {
  double d;
  if (v.is_floating()) {
    d = v.as_floating();
  } else if (v.is_integer()) {
    d = double(v.as_integer());
  } else {
    return "expected a number from 0 to 0.5, got " + TypeName(v);
  }
  if (!(d >= 0 && d <= 0.5)) return "out of range: " + std::to_string(d) + " (allowed 0 .. 0.5)";
  *out = d;
  return "";
}

std::string GetLevel(const Value &v, std::string *out) {
  std::string s;
  if (auto e = GetString(v, &s); !e.empty()) return e;
  uint8_t l;
  if (!ParseLevelName(s, &l))
    return "\"" + s + "\" is not a level (emerg alert crit err warning notice info debug)";
  *out = s;
  return "";
}

std::string GetString(const Value &v, std::string *out) {
  if (!v.is_string()) return "expected a string, got " + TypeName(v);
  *out = v.as_string().str;
  return "";
}

constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;

const Key kKeys[] = {
    {"daemon", "log_level",
     [](const Value &v, Config *c) -> std::string {
       std::string s;
       if (auto e = GetString(v, &s); !e.empty()) return e;
       if (!ValidLogLevel(s))
         return "\"" + s + "\" is not a log level (trace, debug, info, warn, error, critical, off)";
       c->log_level = s;
       return "";
     }},
    {"socket", "path",
     [](const Value &v, Config *c) -> std::string {
       std::string s;
       if (auto e = GetString(v, &s); !e.empty()) return e;
       if (s.size() >= 108) return "path is too long for a Unix socket (max 107 bytes)";
       c->socket_path = s;
       return "";
     }},
    {"socket", "mode",
     [](const Value &v, Config *c) -> std::string {
       int64_t m;
       if (v.is_integer()) {
         m = v.as_integer();
       } else if (v.is_string()) {
         const std::string &s = v.as_string().str;
         if (s.empty() || s.find_first_not_of("01234567") != std::string::npos)
           return "\"" + s + "\" is not an octal mode (write 0o666 or \"0666\")";
         m = std::stoll(s, nullptr, 8);
       } else {
         return "expected an octal mode like 0o666, got " + TypeName(v);
       }
       if (m < 0 || m > 0777) return "out of range (allowed 0o000 .. 0o777)";
       c->socket_mode = uint32_t(m);
       return "";
     }},
    {"socket", "group",
     [](const Value &v, Config *c) -> std::string { return GetString(v, &c->socket_group); }},
    {"syslog", "socket",
     [](const Value &v, Config *c) -> std::string {
       std::string s;
       if (auto e = GetString(v, &s); !e.empty()) return e;
       if (s.size() >= 108) return "path is too long for a Unix socket (max 107 bytes)";
       c->syslog_socket = s;
       return "";
     }},
    {"ring", "file",
     [](const Value &v, Config *c) -> std::string { return GetString(v, &c->ring_file); }},
    {"ring", "size",
     [](const Value &v, Config *c) -> std::string {
       return GetSize(v, 32 * kKiB, 1 * kTiB, &c->ring_size);
     }},
    {"ring", "block_size",
     [](const Value &v, Config *c) -> std::string {
       uint64_t n;
       if (auto e = GetSize(v, 4 * kKiB, 1 * kMiB, &n); !e.empty()) return e;
       if (n & (n - 1)) return FormatSize(n) + " is not a power of two";
       c->block_size = uint32_t(n);
       return "";
     }},
    {"ring", "compression",
     [](const Value &v, Config *c) -> std::string {
       std::string s;
       if (auto e = GetString(v, &s); !e.empty()) return e;
       if (s != "zstd" && s != "lz4" && s != "none")
         return "\"" + s + "\" is not a compression (zstd, lz4 or none)";
       c->compression = s;
       return "";
     }},
    {"ring", "compression_level",
     [](const Value &v, Config *c) -> std::string {
       return GetCount(v, 1, 19, &c->compression_level);
     }},
    {"retention", "kept_share",
     [](const Value &v, Config *c) -> std::string { return GetShare(v, &c->kept_share); }},
    {"retention", "error_share",
     [](const Value &v, Config *c) -> std::string { return GetShare(v, &c->error_share); }},
    {"retention", "kept_level",
     [](const Value &v, Config *c) -> std::string { return GetLevel(v, &c->kept_level); }},
    {"retention", "error_level",
     [](const Value &v, Config *c) -> std::string { return GetLevel(v, &c->error_level); }},
    {"retention", "fairness",
     [](const Value &v, Config *c) -> std::string {
       if (!v.is_boolean()) return "expected true or false, got " + TypeName(v);
       c->fairness = v.as_boolean();
       return "";
     }},
    {"kernel", "read",
     [](const Value &v, Config *c) -> std::string {
       std::string s;
       if (auto e = GetString(v, &s); !e.empty()) return e;
       if (s != "auto" && s != "yes" && s != "no") return "\"" + s + "\" is not auto, yes or no";
       c->kernel_read = s;
       return "";
     }},
    {"kernel", "device",
     [](const Value &v, Config *c) -> std::string { return GetString(v, &c->kernel_device); }},
    {"writer", "flush_interval",
     [](const Value &v, Config *c) -> std::string {
       return GetDuration(v, 1, 60000, &c->flush_interval_ms);
     }},
    {"writer", "flush_min_interval",
     [](const Value &v, Config *c) -> std::string {
       return GetDuration(v, 1, 60000, &c->flush_min_interval_ms);
     }},
    {"writer", "fsync",
     [](const Value &v, Config *c) -> std::string {
       if (!v.is_string()) return "expected \"never\", \"block\" or a duration, got " + TypeName(v);
       FsyncPolicy p;
       uint64_t ms;
       if (!ParseFsync(v.as_string().str, &p, &ms))
         return "\"" + v.as_string().str +
                "\" is not \"never\", \"block\" or a duration like \"1s\"";
       if (p == FsyncPolicy::kInterval && ms > 3600000) return "out of range (allowed 1ms .. 1h)";
       c->fsync = p;
       c->fsync_interval_ms = ms;
       return "";
     }},
    {"limits", "max_frame",
     [](const Value &v, Config *c) -> std::string {
       uint64_t n;
       if (auto e = GetSize(v, 4 * kKiB, 16 * kMiB, &n); !e.empty()) return e;
       c->max_frame = uint32_t(n);
       return "";
     }},
    {"limits", "max_connections",
     [](const Value &v, Config *c) -> std::string {
       return GetCount(v, 1, 1 << 20, &c->max_connections);
     }},
    {"limits", "max_connections_per_uid",
     [](const Value &v, Config *c) -> std::string {
       return GetCount(v, 1, 1 << 20, &c->max_connections_per_uid);
     }},
    {"limits", "max_sites_per_connection",
     [](const Value &v, Config *c) -> std::string {
       return GetCount(v, 1, 1 << 20, &c->max_sites_per_connection);
     }},
    {"limits", "stall_timeout",
     [](const Value &v, Config *c) -> std::string {
       return GetDuration(v, 10, 3600000, &c->stall_timeout_ms);
     }},
    {"limits", "read_budget",
     [](const Value &v, Config *c) -> std::string {
       uint64_t n;
       if (auto e = GetSize(v, 4 * kKiB, 64 * kMiB, &n); !e.empty()) return e;
       c->read_budget = uint32_t(n);
       return "";
     }},
    {"limits", "max_memory",
     [](const Value &v, Config *c) -> std::string {
       return GetSize(v, 1 * kMiB, 64ull * 1024 * kMiB, &c->max_memory);
     }},
    {"limits", "max_memory_per_uid",
     [](const Value &v, Config *c) -> std::string {
       return GetSize(v, 256 * kKiB, 64ull * 1024 * kMiB, &c->max_memory_per_uid);
     }},
    {"limits", "max_app",
     [](const Value &v, Config *c) -> std::string { return GetCount(v, 1, 1024, &c->max_app); }},
    {"limits", "shutdown_timeout",
     [](const Value &v,
        Config *c) -> std::string { return GetDuration(v, 0, 600000, &c->shutdown_timeout_ms); }},
};

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
    bool known_section = false;
    for (const Key &k : kKeys) known_section |= section == k.section;
    if (!known_section) {
      *error = Where(table, name) + ": " + section +
               ": unknown section (known: daemon, socket, syslog, ring, writer, limits)";
      return false;
    }
    if (!table.is_table()) {
      *error = Where(table, name) + ": " + section + ": must be a table ([" + section + "])";
      return false;
    }
    for (const auto &[key, v] : table.as_table()) {
      const Key *found = nullptr;
      for (const Key &k : kKeys)
        if (section == k.section && key == k.name) found = &k;
      if (!found) {
        *error = Where(v, name) + ": " + section + "." + key + ": unknown key";
        return false;
      }
      std::string why = found->set(v, cfg);
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
