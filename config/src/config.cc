// config.cc: default paths (proto/paths.h) and cross-key validation.
#include "logsink/config/config.h"

#include <cstdlib>
#include <string>

#include "logsink/proto/facility.h"
#include "logsink/proto/format.h"
#include "logsink/proto/paths.h"

namespace logsink::config {

namespace {

// A default path in the per-user directory is used only if that directory
// passes the safe-path rule (created 0700 when missing): otherwise another
// user who made /tmp/logsink-<uid>/ first would own the daemon's socket and
// ring. Paths from the config, the flags or $LOGSINK_SOCKET are the user's
// choice and are not checked.
bool CheckUserDir(const std::string &path, std::string *error) {
  char dir[4096];
  if (ls_user_dir_of(path.c_str(), dir, sizeof dir) <= 0) return true;
  char why[512];
  if (ls_user_dir_check(dir, LS_USER_DIR_CREATE, why, sizeof why) < 0) {
    *error = why;
    return false;
  }
  return true;
}

}  // namespace

bool ResolvePaths(Config *cfg, std::string *error) {
  char buf[4096];
  if (cfg->socket_path.empty()) {
    if (ls_resolve_socket(nullptr, buf, sizeof buf) < 0) {
      *error = "the default socket path is too long";
      return false;
    }
    cfg->socket_path = buf;
    const char *env = secure_getenv("LOGSINK_SOCKET");
    if (!(env && env[0]) && !CheckUserDir(cfg->socket_path, error)) return false;
  }
  if (cfg->ring_file.empty()) {
    if (ls_default_ring(buf, sizeof buf) < 0) {
      *error = "the default ring file path is too long";
      return false;
    }
    cfg->ring_file = buf;
    if (!CheckUserDir(cfg->ring_file, error)) return false;
  }
  return true;
}

bool ValidBlockSize(uint64_t n) {
  return n >= LS_BLOCK_SIZE_MIN && n <= LS_BLOCK_SIZE_MAX && (n & (n - 1)) == 0;
}

bool Validate(const Config &cfg, std::string *error) {
  if (cfg.socket_path.size() >= 108) {
    *error = "socket path " + cfg.socket_path + " is too long for a Unix socket (max 107 bytes)";
    return false;
  }
  if (!cfg.syslog_socket.empty() && cfg.syslog_socket == cfg.socket_path) {
    *error = "syslog.socket and socket.path are the same path (" + cfg.syslog_socket + ")";
    return false;
  }
  if (cfg.max_memory_per_uid > cfg.max_memory) {
    *error = "limits.max_memory_per_uid (" + FormatSize(cfg.max_memory_per_uid) +
             ") is larger than limits.max_memory (" + FormatSize(cfg.max_memory) + ")";
    return false;
  }
  if (cfg.flush_min_interval_ms > cfg.flush_interval_ms) {
    *error = "writer.flush_min_interval (" + FormatDuration(cfg.flush_min_interval_ms) +
             ") is longer than writer.flush_interval (" + FormatDuration(cfg.flush_interval_ms) +
             ")";
    return false;
  }
  if (cfg.kept_share + cfg.error_share > 0.75) {
    *error =
        "retention.kept_share and retention.error_share together are more than 0.75 of the "
        "ring (tier 0 keeps at least a quarter)";
    return false;
  }
  if (!ValidBlockSize(cfg.block_size)) {
    *error =
        "block size " + FormatSize(cfg.block_size) + " is not a power of two between 4KiB and 1MiB";
    return false;
  }
  return true;
}

bool ParseLevelName(std::string_view name, uint8_t *level) {
  const int l = ls_level_parse(name.data(), name.size());
  if (l < 0) return false;
  *level = uint8_t(l);
  return true;
}

}  // namespace logsink::config
