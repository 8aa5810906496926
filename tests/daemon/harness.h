// harness.h: helpers of logsinkd's integration tests: a temp directory, the
// real logsinkd started as a child process, a protocol client over a real
// Unix socket, and the ring file read back with storage's RingReader.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "logsink/proto/frame.h"
#include "logsink/storage/ring.h"
#include "proto/wire_encoder.h"

namespace lstest {

using Clock = std::chrono::steady_clock;
constexpr auto kHang = std::chrono::seconds(10);  // hang limit, never a performance bound

inline std::string ReadAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string &path, const std::string &data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/logsinkd-test-XXXXXX";
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

struct ProcResult {
  int status = -1;  // exit code, or 128 + signal
  std::string out, err;
};

// Starts bin/<name> with args, stdout/stderr to files. Returns the pid.
// child_setup runs in the child just before exec (extra fds, environment).
inline pid_t Spawn(const std::vector<std::string> &args, const std::string &out_path,
                   const std::string &err_path, const std::function<void()> &child_setup = {}) {
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    unsetenv("LOGSINK_SOCKET");
    unsetenv("NOTIFY_SOCKET");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_PID");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    if (child_setup) child_setup();
    std::vector<char *> argv;
    std::string bin = std::string(LOGSINK_BIN_DIR) + "/logsinkd";
    argv.push_back(const_cast<char *>(bin.c_str()));
    for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Waits for pid with a hang limit; kills it (and reports -1) past the limit.
inline int WaitExit(pid_t pid, std::chrono::milliseconds limit = kHang) {
  auto deadline = Clock::now() + limit;
  int st;
  while (Clock::now() < deadline) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  return -1;
}

// Runs logsinkd to completion (--print-config, config errors, ...).
inline ProcResult RunDaemon(const TempDir &dir, const std::vector<std::string> &args,
                            const std::function<void()> &child_setup = {}) {
  std::string o = dir / "run.out", e = dir / "run.err";
  pid_t pid = Spawn(args, o, e, child_setup);
  ProcResult r;
  r.status = WaitExit(pid);
  r.out = ReadAll(o);
  r.err = ReadAll(e);
  return r;
}

inline int ConnectUnix(const std::string &path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// One client connection speaking the protocol.
class Client {
 public:
  explicit Client(const std::string &socket) : fd_(ConnectUnix(socket)) {}
  ~Client() {
    if (fd_ >= 0) close(fd_);
  }
  Client(const Client &) = delete;
  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool Send(const std::string &bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      off += size_t(n);
    }
    return true;
  }

  // Reads one whole frame (type + payload) within the hang limit.
  std::optional<std::pair<uint8_t, std::string>> ReadFrame() {
    std::string buf;
    auto deadline = Clock::now() + kHang;
    while (Clock::now() < deadline) {
      ls_frame f;
      ptrdiff_t r = ls_frame_parse(reinterpret_cast<const uint8_t *>(buf.data()), buf.size(),
                                   LS_FRAME_MAX, &f);
      if (r > 0)
        return std::make_pair(f.type,
                              std::string(reinterpret_cast<const char *>(f.payload), f.len));
      if (r < 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char tmp[65536];
      ssize_t n = recv(fd_, tmp, sizeof tmp, 0);
      if (n <= 0) return std::nullopt;
      buf.append(tmp, size_t(n));
    }
    return std::nullopt;
  }

  // True when the daemon closed the connection (EOF or reset) within the limit.
  bool WaitClosed() {
    auto deadline = Clock::now() + kHang;
    while (Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char tmp[4096];
      ssize_t n = recv(fd_, tmp, sizeof tmp, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    }
    return false;
  }

  // Sends STATS_REQ and returns the counters.
  std::map<std::string, uint64_t> Stats() {
    std::map<std::string, uint64_t> m;
    if (!Send(StatsReq())) return m;
    auto f = ReadFrame();
    if (!f || f->first != LS_F_STATS) return m;
    ls_stats_iter it;
    const auto *p = reinterpret_cast<const uint8_t *>(f->second.data());
    if (ls_stats_begin(p, f->second.size(), &it) < 0) return m;
    const char *name;
    size_t len;
    uint64_t v;
    while (ls_stats_next(&it, &name, &len, &v) == 1) m[std::string(name, len)] = v;
    return m;
  }

 private:
  int fd_;
};

// A running logsinkd on a temp socket and ring.
class Daemon {
 public:
  // extra: more flags; toml: written to a config file and passed with --config.
  explicit Daemon(const TempDir &dir, std::vector<std::string> extra = {}, std::string toml = "")
      : dir_(dir) {
    socket = dir / "logsink.sock";
    ring = dir / "logsink.ring";
    err_path = dir / ("logsinkd." + std::to_string(++starts_) + ".err");
    args_ = {"--socket", socket, "--file", ring, "--size", "1MiB", "--log-level", "info"};
    if (!toml.empty()) {
      std::string cfg = dir / "logsinkd.toml";
      WriteFile(cfg, toml);
      args_.push_back("--config");
      args_.push_back(cfg);
    }
    for (auto &a : extra) args_.push_back(a);
  }
  ~Daemon() {
    if (pid_ > 0) Stop(SIGKILL);
  }

  // Runs in the child before exec (see Spawn).
  std::function<void()> child_setup;

  // Starts it and waits until its socket accepts connections.
  bool Start() {
    pid_ = Spawn(args_, dir_ / "logsinkd.out", err_path, child_setup);
    auto deadline = Clock::now() + kHang;
    while (Clock::now() < deadline) {
      int st;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      int fd = ConnectUnix(socket);
      if (fd >= 0) {
        close(fd);
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  // Sends sig and returns the exit status (see WaitExit).
  int Stop(int sig = SIGTERM) {
    if (pid_ <= 0) return -1;
    kill(pid_, sig);
    int st = WaitExit(pid_);
    pid_ = -1;
    return st;
  }
  pid_t pid() const { return pid_; }
  std::string Stderr() const { return ReadAll(err_path); }

  std::string socket, ring, err_path;

 private:
  const TempDir &dir_;
  std::vector<std::string> args_;
  pid_t pid_ = -1;
  static inline int starts_ = 0;
};

// A record read back from the ring, with owned copies of its strings.
struct Got {
  logsink::storage::Record::Kind kind;
  uint64_t seq, ts_ns, tid, source_id;
  uint32_t pid, uid, gid;
  std::string app, comm, fmt, file;
  uint32_t line = 0;
  uint8_t level = 0;
  std::string args;
  uint64_t truncated = 0, dropped_count = 0, dropped_since_ns = 0;
};

class CountingReporter : public logsink::storage::Reporter {
 public:
  void Corruption(uint64_t, std::string_view reason) override {
    corruptions++;
    last = std::string(reason);
  }
  void Lost(uint64_t n) override { lost += n; }
  int corruptions = 0;
  uint64_t lost = 0;
  std::string last;
};

inline std::vector<Got> ReadRing(const std::string &path, CountingReporter *rep = nullptr) {
  using namespace logsink::storage;
  CountingReporter local;
  if (!rep) rep = &local;
  std::unique_ptr<RingReader> r;
  std::vector<Got> out;
  Status s = RingReader::Open(Env::Default(), path, rep, &r);
  if (!s.ok()) return out;
  if (!r->SeekOldest().ok()) return out;
  Record rec;
  while (r->Next(&rec).ok()) {
    Got g{rec.kind,
          rec.seq,
          rec.ts_ns,
          rec.tid,
          rec.source_id,
          rec.pid,
          rec.uid,
          rec.gid,
          std::string(rec.app),
          std::string(rec.comm),
          std::string(rec.site.fmt),
          std::string(rec.site.file),
          rec.site.line,
          rec.site.level,
          std::string(rec.args),
          rec.truncated,
          rec.dropped_count,
          rec.dropped_since_ns};
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace lstest
