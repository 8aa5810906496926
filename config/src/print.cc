// print.cc: writes a Config as TOML (logsinkd --print-config) that LoadString
// reads back to an equal Config, setting by setting from the table
// (settings.h).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "logsink/config/config.h"
#include "logsink/config/settings.h"

namespace logsink::config {
namespace {

// A TOML basic string.
std::string Quote(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

}  // namespace

std::string FormatShare(double d) {
  char buf[32];
  for (int prec = 1; prec <= 17; prec++) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string out = buf;
  if (out.find_first_of(".e") == std::string::npos) out += ".0";  // a TOML float
  return out;
}

std::string FormatOctal(uint64_t mode) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0o%03llo", static_cast<unsigned long long>(mode));
  return buf;
}

std::string FormatValue(const Setting &s, const Config &c) {
  auto str = [&] { return c.*std::get<std::string Config::*>(s.member); };
  auto num = [&]() -> uint64_t {
    return std::visit(
        [&](auto m) -> uint64_t {
          if constexpr (std::is_integral_v<std::remove_reference_t<decltype(c.*m)>>)
            return uint64_t(c.*m);
          else
            return 0;
        },
        s.member);
  };
  switch (s.kind) {
    case Kind::kString:
    case Kind::kSocketPath:
    case Kind::kChoice:
    case Kind::kLogLevel:
    case Kind::kLevel:
      return Quote(str());
    case Kind::kMode:
      return FormatOctal(num());
    case Kind::kSize:
      return Quote(FormatSize(num()));
    case Kind::kCount:
      return std::to_string(num());
    case Kind::kDuration:
      return Quote(FormatDuration(num()));
    case Kind::kShare:
      return FormatShare(c.*std::get<double Config::*>(s.member));
    case Kind::kBool:
      return c.*std::get<bool Config::*>(s.member) ? "true" : "false";
    case Kind::kFsync:
      return Quote(FormatFsync(c.*std::get<FsyncPolicy Config::*>(s.member), c.fsync_interval_ms));
  }
  return "";
}

// Sections in the table's order, each setting as `key = value`.
std::string ToToml(const Config &c) {
  std::string out = "# logsinkd effective configuration\n";
  std::string_view section;
  for (const Setting &s : Settings()) {
    if (section != s.section) {
      out += section.empty() ? "[" : "\n[";
      section = s.section;
      out += section;
      out += "]\n";
    }
    out += s.key;
    out += " = " + FormatValue(s, c) + "\n";
  }
  return out;
}

}  // namespace logsink::config
