// config.cc: default paths (proto/paths.h) and cross-key validation.
#include "logsink/config/config.h"

#include <cstdlib>
#include <string>

#include "logsink/proto/format.h"
#include "logsink/proto/paths.h"

namespace logsink::config {

bool ResolvePaths(Config *cfg, std::string *error) {
  char buf[4096];
  if (cfg->socket_path.empty()) {
    if (ls_resolve_socket(nullptr, buf, sizeof buf) < 0) {
      *error = "the default socket path is too long";
      return false;
    }
    cfg->socket_path = buf;
  }
  if (cfg->ring_file.empty()) {
    if (ls_default_ring(buf, sizeof buf) < 0) {
      *error = "the default ring file path is too long";
      return false;
    }
    cfg->ring_file = buf;
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
  if (!ValidBlockSize(cfg.block_size)) {
    *error =
        "block size " + FormatSize(cfg.block_size) + " is not a power of two between 4KiB and 1MiB";
    return false;
  }
  return true;
}

}  // namespace logsink::config
