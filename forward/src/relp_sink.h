// relp_sink.h: rsyslog over RELP (librelp). librelp sends synchronously and
// keeps at most `window` messages unacknowledged, but does not say which
// ones were acknowledged; so this sink runs librelp on its own thread and
// counts a message as acknowledged once `window` later messages were sent
// (or the session was closed cleanly, which RELP answers only after every
// earlier message). After a broken session it reconnects with backoff and
// sends the last `window` messages again: a destination may see at most one
// window of duplicates per failure, counted as `resent`, and never a gap.
#pragma once

#include <memory>
#include <string>

#include "sink.h"

namespace logsink::forward {

struct RelpOptions {
  std::string host, port;
  int window = 128;
  uint64_t backoff_max_ms = 5000;
};

// Parses "relp://HOST:PORT"; false with *error.
bool ParseRelpUrl(const std::string &to, RelpOptions *out, std::string *error);

std::unique_ptr<Sink> MakeRelpSink(const RelpOptions &opts);

}  // namespace logsink::forward
