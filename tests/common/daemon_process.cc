// daemon_process.cc: logsinkd as a child process (see daemon_process.h).
#include "common/daemon_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace logsink::test {

std::function<void()> SocketActivation(std::vector<int> fds) {
  return [fds] {
    // First above any descriptor the child may hold, then onto 3, 4, ...
    // (dup2 clears close-on-exec).
    std::vector<int> high;
    for (int fd : fds) high.push_back(fcntl(fd, F_DUPFD, 100));
    for (size_t i = 0; i < high.size(); i++) dup2(high[i], int(3 + i));
    setenv("LISTEN_FDS", std::to_string(fds.size()).c_str(), 1);
    setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
  };
}

NotifyListener::NotifyListener() {
  static std::atomic<unsigned> counter{0};
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  // Abstract names need no directory and vanish with the socket.
  std::string name = "logsink-test-notify/" + std::to_string(getpid()) + "/" +
                     std::to_string(counter++) + "/" +
                     std::to_string(Clock::now().time_since_epoch().count());
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (bind(fd_, reinterpret_cast<sockaddr *>(&a), len) < 0) {
    close(fd_);
    fd_ = -1;
    return;
  }
  address_ = "@" + name;
}

NotifyListener::~NotifyListener() {
  if (fd_ >= 0) close(fd_);
}

bool NotifyListener::WaitUntil(const std::function<bool(const std::string &)> &done, Ms limit) {
  auto deadline = Clock::now() + limit;
  for (;;) {
    auto left = std::chrono::duration_cast<Ms>(deadline - Clock::now()).count();
    if (left <= 0 || fd_ < 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, int(left)) <= 0) continue;
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) continue;
    messages_.emplace_back(buf, size_t(n));
    if (done(messages_.back())) return true;
  }
}

bool NotifyListener::WaitFor(const std::string &want, Ms limit) {
  return WaitUntil([&](const std::string &m) { return m.find(want) != std::string::npos; }, limit);
}

void NotifyListener::Drain() {
  char buf[4096];
  ssize_t n;
  while (fd_ >= 0 && (n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT)) > 0)
    messages_.emplace_back(buf, size_t(n));
}

std::string NotifyListener::Joined() const {
  std::string s;
  for (const auto &m : messages_) s += m + "|";
  return s;
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) Stop(SIGKILL);
}

namespace {
void RedirectTo(const std::string &path, int target) {
  if (path.empty()) return;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) _exit(126);
  dup2(fd, target);
  close(fd);
}
}  // namespace

bool DaemonProcess::Start(const DaemonOptions &opt, std::string *err, Ms limit) {
  exit_status_ = -1;
  if (access(opt.bin.c_str(), X_OK) != 0) {
    *err = opt.bin + ": not found or not executable";
    return false;
  }
  if (!notify_.ok()) {
    *err = "cannot bind a notify socket: " + std::string(strerror(errno));
    return false;
  }
  size_t seen = notify_.messages().size();
  pid_ = fork();
  if (pid_ < 0) {
    *err = std::string("fork: ") + strerror(errno);
    return false;
  }
  if (pid_ == 0) {
    RedirectTo(opt.stdout_path, 1);
    RedirectTo(opt.stderr_path, 2);
    ClearInheritedEnvironment();
    setenv("NOTIFY_SOCKET", notify_.address().c_str(), 1);
    if (opt.child_setup) opt.child_setup();
    std::vector<char *> argv{const_cast<char *>(opt.bin.c_str())};
    for (const auto &a : opt.args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  // READY=1 or the child's exit, whichever comes first: wait on the notify
  // socket in short slices and check the child between them.
  auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    for (size_t i = seen; i < notify_.messages().size(); i++)
      if (notify_.messages()[i].find("READY=1") != std::string::npos) return true;
    seen = notify_.messages().size();
    int st;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      exit_status_ = ExitStatus(st);
      *err = "logsinkd exited before it was ready (status " + std::to_string(exit_status_) + ")";
      return false;
    }
    notify_.WaitFor("READY=1", Ms(20));
  }
  *err = "logsinkd did not report READY=1 within " + std::to_string(limit.count()) + " ms";
  Stop(SIGKILL);
  return false;
}

int DaemonProcess::Stop(int sig, Ms limit) {
  if (pid_ <= 0) return -1;
  kill(pid_, sig);
  exit_status_ = WaitExit(pid_, limit);
  pid_ = -1;
  return exit_status_;
}

}  // namespace logsink::test
