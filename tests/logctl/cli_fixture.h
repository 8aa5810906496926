// cli_fixture.h: the fixture of the logctl command tests (logctl_<command>_test.cc):
// a temp dir, rings of numbered records, the expected short line of a
// timestamp, and logctl run on a pseudo-terminal.
#pragma once

#include <poll.h>
#include <pty.h>

#include <string>
#include <utility>
#include <vector>

#include "cli_util.h"

namespace logsink::test {

constexpr uint64_t kMs = 1000000;

// The short output's timestamp of kT0 + ts_ms milliseconds, then rest.
inline std::string Line(uint64_t ts_ms, const std::string &rest) {
  char ts[64];
  snprintf(ts, sizeof ts, "2025-11-23T10:%02u:%02u.%03u000+0000 ", unsigned(ts_ms / 60000 % 60),
           unsigned(ts_ms / 1000 % 60), unsigned(ts_ms % 1000));
  return ts + rest;
}

class LogctlTest : public ::testing::Test {
 protected:
  // n records "n=<i>" at info level, 1 ms apart.
  void WriteNumbered(TestRing *ring, int n, int start = 0) {
    uint32_t site = ring->Intern(6, "n=%d");
    for (int i = start; i < start + n; i++)
      ring->Add(site, "i", Args().i(i).bytes(), kT0 + i * kMs);
  }
  // A ring with no records at r.ring; returns its path.
  std::string EmptyRing() {
    std::string f = dir_.File("r.ring");
    TestRing(f).Close();
    return f;
  }
  TempDir dir_;
};

// Runs logctl on a pseudo-terminal and returns what it printed there.
// LOGSINK_PAGER is "" (no pager) unless env sets it.
// stdout_to: when given, standard output goes to that file instead (standard
// error and input stay on the terminal).
inline std::string RunOnTerminal(const std::vector<std::string> &args, bool no_color_env,
                                 const std::vector<std::pair<std::string, std::string>> &env = {},
                                 const std::string &stdout_to = "",
                                 const std::string &binary = "") {
  const std::string logctl = binary.empty() ? LogctlPath() : binary;
  int master;
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    setenv("TZ", "UTC", 1);
    setenv("LOGSINK_PAGER", "", 1);
    unsetenv("LOGSINK_FILE");
    unsetenv("LESS");
    // Not under sudo unless the test says so (the pager's secure mode).
    for (const char *v : {"SUDO_UID", "PKEXEC_UID", "LOGSINK_PAGERSECURE"}) unsetenv(v);
    for (const auto &[k, v] : env) {
      if (k[0] == '-')
        unsetenv(k.c_str() + 1);  // "-NAME": unset NAME
      else
        setenv(k.c_str(), v.c_str(), 1);
    }
    if (no_color_env) {
      setenv("NO_COLOR", "1", 1);
    } else {
      unsetenv("NO_COLOR");
    }
    if (!stdout_to.empty()) {
      int fd = open(stdout_to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(126);
    }
    std::vector<char *> argv{const_cast<char *>(logctl.c_str())};
    for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  std::string out;
  auto deadline = Clock::now() + kHang;
  while (Clock::now() < deadline) {
    struct pollfd p = {master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char b[4096];
    ssize_t n = read(master, b, sizeof b);
    if (n <= 0) break;  // EIO once the child is gone
    out.append(b, n);
  }
  close(master);
  waitpid(pid, nullptr, 0);
  return out;
}

}  // namespace logsink::test
