// daemon_stats.h: asks a running logsinkd for its counters over its socket
// (STATS_REQ, then one STATS frame; PROTOCOL.md), bounded in size and
// time.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace logsink::logctl {

using StatList = std::vector<std::pair<std::string, uint64_t>>;

// Returns 0 and fills *out; -ENOENT / -ECONNREFUSED when no daemon listens;
// another negative errno (-ETIMEDOUT, -EPROTO, ...) with a reason in *why.
int QueryDaemonStats(const std::string &socket_path, int timeout_ms, StatList *out,
                     std::string *why);

}  // namespace logsink::logctl
