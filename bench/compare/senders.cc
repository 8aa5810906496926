// senders.cc: the sender loops of compare_run (see senders.h).
#include "senders.h"

#include <errno.h>
#include <logsink/logsink.h>
#include <spdlog/async.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>

namespace logsink::compare {

int64_t MonoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

namespace {

// The three ints of a record, the same for every system.
inline int Port(uint64_t i) { return static_cast<int>(1024 + i % 60000); }
inline int Request(uint64_t i) { return static_cast<int>((i * 2654435761u) & 0x7fffffff); }

// liblogsink: LS_LOG into the client's per-thread buffer; the library's
// sender thread ships batches to logsinkd.
class LogsinkSender : public Sender {
 public:
  explicit LogsinkSender(ls_client *c) : c_(c) {}
  void Run(uint64_t first, uint64_t count) override {
    for (uint64_t i = first; i < first + count; i++)
      LS_LOG(c_, LS_INFO, "user %d logged in from port %d request %d", static_cast<int>(i), Port(i),
             Request(i));
    sent_.fetch_add(count);
  }
  void Finish(SenderResult *r) override {
    // ls_flush waits at most close_timeout_ms; a deep backlog may need more.
    for (int tries = 0; tries < 30 && ls_flush(c_) == -ETIMEDOUT; tries++) {
    }
    ls_stats st{};
    st.size = sizeof st;
    if (ls_get_stats(c_, &st) == 0) {
      r->dropped = st.dropped + st.errors;
      r->dropped_reported = st.dropped_reported;
    }
    ls_close(c_);
    r->sent = sent_.load();
  }

 private:
  ls_client *c_;
  std::atomic<uint64_t> sent_{0};
};

// syslog(3) as glibc sends it: "<PRI>Mmm dd hh:mm:ss TAG[PID]: msg", one
// datagram per record on a connected AF_UNIX SOCK_DGRAM socket, blocking.
class SyslogSender : public Sender {
 public:
  explicit SyslogSender(int fd) : fd_(fd), pid_(getpid()) {}
  ~SyslogSender() override {
    if (fd_ >= 0) close(fd_);
  }
  void Run(uint64_t first, uint64_t count) override {
    char buf[256], stamp[32] = "";
    time_t stamp_sec = 0;
    uint64_t dropped = 0;
    for (uint64_t i = first; i < first + count; i++) {
      time_t now = time(nullptr);
      if (now != stamp_sec) {  // glibc formats the time per call; cached per second here
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%h %e %T", &tm);
        stamp_sec = now;
      }
      int n = snprintf(buf, sizeof buf,
                       "<14>%s compare_run[%d]: user %d logged in from port %d request %d", stamp,
                       static_cast<int>(pid_), static_cast<int>(i), Port(i), Request(i));
      ssize_t w;
      do {
        w = send(fd_, buf, static_cast<size_t>(n), MSG_NOSIGNAL);
      } while (w < 0 && errno == EINTR);
      if (w < 0) dropped++;
    }
    sent_.fetch_add(count);
    dropped_.fetch_add(dropped);
  }
  void Finish(SenderResult *r) override {
    r->sent = sent_.load();
    r->dropped = dropped_.load();
  }

 private:
  int fd_;
  pid_t pid_;
  std::atomic<uint64_t> sent_{0}, dropped_{0};
};

// spdlog's async logger (one worker thread, default queue, block when full)
// with a timestamp + level pattern, writing its own file: no IPC at all.
class SpdlogSender : public Sender {
 public:
  explicit SpdlogSender(std::shared_ptr<spdlog::logger> l) : l_(std::move(l)) {}
  void Run(uint64_t first, uint64_t count) override {
    for (uint64_t i = first; i < first + count; i++)
      l_->info("user {} logged in from port {} request {}", static_cast<int>(i), Port(i),
               Request(i));
    sent_.fetch_add(count);
  }
  void Finish(SenderResult *r) override {
    l_->flush();
    l_.reset();
    spdlog::shutdown();  // joins the worker after it drained the queue
    r->sent = sent_.load();
  }

 private:
  std::shared_ptr<spdlog::logger> l_;
  std::atomic<uint64_t> sent_{0};
};

Sender *OpenLogsink(const Target &t, int *err) {
  ls_options o;
  ls_options_init(&o);
  // kLogsink keeps the defaults (LS_BLOCK_WHILE_DRAINING); the other one is
  // the previous default, which drops and counts when a thread's buffer is full.
  if (t.system == System::kLogsinkNonBlocking) o.blocking = LS_BLOCK_NEVER;
  if (t.send_delay_ms >= 0) o.send_delay_ms = unsigned(t.send_delay_ms);
  ls_client *c = ls_open(t.socket.c_str(), "compare", &o);
  if (!c) {
    *err = errno;
    return nullptr;
  }
  // Records logged before the background connect completes would be dropped.
  for (int i = 0; i < 1000; i++) {
    ls_stats st{};
    st.size = sizeof st;
    if (ls_get_stats(c, &st) == 0 && st.connected) return new LogsinkSender(c);
    usleep(10000);
  }
  ls_close(c);
  *err = ENOTCONN;
  return nullptr;
}

Sender *OpenSyslog(const Target &t, int *err) {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (fd < 0 || t.socket.size() >= sizeof a.sun_path) {
    *err = fd < 0 ? errno : ENAMETOOLONG;
    if (fd >= 0) close(fd);
    return nullptr;
  }
  memcpy(a.sun_path, t.socket.c_str(), t.socket.size() + 1);
  if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
    *err = errno;
    close(fd);
    return nullptr;
  }
  return new SyslogSender(fd);
}

Sender *OpenSpdlog(const Target &t, int *err) {
  try {
    spdlog::init_thread_pool(8192, 1);
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(t.out_file, true);
    auto l = std::make_shared<spdlog::async_logger>("compare", sink, spdlog::thread_pool(),
                                                    spdlog::async_overflow_policy::block);
    l->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
    return new SpdlogSender(std::move(l));
  } catch (const std::exception &) {
    *err = EIO;
    return nullptr;
  }
}

}  // namespace

Sender *OpenSender(const Target &t, int *err) {
  switch (t.system) {
    case System::kLogsink:
    case System::kLogsinkNonBlocking:
      return OpenLogsink(t, err);
    case System::kSyslog:
      return OpenSyslog(t, err);
    case System::kSpdlog:
      return OpenSpdlog(t, err);
  }
  *err = EINVAL;
  return nullptr;
}

}  // namespace logsink::compare
