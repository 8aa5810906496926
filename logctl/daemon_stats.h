// daemon_stats.h: asks a running logsinkd over its socket for its counters
// (STATS_REQ, answered by STATS) and for the ring file it writes (RING_REQ,
// answered by RING; PROTOCOL.md), or sends it one other request and reads
// its answer (LEVEL_REQ, answered by LEVEL_ANSWER), bounded in size and
// time.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace logsink::logctl {

using StatList = std::vector<std::pair<std::string, uint64_t>>;

// The ring a daemon writes: its absolute path and identity (FORMAT.md,
// "Superblock").
struct DaemonRing {
  std::string path;
  std::array<uint8_t, 16> id{};
  uint64_t dev = 0, ino = 0;  // the file's st_dev and st_ino, as the daemon sees it
};

// Returns 0 and fills *out; -ENOENT / -ECONNREFUSED when no daemon listens;
// another negative errno (-ETIMEDOUT, -EPROTO, ...) with a reason in *why.
int QueryDaemonStats(const std::string &socket_path, int timeout_ms, StatList *out,
                     std::string *why);

// The same for the ring (RING_REQ).
int QueryDaemonRing(const std::string &socket_path, int timeout_ms, DaemonRing *out,
                    std::string *why);

// Both on one connection: the ring first, then the counters (one answer is
// a snapshot of one daemon, not of two that replaced each other).
int QueryDaemonStatsAndRing(const std::string &socket_path, int timeout_ms, StatList *stats,
                            DaemonRing *ring, std::string *why);

// One request, one answer, on a connection of its own: sends the req_len
// bytes at req (whole frames), then reads frames until one of type `want`
// (at most max_frame bytes of type and payload) and returns 0 with its
// payload in *payload. Frames of other types are skipped; a REFUSE ends the
// exchange (-EPROTO, "the daemon refused: REASON" in *why). Errors as
// QueryDaemonStats's (-ENOENT / -ECONNREFUSED: no daemon listens).
int QueryDaemonFrame(const std::string &socket_path, int timeout_ms, const uint8_t *req,
                     size_t req_len, uint8_t want, uint32_t max_frame, std::string *payload,
                     std::string *why);

}  // namespace logsink::logctl
