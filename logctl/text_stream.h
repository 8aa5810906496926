// text_stream.h: the client side of a text-stream connection (PROTOCOL.md,
// "Text streams"), used by `logctl send` and `logctl run`: connect, HELLO
// with LS_HELLO_TEXT, the daemon's confirmation (or its refusal and why),
// then lines; after our EOF the daemon acknowledges with the number of lines
// it stored.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace logsink::logctl {

// What the daemon acknowledged after the stream's EOF.
struct TextAck {
  uint64_t lines = 0, lines_cut = 0, partial_lines = 0;
  uint64_t lines_without_fields = 0;  // a stream with fields: lines stored without them
};

// A text stream's fields (PROTOCOL.md, "Text streams"): NAME, VALUE.
using TextStreamFields = std::vector<std::pair<std::string, std::string>>;

// The reason OpenTextStream gives when the daemon closed the connection
// before it answered the HELLO (a daemon older than a HELLO flag does so).
constexpr std::string_view kClosedAtHello = "the daemon closed the connection";

// Connects to the daemon at socket_path within timeout_ms, sends HELLO with
// app (at most LS_APP_MAX bytes: a longer label is cut on a UTF-8 character
// boundary, as the daemon cuts one) and flags (ls_hello_text_flags, plus
// LS_HELLO_CONFIRM) and waits (as long again) for the daemon to accept the
// stream. Returns a blocking descriptor (close-on-exec, no send or receive
// timeout left set), or -1 with a one-sentence reason in *why: for a
// connection the daemon refused, "the daemon refused: " and the daemon's
// reason. A relay_pid other than 0 makes it a relayed stream
// (LS_HELLO_RELAY) of that child's output. Fields (names checked by the
// caller) make every line carry them (LS_HELLO_FIELDS).
int OpenTextStream(const std::string &socket_path, std::string_view app, uint32_t flags,
                   int timeout_ms, std::string *why, uint32_t relay_pid = 0,
                   const TextStreamFields *fields = nullptr);

// Writes all of s (blocking while the daemon drains). false with *why on
// failure (the daemon went away).
bool WriteText(int fd, std::string_view s, std::string *why);

// Ends the stream: shuts down our side, waits up to timeout_ms for the
// daemon's acknowledgment and closes fd. false with *why when none came;
// then *unanswered (when given) says whether the daemon closed the stream
// without a word (a stopping daemon does) rather than timing out or
// answering something else.
bool FinishTextStream(int fd, int timeout_ms, TextAck *ack, std::string *why,
                      bool *unanswered = nullptr);

// FinishTextStream's parts, for a caller that waits for the acknowledgment
// in its own poll loop (logctl run): after shutdown(fd, SHUT_WR), append
// what the daemon sends with AddToAck (false with *why past the longest
// acknowledgment) and, at its close, parse it with ParseTextAck (false with
// *why and *unanswered as FinishTextStream says).
bool AddToAck(std::string *buf, std::string_view got, std::string *why);
bool ParseTextAck(const std::string &buf, TextAck *ack, std::string *why,
                  bool *unanswered = nullptr);

}  // namespace logsink::logctl
