// server_drain.cc: the stop (SIGTERM, SIGINT): what clients sent before it
// is read through the loop's own callbacks until every input is done or
// shutdown_timeout has passed, then the loop's handles are closed (see
// server.h).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include <algorithm>
#include <cstring>

#include "server_conn.h"

namespace logsink::daemon {
namespace {

// At a stop under systemd: how long connections queued on the socket are
// taken and drained before the rest is left to the next logsinkd.
constexpr uint64_t kSystemdBacklogNs = 100 * 1000000ull;

}  // namespace

// A stop reads what was sent before it through the loop's own callbacks,
// as before the stop: connections (OnConnEvent, ReadConn, EndStream), the
// listen backlog (OnListenReadable, AcceptAll), syslog datagrams
// (SyslogInput) and the kernel's log (KernelInput). Shutdown only shuts
// every connection's receiving side and says what is read; DrainStep, once
// per turn of the loop (OnBeforeWait) and at the deadline, lets each input go
// when it has nothing left and ends the loop when none is left or
// shutdown_timeout has passed.
void Server::Shutdown(int signum) {
  if (stopping_) return;
  stopping_ = true;
  durability_.Stopping();
  Notify("STOPPING=1");
  // The listening socket stays polled (it may have been paused on EMFILE):
  // AcceptAll takes the backlog, see below.
  uv_poll_start(&listen_poll_, UV_READABLE, OnListenReadable);
  // Datagrams and kernel messages are read by their own callbacks too, a
  // budget per turn, until none is left (DrainStep waits for them).
  if (syslog_) syslog_->Stop();
  kernel_.Stop();
  spdlog::info("{}: draining {} connections and the listen backlog", strsignal(signum),
               conns_.size());
  drain_deadline_ns_ = uv_hrtime() + cfg_.shutdown_timeout_ms * 1000000ull;
  // Connections still in the backlog have sent bytes too: AcceptAll takes
  // them, however many (up to SOMAXCONN), at most kBacklogAtOnce at a time,
  // outside the connection limits. A socket we bound is unlinked first, so
  // that clients reconnecting to the next daemon (liblogsink does within
  // milliseconds) cannot keep the drain going or land in a backlog about to
  // be closed. Under systemd the socket outlives us: what arrives now stays
  // queued for the next logsinkd, which systemd starts for it, so taking
  // stops early.
  UnlinkListener(listener_);
  backlog_until_ns_ = listener_->from_systemd
                          ? std::min(drain_deadline_ns_, uv_hrtime() + kSystemdBacklogNs)
                          : drain_deadline_ns_;
  // Shut the receiving side first, so that from now on a client's writes
  // fail (EPIPE: liblogsink keeps what was not written and sends it to the
  // next daemon, PROTOCOL.md "Restarts") rather than land in a socket about
  // to be closed; what it wrote before then reads to EOF.
  for (Conn *c : conns_) shutdown(c->fd, SHUT_RD);
  // Stalls are not judged any more (a partial frame at EOF is discarded).
  // accept_retry_, free now that accepts are never paused (at a stop an
  // accept error ends the taking), wakes the loop at the deadline.
  uv_timer_stop(&stall_timer_);
  uv_update_time(&loop_);
  uv_timer_start(&accept_retry_, OnDrainDeadline, cfg_.shutdown_timeout_ms + 1, 0);
}

// At a stop: no more connections are taken from the listen backlog.
void Server::StopBacklog() {
  if (!backlog_listening_) return;
  backlog_listening_ = false;
  uv_close(reinterpret_cast<uv_handle_t *>(&listen_poll_), nullptr);
}

// libuv's timers count from the loop's cached time, which may lag: until
// the deadline has passed by uv_hrtime, the timer is armed again.
void Server::OnDrainDeadline(uv_timer_t *t) {
  auto *s = static_cast<Server *>(t->data);
  s->DrainStep();
  if (s->drained_) return;
  const uint64_t now = uv_hrtime();
  const uint64_t left_ns = s->drain_deadline_ns_ > now ? s->drain_deadline_ns_ - now : 0;
  uv_update_time(&s->loop_);
  uv_timer_start(t, OnDrainDeadline, left_ns / 1000000 + 1, 0);
}

void Server::DrainStep() {
  if (drained_) return;
  const uint64_t now = uv_hrtime();
  // The listen backlog is done when it is empty (AcceptAll takes what it
  // holds, from the loop, as before the stop) or its time is up.
  if (backlog_listening_ &&
      (now >= backlog_until_ns_ || (backlog_open_ < kBacklogAtOnce && !Readable(listener_->fd))))
    StopBacklog();
  // The kernel's log is done when it has nothing to read (KernelInput
  // reads while it has).
  if (kernel_.draining() && !Readable(kernel_.fd())) kernel_.Close();
  if (now >= drain_deadline_ns_) {
    StopBacklog();
    for (Conn *c : conns_)
      spdlog::warn("shutdown_timeout reached while draining pid {}", c->session->peer().pid);
    // Streams that ended cleanly and wait for the writer thread are ended
    // as they would have been (a text stream acknowledged: its relay must
    // not send its last line again to the next daemon).
    if (std::any_of(conns_.begin(), conns_.end(), [](const Conn *c) { return c->ending; })) {
      writer_->Drain();
      AnswerWaiting();
    }
    while (!conns_.empty()) EndStream(conns_.back(), false);
    if (syslog_) syslog_->Close();
    kernel_.Close();
  }
  if (backlog_listening_ || !conns_.empty() || (syslog_ && syslog_->draining()) ||
      kernel_.draining())
    return;

  drained_ = true;
  CloseListener(listener_);
  if (backlog_taken_)
    spdlog::info("drained {} connections from the listen backlog", backlog_taken_);
  storage::Status st = writer_->Flush();
  if (writer_->io_lock()) {
    CountWriterErrors(&ctx_);  // the thread's, this flush's among them: counted once
  } else if (!st.ok()) {
    counters_.write_errors++;
    spdlog::error("flush failed: {}", st.message());
  }
  uv_close(reinterpret_cast<uv_handle_t *>(&before_wait_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t *>(&region_idle_), nullptr);

  durability_.Close();
  for (uv_timer_t *t : {&stall_timer_, &accept_retry_, &watchdog_})
    uv_close(reinterpret_cast<uv_handle_t *>(t), nullptr);
  // Closing the last uv_signal of a signal restores its default action: a
  // second SIGTERM would kill us during the final flush. Held while the
  // handles close and until they are ignored, one arriving meanwhile stays
  // pending and is discarded (it killed the daemon, status 143, when it
  // came between the close and the ignore).
  HoldLoopSignals();
  for (uv_signal_t &s : signals_) uv_close(reinterpret_cast<uv_handle_t *>(&s), nullptr);
  IgnoreLoopSignals();
  ReleaseLoopSignals();
  // A fdatasync still running keeps uv_run alive until it completes.
}

}  // namespace logsink::daemon
