// as_user.h: runs a piece of a test as another uid (the suite runs as root):
// a forked child drops to uid and gid `uid`, runs the function and hands its
// result (bytes) back through a pipe. For clients that must not be root:
// what the daemon stores or sends depends on the peer's SO_PEERCRED uid.
#pragma once

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/process.h"

namespace logsink::test {

// fn's result, or nullopt when the child could not drop its rights, failed
// or hung (killed after the hang limit). The child's supplementary groups
// are `groups` (none by default).
inline std::optional<std::string> RunAsUser(uint32_t uid, const std::function<std::string()> &fn,
                                            const std::vector<gid_t> &groups = {}) {
  int p[2];
  if (pipe(p) != 0) return std::nullopt;
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]);
    close(p[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    close(p[0]);
    if (setgroups(groups.size(), groups.data()) != 0 || setgid(uid) != 0 || setuid(uid) != 0)
      _exit(126);
    const std::string out = fn();
    size_t off = 0;
    while (off < out.size()) {
      ssize_t n = write(p[1], out.data() + off, out.size() - off);
      if (n <= 0) _exit(1);
      off += size_t(n);
    }
    _exit(0);
  }
  close(p[1]);
  std::string got;
  char buf[65536];
  for (;;) {
    ssize_t n = read(p[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got.append(buf, size_t(n));
  }
  close(p[0]);
  if (WaitExit(pid) != 0) return std::nullopt;
  return got;
}

}  // namespace logsink::test
