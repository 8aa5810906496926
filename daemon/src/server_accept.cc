// server_accept.cc: accepting connections: the listening socket's
// wakeups, max_connections and max_connections_per_uid (refused with a
// REFUSE frame), out of descriptors (EMFILE), and at a stop the listen
// backlog taken outside the limits (see server.h).
#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "logsink/proto/frame.h"
#include "reply.h"
#include "server_conn.h"
#include "unit.h"

namespace logsink::daemon {
namespace {

constexpr int kAcceptPerWakeup = 256;

}  // namespace

void Server::OnListenReadable(uv_poll_t *h, int status, int) {
  auto *s = static_cast<Server *>(h->data);
  if (status < 0) {
    spdlog::error("listening socket: {}", uv_strerror(status));
    return;
  }
  s->AcceptAll();
}

void Server::OnAcceptRetry(uv_timer_t *t) {
  auto *s = static_cast<Server *>(t->data);
  if (!s->stopping_) uv_poll_start(&s->listen_poll_, UV_READABLE, OnListenReadable);
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
      if ((e == EMFILE || e == ENFILE) && reserve_fd_ >= 0 && DropOneWaiting(e)) continue;
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

// Out of descriptors (err): with the one kept in reserve, takes the waiting
// connection off the backlog and closes it (counted), so it is not left
// unread; then reserves one again. False when none could be taken.
bool Server::DropOneWaiting(int err) {
  close(reserve_fd_);
  reserve_fd_ = -1;
  int drop = accept4(listener_->fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (drop >= 0) {
    close(drop);
    counters_.accept_emfile++;
    counters_.connections_refused++;
    ctx_.log_limit.Log(int(Err::kTooManyConnections), spdlog::level::warn,
                       "accept: {}: a waiting connection was closed (accept_emfile)",
                       strerror(err));
  }
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  return drop >= 0;
}

// Serves an accepted connection from the loop (OnConnEvent); nullptr (and
// the descriptor closed) if libuv cannot poll it.
Server::Conn *Server::AddConn(int fd, Peer peer) {
  peer.comm = ReadComm(peer.pid);
  peer.unit = ReadUnit(peer.pid);
  if (peer.uid != 0) peer.groups = PeerGroups(fd);  // who may have STATS (session.cc)
  conns_by_uid_[peer.uid]++;
  conns_by_pid_[peer.pid]++;
  auto *c = new Conn;
  c->server = this;
  c->fd = fd;
  c->pid = peer.pid;
  c->accepted_ms = uv_now(&loop_);
  if (writer_->io_lock()) c->thread_failed_at_accept = writer_->stats().queue_errors;
  c->session = std::make_unique<Session>(&ctx_, CurrentLimits(), std::move(peer));
  if (int rc = uv_poll_init(&loop_, &c->poll, fd); rc < 0) {
    spdlog::error("uv_poll_init: {}", uv_strerror(rc));
    if (--conns_by_uid_[c->session->peer().uid] == 0) conns_by_uid_.erase(c->session->peer().uid);
    if (--conns_by_pid_[c->pid] == 0) conns_by_pid_.erase(c->pid);
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

}  // namespace logsink::daemon
