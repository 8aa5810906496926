// cmd_send.cc: `logctl send`: logs MESSAGE (or each line of standard input)
// through liblogsink in blocking mode, and fails when a record was not
// delivered to the daemon.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "commands.h"
#include "common.h"
#include "logsink/logsink.h"

namespace logsink::logctl {
namespace {

constexpr int kConnectWaitMs = 1000;  // how long to wait for the daemon

void SleepMs(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace

int RunSend(Options &o) {
  std::string socket;
  if (!SocketPath(o.socket, &socket)) return kExitError;
  ls_options opts;
  ls_options_init(&opts);
  opts.blocking = 1;  // wait for buffer space instead of dropping
  std::string app = o.send_app.empty() ? "logctl" : o.send_app;
  ls_client *c = ls_open(o.socket.empty() ? nullptr : o.socket.c_str(), app.c_str(), &opts);
  if (!c) {
    Error("send", std::strerror(errno));
    return kExitError;
  }
  // The client connects in the background; records logged before it did
  // would be dropped, so wait for the connection first.
  ls_stats st;
  st.size = sizeof st;
  for (int waited = 0; ls_get_stats(c, &st) == 0 && !st.connected && waited < kConnectWaitMs;
       waited += 5)
    SleepMs(5);
  if (!st.connected) {
    ls_close(c);
    Error("send", "daemon not running (socket " + socket + ")");
    return kExitError;
  }
  int level = o.send_level.value_or(LS_INFO);
  uint64_t refused = 0;
  auto log = [&](const std::string &msg) {
    if (ls_log_text(c, level, msg.data(), msg.size()) != 0) refused++;
  };
  if (!o.words.empty()) {
    std::string msg;
    for (size_t i = 0; i < o.words.size(); i++) msg += (i ? " " : "") + o.words[i];
    log(msg);
  } else {
    char *line = nullptr;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) >= 0) {
      if (n > 0 && line[n - 1] == '\n') n--;
      log(std::string(line, static_cast<size_t>(n)));
    }
    std::free(line);
  }
  int frc = ls_flush(c);
  st.size = sizeof st;
  ls_get_stats(c, &st);
  ls_close(c);
  uint64_t lost = st.dropped + st.errors + refused;
  if (frc != 0 || lost != 0 || st.sent < st.logged) {
    uint64_t undelivered = lost + (st.logged > st.sent ? st.logged - st.sent : 0);
    Error("send", std::to_string(undelivered) + " record(s) not delivered to " + socket +
                      (frc != 0 ? std::string(": ") + std::strerror(-frc) : ""));
    return kExitError;
  }
  return kExitOk;
}

}  // namespace logsink::logctl
