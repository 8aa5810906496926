// server.cc: the libuv loop of logsinkd (see server.h).
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "logsink/config/settings.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/paths.h"
#include "reply.h"
#include "unit.h"

namespace logsink::daemon {

// Why uv_poll + accept4 + read and not uv_pipe_t/uv_listen/uv_read_start
// (weighed for issue 17, kept): uv_read_start asks an alloc callback for a
// buffer per read and reads up to 32 times per wakeup (about 2 MiB with its
// suggested 64 KiB), a budget that cannot be configured; here
// ReadConn reads into one shared buffer up to read_budget and returns to the
// loop, and Session::Feed consumes the bytes synchronously (nothing queued
// per connection but a partial frame). uv_listen's EMFILE trick (close a
// reserve fd, accept and drop pending clients) drops them silently; here
// AcceptAll counts a refused client, pauses the listening poll for 100 ms on
// EMFILE/ENOMEM and logs it rate-limited. SO_PEERCRED is read on the raw fd
// either way. What libuv would add (write queues) the daemon does not need:
// it only answers STATS and REFUSE, bounded by kMaxOut.
struct Server::Conn {
  uv_poll_t poll;
  Server *server = nullptr;
  int fd = -1;
  bool closed = false;  // CloseConn ran; the fd is closed once libuv let go
  size_t index = 0;     // in conns_
  int events = UV_READABLE;
  uint64_t accepted_ms = 0;  // loop time at accept (silent connections time out)
  std::unique_ptr<Session> session;
  std::unique_ptr<ReaderSession> reader;  // a read through the daemon (READ_REQ)
  uint64_t read_gen = 0;                  // WriteGen() when the reader last stepped
  // Last: placed before session, it cost the daemon ~15% more CPU per record
  // in bench/compare, with the same instructions executed: a placement effect.
  bool from_backlog = false;  // taken from the listen backlog after the stop
};

namespace {

constexpr size_t kReadChunk = 256u << 10;  // one read() at most
constexpr size_t kMaxOut = 1u << 20;       // unsent replies before we give up on a client
constexpr int kAcceptPerWakeup = 256;
constexpr uint64_t kStatusPeriodMs = 2000;  // STATUS= refresh period
// At a stop under systemd: how long connections queued on the socket are
// taken and drained before the rest is left to the next logsinkd.
constexpr uint64_t kSystemdBacklogNs = 100 * 1000000ull;
// At a stop: connections from the listen backlog drained at once (each holds
// a descriptor; connection limits do not apply to them).
constexpr size_t kBacklogAtOnce = 64;

// Whether fd's socket would take more now (a read's: counts its waits).
bool Writable(int fd) {
  struct pollfd p = {fd, POLLOUT, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT);
}

// Whether fd has something to read now (or an error to report).
bool Readable(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && p.revents != 0;
}

}  // namespace

Server::Server(const config::Config &cfg, storage::RingWriter *writer, Listener *listener,
               Reload reload, Listener *syslog)
    : cfg_(cfg),
      writer_(writer),
      listener_(listener),
      reload_(std::move(reload)),
      syslog_(syslog && syslog->fd >= 0 ? syslog : nullptr),
      text_(writer) {
  ctx_.writer = writer_;
  ctx_.text = &text_;
  counters_.started_mono_ns = uv_hrtime();  // CLOCK_MONOTONIC, as uptime_ms reads it
  // RING replies name the file absolutely, whatever the client's directory.
  if (char *abs = realpath(cfg_.ring_file.c_str(), nullptr)) {
    ctx_.ring_path = abs;
    free(abs);
  } else {
    ctx_.ring_path = cfg_.ring_file;
  }
  struct stat st;
  if (stat(ctx_.ring_path.c_str(), &st) == 0) {
    ctx_.ring_dev = uint64_t(st.st_dev);
    ctx_.ring_ino = uint64_t(st.st_ino);
  }
  ctx_.counters = &counters_;
  text_.set_kern_refused_counter(&counters_.kern_refused);
  ctx_.next_source_id = std::max<uint64_t>(1, writer_->next_source_id());
  ctx_.memory.limit = cfg_.max_memory;
  ctx_.memory.per_uid_limit = cfg_.max_memory_per_uid;
  ctx_.memory.used = &counters_.memory_used;
  rbuf_.resize(kReadChunk);
  if (syslog_) syslog_rx_ = std::make_unique<SyslogReceiver>(&ctx_, syslog_->fd, cfg_.max_app);
}

Server::~Server() {
  if (kmsg_fd_ >= 0) close(kmsg_fd_);
  if (sync_fd_ >= 0) close(sync_fd_);
  if (reserve_fd_ >= 0) close(reserve_fd_);
}

Limits Server::CurrentLimits() const {
  Limits l;
  l.max_frame = cfg_.max_frame;
  l.max_sites = cfg_.max_sites_per_connection;
  l.max_app = cfg_.max_app;
  return l;
}

int Server::Run() {
  int rc = uv_loop_init(&loop_);
  if (rc < 0) {
    spdlog::critical("uv_loop_init: {}", uv_strerror(rc));
    return 1;
  }
  // fdatasync runs on a second, read-only descriptor of the ring file from
  // libuv's thread pool; fdatasync acts on the file, whichever fd names it,
  // and the writer's own state is never touched off the loop thread.
  sync_fd_ = open(cfg_.ring_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (sync_fd_ < 0)
    spdlog::warn("cannot open {} for fdatasync: {}", cfg_.ring_file, strerror(errno));

  // Kept for accept's EMFILE case (AcceptAll).
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  uv_poll_init(&loop_, &listen_poll_, listener_->fd);
  listen_poll_.data = this;
  uv_poll_start(&listen_poll_, UV_READABLE, OnListenReadable);
  if (!StartKernel()) return 1;
  if (kmsg_fd_ >= 0) {
    uv_poll_init(&loop_, &kmsg_poll_, kmsg_fd_);
    kmsg_poll_.data = this;
    uv_poll_start(&kmsg_poll_, UV_READABLE, OnKmsgReadable);
  }
  if (syslog_) {
    uv_async_init(&loop_, &syslog_async_, OnSyslogQueued);
    syslog_async_.data = this;
    uv_timer_init(&loop_, &syslog_timer_);
    syslog_timer_.data = this;
    if (int e = syslog_rx_->StartThread(&syslog_async_); e != 0) {
      spdlog::critical("syslog socket: cannot start the receive thread: {}", strerror(e));
      return 1;
    }
  }
  for (uv_timer_t *t :
       {&flush_timer_, &fsync_timer_, &stall_timer_, &accept_retry_, &watchdog_, &status_timer_}) {
    uv_timer_init(&loop_, t);
    t->data = this;
  }
  // After whatever a turn of the loop read and stored (connections, syslog,
  // kernel), before the loop waits again: AfterWrites(), once per turn.
  uv_prepare_init(&loop_, &before_wait_);
  before_wait_.data = this;
  uv_prepare_start(&before_wait_, OnBeforeWait);
  // flush_timer_ is one-shot, armed by AfterWrites() when records wait.
  if (cfg_.fsync == config::FsyncPolicy::kInterval)
    uv_timer_start(&fsync_timer_, OnFsyncTimer, cfg_.fsync_interval_ms, cfg_.fsync_interval_ms);
  uint64_t stall_period = std::clamp<uint64_t>(cfg_.stall_timeout_ms / 4, 5, 1000);
  uv_timer_start(&stall_timer_, OnStallTimer, stall_period, stall_period);
  for (auto [s, num] : {std::pair{&sig_term_, SIGTERM}, {&sig_int_, SIGINT}, {&sig_hup_, SIGHUP}}) {
    uv_signal_init(&loop_, s);
    s->data = this;
    uv_signal_start(s, OnSignal, num);
  }
  // main() blocked these until now; one that arrived meanwhile is delivered.
  sigset_t held;
  sigemptyset(&held);
  sigaddset(&held, SIGTERM);
  sigaddset(&held, SIGINT);
  sigaddset(&held, SIGHUP);
  sigprocmask(SIG_UNBLOCK, &held, nullptr);
  sync_policy_.Reset(cfg_.fsync, writer_->stats());

  if (syslog_) {
    spdlog::info("syslog datagrams on {}",
                 syslog_->from_systemd ? "the datagram socket from systemd" : syslog_->path);
    // A socket's queue length is fixed when it is made, from its network
    // namespace's setting: known here only for a socket logsinkd made itself
    // (systemd's was made in systemd's namespace; the unit runs logsinkd in
    // a private one). daemon/SYSLOG.md, "Bursts".
    if (long q = syslog_->from_systemd ? -1 : DatagramQueueLength();
        q >= 0 && q <= kKernelDefaultDgramQueue)
      spdlog::warn(
          "net.unix.max_dgram_qlen is {} in logsinkd's network namespace (the kernel's default), "
          "so the syslog socket it made queues at most {}: a sender that does not block loses "
          "a line whenever that queue is full, and no receiver can count it. Raise the setting "
          "(the logsink package's sysctl.d/60-logsink.conf sets 512) and restart, or let systemd "
          "make the socket (logsinkd-syslog.socket); see logsinkd(8), SYSLOG SOCKET",
          q, q + 1);
  }
  spdlog::info("serving on {}; ring {} ({} blocks of {} bytes, next record {})",
               listener_->from_systemd ? "the socket from systemd" : listener_->path,
               cfg_.ring_file, writer_->layout().block_count, writer_->layout().block_size,
               writer_->next_record_seq());
  // systemd's watchdog (WatchdogSec=): ping at half the interval from the
  // loop, so a stuck loop gets the daemon restarted.
  uint64_t wd_usec = 0;
  if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec >= 2000) {
    uint64_t period = wd_usec / 2000;
    uv_timer_start(&watchdog_, OnWatchdog, period, period);
  }
  // STATUS= (shown by `systemctl status`): a line of counters, refreshed
  // every 2 s when it changed. Without NOTIFY_SOCKET these calls do nothing.
  NotifyStatus("READY=1\n");
  uv_timer_start(&status_timer_, OnStatusTimer, kStatusPeriodMs, kStatusPeriodMs);
  uv_run(&loop_, UV_RUN_DEFAULT);
  rc = uv_loop_close(&loop_);
  if (rc < 0) spdlog::warn("uv_loop_close: {}", uv_strerror(rc));
  return 0;
}

// ---- accepting -------------------------------------------------------------

void Server::OnListenReadable(uv_poll_t *h, int status, int) {
  auto *s = static_cast<Server *>(h->data);
  if (status < 0) {
    spdlog::error("listening socket: {}", uv_strerror(status));
    return;
  }
  s->AcceptAll();
}

// The receive thread wakes the loop when its queue stops being empty, and
// again when it passes half its size. A small queue waits up to
// kSyslogStoreDelayMs, so that a sender's datagrams are stored a batch per
// loop wakeup, not one each (their records are not visible before the next
// flush anyway); a queue half full is stored at once. Either way at most the
// read budget per turn, then back to the loop, which comes back after the
// connections had their turn, so a syslog flood cannot starve native clients.
void Server::OnSyslogQueued(uv_async_t *h) {
  auto *s = static_cast<Server *>(h->data);
  if (s->stopping_) return;
  if (s->syslog_rx_->queued_bytes() < kSyslogQueueBytes / 2) {
    if (!uv_is_active(reinterpret_cast<uv_handle_t *>(&s->syslog_timer_)))
      uv_timer_start(&s->syslog_timer_, OnSyslogTimer, kSyslogStoreDelayMs, 0);
    return;
  }
  OnSyslogTimer(&s->syslog_timer_);
}

void Server::OnSyslogTimer(uv_timer_t *t) {
  auto *s = static_cast<Server *>(t->data);
  uv_timer_stop(t);
  bool more = s->syslog_rx_->DrainQueue(s->cfg_.read_budget);
  // At a stop the receive thread is gone (Shutdown): once what it queued is
  // stored, the loop reads the socket itself, a budget per turn, until it
  // is empty; then the socket is closed.
  if (!more && s->stopping_) {
    more = s->syslog_rx_->ReadSome(s->cfg_.read_budget);
    if (!more) {
      s->CloseSyslog();
      return;
    }
  }
  if (more) uv_timer_start(t, OnSyslogTimer, 0, 0);
}

// The syslog socket is done with (at a stop: emptied, or shutdown_timeout
// passed): what is still queued is forgotten, and said so.
void Server::CloseSyslog() {
  if (!syslog_draining_) return;
  syslog_draining_ = false;
  if (size_t n = syslog_rx_->DiscardQueued())
    spdlog::warn(
        "syslog socket: {} datagrams received but not stored: shutdown_timeout ({} ms) passed", n,
        cfg_.shutdown_timeout_ms);
  uv_close(reinterpret_cast<uv_handle_t *>(&syslog_timer_), nullptr);
  CloseListener(syslog_);
}

// "auto" reads the kernel's log only in the system instance (the one that
// writes the system ring; under systemd as user logsink with CAP_SYSLOG):
// per-user and test instances never do. What the ring
// already holds of this boot's kernel log (from before a restart) is found
// by its sequence numbers and not stored twice.
bool Server::StartKernel() {
  const bool want =
      cfg_.kernel_read == "yes" || (cfg_.kernel_read == "auto" && cfg_.ring_file == LS_SYSTEM_RING);
  if (!want) return true;
  kmsg_fd_ = open(cfg_.kernel_device.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (kmsg_fd_ < 0) {
    if (cfg_.kernel_read == "yes") {
      spdlog::critical("kernel messages: cannot open {}: {} ([kernel] read = \"yes\")",
                       cfg_.kernel_device, strerror(errno));
      return false;
    }
    spdlog::warn("kernel messages: cannot open {}: {}; not reading them", cfg_.kernel_device,
                 strerror(errno));
    return true;
  }
  // Everything the writer has buffered is on disk before the ring is read.
  if (!writer_->Flush().ok()) counters_.write_errors++;
  const auto boot = storage::Env::Default()->BootId();
  const std::optional<uint64_t> after = LastKernelSeq(cfg_.ring_file, boot);
  kmsg_rx_ = std::make_unique<KmsgReader>(&ctx_, kmsg_fd_, after);
  if (after)
    spdlog::info("kernel messages from {}, after sequence number {} (already in the ring)",
                 cfg_.kernel_device, *after);
  else
    spdlog::info("kernel messages from {}", cfg_.kernel_device);
  return true;
}

// Up to 1024 records per wakeup, then back to the loop (like the syslog socket).
void Server::OnKmsgReadable(uv_poll_t *h, int status, int) {
  auto *s = static_cast<Server *>(h->data);
  if (status < 0) {
    s->ctx_.log_limit.Log(kLogKindWrite, spdlog::level::err, "kernel messages: {}",
                          uv_strerror(status));
    return;
  }
  // At a stop, what the kernel logged before it is read the same way, and
  // the device is let go once nothing is left (or at DrainStep's deadline).
  if (!s->kmsg_rx_->ReadSome(1024) && s->kmsg_draining_) s->CloseKmsg();
}

void Server::CloseKmsg() {
  if (!kmsg_draining_) return;
  kmsg_draining_ = false;
  uv_close(reinterpret_cast<uv_handle_t *>(&kmsg_poll_), nullptr);
}

void Server::OnAcceptRetry(uv_timer_t *t) {
  auto *s = static_cast<Server *>(t->data);
  if (!s->stopping_) uv_poll_start(&s->listen_poll_, UV_READABLE, OnListenReadable);
}

void Server::OnWatchdog(uv_timer_t *) { sd_notify(0, "WATCHDOG=1"); }

void Server::OnStatusTimer(uv_timer_t *t) { static_cast<Server *>(t->data)->NotifyStatus(""); }

void Server::NotifyStatus(const char *prefix) {
  std::string status =
      fmt::format("STATUS={} records, {} connections, {} dropped by clients, {} protocol errors",
                  writer_->stats().records, counters_.connections_current,
                  counters_.dropped_reported, counters_.errors());
  if (!*prefix && status == last_status_) return;
  last_status_ = status;
  sd_notify(0, (prefix + status).c_str());
}

// A connection refused at accept gets the reason in a REFUSE frame, sent
// without waiting (a fresh socket's buffer holds it), then is closed; a
// client that reads it can say why (PROTOCOL.md, "Errors").
void Server::Refuse(int fd, const std::string &reason) {
  std::string frame;
  AppendRefuseFrame(LS_PROTO_VERSION, reason, &frame);
  ssize_t ignored = send(fd, frame.data(), frame.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  (void)ignored;
  close(fd);
}

void Server::AcceptAll() {
  for (int i = 0; i < kAcceptPerWakeup; i++) {
    // At a stop the time is checked before taking a connection, never
    // after: one taken is drained with the others (under systemd one left
    // is the next daemon's). At most kBacklogAtOnce are open at a time:
    // CloseConn polls again when one closes.
    if (stopping_ && uv_hrtime() >= backlog_until_ns_) {
      StopBacklog();
      return;
    }
    if (stopping_ && backlog_open_ >= kBacklogAtOnce) {
      uv_poll_stop(&listen_poll_);
      return;
    }
    int fd = accept4(listener_->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      if (e == EINTR || e == ECONNABORTED) continue;
      if (stopping_) {  // empty (or failing): no more are taken
        StopBacklog();
        return;
      }
      if (e == EAGAIN || e == EWOULDBLOCK) return;
      if ((e == EMFILE || e == ENFILE) && reserve_fd_ >= 0) {
        // Out of descriptors: with the one kept in reserve, take the waiting
        // connection off the backlog and close it (counted), so it is not
        // left unread; then reserve one again.
        close(reserve_fd_);
        reserve_fd_ = -1;
        int drop = accept4(listener_->fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (drop >= 0) {
          close(drop);
          counters_.accept_emfile++;
          counters_.connections_refused++;
          ctx_.log_limit.Log(int(Err::kTooManyConnections), spdlog::level::warn,
                             "accept: {}: a waiting connection was closed (accept_emfile)",
                             strerror(e));
        }
        reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (drop >= 0) continue;
      }
      ctx_.log_limit.Log(kLogKindWrite, spdlog::level::err, "accept: {}; pausing accepts for 100ms",
                         strerror(e));
      // Out of descriptors or memory: the listening socket stays readable, so
      // stop polling it for a while instead of spinning.
      uv_poll_stop(&listen_poll_);
      if (!stopping_) uv_timer_start(&accept_retry_, OnAcceptRetry, 100, 0);
      return;
    }
    if (stopping_) {
      // From the listen backlog after the stop, outside the connection
      // limits. SHUT_RD first: the client's later writes fail (EPIPE)
      // instead of vanishing with the socket, and what it wrote before
      // reads to EOF.
      shutdown(fd, SHUT_RD);
      if (Conn *c = AddConn(fd, PeerOf(fd))) {
        c->from_backlog = true;
        backlog_open_++;
        backlog_taken_++;
      }
      continue;
    }
    if (conns_.size() >= cfg_.max_connections) {
      Refuse(fd, fmt::format("max_connections ({}) reached", cfg_.max_connections));
      counters_.connections_refused++;
      counters_.Count(Err::kTooManyConnections);
      ctx_.log_limit.Log(int(Err::kTooManyConnections), spdlog::level::warn,
                         "max_connections ({}) reached: connection closed", cfg_.max_connections);
      continue;
    }
    Peer peer = PeerOf(fd);
    // One uid may not take every slot (root and our own uid may).
    bool limited = peer.uid != 0 && peer.uid != uint32_t(geteuid());
    if (limited && conns_by_uid_[peer.uid] >= cfg_.max_connections_per_uid) {
      Refuse(fd, fmt::format("uid {} holds max_connections_per_uid ({})", peer.uid,
                             cfg_.max_connections_per_uid));
      counters_.connections_refused++;
      counters_.Count(Err::kUidConnections);
      ctx_.log_limit.Log(int(Err::kUidConnections), spdlog::level::warn,
                         "uid {} holds max_connections_per_uid ({}): connection closed", peer.uid,
                         cfg_.max_connections_per_uid);
      continue;
    }
    AddConn(fd, std::move(peer));
  }
}

// Serves an accepted connection from the loop (OnConnEvent); nullptr (and
// the descriptor closed) if libuv cannot poll it.
Server::Conn *Server::AddConn(int fd, Peer peer) {
  peer.comm = ReadComm(peer.pid);
  peer.unit = ReadUnit(peer.pid);
  conns_by_uid_[peer.uid]++;
  auto *c = new Conn;
  c->server = this;
  c->fd = fd;
  c->accepted_ms = uv_now(&loop_);
  c->session = std::make_unique<Session>(&ctx_, CurrentLimits(), std::move(peer));
  if (int rc = uv_poll_init(&loop_, &c->poll, fd); rc < 0) {
    spdlog::error("uv_poll_init: {}", uv_strerror(rc));
    if (--conns_by_uid_[c->session->peer().uid] == 0) conns_by_uid_.erase(c->session->peer().uid);
    close(fd);
    delete c;
    return nullptr;
  }
  c->poll.data = c;
  uv_poll_start(&c->poll, UV_READABLE, OnConnEvent);
  c->index = conns_.size();
  conns_.push_back(c);
  counters_.connections_total++;
  counters_.connections_current++;
  return c;
}

// ---- connections -------------------------------------------------------------

void Server::OnConnEvent(uv_poll_t *h, int status, int events) {
  auto *c = static_cast<Conn *>(h->data);
  Server *s = c->server;
  if (status < 0) {
    if (s->stopping_)
      s->EndStream(c, false);  // what it sent is kept, as at the drain's deadline
    else
      s->CloseConn(c);
    return;
  }
  if (events & UV_WRITABLE) {
    if (c->reader)
      s->ServeReader(c);
    else
      s->SendOut(c);
    if (c->closed) return;
  }
  if (events & UV_READABLE) s->ReadConn(c, s->cfg_.read_budget);
}

// Reads at most `budget` bytes (fairness: the loop then serves the others;
// the poll is level-triggered, so what is left wakes us again). Memory stays
// bounded without pausing reads: every complete frame is written to the ring
// synchronously and only a partial frame (<= max_frame + 4) is kept.
void Server::ReadConn(Conn *c, size_t budget) {
  uint64_t now = uv_now(&loop_);
  size_t total = 0;
  while (total < budget) {
    size_t want = std::min(rbuf_.size(), budget - total);
    ssize_t r = read(c->fd, rbuf_.data(), want);
    if (r > 0) {
      total += size_t(r);
      if (!c->session->Feed(rbuf_.data(), size_t(r), now)) {
        SendOut(c);
        if (!c->closed) CloseConn(c);
        return;
      }
      if (!c->reader && c->session->read_request()) {
        StartReader(c);
        return;
      }
      if (size_t(r) < want) break;  // the socket is (very likely) empty now
      continue;
    }
    if (r == 0) {  // EOF; a partial frame is discarded
      if (c->session->partial())
        spdlog::debug("pid {} closed in the middle of a frame", c->session->peer().pid);
      EndStream(c, true);
      return;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    EndStream(c, false);  // ECONNRESET and the like
    return;
  }
  if (!c->session->out().empty()) SendOut(c);
}

// The peer is done (eof) or gone. After a clean EOF the open block is
// written at once: a client that closed (a program that exited, `logctl
// send`) has its records visible without waiting for flush_interval
// (PROTOCOL.md, "Closing cleanly"); one pwrite per closing connection at
// most, which its own accept and handshake already outweigh. A text
// stream's last line is stored even without its newline, and after an EOF
// the client gets the acknowledgment it may wait for (PROTOCOL.md, "Text
// streams"): when it arrives, readers see every line.
void Server::EndStream(Conn *c, bool eof) {
  if (stopping_) {
    // The daemon shut the receiving side (Shutdown): the EOF is its own, not
    // the client's. A text stream's unfinished line is kept (the client gets
    // no acknowledgment: it did not end the stream), except a relayed
    // stream's: its relay resends the line whole to the next daemon. One
    // flush at the end covers every connection.
    c->session->Finish(true);
    CloseConn(c);
    return;
  }
  if (!c->session->text()) {
    if (eof && writer_->dirty()) FlushNow();
  } else {
    c->session->Finish();
    uint64_t errors = counters_.write_errors;
    if (writer_->dirty()) FlushNow();
    // No acknowledgment when the lines could not be written: the client
    // then reports that it has none (logctl send fails).
    if (eof && counters_.write_errors == errors) {
      c->session->AppendTextAck();
      SendOut(c);
    }
  }
  if (!c->closed) CloseConn(c);
}

// ---- reads through the daemon (reader_session.h) -----------------------------

uint64_t Server::WriteGen() const {
  const storage::WriterStats &st = writer_->stats();
  return st.flushes + st.blocks_written;
}

void Server::StartReader(Conn *c) {
  const uint32_t uid = c->session->peer().uid;
  const bool limited = uid != 0 && uid != uint32_t(geteuid());
  std::string refuse;
  if (readers_.size() >= cfg_.max_readers)
    refuse = fmt::format("max_readers ({}) reached", cfg_.max_readers);
  else if (limited && readers_by_uid_[uid] >= cfg_.max_readers_per_uid)
    refuse = fmt::format("uid {} holds max_readers_per_uid ({})", uid, cfg_.max_readers_per_uid);
  if (refuse.empty()) {
    ReadLimits limits;
    limits.blocks_per_turn = cfg_.read_blocks_per_turn;
    limits.chunk = cfg_.read_chunk;
    c->reader =
        std::make_unique<ReaderSession>(&counters_, uid, *c->session->read_request(), limits);
    if (!c->reader->Open(ctx_.ring_path, &refuse)) c->reader.reset();
  } else {
    counters_.readers_refused++;
  }
  if (!c->reader) {
    if (readers_by_uid_[uid] == 0) readers_by_uid_.erase(uid);
    ctx_.log_limit.Log(kLogKindRead, spdlog::level::warn, "read for uid {} refused: {}", uid,
                       refuse);
    AppendRefuseFrame(LS_PROTO_VERSION, refuse, &c->session->out());
    SendOut(c);
    if (!c->closed) CloseConn(c);
    return;
  }
  // What the kernel holds for the reader is bounded too: its send buffer
  // is one chunk (the kernel doubles it for its own overhead), so a reader
  // that does not read has at most about three chunks in flight.
  int sndbuf = int(cfg_.read_chunk);
  setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  readers_by_uid_[uid]++;
  readers_.push_back(c);
  c->read_gen = WriteGen();
  ServeReader(c);
}

void Server::ServeReader(Conn *c) {
  std::string &out = c->session->out();
  if (out.empty() && c->reader->state() == ReaderSession::State::kReading) c->reader->Step(&out);
  SendOut(c);
}

// Once per turn (OnBeforeWait): followers that caught up read on when the
// writer wrote since they last looked, and their socket has drained.
void Server::StepFollowers() {
  if (readers_.empty()) return;
  const uint64_t gen = WriteGen();
  for (size_t i = readers_.size(); i-- > 0;) {  // SendOut may close (and remove) one
    Conn *c = readers_[i];
    if (c->read_gen == gen || c->reader->state() != ReaderSession::State::kCaughtUp ||
        !c->session->out().empty())
      continue;
    c->read_gen = gen;
    c->reader->Step(&c->session->out());
    SendOut(c);
  }
}

void Server::SendOut(Conn *c) {
  std::string &out = c->session->out();
  size_t off = 0;
  while (off < out.size()) {
    ssize_t r = send(c->fd, out.data() + off, out.size() - off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r > 0) {
      off += size_t(r);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    out.clear();  // EPIPE etc: the client went away; reading will tell
    off = 0;
    break;
  }
  out.erase(0, off);
  if (c->reader) {
    // A read bounds its own queue (one chunk): it waits for the socket.
    const auto state = c->reader->state();
    if (!out.empty() || (state == ReaderSession::State::kReading && !Writable(c->fd)))
      counters_.read_socket_waits++;  // it waits for its client to read
    if (out.empty() && state == ReaderSession::State::kDone) {
      CloseConn(c);
      return;
    }
    int want = UV_READABLE;
    if (!out.empty() || state == ReaderSession::State::kReading) want |= UV_WRITABLE;
    if (want != c->events) {
      c->events = want;
      uv_poll_start(&c->poll, want, OnConnEvent);
    }
    return;
  }
  if (out.size() > kMaxOut) {
    spdlog::warn("pid {} does not read its STATS replies; connection closed",
                 c->session->peer().pid);
    CloseConn(c);
    return;
  }
  int want = out.empty() ? UV_READABLE : UV_READABLE | UV_WRITABLE;
  if (want != c->events) {
    c->events = want;
    uv_poll_start(&c->poll, want, OnConnEvent);
  }
}

void Server::CloseConn(Conn *c) {
  if (c->closed) return;
  Conn *last = conns_.back();
  conns_[c->index] = last;
  last->index = c->index;
  conns_.pop_back();
  counters_.connections_current--;
  uint32_t uid = c->session->peer().uid;
  if (auto it = conns_by_uid_.find(uid); it != conns_by_uid_.end() && --it->second == 0)
    conns_by_uid_.erase(it);
  if (c->from_backlog && backlog_open_-- == kBacklogAtOnce && backlog_listening_)
    uv_poll_start(&listen_poll_, UV_READABLE, OnListenReadable);  // room for one more
  if (c->reader) {
    if (auto it = readers_by_uid_.find(uid); it != readers_by_uid_.end() && --it->second == 0)
      readers_by_uid_.erase(it);
    readers_.erase(std::find(readers_.begin(), readers_.end(), c));
    c->reader.reset();
  }
  c->closed = true;
  uv_close(reinterpret_cast<uv_handle_t *>(&c->poll), [](uv_handle_t *h) {
    auto *conn = static_cast<Conn *>(h->data);
    close(conn->fd);
    delete conn;
  });
}

// ---- timers, fsync -----------------------------------------------------------

// Records become visible to readers (tail -f) as soon as writing the
// partial block is cheap enough: the next write waits kFlushCostFactor times
// what the last one cost (rewriting a partial block compresses all of it),
// at least flush_min_interval (1 ms) and at most flush_interval. So partial-block
// writes take at most 1/(1 + kFlushCostFactor) of the loop's time: a record
// logged at a low rate shows within a few milliseconds, and a busy daemon
// writes its large partial blocks rarely (sealed blocks are written when
// they seal, whatever this says).
constexpr uint64_t kFlushCostFactor = 49;

uint64_t Server::FlushGapNs() const {
  return std::min(
      cfg_.flush_interval_ms * 1000000,
      std::max(cfg_.flush_min_interval_ms * 1000000, kFlushCostFactor * last_flush_cost_ns_));
}

// Writes the partial block now if its gap has passed, else arms the timer
// for when it will have (libuv timers count in ms from the loop's cached
// time, which may lag: OnFlushTimer checks again).
void Server::FlushWhenDue() {
  const uint64_t now = uv_hrtime(), due = last_flush_end_ns_ + FlushGapNs();
  if (now >= due) {
    FlushNow();
    return;
  }
  uv_update_time(&loop_);
  uv_timer_start(&flush_timer_, OnFlushTimer, (due - now + 999999) / 1000000, 0);
}

void Server::OnBeforeWait(uv_prepare_t *p) {
  auto *s = static_cast<Server *>(p->data);
  s->AfterWrites();
  s->StepFollowers();
  if (s->stopping_) s->DrainStep();
}

void Server::AfterWrites() {
  if (writer_->dirty() && !uv_is_active(reinterpret_cast<uv_handle_t *>(&flush_timer_)))
    FlushWhenDue();
  if (sync_policy_.policy() == config::FsyncPolicy::kBlock && sync_policy_.Due(writer_->stats()))
    RequestSync();
}

void Server::OnFlushTimer(uv_timer_t *t) {
  auto *s = static_cast<Server *>(t->data);
  if (s->writer_->dirty()) s->FlushWhenDue();
}

void Server::FlushNow() {
  uv_timer_stop(&flush_timer_);
  const uint64_t start = uv_hrtime();
  storage::Status st = writer_->Flush();
  last_flush_end_ns_ = uv_hrtime();
  last_flush_cost_ns_ = last_flush_end_ns_ - start;
  if (!st.ok()) {
    counters_.write_errors++;
    ctx_.log_limit.Log(kLogKindWrite, spdlog::level::err, "flush failed: {}", st.message());
  }
}

void Server::OnFsyncTimer(uv_timer_t *t) {
  auto *s = static_cast<Server *>(t->data);
  if (s->writer_->dirty()) s->FlushNow();  // what the sync is for
  if (s->sync_policy_.Due(s->writer_->stats())) s->RequestSync();
}

void Server::RequestSync() {
  if (sync_fd_ < 0) return;
  if (sync_in_flight_) {
    sync_again_ = true;
    return;
  }
  sync_in_flight_ = true;
  sync_again_ = false;
  sync_req_.data = this;
  int rc = uv_fs_fdatasync(&loop_, &sync_req_, sync_fd_, OnSyncDone);
  if (rc < 0) {
    sync_in_flight_ = false;
    counters_.sync_errors++;
  }
}

void Server::OnSyncDone(uv_fs_t *req) {
  auto *s = static_cast<Server *>(req->data);
  ssize_t result = req->result;
  uv_fs_req_cleanup(req);
  s->sync_in_flight_ = false;
  if (result < 0) {
    s->counters_.sync_errors++;
    s->ctx_.log_limit.Log(kLogKindWrite, spdlog::level::err, "fdatasync failed: {}",
                          uv_strerror(int(result)));
  } else {
    s->counters_.syncs++;
  }
  if (s->sync_again_ && !s->stopping_) s->RequestSync();
}

void Server::OnStallTimer(uv_timer_t *t) {
  auto *s = static_cast<Server *>(t->data);
  uint64_t now = uv_now(&s->loop_);
  // Backwards: CloseConn moves the last connection into the freed index.
  for (size_t i = s->conns_.size(); i-- > 0;) {
    Conn *c = s->conns_[i];
    if (c->session->partial() && now - c->session->partial_since_ms() >= s->cfg_.stall_timeout_ms) {
      c->session->Fail(Err::kStalled, fmt::format("frame incomplete after {} ms (stall_timeout)",
                                                  now - c->session->partial_since_ms()));
      s->CloseConn(c);
    } else if (!c->session->any_frame() && !c->session->partial() &&
               now - c->accepted_ms >= s->cfg_.stall_timeout_ms) {
      c->session->Fail(Err::kStalled,
                       fmt::format("no frame within {} ms of connecting", now - c->accepted_ms));
      s->CloseConn(c);
    }
  }
}

// ---- signals -----------------------------------------------------------------

void Server::OnSignal(uv_signal_t *sig, int signum) {
  auto *s = static_cast<Server *>(sig->data);
  if (signum == SIGHUP) {
    if (s->stopping_) return;
    config::Config next;
    if (s->reload_ && s->reload_(&next)) s->ApplyLive(next);
    return;
  }
  s->Shutdown(signum);
}

// The live settings (settings.h) are copied as a whole; what follows from
// their new values is done here. A changed setting that is not live is
// reported and kept until a restart.
void Server::ApplyLive(const config::Config &n) {
  for (const config::Setting *s : config::Changed(cfg_, n))
    if (!s->live)
      spdlog::warn("SIGHUP: {} changed; it takes effect after a restart", config::SettingName(*s));
  const bool stall_changed = n.stall_timeout_ms != cfg_.stall_timeout_ms;
  config::CopyLive(n, &cfg_);

  spdlog::set_level(spdlog::level::from_str(cfg_.log_level));
  uv_timer_stop(&fsync_timer_);
  if (cfg_.fsync == config::FsyncPolicy::kInterval)
    uv_timer_start(&fsync_timer_, OnFsyncTimer, cfg_.fsync_interval_ms, cfg_.fsync_interval_ms);
  sync_policy_.Reset(cfg_.fsync, writer_->stats());
  if (stall_changed) {
    uint64_t period = std::clamp<uint64_t>(cfg_.stall_timeout_ms / 4, 5, 1000);
    uv_timer_start(&stall_timer_, OnStallTimer, period, period);
  }
  if (uv_is_active(reinterpret_cast<uv_handle_t *>(&flush_timer_))) FlushWhenDue();  // new gap
  if (syslog_rx_) syslog_rx_->set_max_app(cfg_.max_app);
  // New charges are checked against the new bounds.
  ctx_.memory.limit = cfg_.max_memory;
  ctx_.memory.per_uid_limit = cfg_.max_memory_per_uid;
  spdlog::info("SIGHUP: configuration reloaded (log_level {}, flush_interval {} ms, fsync {})",
               cfg_.log_level, cfg_.flush_interval_ms,
               config::FormatFsync(cfg_.fsync, cfg_.fsync_interval_ms));
}

// A stop reads what was sent before it through the loop's own callbacks,
// as before the stop: connections (OnConnEvent, ReadConn, EndStream), the
// listen backlog (OnListenReadable, AcceptAll), syslog datagrams
// (OnSyslogTimer) and the kernel's log (OnKmsgReadable). Shutdown only shuts
// every connection's receiving side and says what is read; DrainStep, once
// per turn of the loop (OnBeforeWait) and at the deadline, lets each input go
// when it has nothing left and ends the loop when none is left or
// shutdown_timeout has passed.
void Server::Shutdown(int signum) {
  if (stopping_) return;
  stopping_ = true;
  sd_notify(0, "STOPPING=1");
  // The listening socket stays polled (it may have been paused on EMFILE):
  // AcceptAll takes the backlog, see below.
  uv_poll_start(&listen_poll_, UV_READABLE, OnListenReadable);
  // Datagrams and kernel messages are read by their own callbacks too, a
  // budget per turn, until none is left (DrainStep waits for them). The
  // syslog receive thread stops first: datagrams already sent were sent
  // before the stop, so what it queued is stored, then what is still in the
  // socket (OnSyslogTimer).
  if (syslog_) {
    syslog_rx_->StopThread();
    uv_close(reinterpret_cast<uv_handle_t *>(&syslog_async_), nullptr);
    syslog_draining_ = true;
    uv_timer_start(&syslog_timer_, OnSyslogTimer, 0, 0);
  }
  kmsg_draining_ = kmsg_fd_ >= 0;
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
  // The kernel's log is done when it has nothing to read (OnKmsgReadable
  // reads while it has).
  if (kmsg_draining_ && !Readable(kmsg_fd_)) CloseKmsg();
  if (now >= drain_deadline_ns_) {
    StopBacklog();
    for (Conn *c : conns_)
      spdlog::warn("shutdown_timeout reached while draining pid {}", c->session->peer().pid);
    while (!conns_.empty()) EndStream(conns_.back(), false);
    CloseSyslog();
    CloseKmsg();
  }
  if (backlog_listening_ || !conns_.empty() || syslog_draining_ || kmsg_draining_) return;

  drained_ = true;
  CloseListener(listener_);
  if (backlog_taken_)
    spdlog::info("drained {} connections from the listen backlog", backlog_taken_);
  storage::Status st = writer_->Flush();
  if (!st.ok()) {
    counters_.write_errors++;
    spdlog::error("flush failed: {}", st.message());
  }
  uv_close(reinterpret_cast<uv_handle_t *>(&before_wait_), nullptr);
  for (uv_timer_t *t :
       {&flush_timer_, &fsync_timer_, &stall_timer_, &accept_retry_, &watchdog_, &status_timer_})
    uv_close(reinterpret_cast<uv_handle_t *>(t), nullptr);
  for (uv_signal_t *s : {&sig_term_, &sig_int_, &sig_hup_})
    uv_close(reinterpret_cast<uv_handle_t *>(s), nullptr);
  // Closing the last uv_signal of a signal restored its default action: a
  // second SIGTERM would kill us during the final flush. Ignore them now.
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGHUP, SIG_IGN);
  // A fdatasync still running keeps uv_run alive until it completes.
}

}  // namespace logsink::daemon
