// relp_sink.h: rsyslog over RELP, a client of our own on the forwarder's
// libuv loop (no thread). It writes every message handed over as a RELP
// `syslog` frame, all frames waiting in one write (a window of them per
// syscall), and reads the receiver's `rsp` frames, each naming the
// transaction number it answers: a message is acknowledged exactly when its
// own response says "200". To connect it tries the addresses HOST
// resolves to in turn, in the resolver's order, until one accepts: an
// address that refuses, fails or does not accept within 10 s moves it on
// to the next at once; only when all of them failed does the attempt fail
// (and the backoff below applies). After a broken session (an error, the
// receiver's `serverclose`, or no response for 10 s) it reconnects with
// backoff and sends the unacknowledged messages again, in order (counted
// as `resent`): the receiver may see duplicates (at most the forwarder's
// window per failure), never a gap. A message the receiver refuses (an
// answer other than 200) is sent again after a backoff, behind the ones
// handed over after it: the receiver then sees it out of order. Only an answer to one of our
// messages counts as progress for the 10 s rule. Once the forwarder stops
// (BeginDrain) it opens no new session: with none open or being opened,
// nothing more can be acknowledged and the drain ends at once.
//
// Why not librelp (Debian's RELP client, which this replaced; docs/DESIGN.md,
// decision 16):
// librelp sends each message with its own send() and poll(), allocates
// several times per message and does not say which message an
// acknowledgment was for, so it ran on a thread of its own and woke the
// loop per message; with perf, the forwarder spent 5-7 us of CPU per
// record, 60% of it in the kernel (a syscall and a thread switch per
// message). The protocol is small (docs/DESIGN.md, decision 16, says
// exactly what this client speaks).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "sink.h"

namespace logsink::forward {

struct RelpOptions {
  std::string host, port;
  uint64_t backoff_max_ms = 5000;
};

// Parses "relp://HOST:PORT"; false with *error.
bool ParseRelpUrl(const std::string &to, RelpOptions *out, std::string *error);

std::unique_ptr<Sink> MakeRelpSink(const RelpOptions &opts);

// The RELP frames this client reads: "TXNR SP COMMAND SP DATALEN [SP DATA]
// LF". Parses the first complete frame of `in` into its parts; returns its
// length, 0 when `in` holds no complete frame yet, -1 with *error when it
// is not a RELP frame (or one larger than max_data).
struct RelpFrame {
  uint64_t txnr = 0;
  std::string_view command, data;
};
long ParseRelpFrame(std::string_view in, size_t max_data, RelpFrame *f, std::string *error);

}  // namespace logsink::forward
