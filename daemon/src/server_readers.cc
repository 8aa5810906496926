// server_readers.cc: reads through the daemon (reader_session.h): a
// connection's READ_REQ taken or refused at max_readers and
// max_readers_per_uid, each read stepped as its socket drains, followers
// stepped after the writer wrote (see server.h).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include "logsink/proto/frame.h"
#include "reply.h"
#include "server_conn.h"

namespace logsink::daemon {

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
    c->reader = std::make_unique<ReaderSession>(&counters_, &ctx_.memory, uid,
                                                *c->session->read_request(), limits);
    if (!c->reader->Open(ctx_.ring_path, writer_, &refuse)) c->reader.reset();
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

}  // namespace logsink::daemon
