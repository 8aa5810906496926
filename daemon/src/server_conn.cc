// server_conn.cc: serving a connection: its poll events, reading within
// the read budget into the session, sending replies, the end of its stream
// (the flush and a text stream's acknowledgment), closing it, and the
// stall check of half frames and silent connections (see server.h).
#include "server_conn.h"

#include <errno.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace logsink::daemon {
namespace {

constexpr size_t kMaxOut = 1u << 20;  // unsent replies before we give up on a client
// A text stream's read piece: a byte can be a record there (an empty
// line), so 32 KiB could hold 32,768 records, ~25 ms of storing, before
// the slice is checked; 8 KiB bounds that to ~6 ms for about 1% more
// reads of ordinary lines.
constexpr size_t kTextReadChunk = 8u << 10;

// Sends what fd's socket takes now of n bytes at p: the bytes sent; *gone
// when the peer is gone (an error other than a full socket). *pass, when
// not -1, is a descriptor to send with the first bytes (SCM_RIGHTS: a
// region's memfd, PROTOCOL.md "Shared buffers"); set to -1 once it went.
size_t SendNow(int fd, const char *p, size_t n, bool *gone, int *pass = nullptr) {
  size_t off = 0;
  *gone = false;
  while (off < n) {
    ssize_t r;
    if (pass && *pass >= 0) {
      struct iovec iov = {const_cast<char *>(p + off), n - off};
      alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
      struct msghdr m = {};
      m.msg_iov = &iov;
      m.msg_iovlen = 1;
      m.msg_control = ctl;
      m.msg_controllen = sizeof ctl;
      struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(cm), pass, sizeof(int));
      r = sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (r > 0) *pass = -1;
    } else {
      r = send(fd, p + off, n - off, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    if (r > 0) {
      off += size_t(r);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    *gone = !(r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    break;
  }
  return off;
}

}  // namespace

void Server::OnConnEvent(uv_poll_t *h, int status, int events) {
  auto *c = static_cast<Conn *>(h->data);
  Server *s = c->server;
  if (status < 0) {
    if (s->stopping_) {
      s->EndStream(c, false);  // what it sent is kept, as at the drain's deadline
      return;
    }
    if (c->reader) {
      s->CloseConn(c);
      return;
    }
    // An error on the socket (libuv: POLLERR). A peer that closed with
    // bytes of ours unread (a CONFIRM, a WELCOME, a level push) leaves
    // ECONNRESET on it, which poll reports before the bytes the peer sent
    // are read: they are read first, in the usual bounded steps (libuv
    // stopped the handle; started again, it reports the error again while
    // bytes wait). The read that finds the socket empty returns the error
    // and ends the stream as a reset (a text stream's partial line stored).
    // An error with nothing to read closes the connection.
    if (s->ReadConn(c, s->cfg_.read_budget) == 0) {
      if (c->closed || c->draining) return;
      if (c->session->shm_pending())
        s->EndStream(c, false);  // gone: its shared buffers are read first
      else
        s->CloseConn(c);
      return;
    }
    if (!c->closed && !c->ending && !c->draining) uv_poll_start(&c->poll, c->events, OnConnEvent);
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

// Reads at most `budget` bytes, and stops once storing them took
// read_slice (fairness: the loop then serves the others; the poll is
// level-triggered, so what is left wakes us again). Storing a record may
// seal a block and move the tiers' oldest records on (decode, compress
// again, rewrite): an error flood costs the writer ~1.5 us a record, so
// 256 KiB of its lines held the loop for tens of ms at once, and every
// other client waited that long for each of its turns. Read in pieces of
// kReadChunk (32 KiB: a read() more per ~40 us of native records stored,
// about 1%; a text stream's in pieces of kTextReadChunk), the slice is
// checked after each. Not while the peer's process holds another native
// connection: a client that reconnected (liblogsink after a send timeout)
// may have records on the old one, unread, older than those on the new
// one; the old one's socket buffer (~208 KiB) read whole in one wakeup,
// as before the slice, keeps each thread's records in order. A text
// stream has no such order to keep (and a second connection must not buy
// a flooder a turn without the slice).
// Memory stays bounded without pausing reads: every complete frame is
// written to the ring synchronously and only a partial frame
// (<= max_frame + 4) is kept.
size_t Server::ReadConn(Conn *c, size_t budget) {
  uint64_t now = uv_now(&loop_);
  const uint64_t start = uv_hrtime();
  auto pid = conns_by_pid_.find(c->pid);
  const bool text = c->session->text();
  const uint64_t slice = !text && pid != conns_by_pid_.end() && pid->second > 1
                             ? UINT64_MAX
                             : cfg_.read_slice_ms * 1000000;
  const size_t piece = text ? std::min(rbuf_.size(), kTextReadChunk) : rbuf_.size();
  size_t total = 0;
  while (total < budget) {
    size_t want = std::min(piece, budget - total);
    ssize_t r = read(c->fd, rbuf_.data(), want);
    if (r > 0) {
      total += size_t(r);
      if (!c->session->Feed(rbuf_.data(), size_t(r), now)) {
        SendOut(c);
        if (!c->closed) CloseConn(c);
        return total;
      }
      if (c->session->stats_waiting()) WaitForWriter(c);
      if (!c->reader && c->session->read_request()) {
        StartReader(c);
        return total;
      }
      if (c->session->level_request() && !c->close_when_sent) {
        ServeLevelRequest(c);
        return total;
      }
      if (c->session->census_request() && !c->close_when_sent) {
        ServeCensusRequest(c);
        return total;
      }
      if (size_t(r) < want) break;  // the socket is (very likely) empty now
      if (total < budget && uv_hrtime() - start >= slice) {
        counters_.conn_slice_yields++;
        break;
      }
      continue;
    }
    if (r == 0) {  // EOF; a partial frame is discarded
      if (c->session->partial())
        spdlog::debug("pid {} closed in the middle of a frame", c->session->peer().pid);
      EndStream(c, true);
      return total + 1;  // the EOF counts as read
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    EndStream(c, false);  // ECONNRESET and the like
    return total + 1;     // so does the error
  }
  if (!c->session->out().empty()) SendOut(c);
  return total;
}

// The peer is done (eof) or gone. After a clean EOF the open block is
// written at once: a client that closed (a program that exited, `logctl
// send`) has its records visible without waiting for flush_interval
// (PROTOCOL.md, "Closing cleanly"); one pwrite per closing connection at
// most, which its own accept and handshake already outweigh. A text
// stream's last line is stored even without its newline, and after an EOF
// the client gets the acknowledgment it may wait for (PROTOCOL.md, "Text
// streams"): when it arrives, readers see every line. With the writer
// thread the loop does not wait for that write: the connection, unread,
// waits for the thread's mark (AnswerWaiting) and is then acknowledged and
// closed, so the client still learns of it only once its records are
// visible.
void Server::EndStream(Conn *c, bool eof) {
  if (c->ending) {  // the drain's deadline: its records are handed over already
    CloseConn(c);
    return;
  }
  if (c->draining) {  // the stop's deadline: the rest of its region at once
    c->session->ShmDrain(SIZE_MAX);
    DrainRegion(c);
    return;
  }
  // The peer ended its stream: unless it let them go (a client that lives
  // on and sends them elsewhere), what its shared buffers hold past what
  // it sent is the daemon's to store (PROTOCOL.md, "Shared buffers"),
  // first. Not at a stop: the EOF is then the daemon's own, and a live
  // client sends those records to the next daemon.
  if (!stopping_ && c->session->shm_pending() && c->session->ShmEnd()) {
    DrainRegion(c);
    return;
  }
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
  // With the writer thread, records a timer's flush handed it may be
  // unwritten yet: the mark covers them even when nothing is new.
  const bool thread = writer_->io_lock() != nullptr;
  const bool text = c->session->text();
  if (text) c->session->Finish();
  const uint64_t errors = counters_.write_errors;
  if ((eof || text) && (writer_->dirty() || thread)) durability_.FlushNow();
  if (!thread) {
    EndedStream(c, eof, counters_.write_errors != errors);
    return;
  }
  if (!eof) {  // a reset: nobody waits for the write
    CloseConn(c);
    return;
  }
  c->ending = true;
  c->end_mark = writer_->Mark();
  uv_poll_stop(&c->poll);
  WaitForWriter(c);
}

void Server::DrainRegion(Conn *c) {
  if (!c->draining) {
    c->draining = true;
    uv_poll_stop(&c->poll);
    draining_.push_back(c);
    if (draining_.size() == 1) uv_idle_start(&region_idle_, OnRegionIdle);
  }
  if (c->session->shm_pending()) return;
  c->draining = false;
  draining_.erase(std::find(draining_.begin(), draining_.end(), c));
  if (draining_.empty()) uv_idle_stop(&region_idle_);
  // As after a clean EOF, whatever ended it: the records just stored are
  // written at once (a killed process's socket often ends in a reset).
  EndStream(c, true);
}

void Server::OnRegionIdle(uv_idle_t *h) {
  auto *s = static_cast<Server *>(h->data);
  // About a block's worth of records per turn: the loop's other work waits
  // no longer for a gone client than for a reader (read_blocks_per_turn).
  constexpr size_t kRegionStep = 64u << 10;
  if (s->draining_.empty()) {
    uv_idle_stop(h);
    return;
  }
  Conn *c = s->draining_.front();
  c->session->ShmDrain(kRegionStep);
  s->DrainRegion(c);
}

// No acknowledgment when the lines could not be written: the client then
// reports that it has none (logctl send fails). With the writer thread,
// when any of its calls failed since the stream was accepted (the lines'
// own failures cannot be told apart: no acknowledgment rather than a false
// one).
void Server::EndedStream(Conn *c, bool eof, bool failed) {
  if (c->session->text() && eof && !failed) c->session->AppendTextAck();
  if (c->session->sendable() > 0) SendOut(c);
  if (!c->closed) CloseConn(c);
}

void Server::WaitForWriter(Conn *c) {
  if (c->waiting) return;
  c->waiting = true;
  waiting_.push_back(c);
}

// Once per turn (OnBeforeWait; the thread's wakeup makes a turn after each
// batch it applied): STATS answers whose records the thread has appended,
// and clean ends whose records it has written. Backwards: CloseConn takes
// a connection out of waiting_.
void Server::AnswerWaiting() {
  if (waiting_.empty()) return;
  const uint64_t done = writer_->written();
  for (size_t i = waiting_.size(); i-- > 0;) {
    Conn *c = waiting_[i];
    if (c->session->stats_waiting()) {
      c->session->AnswerStats(done);
      if (!c->ending && c->session->sendable() > 0) SendOut(c);
      if (c->closed) continue;
    }
    if (c->ending) {
      if (c->end_mark <= done)
        EndedStream(c, true, writer_->stats().queue_errors != c->thread_failed_at_accept);
      continue;
    }
    if (!c->session->stats_waiting()) {
      c->waiting = false;
      waiting_[i] = waiting_.back();
      waiting_.pop_back();
    }
  }
}

void Server::SendOut(Conn *c) {
  std::string &out = c->session->out();
  // At most sendable(): a STATS answer may wait (AnswerWaiting).
  bool gone;
  int pass = c->session->fd_to_send();
  const size_t off = SendNow(c->fd, out.data(), c->session->sendable(), &gone, &pass);
  if (pass < 0) c->session->FdSent();
  // EPIPE etc: the client went away (reading will tell): nothing is kept.
  c->session->Sent(gone ? out.size() : off);
  // Closed by AnswerWaiting, or once its region is read: never read again.
  if (c->ending || c->draining) return;
  if (c->reader) {
    // A read bounds its own queue (one chunk): it waits for the socket. A
    // STATS answer sent before the READ_REQ that still waits for the
    // writer thread holds the read's chunks back: nothing to send until
    // AnswerWaiting gives it.
    if (c->session->stats_waiting()) {
      if (c->events != UV_READABLE) {
        c->events = UV_READABLE;
        uv_poll_start(&c->poll, UV_READABLE, OnConnEvent);
      }
      return;
    }
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
  if (c->close_when_sent && out.empty() && !c->session->stats_waiting()) {
    CloseConn(c);
    return;
  }
  if (out.size() > kMaxOut && !c->close_when_sent) {
    counters_.Count(Err::kRepliesUnread);
    spdlog::warn(
        "pid {} does not read what the daemon sends it (replies, level pushes); "
        "connection closed",
        c->session->peer().pid);
    CloseConn(c);
    return;
  }
  int want = c->session->sendable() == 0 ? UV_READABLE : UV_READABLE | UV_WRITABLE;
  if (want != c->events) {
    c->events = want;
    uv_poll_start(&c->poll, want, OnConnEvent);
  }
}

void Server::CloseConn(Conn *c) {
  if (c->closed) return;
  if (c->session->stats_waiting()) {
    // Closed with a STATS answer still waiting for the writer thread (a
    // later frame failed, the stop, the client's limits): the answer and
    // what follows it are sent first, as without the thread; the loop
    // waits for the thread on this path (STATS is root's and the ring's
    // readers' only: PROTOCOL.md, "STATS counters").
    writer_->Drain();
    c->session->AnswerStats(writer_->written());
    const std::string &out = c->session->out();
    bool gone;
    SendNow(c->fd, out.data(), out.size(), &gone);
  }
  Conn *last = conns_.back();
  conns_[c->index] = last;
  last->index = c->index;
  conns_.pop_back();
  counters_.connections_current--;
  uint32_t uid = c->session->peer().uid;
  if (auto it = conns_by_uid_.find(uid); it != conns_by_uid_.end() && --it->second == 0)
    conns_by_uid_.erase(it);
  if (auto it = conns_by_pid_.find(c->pid); it != conns_by_pid_.end() && --it->second == 0)
    conns_by_pid_.erase(it);
  if (c->from_backlog && backlog_open_-- == kBacklogAtOnce && backlog_listening_)
    uv_poll_start(&listen_poll_, UV_READABLE, OnListenReadable);  // room for one more
  if (c->reader) {
    if (auto it = readers_by_uid_.find(uid); it != readers_by_uid_.end() && --it->second == 0)
      readers_by_uid_.erase(it);
    readers_.erase(std::find(readers_.begin(), readers_.end(), c));
    c->reader.reset();
  }
  if (c->waiting) waiting_.erase(std::find(waiting_.begin(), waiting_.end(), c));
  if (c->draining) {
    draining_.erase(std::find(draining_.begin(), draining_.end(), c));
    if (draining_.empty()) uv_idle_stop(&region_idle_);
  }

  c->closed = true;
  uv_close(reinterpret_cast<uv_handle_t *>(&c->poll), [](uv_handle_t *h) {
    auto *conn = static_cast<Conn *>(h->data);
    close(conn->fd);
    delete conn;
  });
}

// Half frames and silent connections are judged a quarter of
// stall_timeout apart (5 ms to 1 s). The verdict is about the client: a
// connection with bytes waiting in its socket is not judged (the daemon
// owes it a read: a long turn elsewhere, its read_slice or read_budget, or
// the timer running first after a wakeup); the next read tells. Up to
// twice stall_timeout: a client that times its bytes to be waiting at each
// check (easy while it keeps the loop busy from other connections) does
// not hold a half frame longer than that.
void Server::StartStallTimer() {
  uint64_t period = std::clamp<uint64_t>(cfg_.stall_timeout_ms / 4, 5, 1000);
  uv_timer_start(&stall_timer_, OnStallTimer, period, period);
}

void Server::OnStallTimer(uv_timer_t *t) {
  auto *s = static_cast<Server *>(t->data);
  uint64_t now = uv_now(&s->loop_);
  // Backwards: CloseConn moves the last connection into the freed index.
  for (size_t i = s->conns_.size(); i-- > 0;) {
    Conn *c = s->conns_[i];
    // Its stream ended: closed once written, or once its region is read.
    if (c->ending || c->draining) continue;
    const bool partial = c->session->partial();
    const uint64_t since = partial ? c->session->partial_since_ms() : c->accepted_ms;
    const uint64_t waited = now - since, timeout = s->cfg_.stall_timeout_ms;
    // A LEVEL_REQ's answer not read within stall_timeout of the request
    // holds the daemon's memory for nothing.
    const bool unread_answer = c->close_when_sent && waited >= timeout;
    if (!unread_answer && (waited < timeout || (!partial && c->session->any_frame()) ||
                           (waited < 2 * timeout && Readable(c->fd))))
      continue;
    if (unread_answer) {
      c->session->Fail(Err::kStalled,
                       fmt::format("LEVEL_ANSWER unread after {} ms (stall_timeout)", waited));
    } else if (partial) {
      c->session->Fail(Err::kStalled, fmt::format("frame incomplete after {} ms (stall_timeout)",
                                                  now - c->session->partial_since_ms()));
    } else {
      c->session->Fail(Err::kStalled,
                       fmt::format("no frame within {} ms of connecting", now - c->accepted_ms));
    }
    s->CloseConn(c);
  }
}

}  // namespace logsink::daemon
