// daemon_read.cc: the client of a read through the daemon (see
// daemon_read.h). Frames are decoded with proto's codec (read.h).
#include "daemon_read.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common.h"
#include "daemon_stats.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/read.h"
#include "logsink/render/escape.h"
#include "refusal.h"

namespace logsink::logctl {

using storage::Status;

namespace {
// A READ_RECORD holds one record and its strings: at most a block (1 MiB)
// and its site's format and file name.
constexpr uint32_t kMaxReadFrame = 2u << 20;
constexpr size_t kRecvChunk = 64u << 10;
// Asking a daemon that came back which ring it writes.
constexpr int kRingTimeoutMs = 1000;

std::string Sv(const char *p, size_t n) {
  std::string s;
  render::AppendTerminalSafe(&s, std::string_view(p, n));
  return s;
}
}  // namespace

DaemonSource::DaemonSource(std::string socket, const std::array<uint8_t, 16> &ring_id, bool follow,
                           storage::Reporter *reporter)
    : socket_(std::move(socket)), follow_(follow), reporter_(reporter) {
  layout_.ring_id = ring_id;
}

DaemonSource::~DaemonSource() { Close(); }

void DaemonSource::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

Status DaemonSource::ListBoots(std::vector<storage::BootInfo> *) {
  return Status::InvalidArgument(
      "boots (-b, --list-boots) need the ring file itself; through the daemon only your own "
      "records are read");
}

Status DaemonSource::Start(uint8_t from, uint64_t arg) {
  Close();
  from_ = from;
  arg_ = arg;
  started_ = ended_ = false;
  examined_ = 0;
  next_seq_ = 0;
  resume_ = resumed_ = caught_up_ = false;
  buf_.clear();
  pos_ = 0;
  return Status::OK();
}

Status DaemonSource::Connect() {
  refused_ = false;
  struct sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  if (socket_.size() >= sizeof addr.sun_path)
    return Status::InvalidArgument("socket path too long");
  std::memcpy(addr.sun_path, socket_.data(), socket_.size());
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return Status::IOError(socket_ + ": " + std::strerror(errno));
  if (connect(fd_, reinterpret_cast<const struct sockaddr *>(&addr), sizeof addr) != 0) {
    int e = errno;
    Close();
    return Status::IOError(socket_ + ": " + std::strerror(e));
  }
  ls_read_req req = {from_, arg_,
                     (follow_ ? uint64_t{LS_READ_FOLLOW} : 0) | (fields_ ? LS_READ_FIELDS : 0)};
  answered_ = false;
  uint8_t frame[LS_FRAME_HDR + 1 + 2 * LS_VARINT_MAX];
  ptrdiff_t n = ls_read_req_encode(frame, sizeof frame, &req);
  size_t off = 0;
  while (n > 0 && off < size_t(n)) {
    ssize_t k = send(fd_, frame + off, size_t(n) - off, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      int e = errno;
      // Refused before our request was read (a connection limit): say why.
      std::string reason;
      const bool refused = (e == EPIPE || e == ECONNRESET) && WaitingRefusal(fd_, &reason);
      Close();
      refused_ = refused;
      if (refused)
        return Status::IOError("the daemon refused the read: " + Sv(reason.data(), reason.size()));
      return Status::IOError(socket_ + ": " + std::strerror(e));
    }
    off += size_t(k);
  }
  started_ = true;
  caught_up_ = false;
  return Status::OK();
}

Status DaemonSource::Frame(const uint8_t *p, size_t len, uint8_t type, storage::Record *rec,
                           bool *got) {
  *got = false;
  switch (type) {
    case LS_F_READ_RECORD: {
      ls_read_record r;
      if (ls_read_record_decode(p, len, &r) < 0)
        return Status::Corruption("the daemon sent a malformed READ_RECORD");
      *rec = storage::Record{};
      rec->kind = r.kind == LS_READ_KIND_DROPPED ? storage::Record::Kind::kDropped
                                                 : storage::Record::Kind::kRecord;
      rec->seq = r.seq;
      rec->block_seq = r.block_seq;
      rec->ts_ns = r.ts_ns;
      rec->tid = r.tid;
      rec->source_id = r.source_id;
      rec->pid = r.pid;
      rec->uid = r.uid;
      rec->gid = r.gid;
      rec->app = std::string_view(r.app, r.app_len);
      rec->comm = std::string_view(r.comm, r.comm_len);
      rec->unit = std::string_view(r.unit, r.unit_len);
      rec->site_id = r.site_id;
      rec->site_known = r.site_known != 0;
      rec->site.level = r.level;
      rec->site.flags = r.fields ? LS_ST_F_FIELDS : 0;
      rec->site.line = r.line;
      rec->site.fmt = std::string_view(r.fmt, r.fmt_len);
      rec->site.file = std::string_view(r.file, r.file_len);
      rec->args = std::string_view(r.args, r.args_len);
      rec->truncated = r.truncated;
      rec->dropped_count = r.dropped_count;
      rec->dropped_since_ns = r.dropped_since_ns;
      rec->block_opened_ns = r.block_opened_ns;
      std::memcpy(rec->boot_id.data(), r.boot_id, rec->boot_id.size());
      rec->block_open_mono_ns = r.block_open_mono_ns;
      rec->block_open_real_ns = r.block_open_real_ns;
      next_seq_ = std::max(next_seq_, r.seq + 1);
      *got = true;
      return Status::OK();
    }
    case LS_F_READ_LOST: {
      uint64_t n;
      if (ls_read_lost_decode(p, len, &n) < 0)
        return Status::Corruption("the daemon sent a malformed READ_LOST");
      // A resumed read starts from the last number this client knew of,
      // usually long passed by the daemon before it stopped (it sends
      // nothing for other uids' records): what it skips up to its first
      // READ_END was examined already, not lost (the daemon is the ring's
      // only writer).
      if (reporter_ && !(resumed_ && !caught_up_)) reporter_->Lost(n);
      return Status::OK();
    }
    case LS_F_READ_END: {
      ls_read_end e;
      if (ls_read_end_decode(p, len, &e) < 0)
        return Status::Corruption("the daemon sent a malformed READ_END");
      if (std::memcmp(e.ring_id, layout_.ring_id.data(), layout_.ring_id.size()) != 0)
        return Status::InvalidArgument(
            "the daemon writes another ring than it named a moment ago (it was restarted with "
            "another file?)");
      ended_ = caught_up_ = true;
      examined_ = e.examined;
      next_seq_ = std::max(next_seq_, e.next_seq);
      return Status::OK();
    }
    case LS_F_REFUSE: {
      ls_refuse r;
      if (ls_refuse_decode(p, len, &r) < 0)
        return Status::Corruption("the daemon sent a malformed REFUSE");
      return Status::IOError("the daemon refused the read: " + Sv(r.reason, r.reason_len));
    }
    default:
      return Status::Corruption("the daemon sent an unexpected frame type " + std::to_string(type));
  }
}

Status DaemonSource::Next(storage::Record *rec) {
  if (resume_) {
    // The daemon went away while we followed: back when it answers again.
    // It must write the same ring (asked first, so that no record of
    // another is shown); a refusal ends the read as at its start.
    DaemonRing ring;
    std::string why;
    if (QueryDaemonRing(socket_, kRingTimeoutMs, &ring, &why) != 0)
      return Status::NotFound("the daemon is not back yet");
    if (ring.id != layout_.ring_id)
      return Status::InvalidArgument("the daemon is back writing another ring (" + ring.path + ")");
    Status s = Connect();
    if (!s.ok()) return refused_ ? s : Status::NotFound("not back yet");
    resume_ = false;
    resumed_ = true;
    Warn("the daemon is back; reading on from record " + std::to_string(next_seq_));
  } else if (!started_) {
    if (ended_) return Status::NotFound("end of the read");
    Status s = Connect();
    if (!s.ok()) return s;
  }
  for (;;) {
    ls_frame f;
    ptrdiff_t r = ls_frame_parse(buf_.data() + pos_, buf_.size() - pos_, kMaxReadFrame, &f);
    if (r < 0) {
      Close();
      return Status::Corruption("the daemon sent a frame of a bad length");
    }
    if (r > 0) {
      pos_ += size_t(r);
      answered_ = true;
      bool got = false;
      const bool was_ended = ended_;
      Status s = Frame(f.payload, f.len, f.type, rec, &got);
      if (!s.ok()) {
        Close();
        return s;
      }
      if (got) return Status::OK();
      if (ended_ && !was_ended) {
        if (!follow_) {
          Close();
          started_ = false;  // nothing more: Next() says NotFound from now on
        }
        return Status::NotFound("caught up");
      }
      continue;
    }
    if (fd_ < 0) return Status::NotFound("end of the read");
    // Keep the unparsed tail only; what was returned before is no longer needed.
    buf_.erase(buf_.begin(), buf_.begin() + std::ptrdiff_t(pos_));
    pos_ = 0;
    const size_t have = buf_.size();
    buf_.resize(have + kRecvChunk);
    ssize_t k = recv(fd_, buf_.data() + have, kRecvChunk, ended_ ? MSG_DONTWAIT : 0);
    buf_.resize(have + (k > 0 ? size_t(k) : 0));
    if (k > 0) continue;
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return Status::NotFound("no new records");
    const int e = k < 0 ? errno : 0;
    Close();
    if (!answered_ && fields_) {
      // Closed before any answer: a daemon from before fields refuses the
      // flag so (PROTOCOL.md, "Reading through the daemon"). Asked again
      // without it, its sites' field lists read as text.
      fields_ = false;
      buf_.clear();
      pos_ = 0;
      Status s = Connect();
      if (!s.ok()) return s;
      continue;
    }
    if (follow_ && caught_up_) {
      // Following, caught up on this connection: the daemon stopped or
      // restarted. Read on from where this read was once it is back
      // (journalctl -f's habit across journald's restarts), from the
      // record after the last one passed: nothing twice. (A connection
      // ended before its READ_END is an error, as always: the daemon
      // ends a read it cannot go on with that way, and would again.)
      Warn(std::string("the daemon ended the read") +
           (e ? std::string(": ") + std::strerror(e) : "") +
           " (it stopped or restarted?); following on when it is back");
      from_ = 3;  // SEQ
      arg_ = next_seq_;
      started_ = false;
      resume_ = true;
      buf_.clear();
      pos_ = 0;
      return Status::NotFound("the daemon is not back yet");
    }
    return Status::IOError(
        "the daemon ended the read" +
        (e ? std::string(": ") + std::strerror(e) : std::string(" (it stopped or restarted?)")));
  }
}

}  // namespace logsink::logctl
