// syslog_input.cc: the syslog datagram socket on the loop (see syslog_input.h).
#include "syslog_input.h"

#include <spdlog/spdlog.h>

#include <cstring>

namespace logsink::daemon {

SyslogInput::SyslogInput(Context *ctx, Listener *socket, const config::Config *cfg)
    : cfg_(cfg), socket_(socket), rx_(ctx, socket->fd, cfg->max_app) {}

bool SyslogInput::Start(uv_loop_t *loop) {
  uv_async_init(loop, &async_, OnQueued);
  async_.data = this;
  uv_timer_init(loop, &timer_);
  timer_.data = this;
  uv_idle_init(loop, &idle_);
  idle_.data = this;
  if (int e = rx_.StartThread(&async_); e != 0) {
    spdlog::critical("syslog socket: cannot start the receive thread: {}", strerror(e));
    return false;
  }
  return true;
}

void SyslogInput::Announce() const {
  spdlog::info("syslog datagrams on {}",
               socket_->from_systemd ? "the datagram socket from systemd" : socket_->path);
  // A socket's queue length is fixed when it is made, from its network
  // namespace's setting: known here only for a socket logsinkd made itself
  // (systemd's was made in systemd's namespace; the unit runs logsinkd in
  // a private one). daemon/SYSLOG.md, "Bursts".
  if (long q = socket_->from_systemd ? -1 : DatagramQueueLength();
      q >= 0 && q <= kKernelDefaultDgramQueue)
    spdlog::warn(
        "net.unix.max_dgram_qlen is {} in logsinkd's network namespace (the kernel's default), "
        "so the syslog socket it made queues at most {}: a sender that does not block loses "
        "a line whenever that queue is full, and no receiver can count it. Raise the setting "
        "(the logsink package's sysctl.d/60-logsink.conf sets 512) and restart, or let systemd "
        "make the socket (logsinkd-syslog.socket); see logsinkd(8), SYSLOG SOCKET",
        q, q + 1);
}

// The receive thread wakes the loop when its queue stops being empty, and
// again when it passes half its size. A small queue waits up to
// kSyslogStoreDelayMs, so that a sender's datagrams are stored a batch per
// loop wakeup, not one each (their records are not visible before the next
// flush anyway); a queue half full is stored at once. Either way at most the
// read budget (or read_slice of work) per turn, then back to the loop, which comes back after the
// connections had their turn, so a syslog flood cannot starve native clients.
void SyslogInput::OnQueued(uv_async_t *h) {
  auto *in = static_cast<SyslogInput *>(h->data);
  if (in->stopping_) return;
  if (uv_is_active(reinterpret_cast<uv_handle_t *>(&in->idle_))) return;  // stored next turn
  if (in->rx_.queued_bytes() < kSyslogQueueBytes / 2) {
    if (!uv_is_active(reinterpret_cast<uv_handle_t *>(&in->timer_)))
      uv_timer_start(&in->timer_, OnTimer, kSyslogStoreDelayMs, 0);
    return;
  }
  OnTimer(&in->timer_);
}

void SyslogInput::OnTimer(uv_timer_t *t) {
  auto *in = static_cast<SyslogInput *>(t->data);
  uv_timer_stop(t);
  const uint64_t slice = in->cfg_->read_slice_ms * 1000000;
  bool more = in->rx_.DrainQueue(in->cfg_->read_budget, slice);
  // At a stop the receive thread is gone (Stop): once what it queued is
  // stored, the loop reads the socket itself, a budget per turn, until it
  // is empty; then the socket is closed.
  if (!more && in->stopping_) {
    more = in->rx_.ReadSome(in->cfg_->read_budget, slice);
    if (!more) {
      in->Close();
      return;
    }
  }
  // The rest at the next turn, after the loop polled the connections: an
  // idle handle runs once per turn (and keeps the poll from waiting). Not
  // a timer of 0 ms: started from its own callback, Debian 12's libuv
  // (1.44) runs it again in the same pass, so the budget never gave the
  // loop back.
  if (more) uv_idle_start(&in->idle_, OnIdle);
}

void SyslogInput::OnIdle(uv_idle_t *h) {
  auto *in = static_cast<SyslogInput *>(h->data);
  uv_idle_stop(h);
  OnTimer(&in->timer_);
}

// The receive thread stops first: datagrams already sent were sent before
// the stop, so what it queued is stored, then what is still in the socket
// (OnTimer).
void SyslogInput::Stop() {
  stopping_ = true;
  rx_.StopThread();
  uv_close(reinterpret_cast<uv_handle_t *>(&async_), nullptr);
  draining_ = true;
  uv_timer_start(&timer_, OnTimer, 0, 0);
}

void SyslogInput::Close() {
  if (!draining_) return;
  draining_ = false;
  if (size_t n = rx_.DiscardQueued())
    spdlog::warn(
        "syslog socket: {} datagrams received but not stored: shutdown_timeout ({} ms) passed", n,
        cfg_->shutdown_timeout_ms);
  uv_close(reinterpret_cast<uv_handle_t *>(&timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t *>(&idle_), nullptr);
  CloseListener(socket_);
}

}  // namespace logsink::daemon
