// daemon_process.h: the real logsinkd as a child process, the one launcher
// of tests and benchmarks. Start() gives it a private NOTIFY_SOCKET and
// waits for its sd_notify READY=1 (sent once the ring is open and the socket
// listens) or its exit; Stop() sends a signal and waits with a deadline, then
// SIGKILLs. The notify messages stay readable for tests of that protocol.
// Daemon is the tests' shape of it: everything in one TempDir.
// The readiness rule, the one of every launcher of logsinkd: ready when a
// message on its private NOTIFY_SOCKET contains READY=1; exiting first, or
// not being ready within kHang (process.h, 10 s), is a failure (then it is
// SIGKILLed); stopped by its PID with SIGTERM, up to kHang, then SIGKILL.
// The shell benchmarks use this code (bench/daemon_launch.cc, through
// bench/lib/daemon.sh); the Python tests (python/tests/harness.py) apply the
// same rule with the same constant (HANG = 10 s).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/temp_dir.h"

namespace logsink::test {

// A datagram socket in the abstract namespace for sd_notify messages.
class NotifyListener {
 public:
  NotifyListener();
  ~NotifyListener();
  NotifyListener(const NotifyListener &) = delete;
  NotifyListener &operator=(const NotifyListener &) = delete;

  bool ok() const { return fd_ >= 0; }
  const std::string &address() const { return address_; }  // "@..." for NOTIFY_SOCKET
  // Receives messages until one contains want, within limit; every message
  // received is appended to messages().
  bool WaitFor(const std::string &want, Ms limit = kHang);
  // Receives until done(message) holds or limit passes.
  bool WaitUntil(const std::function<bool(const std::string &)> &done, Ms limit = kHang);
  // Takes the messages already queued, without waiting.
  void Drain();
  const std::vector<std::string> &messages() const { return messages_; }
  std::string Joined() const;  // "msg|msg|..."

 private:
  int fd_ = -1;
  std::string address_;
  std::vector<std::string> messages_;
};

// A child_setup that passes fds to the child as systemd's socket activation
// does: onto descriptors 3, 4, ... in this order, with LISTEN_FDS and
// LISTEN_PID set (the fds stay open in the caller).
std::function<void()> SocketActivation(std::vector<int> fds);

struct DaemonOptions {
  std::string bin = BinPath("logsinkd");
  std::vector<std::string> args;
  std::string stdout_path, stderr_path;  // "" = inherit
  // Runs in the child just before exec, after the environment is cleared
  // and NOTIFY_SOCKET set (extra fds, LISTEN_FDS, WATCHDOG_USEC, ...).
  std::function<void()> child_setup;
};

class DaemonProcess {
 public:
  DaemonProcess() = default;
  ~DaemonProcess();  // SIGKILL if still running
  DaemonProcess(const DaemonProcess &) = delete;
  DaemonProcess &operator=(const DaemonProcess &) = delete;

  // Starts it and waits (up to limit) for READY=1. False with *err when the
  // binary cannot run, exits first (its status in exit_status()) or never
  // gets ready (then it is killed).
  bool Start(const DaemonOptions &opt, std::string *err, Ms limit = kHang);
  // Sends sig and waits up to limit; returns the exit status (see
  // ExitStatus), or -1 when it had to be SIGKILLed or was not running.
  int Stop(int sig = SIGTERM, Ms limit = kHang);
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  int exit_status() const { return exit_status_; }
  NotifyListener &notify() { return notify_; }

 private:
  pid_t pid_ = -1;
  int exit_status_ = -1;
  NotifyListener notify_;
};

// The tests' logsinkd: on dir/logsink.sock and dir/logsink.ring (1 MiB
// unless extra says otherwise: later flags win), stdout and stderr in files
// of dir. Start() failing leaves the reason at the end of Stderr().
class Daemon {
 public:
  // extra: more flags; toml: written to a config file and passed with --config.
  explicit Daemon(const TempDir &dir, std::vector<std::string> extra = {}, std::string toml = "")
      : socket(dir / "logsink.sock"), ring(dir / "logsink.ring") {
    err_path = dir / ("logsinkd." + std::to_string(++starts_) + ".err");
    opt_.stdout_path = dir / "logsinkd.out";
    opt_.stderr_path = err_path;
    opt_.args = {"--socket", socket, "--file", ring, "--size", "1MiB", "--log-level", "info"};
    if (!toml.empty()) {
      std::string cfg = dir / "logsinkd.toml";
      WriteFile(cfg, toml);
      opt_.args.push_back("--config");
      opt_.args.push_back(cfg);
    }
    for (auto &a : extra) opt_.args.push_back(a);
  }

  // Runs in the child before exec (see DaemonOptions).
  std::function<void()> child_setup;

  // Starts it and waits until it reports READY=1.
  bool Start() {
    opt_.child_setup = child_setup;
    std::string err;
    bool ok = proc_.Start(opt_, &err);
    if (!ok) WriteFile(err_path, ReadFile(err_path) + "\n[harness] " + err + "\n");
    return ok;
  }
  // Sends sig and returns the exit status (see WaitExit).
  int Stop(int sig = SIGTERM) { return proc_.Stop(sig); }
  pid_t pid() const { return proc_.pid(); }
  std::string Stderr() const { return ReadFile(err_path); }
  NotifyListener &notify() { return proc_.notify(); }
  int exit_status() const { return proc_.exit_status(); }

  std::string socket, ring, err_path;

 private:
  DaemonOptions opt_;
  DaemonProcess proc_;
  static inline int starts_ = 0;
};

}  // namespace logsink::test
