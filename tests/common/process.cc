// process.cc: subprocesses with pipes and deadlines (see process.h).
#include "common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace logsink::test {

bool WaitUntil(const std::function<bool()> &cond, Ms limit, Ms step) {
  auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (cond()) return true;
    pollfd none{-1, 0, 0};
    poll(&none, 1, int(step.count()));
  }
  return cond();
}

std::string BinPath(const std::string &name) { return std::string(LOGSINK_BIN_DIR) + "/" + name; }

void ClearInheritedEnvironment() {
  for (const char *v : {"LOGSINK_SOCKET", "LOGSINK_LEVEL", "NOTIFY_SOCKET", "LISTEN_FDS",
                        "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID"})
    unsetenv(v);
}

double ProcessCpuSeconds(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  FILE *f = fopen(path.c_str(), "re");
  if (!f) return 0;
  char buf[1024];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');  // comm may hold spaces: fields start after ')'
  unsigned long long ut = 0, st = 0;
  // After ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt
  // cmajflt utime stime
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
    return 0;
  return double(ut + st) / double(sysconf(_SC_CLK_TCK));
}

int ExitStatus(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

int WaitExit(pid_t pid, Ms limit) {
  // Not a child's pid: waitpid and kill would take -1 and 0 as "any child"
  // and "every process" (a SIGKILL to all the user may signal).
  if (pid <= 0) return -1;
  auto deadline = Clock::now() + limit;
  int st = 0;
  // A pidfd turns readable when the child exits: poll it instead of sleeping.
  int pfd = int(syscall(SYS_pidfd_open, pid, 0));
  for (;;) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    auto left = std::chrono::duration_cast<Ms>(deadline - Clock::now()).count();
    if (r < 0 || left <= 0) {
      if (pfd >= 0) close(pfd);
      if (r < 0) return -1;
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return -1;
    }
    if (pfd >= 0) {
      pollfd p{pfd, POLLIN, 0};
      poll(&p, 1, int(left));
    } else {
      pollfd none{-1, 0, 0};  // no pidfd (old kernel): re-check every 2 ms
      poll(&none, 1, 2);
    }
  }
  if (pfd >= 0) close(pfd);
  return ExitStatus(st);
}

Subprocess::Subprocess(const std::string &path, const std::vector<std::string> &args,
                       const SubprocessOptions &opt) {
  int out[2], err[2], in[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC)) abort();
  pid_ = fork();
  if (pid_ < 0) abort();
  if (pid_ == 0) {
    dup2(out[1], 1);
    dup2(opt.merge_stderr ? out[1] : err[1], 2);
    dup2(in[0], 0);
    ClearInheritedEnvironment();
    if (opt.child_setup) opt.child_setup();
    std::vector<char *> argv{const_cast<char *>(path.c_str())};
    for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  close(in[0]);
  out_ = out[0];
  err_ = err[0];
  in_ = in[1];
  if (!opt.stdin_data.empty()) {
    if (!WriteAll(in_, opt.stdin_data)) {
      // the child exited without reading: its status tells the test
    }
  }
  if (!opt.keep_stdin) CloseStdin();
}

bool Subprocess::WriteAll(int fd, const std::string &data) {
  sigset_t pipe_sig, old;
  sigemptyset(&pipe_sig);
  sigaddset(&pipe_sig, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += size_t(n);
  }
  // A SIGPIPE raised for this thread is taken before the mask goes back.
  timespec zero = {0, 0};
  while (sigtimedwait(&pipe_sig, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return off == data.size();
}

bool Subprocess::WriteLine(const std::string &line) {
  return in_ >= 0 && WriteAll(in_, line + "\n");
}

void Subprocess::CloseStdin() {
  if (in_ >= 0) close(in_);
  in_ = -1;
}

Subprocess::~Subprocess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) close(out_);
  if (err_ >= 0) close(err_);
  CloseStdin();
}

bool Subprocess::ReadLine(std::string *line, Ms limit) {
  auto deadline = Clock::now() + limit;
  for (;;) {
    size_t nl = obuf_.find('\n');
    if (nl != std::string::npos) {
      line->assign(obuf_, 0, nl);
      obuf_.erase(0, nl + 1);
      return true;
    }
    auto left = std::chrono::duration_cast<Ms>(deadline - Clock::now()).count();
    if (left <= 0 || out_ < 0) return false;
    pollfd p = {out_, POLLIN, 0};
    if (poll(&p, 1, int(left)) <= 0) continue;
    char b[65536];
    ssize_t n = read(out_, b, sizeof b);
    if (n <= 0) {
      close(out_);
      out_ = -1;
      continue;
    }
    obuf_.append(b, size_t(n));
  }
}

void Subprocess::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

ProcResult Subprocess::Finish(Ms limit) {
  CloseStdin();
  ProcResult r;
  if (pid_ <= 0) {  // finished before: its status was reported then
    r.status = -1;
    return r;
  }
  r.out = std::move(obuf_);
  obuf_.clear();
  auto deadline = Clock::now() + limit;
  while (out_ >= 0 || err_ >= 0) {
    auto left = std::chrono::duration_cast<Ms>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    if (poll(p, 2, int(left)) <= 0) continue;
    for (int k = 0; k < 2; k++) {
      int &fd = k == 0 ? out_ : err_;
      if (fd < 0 || !(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char b[65536];
      ssize_t n = read(fd, b, sizeof b);
      if (n <= 0) {
        close(fd);
        fd = -1;
      } else {
        (k == 0 ? r.out : r.err).append(b, size_t(n));
      }
    }
  }
  auto left = std::chrono::duration_cast<Ms>(deadline - Clock::now());
  r.status = WaitExit(pid_, std::max(left, Ms(1)));
  hung_ = r.status == -1;
  pid_ = -1;
  return r;
}

ProcResult RunProcess(const std::string &path, const std::vector<std::string> &args,
                      const SubprocessOptions &opt, Ms limit) {
  Subprocess p(path, args, opt);
  return p.Finish(limit);
}

std::vector<std::string> Lines(const std::string &s) {
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

}  // namespace logsink::test
