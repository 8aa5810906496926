// print.cc: writes a Config as TOML (logsinkd --print-config) that LoadString
// reads back to an equal Config.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "logsink/config/config.h"

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

// A share as the shortest decimal that reads back as the same double.
std::string Share(double d) {
  char buf[32];
  for (int prec = 1; prec <= 17; prec++) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string out = buf;
  if (out.find_first_of(".e") == std::string::npos) out += ".0";  // a TOML float
  return out;
}

std::string Octal(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0o%03o", mode);
  return buf;
}

}  // namespace

std::string ToToml(const Config &c) {
  std::string s;
  s += "# logsinkd effective configuration\n";
  s += "[daemon]\n";
  s += "log_level = " + Quote(c.log_level) + "\n";
  s += "\n[socket]\n";
  s += "path = " + Quote(c.socket_path) + "\n";
  s += "mode = " + Octal(c.socket_mode) + "\n";
  s += "group = " + Quote(c.socket_group) + "\n";
  s += "\n[syslog]\n";
  s += "socket = " + Quote(c.syslog_socket) + "\n";
  s += "\n[ring]\n";
  s += "file = " + Quote(c.ring_file) + "\n";
  s += "size = " + Quote(FormatSize(c.ring_size)) + "\n";
  s += "block_size = " + Quote(FormatSize(c.block_size)) + "\n";
  s += "compression = " + Quote(c.compression) + "\n";
  s += "compression_level = " + std::to_string(c.compression_level) + "\n";
  s += "\n[retention]\n";
  s += "kept_share = " + Share(c.kept_share) + "\n";
  s += "error_share = " + Share(c.error_share) + "\n";
  s += "kept_level = " + Quote(c.kept_level) + "\n";
  s += "error_level = " + Quote(c.error_level) + "\n";
  s += std::string("fairness = ") + (c.fairness ? "true" : "false") + "\n";
  s += "\n[kernel]\n";
  s += "read = " + Quote(c.kernel_read) + "\n";
  s += "device = " + Quote(c.kernel_device) + "\n";
  s += "\n[writer]\n";
  s += "flush_interval = " + Quote(FormatDuration(c.flush_interval_ms)) + "\n";
  s += "flush_min_interval = " + Quote(FormatDuration(c.flush_min_interval_ms)) + "\n";
  s += "fsync = " + Quote(FormatFsync(c.fsync, c.fsync_interval_ms)) + "\n";
  s += "\n[limits]\n";
  s += "max_frame = " + Quote(FormatSize(c.max_frame)) + "\n";
  s += "max_connections = " + std::to_string(c.max_connections) + "\n";
  s += "max_connections_per_uid = " + std::to_string(c.max_connections_per_uid) + "\n";
  s += "max_sites_per_connection = " + std::to_string(c.max_sites_per_connection) + "\n";
  s += "stall_timeout = " + Quote(FormatDuration(c.stall_timeout_ms)) + "\n";
  s += "read_budget = " + Quote(FormatSize(c.read_budget)) + "\n";
  s += "max_app = " + std::to_string(c.max_app) + "\n";
  s += "max_memory = " + Quote(FormatSize(c.max_memory)) + "\n";
  s += "max_memory_per_uid = " + Quote(FormatSize(c.max_memory_per_uid)) + "\n";
  s += "shutdown_timeout = " + Quote(FormatDuration(c.shutdown_timeout_ms)) + "\n";
  return s;
}

}  // namespace logsink::config
