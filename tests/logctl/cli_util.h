// cli_util.h: helpers for the logctl integration tests: run the real logctl
// binary with pipes and a hang limit, follow its output line by line, and
// write ring files directly with storage's RingWriter.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "logsink/proto/codec.h"
#include "logsink/proto/printf.h"
#include "logsink/storage/ring.h"

namespace logctl_test {

using logsink::storage::Env;
using logsink::storage::RecordIn;
using logsink::storage::RingWriter;
using logsink::storage::Site;
using logsink::storage::Source;
using logsink::storage::Status;
using logsink::storage::WriterOptions;

inline const char *LogctlPath() { return LOGSINK_BIN_DIR "/logctl"; }
constexpr uint64_t kT0 = 1763892000000000000ull;  // 2025-11-23T10:00:00Z

inline int64_t MonoMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// A private temporary directory, removed with its files.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/logctl-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string File(const std::string &name) const { return path_ + "/" + name; }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

struct Result {
  int status = -1;  // exit status, or 128 + signal
  std::string out, err;
};

struct SpawnOptions {
  bool as_nobody = false;  // drop root privileges in the child
  std::string stdin_data;
};

// Starts logctl with args; stdout and stderr are pipes. TZ=UTC, no colour.
class Proc {
 public:
  Proc(const std::vector<std::string> &args, const SpawnOptions &opt = {}) {
    int out[2], err[2], in[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC)) abort();
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(err[1], 2);
      dup2(in[0], 0);
      setenv("TZ", "UTC", 1);
      unsetenv("NO_COLOR");
      unsetenv("LOGSINK_SOCKET");
      if (opt.as_nobody && geteuid() == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(126);
      }
      std::vector<char *> argv;
      argv.push_back(const_cast<char *>(LogctlPath()));
      for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    close(in[0]);
    out_ = out[0];
    err_ = err[0];
    if (!opt.stdin_data.empty()) {
      if (write(in[1], opt.stdin_data.data(), opt.stdin_data.size()) < 0) {
      }
    }
    close(in[1]);
  }
  ~Proc() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
    if (err_ >= 0) close(err_);
  }

  // Reads one stdout line (without '\n'). False after timeout_ms or EOF.
  bool ReadLine(std::string *line, int timeout_ms) {
    int64_t deadline = MonoMs() + timeout_ms;
    for (;;) {
      size_t nl = obuf_.find('\n');
      if (nl != std::string::npos) {
        line->assign(obuf_, 0, nl);
        obuf_.erase(0, nl + 1);
        return true;
      }
      int64_t left = deadline - MonoMs();
      if (left <= 0 || out_ < 0) return false;
      struct pollfd p = {out_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char b[65536];
      ssize_t n = read(out_, b, sizeof b);
      if (n <= 0) {
        close(out_);
        out_ = -1;
        continue;
      }
      obuf_.append(b, n);
    }
  }

  void Signal(int sig) { kill(pid_, sig); }

  // Collects the rest of stdout/stderr and the exit status (hang limit).
  Result Finish(int hang_ms = 30000) {
    Result r;
    r.out = obuf_;
    obuf_.clear();
    int64_t deadline = MonoMs() + hang_ms;
    while ((out_ >= 0 || err_ >= 0) && MonoMs() < deadline) {
      struct pollfd p[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
      if (poll(p, 2, 100) <= 0) continue;
      for (int k = 0; k < 2; k++) {
        int &fd = k == 0 ? out_ : err_;
        if (fd < 0 || !(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char b[65536];
        ssize_t n = read(fd, b, sizeof b);
        if (n <= 0) {
          close(fd);
          fd = -1;
        } else {
          (k == 0 ? r.out : r.err).append(b, n);
        }
      }
    }
    if (out_ >= 0 || err_ >= 0) {
      ADD_FAILURE() << "logctl did not finish within " << hang_ms << " ms";
      kill(pid_, SIGKILL);
    }
    int st = 0;
    waitpid(pid_, &st, 0);
    pid_ = -1;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return r;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  std::string obuf_;
};

inline Result RunLogctl(const std::vector<std::string> &args, const SpawnOptions &opt = {}) {
  Proc p(args, opt);
  return p.Finish();
}

inline std::vector<std::string> Lines(const std::string &s) {
  std::vector<std::string> v;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string::npos) nl = s.size();
    v.push_back(s.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return v;
}

// Encodes arguments like liblogsink does.
class Args {
 public:
  Args &i(int64_t v) { return Var(ls_zigzag(v)); }
  Args &u(uint64_t v) { return Var(v); }
  Args &s(const std::string &v) {
    Var(v.size());
    b_ += v;
    return *this;
  }
  Args &raw(const std::string &v) {
    b_ += v;
    return *this;
  }
  const std::string &bytes() const { return b_; }

 private:
  Args &Var(uint64_t v) {
    uint8_t t[LS_VARINT_MAX];
    b_.append(reinterpret_cast<char *>(t), ls_put_varint(t, v));
    return *this;
  }
  std::string b_;
};

// A ring file written directly with RingWriter.
class TestRing {
 public:
  // file_size defaults to 8 KiB superblocks + 4 KiB strings + 8 blocks of 4 KiB.
  explicit TestRing(const std::string &path, uint64_t file_size = 12288 + 8 * 4096,
                    uint32_t block_size = 4096)
      : path_(path) {
    WriterOptions o;
    o.file_size = file_size;
    o.block_size = block_size;
    o.strtab_size = 4096;
    Status s = RingWriter::Open(Env::Default(), path, o, &w_);
    EXPECT_TRUE(s.ok()) << s.ToString();
    src_.id = 1;
    src_.pid = 4242;
    src_.uid = 1000;
    src_.gid = 100;
    src_.app = "testapp";
    src_.comm = "testcomm";
  }

  RingWriter *writer() { return w_.get(); }
  Source &source() { return src_; }
  const std::string &path() const { return path_; }

  uint32_t Intern(uint8_t level, const std::string &fmt, uint32_t line = 10) {
    strings_.push_back(std::make_unique<std::string>(fmt));
    Site s;
    s.level = level;
    s.line = line;
    s.fmt = *strings_.back();
    s.file = "test.c";
    uint32_t id = w_->Intern(s);
    EXPECT_GT(id, 0u);
    return id;
  }

  // Appends a record of site id with the given signature and argument bytes.
  void Add(uint32_t site, const std::string &sig, const std::string &args, uint64_t ts,
           const Source *src = nullptr, uint64_t tid = 1) {
    RecordIn r;
    r.source = src ? src : &src_;
    r.tid = tid;
    r.site_id = site;
    r.signature = sig;
    r.ts_ns = ts;
    r.args = reinterpret_cast<const uint8_t *>(args.data());
    r.args_len = args.size();
    Status s = w_->Append(r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void Flush() {
    Status s = w_->Flush();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Close() {
    Flush();
    w_.reset();
  }

 private:
  std::string path_;
  std::unique_ptr<RingWriter> w_;
  Source src_;
  std::vector<std::unique_ptr<std::string>> strings_;
};

}  // namespace logctl_test
