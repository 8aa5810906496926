// syslog_socket.cc: see syslog_socket.h and daemon/SYSLOG.md.
#include "syslog_socket.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <system_error>
#include <utility>

#include "logsink/proto/codec.h"
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

long DatagramQueueLength() {
  FILE *f = fopen("/proc/sys/net/unix/max_dgram_qlen", "re");
  if (!f) return -1;
  long v = -1;
  if (fscanf(f, "%ld", &v) != 1) v = -1;
  fclose(f);
  return v;
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
  const std::string_view tag = CutAppLabel(ctx_, m.tag, max_app_);
  const storage::Source &src = SourceFor(pid, uid, gid, tag);
  TextFields f;
  f.msg = m.msg;
  // The kernel cut the datagram (MSG_TRUNC) wherever its buffer ended: a
  // message that runs to that end keeps whole characters only, and the
  // bytes of a partial last one count as cut.
  if (cut && !f.msg.empty() &&
      f.msg.data() + f.msg.size() == reinterpret_cast<const char *>(p) + len)
    f.msg = DropPartialChar(f.msg, &cut);
  f.timestamp = m.timestamp;
  f.hostname = m.hostname;
  f.msgid = m.msgid;
  f.sd = m.sd;
  storage::Status s =
      ctx_->text->Append(src, kind, m.facility, m.severity, WallClockNanos(), f, cut);
  if (!s.ok()) WriteFailed(ctx_, s);
}

namespace {
// The sender's credentials from a received message's control data; closes
// any descriptors that came along (the control buffers have no room for
// them, so the kernel passes none, but should one arrive, it is not kept).
// pid 0: the kernel had no credentials for the sender (it sent before
// SO_PASSCRED was on): not root's, nobody's.
void TakeCredentials(msghdr *mh, uint32_t *pid, uint32_t *uid, uint32_t *gid, bool *have) {
  ucred cred{};
  bool got = false;
  for (cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS &&
        cm->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
      std::memcpy(&cred, CMSG_DATA(cm), sizeof cred);
      got = true;
    } else if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < nfd; i++) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
        close(fd);
      }
    }
  }
  *have = got && cred.pid != 0;
  *pid = uint32_t(cred.pid);
  *uid = uint32_t(cred.uid);
  *gid = uint32_t(cred.gid);
}
}  // namespace

ssize_t SyslogReceiver::Receive(uint32_t *pid, uint32_t *uid, uint32_t *gid, bool *have) {
  iovec iov{buf_.data(), buf_.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  // MSG_TRUNC: the return value is the datagram's real size even when it
  // did not fit.
  ssize_t r = recvmsg(fd_, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
  if (r >= 0) TakeCredentials(&mh, pid, uid, gid, have);
  return r;
}

bool SyslogReceiver::ReadSome(size_t byte_budget, uint64_t slice_ns) {
  const uint64_t start = uv_hrtime();
  size_t bytes = 0;
  for (size_t n = 0; n < kSyslogDatagramsPerWakeup && bytes < byte_budget; n++) {
    if (n > 0 && uv_hrtime() - start >= slice_ns) break;
    uint32_t pid, uid, gid;
    bool have;
    ssize_t r = Receive(&pid, &uid, &gid, &have);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      ctx_->counters->syslog_read_errors++;
      ctx_->log_limit.Log(kLogKindWrite, spdlog::level::err, "syslog socket: recvmsg: {}",
                          strerror(errno));
      return false;
    }
    size_t real = size_t(r);
    bytes += std::max<size_t>(real, 1);
    Store(buf_.data(), std::min(real, buf_.size()), real, pid, uid, gid, have);
  }
  ctx_->counters->syslog_budget_yields++;
  return true;
}

// ---- the receive thread ----------------------------------------------------

namespace {
// The receive thread asks for kSyslogReceiveNice below the daemon's nice
// value and (Linux >= 6.12) for a short time slice, the shortest, 0.1 ms:
// the thread runs briefly after each wakeup, and a short slice lets it
// preempt a busy thread at once. Measured with bench/syslog_burst --busy
// (bursts while the loop works through large frames): at the daemon's own
// priority the thread sometimes waited ~2 ms for a CPU after a datagram
// woke it, enough to overflow a queue of 10. Raising needs CAP_SYS_NICE or
// RLIMIT_NICE (the unit's LimitNICE=). It cannot take more CPU than the
// loop consumes: it stops reading when its queue is full, and after an
// error it waits 10 ms. Returns 0 and the new value in *nice, or an errno
// value and the unchanged one.
int RaisePriority(int *nice) {
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, 0);  // this thread's (Linux: per thread)
  if (now == -1 && errno) return errno;
  *nice = now;
  const int want = std::max(-20, now + kSyslogReceiveNice);
  struct {  // struct sched_attr (sched_setattr(2)); glibc 2.36 has no wrapper
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
  } attr{};
  attr.size = sizeof attr;
  attr.policy = SCHED_OTHER;
  attr.nice = want;
  attr.runtime = 100 * 1000;  // ns: the slice (ignored before Linux 6.12)
  if (syscall(SYS_sched_setattr, 0, &attr, 0) == 0 || setpriority(PRIO_PROCESS, 0, want) == 0) {
    *nice = want;
    return 0;
  }
  return errno;
}

struct QueuedHeader {
  uint32_t kept, real, pid, uid, gid, have;
};
static_assert(sizeof(QueuedHeader) == 24);
}  // namespace

