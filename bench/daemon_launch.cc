// daemon_launch: logsinkd for the shell benchmarks (bench/lib/daemon.sh),
// started and stopped by tests/common's launcher (DaemonProcess), so that a
// shell benchmark and an integration test agree on when logsinkd is ready
// and how it is stopped:
//   ready   its sd_notify READY=1 on a private NOTIFY_SOCKET, within kHang
//           (10 s); exiting first, or not being ready by then (it is then
//           SIGKILLed), is a failure;
//   stop    SIGTERM, then up to kHang for it to exit, then SIGKILL.
//
// usage: daemon_launch ERR_FILE LOGSINKD [ARG...]
// Prints one line on standard output and closes it: "ready PID" (logsinkd's
// own PID) once it is ready, or "failed REASON" (exit 1). Then it stays in
// the foreground: SIGTERM or SIGINT stops logsinkd as above and exits with
// its status (see ExitStatus); when logsinkd exits on its own, so does this,
// with its status. logsinkd's standard output and error go to ERR_FILE.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "common/daemon_process.h"

using logsink::test::DaemonOptions;
using logsink::test::DaemonProcess;

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: daemon_launch ERR_FILE LOGSINKD [ARG...]\n");
    return 2;
  }
  // Block the signals that end the wait before there is a child to stop, so
  // that none is lost between Start() and sigwait().
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, nullptr);

  DaemonOptions opt;
  opt.stdout_path = opt.stderr_path = argv[1];
  opt.bin = argv[2];
  for (int i = 3; i < argc; i++) opt.args.push_back(argv[i]);
  // The child must not start with the parent's blocked signals.
  opt.child_setup = [] {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
  };
  DaemonProcess proc;
  std::string err;
  if (!proc.Start(opt, &err)) {
    printf("failed %s\n", err.c_str());
    return 1;
  }
  printf("ready %d\n", int(proc.pid()));
  fflush(stdout);
  fclose(stdout);  // the reader of the line sees its end here

  for (;;) {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig == SIGCHLD) {
      int st;
      // exit(), not return: proc's destructor would signal a reaped PID.
      if (waitpid(proc.pid(), &st, WNOHANG) == proc.pid()) exit(logsink::test::ExitStatus(st));
      continue;
    }
    int status = proc.Stop(SIGTERM);
    return status < 0 ? 1 : status;
  }
}
