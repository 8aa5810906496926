// daemon_proc.h: starts the real logsinkd binary as a child process on a
// scratch socket and ring file for a benchmark, waits until it accepts
// connections, and stops it (SIGTERM, then waitpid).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace logsink::bench {

class DaemonProc {
 public:
  DaemonProc() = default;
  ~DaemonProc() { Stop(); }
  DaemonProc(const DaemonProc &) = delete;
  DaemonProc &operator=(const DaemonProc &) = delete;

  // Runs `logsinkd --socket sock --file ring --size size_bytes extra...` and
  // waits up to 10 s for the socket to accept. Returns false (with *err) if
  // the binary is missing, exits, or never listens.
  bool Start(const std::string &logsinkd, const std::string &sock, const std::string &ring,
             uint64_t size_bytes, const std::vector<std::string> &extra, std::string *err);
  // SIGTERM and wait (up to 10 s, then SIGKILL). Returns the exit status or -1.
  int Stop();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

}  // namespace logsink::bench
