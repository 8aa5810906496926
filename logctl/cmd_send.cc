// cmd_send.cc: `logctl send`, logger(1) for logsink: MESSAGE (or each line of
// standard input) goes to logsinkd over a text stream (PROTOCOL.md, "Text
// streams"), and send fails unless the daemon acknowledges every line.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "commands.h"
#include "common.h"
#include "level_gate.h"
#include "logsink/proto/frame.h"
#include "text_stream.h"

namespace logsink::logctl {
namespace {

constexpr int kTimeoutMs = 10000;  // connect, and the acknowledgment after our EOF
constexpr size_t kBatch = 64u << 10;

}  // namespace

int RunSend(Options &o) {
  std::string socket;
  if (!SocketPath(o.socket, &socket)) return kExitError;
  std::string app = o.send_app.empty() ? "logctl" : o.send_app;
  uint32_t flags =
      ls_hello_text_flags(unsigned(o.send_level.value_or(6)), unsigned(o.send_facility),
                          LS_HELLO_STREAM_TEXT, o.prio_prefix);
  std::string why;
  const TextStreamFields *fields = o.send_fields.empty() ? nullptr : &o.send_fields;
  int fd = OpenTextStream(socket, app, flags, kTimeoutMs, &why, 0, fields);
  if (fd < 0) {
    // A daemon from before fields on text streams closes the connection
    // at a HELLO with the flag, unanswered: said so, nothing is sent
    // without its fields.
    if (fields && why == kClosedAtHello)
      why +=
          " at the HELLO: a logsinkd older than fields on text streams does so for --set "
          "(nothing was sent; send without --set, or upgrade logsinkd)";
    Error("send", why);
    return kExitError;
  }
  // Levels at the source: lines below $LOGSINK_LEVEL are not sent.
  LineFilter filter(o.send_level.value_or(6), o.prio_prefix, LevelFromEnvironment());
  uint64_t lines = 0;
  bool ok = true;
  if (!o.words.empty()) {
    std::string msg, sent;
    for (size_t i = 0; i < o.words.size(); i++) {
      if (i) msg += ' ';
      msg += o.words[i];
    }
    if (msg.empty() || msg.back() != '\n') msg += '\n';
    filter.Feed(msg, &sent);
    for (char ch : sent) lines += ch == '\n';
    ok = sent.empty() || WriteText(fd, sent, &why);
  } else {
    // Read in chunks, sent in writes of up to kBatch bytes (one send per
    // line would cost a system call each): a line that never ends costs a
    // chunk of memory, not its length (the daemon cuts it at 8192 bytes
    // and its acknowledgment counts the cut). The input's last line gets
    // its newline if it has none.
    char chunk[65536];
    std::string batch;
    bool at_line_end = true;
    auto count_and_write = [&] {
      lines += uint64_t(std::count(batch.begin(), batch.end(), '\n'));
      ok = WriteText(fd, batch, &why);
      batch.clear();
    };
    size_t k;
    while (ok && (k = std::fread(chunk, 1, sizeof chunk, stdin)) > 0) {
      filter.Feed(std::string_view(chunk, k), &batch);
      at_line_end = chunk[k - 1] == '\n';
      if (batch.size() >= kBatch) count_and_write();
    }
    if (ok) {
      if (!at_line_end) filter.Feed("\n", &batch);
      filter.Finish(&batch);
      count_and_write();
    }
  }
  if (!ok) {
    close(fd);
    Error("send", why + " (" + socket + ")");
    return kExitError;
  }
  TextAck ack;
  if (!FinishTextStream(fd, kTimeoutMs, &ack, &why)) {
    Error("send", why + " (" + socket + ")");
    return kExitError;
  }
  if (ack.lines != lines) {
    Error("send", std::to_string(lines - std::min(lines, ack.lines)) + " of " +
                      std::to_string(lines) + " line(s) not stored by the daemon at " + socket);
    return kExitError;
  }
  if (ack.lines_without_fields) {
    Error("send", std::to_string(ack.lines_without_fields) + " of " + std::to_string(lines) +
                      " line(s) stored without their --set fields: the daemon's bound on field "
                      "sites was reached or its string table is full (STATS text_fields_fallback)");
    return kExitError;
  }
  if (ack.lines_cut)
    Warn("send: " + std::to_string(ack.lines_cut) +
         " line(s) were cut to 8192 bytes or to what a block holds (flagged as truncated)");
  return kExitOk;
}

}  // namespace logsink::logctl
