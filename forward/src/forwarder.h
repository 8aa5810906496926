// forwarder.h: the loop of logsink-forward. Reads the ring in record order
// with storage::RingReader (inotify on the file plus a poll timer), hands
// each record that passes the filters to the sink, keeps at most `window`
// unacknowledged, and moves the cursor file to the first record not yet
// acknowledged. Records the writer overwrote before they were read become
// one "lost" message. SIGTERM/SIGINT: stop reading, wait for outstanding
// acknowledgments up to shutdown_timeout (not at all when none can come:
// RELP with no session open), write the cursor, exit 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "options.h"
#include "sink.h"

namespace logsink::forward {

struct ForwardCounters {
  uint64_t forwarded = 0;       // messages handed to the destination (first time)
  uint64_t acked = 0;           // acknowledged by the destination
  uint64_t duplicates = 0;      // acknowledged as already stored (NATS dedup)
  uint64_t retries = 0;         // messages handed over again after an error
  uint64_t lost = 0;            // records overwritten before they were shipped
  uint64_t filtered = 0;        // records skipped by --level/--app
  uint64_t skipped_blocks = 0;  // damaged blocks the reader skipped
  uint64_t oversize = 0;        // records or messages too big to send, replaced by a notice
  uint64_t refused = 0;         // messages refused --refused-retries times, replaced by a notice
};

// The ring identity the cursor names (the superblock's ring id).
std::string RingIdentity(const std::string &ring_path, std::string *error);

// The status file a running instance rewrites every second: <cursor>.status.
std::string StatusPath(const Options &o);

// Runs until SIGTERM/SIGINT; returns the exit code (0, or 1 on a fatal error
// already logged).
int RunForwarder(const Options &o, std::unique_ptr<Sink> sink);

// --status: prints the status file and the current lag; returns the exit code.
int PrintStatus(const Options &o);

}  // namespace logsink::forward
