// process.h: child processes for tests and benchmarks: the build's binaries
// (bin/<name>), a subprocess with stdin/stdout/stderr pipes and hang limits,
// and waiting for a pid with a deadline. Every child starts with the
// environment variables that would redirect logsink or systemd cleared
// (LOGSINK_SOCKET, NOTIFY_SOCKET, LISTEN_*, WATCHDOG_*).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace logsink::test {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;
constexpr Ms kHang{10000};  // hang limit, never a performance bound

// Checks cond every `step` until it holds or limit passes; returns its last
// value. For conditions nothing signals (a counter, a file's contents).
bool WaitUntil(const std::function<bool()> &cond, Ms limit = kHang, Ms step = Ms(2));

// <build>/bin/<name>.
std::string BinPath(const std::string &name);

// Unsets LOGSINK_SOCKET, LOGSINK_LEVEL, NOTIFY_SOCKET, LISTEN_FDS, LISTEN_PID,
// LISTEN_FDNAMES, WATCHDOG_USEC and WATCHDOG_PID (in a child before exec).
void ClearInheritedEnvironment();

// An exit code, or 128 + the signal that ended the process.
int ExitStatus(int wait_status);

// CPU time (user + system, all threads) of process pid in seconds, from
// /proc/PID/stat; 0 when it cannot be read. For benchmarks.
double ProcessCpuSeconds(pid_t pid);

// Waits for pid up to limit; past it, SIGKILLs and reaps it and returns -1.
// A pid <= 0 (no child) returns -1 at once.
int WaitExit(pid_t pid, Ms limit = kHang);

struct ProcResult {
  int status = -1;  // exit code, 128 + signal, or -1 when it hung
  std::string out, err;
};

struct SubprocessOptions {
  std::string stdin_data;     // written, then stdin is closed
  bool keep_stdin = false;    // stdin stays open for WriteLine (after stdin_data)
  bool merge_stderr = false;  // stderr into the stdout pipe
  // Runs in the child just before exec (environment, fds, credentials).
  std::function<void()> child_setup;
};

// path args... with pipes for stdout and stderr.
class Subprocess {
 public:
  Subprocess(const std::string &path, const std::vector<std::string> &args,
             const SubprocessOptions &opt = {});
  ~Subprocess();  // SIGKILLs and reaps a child still running
  Subprocess(const Subprocess &) = delete;
  Subprocess &operator=(const Subprocess &) = delete;

  pid_t pid() const { return pid_; }
  // One stdout line without '\n'; false at EOF or after limit.
  bool ReadLine(std::string *line, Ms limit);
  // With keep_stdin: writes line and '\n' to its stdin (false when the child
  // no longer reads it); CloseStdin() gives it EOF.
  bool WriteLine(const std::string &line);
  void CloseStdin();
  void Signal(int sig);
  // Closes its stdin; then the rest of stdout/stderr and the exit status: a
  // child that does not close its output within limit is SIGKILLed and
  // reports -1 (hung()). Called again: status -1 and nothing else.
  ProcResult Finish(Ms limit = Ms(30000));
  bool hung() const { return hung_; }

 private:
  static bool WriteAll(int fd, const std::string &data);  // SIGPIPE kept from the caller

  pid_t pid_ = -1;
  int out_ = -1, err_ = -1, in_ = -1;
  bool hung_ = false;
  std::string obuf_;
};

// Runs path args... to completion (see Subprocess::Finish).
ProcResult RunProcess(const std::string &path, const std::vector<std::string> &args,
                      const SubprocessOptions &opt = {}, Ms limit = Ms(30000));

// The lines of s, without their '\n'.
std::vector<std::string> Lines(const std::string &s);

}  // namespace logsink::test
