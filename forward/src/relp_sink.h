// relp_sink.h: rsyslog over RELP (librelp). librelp sends synchronously and
// keeps at most its window of messages unacknowledged, but does not say
// which ones were acknowledged; so this sink runs librelp on its own thread
// with a window of a quarter of the forwarder's, and counts a message as
// acknowledged once that many later messages were sent, or when the session
// was closed cleanly (RELP answers the close only after every earlier
// message). An idle session is closed after 200 ms for that reason and
// reopened on the next message. After a broken session it reconnects with
// backoff and sends the possibly unacknowledged messages again (counted as
// `resent`): the receiver may see duplicates, never a gap.
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
