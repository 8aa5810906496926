// pager.cc: starting and waiting for the pager (see pager.h).
#include "pager.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common.h"

namespace logsink::logctl {

namespace {

// Whether logctl runs set-uid or set-gid (or with file capabilities): the
// kernel's AT_SECURE, or ids that differ. Its environment is then the
// caller's, PATH included, so nothing in it may pick the program to run.
bool SetId() { return getauxval(AT_SECURE) != 0 || geteuid() != getuid() || getegid() != getgid(); }

}  // namespace

bool PagerSecure() {
  // Set-id: always; the caller's environment cannot turn it off.
  if (SetId()) return true;
  if (const char *v = std::getenv("LOGSINK_PAGERSECURE"); v && *v) {
    const std::string s = v;
    return !(s == "0" || s == "no" || s == "false" || s == "off");
  }
  // Privileges whose keys another user holds: sudo, pkexec.
  return std::getenv("SUDO_UID") || std::getenv("PKEXEC_UID");
}

void Pager::Start(bool at_end) {
  if (pid_ > 0 || !isatty(STDOUT_FILENO)) return;
  std::string cmd = "less";
  if (const char *p = std::getenv("LOGSINK_PAGER"))
    cmd = p;
  else if (const char *q = std::getenv("PAGER"))
    cmd = q;
  if (cmd.find_first_not_of(" \t") == std::string::npos || cmd == "cat") return;
  // Secure mode: only less, started without a shell and with LESSSECURE=1
  // (no shell escape "!", no editor "v", no log files, no LESSOPEN), never
  // a pager the environment names: under `sudo logctl` the pager would
  // otherwise hand out a root shell.
  const bool secure = PagerSecure();
  if (!secure && at_end) cmd += " +G";
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    Warn(std::string("cannot start the pager: ") + std::strerror(errno));
    return;
  }
  pid_t pid = fork();
  if (pid < 0) {
    Warn(std::string("cannot start the pager: ") + std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    if (dup2(fds[0], STDIN_FILENO) < 0) _exit(127);
    // Like journalctl: less quits when everything fits one screen (F), shows
    // colours (R), chops long lines (S), keeps the screen (X), a long prompt
    // (M) and quits on ^C (K), unless the user's LESS says otherwise.
    setenv("LESS", "FRSXMK", 0);
    if (secure) {
      setenv("LESSSECURE", "1", 1);
      for (const char *v :
           {"LESSOPEN", "LESSCLOSE", "LESSEDIT", "LESSKEYIN", "LESSKEY", "VISUAL", "EDITOR"})
        unsetenv(v);
      // Set-id, less is looked up in the system's directories only (sudo
      // and pkexec set a PATH of their own).
      if (SetId()) setenv("PATH", "/usr/bin:/bin", 1);
      if (at_end)
        execlp("less", "less", "+G", static_cast<char *>(nullptr));
      else
        execlp("less", "less", static_cast<char *>(nullptr));
      _exit(127);
    }
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  if (dup2(fds[1], STDOUT_FILENO) < 0) {
    Warn(std::string("cannot start the pager: ") + std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    return;
  }
  close(fds[0]);
  close(fds[1]);
  pid_ = pid;
}

void Pager::Finish() {
  if (pid_ <= 0) return;
  close(STDOUT_FILENO);  // the pager sees the end of its input
  int st;
  while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

}  // namespace logsink::logctl
