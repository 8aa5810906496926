// server_conn.h: a connection as the server holds it, and what the server's
// files (server_*.cc) share about connections. Included by them only.
#pragma once

#include <poll.h>
#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "reader_session.h"
#include "server.h"
#include "session.h"

namespace logsink::daemon {

// Why uv_poll + accept4 + read and not uv_pipe_t/uv_listen/uv_read_start
// (weighed and kept, docs/DESIGN.md decision 7): uv_read_start asks an
// alloc callback for a buffer per read and reads up to 32 times per wakeup
// (about 2 MiB with its suggested 64 KiB), a budget that cannot be
// configured; here ReadConn reads into one shared buffer up to read_budget
// and returns to the loop, and Session::Feed consumes the bytes
// synchronously (nothing queued per connection but a partial frame).
// uv_listen's EMFILE trick (close a reserve fd, accept and drop pending
// clients) drops them silently; here AcceptAll counts a refused client,
// pauses the listening poll for 100 ms on EMFILE/ENOMEM and logs it
// rate-limited. SO_PEERCRED is read on the raw fd either way. What libuv
// would add (write queues) the daemon does not need: it only answers STATS
// and REFUSE, bounded by kMaxOut.
struct Server::Conn {
  uv_poll_t poll;
  Server *server = nullptr;
  int fd = -1;
  bool closed = false;  // CloseConn ran; the fd is closed once libuv let go
  size_t index = 0;     // in conns_
  int events = UV_READABLE;
  uint64_t accepted_ms = 0;  // loop time at accept (silent connections time out)
  // The writer thread's failed calls at accept (WriterStats::queue_errors):
  // a text stream is acknowledged only when none failed since.
  uint64_t thread_failed_at_accept = 0;
  uint32_t pid = 0;  // the peer's pid at accept (conns_by_pid_)
  std::unique_ptr<Session> session;
  std::unique_ptr<ReaderSession> reader;  // a read through the daemon (READ_REQ)
  uint64_t read_gen = 0;                  // WriteGen() when the reader last stepped
  // Last: placed before session, it cost the daemon ~15% more CPU per record
  // in bench/compare, with the same instructions executed: a placement effect.
  bool from_backlog = false;     // taken from the listen backlog after the stop
  bool close_when_sent = false;  // a LEVEL_REQ's answer: closed once sent
  // With the writer thread (Server::waiting_): a STATS answer waits for it
  // (Session::stats_waiting), or the stream ended cleanly and is closed,
  // unread, once the thread has written its records (end_mark).
  bool waiting = false, ending = false;
  uint64_t end_mark = 0;
  // Its stream ended with records staged in its shared buffers: the
  // server reads them (Server::draining_), then the stream ends as usual.
  bool draining = false;
};

// At a stop: connections from the listen backlog drained at once (each holds
// a descriptor; connection limits do not apply to them).
constexpr size_t kBacklogAtOnce = 64;

// Whether fd's socket would take more now (a read's: counts its waits).
inline bool Writable(int fd) {
  struct pollfd p = {fd, POLLOUT, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT);
}

// Whether fd has something to read now (or an error to report).
inline bool Readable(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && p.revents != 0;
}

}  // namespace logsink::daemon
