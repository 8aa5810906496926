// daemon_proc.cc: logsinkd as a child process of a benchmark (see daemon_proc.h).
#include "daemon_proc.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace logsink::bench {

namespace {

bool CanConnect(const std::string &sock) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (sock.size() >= sizeof a.sun_path) {
    close(fd);
    return false;
  }
  memcpy(a.sun_path, sock.c_str(), sock.size() + 1);
  bool ok = connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

void SleepMs(int ms) {
  timespec ts{0, long(ms) * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace

bool DaemonProc::Start(const std::string &logsinkd, const std::string &sock,
                       const std::string &ring, uint64_t size_bytes,
                       const std::vector<std::string> &extra, std::string *err) {
  if (access(logsinkd.c_str(), X_OK) != 0) {
    *err = logsinkd + ": not found or not executable";
    return false;
  }
  std::vector<std::string> args = {
      logsinkd, "--socket", sock, "--file", ring, "--size", std::to_string(size_bytes)};
  args.insert(args.end(), extra.begin(), extra.end());
  pid_ = fork();
  if (pid_ < 0) {
    *err = std::string("fork: ") + strerror(errno);
    return false;
  }
  if (pid_ == 0) {
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  for (int i = 0; i < 1000; i++) {
    if (CanConnect(sock)) return true;
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *err = "logsinkd exited during start (status " + std::to_string(status) + ")";
      return false;
    }
    SleepMs(10);
  }
  *err = "logsinkd did not listen on " + sock + " within 10 s";
  Stop();
  return false;
}

int DaemonProc::Stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = -1;
  for (int i = 0; i < 1000; i++) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return status;
    }
    SleepMs(10);
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

}  // namespace logsink::bench
