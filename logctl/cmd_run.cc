// cmd_run.cc: `logctl run -- CMD ARGS...`: runs CMD with its standard output
// and standard error connected to logsinkd as two text streams (PROTOCOL.md,
// "Text streams"), and exits with CMD's status. The child opens both
// connections itself, after fork and before exec, so the kernel names CMD's
// pid as the records' sender (SO_PEERCRED is taken at connect), the shape of
// journald's stdout streams.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "logsink/proto/frame.h"
#include "text_stream.h"

namespace logsink::logctl {
namespace {

constexpr int kConnectTimeoutMs = 10000;
constexpr int kExitCannotRun = 126;  // as the shell: found but could not be run
constexpr int kExitNotFound = 127;   // as the shell: no such command

volatile sig_atomic_t g_child = 0;

// SIGTERM and SIGHUP sent to logctl go to CMD, which decides what to do.
void Forward(int sig) {
  if (g_child > 0) kill(pid_t(g_child), sig);
}

// Writes the child's failure (code byte, then the reason) to the parent and exits.
[[noreturn]] void ChildFail(int pipe_fd, int code, const std::string &why) {
  std::string msg(1, char(code));
  msg += why;
  ssize_t ignored = write(pipe_fd, msg.data(), msg.size());
  (void)ignored;
  _exit(code);
}

// The signals logctl handles while CMD runs; blocked from before the fork
// until each side has set its dispositions, so none is lost or misrouted.
constexpr int kSignals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
struct SavedSignals {
  struct sigaction old[4];
  sigset_t mask;
};

// In the child: connect both streams, put them on 1 and 2, exec CMD with
// the signal dispositions logctl was started with (an ignored SIGHUP under
// nohup stays ignored).
[[noreturn]] void Child(const Options &o, const std::string &socket, const std::string &app,
                        int pipe_fd, const SavedSignals &saved) {
  signal(SIGPIPE, SIG_DFL);  // logctl ignores it; CMD must get the default
  for (size_t i = 0; i < 4; i++) sigaction(kSignals[i], &saved.old[i], nullptr);
  sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
  // The daemon reads the process name when it accepts a connection, which
  // may be before the exec: name the child after CMD already (as exec will).
  prctl(PR_SET_NAME, app.c_str());
  std::string why;
  unsigned fac = unsigned(o.send_facility);
  int out = OpenTextStream(
      socket, app,
      ls_hello_text_flags(unsigned(o.level_stdout), fac, LS_HELLO_STREAM_STDOUT, o.prio_prefix),
      kConnectTimeoutMs, &why);
  int err = out < 0 ? -1
                    : OpenTextStream(socket, app,
                                     ls_hello_text_flags(unsigned(o.level_stderr), fac,
                                                         LS_HELLO_STREAM_STDERR, o.prio_prefix),
                                     kConnectTimeoutMs, &why);
  if (out < 0 || err < 0) ChildFail(pipe_fd, kExitError, why);
  // dup2 clears close-on-exec on the copies; the originals go with the exec.
  if (dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0)
    ChildFail(pipe_fd, kExitError, std::string("dup2: ") + std::strerror(errno));
  std::vector<char *> argv;
  for (const std::string &w : o.words) argv.push_back(const_cast<char *>(w.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  int e = errno;
  ChildFail(pipe_fd, e == ENOENT ? kExitNotFound : kExitCannotRun,
            o.words[0] + ": " + std::strerror(e));
}

}  // namespace

int RunRun(Options &o) {
  std::string socket;
  if (!SocketPath(o.socket, &socket)) return kExitError;
  std::string app = o.send_app;
  if (app.empty()) {
    const std::string &cmd = o.words[0];
    size_t slash = cmd.rfind('/');
    app = slash == std::string::npos ? cmd : cmd.substr(slash + 1);
  }
  // Descriptors 0-2 are open (on /dev/null if logctl got them closed), so
  // the child's sockets never take those numbers and its dup2 onto 1 and 2
  // always makes copies without close-on-exec.
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDWR) != fd) {
      Error("run", std::string("/dev/null: ") + std::strerror(errno));
      return kExitError;
    }
  // The child reports a failure before or at exec through this pipe; a
  // successful exec closes it (close-on-exec) with nothing written.
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) != 0) {
    Error("run", std::string("pipe: ") + std::strerror(errno));
    return kExitError;
  }
  SavedSignals saved;
  sigset_t block;
  sigemptyset(&block);
  for (size_t i = 0; i < 4; i++) {
    sigaction(kSignals[i], nullptr, &saved.old[i]);
    sigaddset(&block, kSignals[i]);
  }
  sigprocmask(SIG_BLOCK, &block, &saved.mask);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
    Error("run", std::string("fork: ") + std::strerror(errno));
    return kExitError;
  }
  if (pid == 0) {
    close(pfd[0]);
    Child(o, socket, app, pfd[1], saved);
  }
  close(pfd[1]);
  g_child = pid;
  // As system(3): an interrupt from the terminal reaches CMD (same process
  // group), and logctl stays to report its status. SIGTERM and SIGHUP are
  // passed on, unless logctl was started with them ignored (nohup).
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  struct sigaction sa = {};
  sa.sa_handler = Forward;
  for (size_t i = 2; i < 4; i++)
    if (saved.old[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &sa, nullptr);
  sigprocmask(SIG_SETMASK, &saved.mask, nullptr);

  std::string failure;
  char buf[512];
  ssize_t k;
  while ((k = read(pfd[0], buf, sizeof buf)) != 0) {
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) break;
    failure.append(buf, size_t(k));
  }
  close(pfd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      Error("run", std::string("waitpid: ") + std::strerror(errno));
      return kExitError;
    }
  }
  if (!failure.empty()) {
    Error("run", failure.substr(1));
    return static_cast<unsigned char>(failure[0]);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitError;
}

}  // namespace logsink::logctl
