// syslog_socket.cc: see syslog_socket.h and daemon/SYSLOG.md.
#include "syslog_socket.h"

#include <errno.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "peer.h"
#include "syslog_parse.h"
#include "text_record.h"
#include "unit.h"

namespace logsink::daemon {

// The uid and gid of a datagram that came without credentials: no user's
// (the kernel's overflow id), never root's 0.
constexpr uint32_t kNoCredentialsId = 65534;

int EnableCredentials(int fd) {
  int on = 1;
  return setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) == 0 ? 0 : errno;
}

size_t SyslogReceiver::KeyHash::operator()(const Key &k) const {
  size_t h = std::hash<std::string>()(k.tag);
  for (uint32_t v : {k.pid, k.uid, k.gid}) h = h * 1000003u ^ v;
  return h;
}

SyslogReceiver::SyslogReceiver(Context *ctx, int fd, uint32_t max_app)
    : ctx_(ctx), fd_(fd), max_app_(max_app), buf_(kMaxSyslogDatagram) {}

const storage::Source &SyslogReceiver::SourceFor(uint32_t pid, uint32_t uid, uint32_t gid,
                                                 std::string_view tag) {
  Key key{pid, uid, gid, std::string(tag)};
  auto it = by_key_.find(key);
  if (it != by_key_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);  // most recently used
    return it->second->source;
  }
  if (lru_.size() >= kMaxSyslogSources) {
    by_key_.erase(lru_.back().key);
    lru_.pop_back();
    ctx_->counters->syslog_sources_evicted++;
  }
  lru_.emplace_front();
  Entry &e = lru_.front();
  e.key = std::move(key);
  e.comm = ReadComm(pid);
  e.unit = ReadUnit(pid);
  e.source.id = ctx_->next_source_id++;
  e.source.pid = pid;
  e.source.uid = uid;
  e.source.gid = gid;
  e.source.app = e.key.tag;
  e.source.comm = e.comm;
  e.source.unit = e.unit;
  by_key_.emplace(e.key, lru_.begin());
  ctx_->counters->syslog_sources++;
  return e.source;
}

void SyslogReceiver::Store(const uint8_t *p, size_t len, size_t real_len, uint32_t pid,
                           uint32_t uid, uint32_t gid, bool have_creds) {
  Counters &c = *ctx_->counters;
  c.syslog_received++;
  c.syslog_bytes += real_len;
  if (!have_creds) {
    c.syslog_no_credentials++;
    pid = 0;
    uid = gid = kNoCredentialsId;
  }
  uint64_t cut = real_len > len ? real_len - len : 0;
  if (cut) c.syslog_truncated++;

  SyslogMessage m = ParseSyslog(std::string_view(reinterpret_cast<const char *>(p), len));
  TextKind kind = TextKind::kSyslogRaw;
  switch (m.form) {
    case SyslogForm::kRfc3164:
      kind = TextKind::kRfc3164;
      c.syslog_rfc3164++;
      break;
    case SyslogForm::kRfc5424:
      kind = TextKind::kRfc5424;
      c.syslog_rfc5424++;
      break;
    case SyslogForm::kMalformed:
      c.syslog_malformed++;
      if (m.bad == SyslogBad::kPri) c.syslog_malformed_pri++;
      if (m.bad == SyslogBad::kRfc3164) c.syslog_malformed_rfc3164++;
      if (m.bad == SyslogBad::kRfc5424) c.syslog_malformed_rfc5424++;
      break;
  }
  std::string_view tag = m.tag;
  if (tag.size() > max_app_) {
    tag = tag.substr(0, max_app_);
    c.app_truncated++;
  }
  const storage::Source &src = SourceFor(pid, uid, gid, tag);
  TextFields f;
  f.msg = m.msg;
  f.timestamp = m.timestamp;
  f.hostname = m.hostname;
  f.msgid = m.msgid;
  f.sd = m.sd;
  storage::Status s =
      ctx_->text->Append(src, kind, m.facility, m.severity, WallClockNanos(), f, cut);
  if (!s.ok()) {
    c.write_errors++;
    ctx_->log_limit.Log(kLogKindWrite, spdlog::level::err, "ring write failed: {}", s.ToString());
  }
}

bool SyslogReceiver::ReadSome(size_t byte_budget) {
  size_t bytes = 0;
  for (size_t n = 0; n < kSyslogDatagramsPerWakeup && bytes < byte_budget; n++) {
    iovec iov{buf_.data(), buf_.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    // MSG_TRUNC: the return value is the datagram's real size even when
    // it did not fit.
    ssize_t r = recvmsg(fd_, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      ctx_->counters->syslog_read_errors++;
      ctx_->log_limit.Log(kLogKindWrite, spdlog::level::err, "syslog socket: recvmsg: {}",
                          strerror(errno));
      return false;
    }
    ucred cred{};
    bool have = false;
    for (cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
      if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS &&
          cm->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
        std::memcpy(&cred, CMSG_DATA(cm), sizeof cred);
        have = true;
      } else if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
        // The control buffer has no room for descriptors, so the kernel
        // passes none; should one arrive anyway, it is not kept.
        size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfd; i++) {
          int fd;
          std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
          close(fd);
        }
      }
    }
    size_t real = size_t(r);
    size_t kept = std::min(real, buf_.size());
    bytes += std::max<size_t>(real, 1);
    // pid 0: the kernel had no credentials for the sender (it sent before
    // SO_PASSCRED was on): not root's, nobody's.
    have = have && cred.pid != 0;
    Store(buf_.data(), kept, real, uint32_t(cred.pid), uint32_t(cred.uid), uint32_t(cred.gid),
          have);
  }
  ctx_->counters->syslog_budget_yields++;
  return true;
}

}  // namespace logsink::daemon
