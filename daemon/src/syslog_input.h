// syslog_input.h: the syslog datagram socket on the loop (daemon/SYSLOG.md):
// the receive thread's wake-ups, storing what it queued a batch per wakeup
// within the read budget, and at a stop reading the socket to its end
// before it is let go. The receiving itself is syslog_socket.h's.
#pragma once

#include <uv.h>

#include <cstdint>

#include "context.h"
#include "listener.h"
#include "logsink/config/config.h"
#include "syslog_socket.h"

namespace logsink::daemon {

class SyslogInput {
 public:
  // socket: the datagram socket (fd >= 0); cfg: the server's configuration
  // (read_budget, shutdown_timeout, max_app), read at each use.
  SyslogInput(Context *ctx, Listener *socket, const config::Config *cfg);
  SyslogInput(const SyslogInput &) = delete;
  SyslogInput &operator=(const SyslogInput &) = delete;

  // Starts the receive thread, which wakes loop. False (logged) when it
  // cannot.
  bool Start(uv_loop_t *loop);
  // Logs where datagrams come from, with a warning when the socket's
  // kernel queue is the kernel's short default.
  void Announce() const;
  // At a stop: the receive thread stops; what it queued is stored, then
  // what is still in the socket, a budget per turn, until it is empty and
  // the socket is closed (Close).
  void Stop();
  // Done with the socket (emptied, or shutdown_timeout passed): what is
  // still queued is forgotten, and said so. Only after Stop, once.
  void Close();
  // Between Stop and Close.
  bool draining() const { return draining_; }
  void set_max_app(uint32_t n) { rx_.set_max_app(n); }

 private:
  static void OnQueued(uv_async_t *h);
  static void OnTimer(uv_timer_t *t);
  static void OnIdle(uv_idle_t *h);

  const config::Config *cfg_;
  Listener *socket_;
  SyslogReceiver rx_;
  uv_async_t async_;  // the receive thread: datagrams queued
  uv_timer_t timer_;  // stores them (OnQueued, OnTimer)
  uv_idle_t idle_;    // stores the rest at the loop's next turn (OnIdle)
  bool stopping_ = false, draining_ = false;
};

}  // namespace logsink::daemon