SyslogReceiver::~SyslogReceiver() { StopThread(); }

int SyslogReceiver::StartThread(uv_async_t *wake) {
  wake_ = wake;
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) return errno;
  // Room for the bound and the rest of a batch a stop lets past it, so
  // that neither half ever reallocates (reserved, touched only as used).
  const size_t most =
      kSyslogQueueBytes + kSyslogBatch * (sizeof(QueuedHeader) + kMaxSyslogDatagram);
  fill_.reserve(most);
  store_.reserve(most);
  batch_.resize(kSyslogBatch * kMaxSyslogDatagram);
  // Signals stay with the loop thread (its uv_signal handlers): the thread
  // starts with all of them blocked.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int err = 0;
  // (errno, nice) from the thread; shared, so that neither side outlives it.
  auto priority = std::make_shared<std::promise<std::pair<int, int>>>();
  auto reported = priority->get_future();
  try {
    thread_ = std::thread([this, priority] {
      int nice = 0;
      int e = RaisePriority(&nice);
      priority->set_value({e, nice});
      ThreadMain();
    });
  } catch (const std::system_error &e) {
    err = e.code().value() ? e.code().value() : EAGAIN;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (err) {
    close(stop_fd_);
    stop_fd_ = -1;
    return err;
  }
  // Logged here, on the loop thread (the daemon's logger is not thread-safe).
  auto [e, nice] = reported.get();
  if (e == 0)
    spdlog::info("syslog socket: receive thread at nice {}", nice);
  else
    spdlog::info(
        "syslog socket: receive thread stays at nice {} ({}; raising it needs CAP_SYS_NICE or "
        "LimitNICE=): a busy daemon may lose more of a non-blocking sender's bursts",
        nice, strerror(e));
  return 0;
}

void SyslogReceiver::StopThread() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  room_.notify_all();
  uint64_t one = 1;
  while (write(stop_fd_, &one, sizeof one) < 0 && errno == EINTR) {
  }
  thread_.join();
  close(stop_fd_);
  stop_fd_ = -1;
  FoldThreadCounters();
}

