// client_harness.h: helpers of liblogsink's integration tests: a temp
// directory, the real logsinkd started on a temp socket and ring file, and the
// ring read back with storage's RingReader into owned records.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "logsink/storage/ring.h"

namespace lsclient {

using Clock = std::chrono::steady_clock;
constexpr auto kHang = std::chrono::seconds(10);  // hang limit, never a performance bound

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/logsink-client-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (system(cmd.c_str()) != 0) {
    }
  }
  const std::string &path() const { return path_; }
  std::string operator/(const std::string &name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline bool CanConnect(const std::string &path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  bool ok = connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

// logsinkd on dir/logsink.sock and dir/logsink.ring.
class Daemon {
 public:
  explicit Daemon(const TempDir &dir)
      : dir_(dir), socket(dir / "logsink.sock"), ring(dir / "logsink.ring") {}
  ~Daemon() { Stop(SIGKILL); }

  // Starts it and waits until the socket accepts connections.
  bool Start() {
    std::string err = dir_ / ("logsinkd." + std::to_string(++starts_) + ".err");
    pid_ = fork();
    if (pid_ == 0) {
      int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(e, 1);
      dup2(e, 2);
      std::string bin = std::string(LOGSINK_BIN_DIR) + "/logsinkd";
      execl(bin.c_str(), bin.c_str(), "--socket", socket.c_str(), "--file", ring.c_str(), "--size",
            "4MiB", static_cast<char *>(nullptr));
      _exit(127);
    }
    auto deadline = Clock::now() + kHang;
    while (Clock::now() < deadline) {
      int st;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      if (CanConnect(socket)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  // Sends sig and waits until the process is gone.
  void Stop(int sig = SIGTERM) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    int st;
    auto deadline = Clock::now() + kHang;
    while (waitpid(pid_, &st, WNOHANG) != pid_) {
      if (Clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &st, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }

 private:
  const TempDir &dir_;
  pid_t pid_ = -1;
  int starts_ = 0;

 public:
  const std::string socket, ring;
};

// A record read back, with its own copies of the bytes.
struct Rec {
  bool dropped = false;
  uint64_t ts_ns = 0, tid = 0, source_id = 0;
  uint32_t pid = 0;
  std::string app, fmt, file;
  uint32_t line = 0;
  int level = -1;
  bool site_known = false;
  std::string args;
  uint64_t truncated = 0;
  uint64_t dropped_count = 0;
};

class QuietReporter : public logsink::storage::Reporter {
 public:
  void Corruption(uint64_t, std::string_view) override { corruptions++; }
  void Lost(uint64_t n) override { lost += n; }
  uint64_t corruptions = 0, lost = 0;
};

// All records of the ring file, oldest first (empty when it cannot be read).
inline std::vector<Rec> ReadRing(const std::string &path) {
  namespace st = logsink::storage;
  std::vector<Rec> out;
  QuietReporter rep;
  std::unique_ptr<st::RingReader> r;
  if (!st::RingReader::Open(st::Env::Default(), path, &rep, &r).ok()) return out;
  if (!r->SeekOldest().ok()) return out;
  st::Record rec;
  while (r->Next(&rec).ok()) {
    Rec x;
    x.dropped = rec.kind == st::Record::Kind::kDropped;
    x.ts_ns = rec.ts_ns;
    x.tid = rec.tid;
    x.source_id = rec.source_id;
    x.pid = rec.pid;
    x.app = std::string(rec.app);
    x.fmt = std::string(rec.site.fmt);
    x.file = std::string(rec.site.file);
    x.line = rec.site.line;
    x.level = rec.site.level;
    x.site_known = rec.site_known;
    x.args = std::string(rec.args);
    x.truncated = rec.truncated;
    x.dropped_count = rec.dropped_count;
    out.push_back(std::move(x));
  }
  return out;
}

// Reads the ring until pred holds (the daemon writes partial blocks on a
// timer) or the hang limit passes; returns the last read.
inline std::vector<Rec> WaitRing(const std::string &path,
                                 const std::function<bool(const std::vector<Rec> &)> &pred) {
  auto deadline = Clock::now() + kHang;
  std::vector<Rec> v;
  do {
    v = ReadRing(path);
    if (pred(v)) return v;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (Clock::now() < deadline);
  return v;
}

inline size_t CountFmt(const std::vector<Rec> &v, const std::string &fmt) {
  size_t n = 0;
  for (const auto &r : v) n += !r.dropped && r.fmt == fmt;
  return n;
}

inline uint64_t DroppedReported(const std::vector<Rec> &v) {
  uint64_t n = 0;
  for (const auto &r : v) n += r.dropped ? r.dropped_count : 0;
  return n;
}

}  // namespace lsclient