void SyslogReceiver::ThreadMain() {
  // Up to kSyslogBatch datagrams per recvmmsg, each into its own 64 KiB of
  // batch_ (MSG_TRUNC: msg_len is the datagram's real size).
  mmsghdr msgs[kSyslogBatch];
  iovec iovs[kSyslogBatch];
  struct Control {
    alignas(cmsghdr) char bytes[CMSG_SPACE(sizeof(ucred))];
  } controls[kSyslogBatch];
  pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    for (unsigned i = 0; i < kSyslogBatch; i++) {
      iovs[i] = {batch_.data() + i * kMaxSyslogDatagram, kMaxSyslogDatagram};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iovs[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_control = controls[i].bytes;
      msgs[i].msg_hdr.msg_controllen = sizeof controls[i].bytes;
    }
    int n = recvmmsg(fd_, msgs, kSyslogBatch, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC, nullptr);
    if (n > 0) {
      for (int i = 0; i < n; i++) {
        uint32_t pid, uid, gid;
        bool have;
        TakeCredentials(&msgs[i].msg_hdr, &pid, &uid, &gid, &have);
        const size_t real = msgs[i].msg_len;
        Push(static_cast<const uint8_t *>(iovs[i].iov_base),
             uint32_t(std::min(real, kMaxSyslogDatagram)),
             uint32_t(std::min<size_t>(real, UINT32_MAX)), pid, uid, gid, have);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK) {
      fds[0].revents = fds[1].revents = 0;
      if (poll(fds, 2, -1) >= 0 || errno == EINTR) {
        if (fds[1].revents) return;
        continue;
      }
    } else {
      // Counted and logged by the loop.
      t_last_errno_.store(errno, std::memory_order_relaxed);
      t_read_errors_.fetch_add(1, std::memory_order_relaxed);
      uv_async_send(wake_);
    }
    // After an error (of recvmmsg or of poll) wait 10 ms for a stop only, so
    // that a lasting error is retried 100 times a second, not in a busy loop.
    pollfd stop{stop_fd_, POLLIN, 0};
    if (poll(&stop, 1, 10) > 0) return;
  }
}

void SyslogReceiver::Push(const uint8_t *p, uint32_t kept, uint32_t real, uint32_t pid,
                          uint32_t uid, uint32_t gid, bool have) {
  QueuedHeader h{kept, real, pid, uid, gid, have ? 1u : 0u};
  const size_t need = sizeof h + kept;
  bool wake;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!fill_.empty() && fill_.size() + need > kSyslogQueueBytes && !stop_) {
      t_queue_full_.fetch_add(1, std::memory_order_relaxed);
      // A stop does not wait for room: this datagram (and the rest of its
      // recvmmsg batch) is kept beyond the bound and stored at shutdown.
      room_.wait(lock, [&] { return fill_.empty() || stop_; });
    }
    const size_t at = fill_.size();
    // Wake the loop when the queue stops being empty and when it passes half
    // its size (the loop stores a small queue after a short delay).
    wake = at == 0 || (at < kSyslogQueueBytes / 2 && at + need >= kSyslogQueueBytes / 2);
    fill_.resize(at + need);
    std::memcpy(fill_.data() + at, &h, sizeof h);
    std::memcpy(fill_.data() + at + sizeof h, p, kept);
  }
  if (wake) uv_async_send(wake_);
}

void SyslogReceiver::FoldThreadCounters() {
  Counters &c = *ctx_->counters;
  if (uint64_t n = t_read_errors_.exchange(0, std::memory_order_relaxed)) {
    c.syslog_read_errors += n;
    ctx_->log_limit.Log(kLogKindWrite, spdlog::level::err, "syslog socket: recvmsg: {}",
                        strerror(t_last_errno_.load(std::memory_order_relaxed)));
  }
  c.syslog_queue_full += t_queue_full_.exchange(0, std::memory_order_relaxed);
}

size_t SyslogReceiver::DiscardQueued() {
  size_t n = 0;
  auto count = [&n](const std::vector<uint8_t> &v, size_t at) {
    while (at < v.size()) {
      QueuedHeader h;
      std::memcpy(&h, v.data() + at, sizeof h);
      at += sizeof h + h.kept;
      n++;
    }
  };
  count(store_, store_pos_);
  store_.clear();
  store_pos_ = 0;
  std::lock_guard<std::mutex> lock(mu_);
  count(fill_, 0);
  fill_.clear();
  return n;
}

bool SyslogReceiver::DrainQueue(size_t byte_budget, uint64_t slice_ns) {
  FoldThreadCounters();
  const uint64_t start = uv_hrtime();
  size_t bytes = 0;
  for (size_t n = 0; n < kSyslogDatagramsPerWakeup && bytes < byte_budget; n++) {
    if (n > 0 && uv_hrtime() - start >= slice_ns) break;
    if (store_pos_ == store_.size()) {
      store_.clear();
      store_pos_ = 0;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (fill_.empty()) return false;
        fill_.swap(store_);
      }
      room_.notify_one();
    }
    QueuedHeader h;
    std::memcpy(&h, store_.data() + store_pos_, sizeof h);
    const uint8_t *p = store_.data() + store_pos_ + sizeof h;
    store_pos_ += sizeof h + h.kept;
    bytes += std::max<size_t>(h.real, 1);
    Store(p, h.kept, h.real, h.pid, h.uid, h.gid, h.have != 0);
  }
  ctx_->counters->syslog_budget_yields++;
  return true;
}

}  // namespace logsink::daemon
