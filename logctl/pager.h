// pager.h: journalctl's pager habit for tail and cat: on a terminal the
// output goes through $LOGSINK_PAGER, else $PAGER, else less (with
// LESS=FRSXMK when LESS is unset); an empty value or "cat" means none; and
// journalctl's secure mode (SYSTEMD_PAGERSECURE) under sudo.
#pragma once

#include <sys/types.h>

namespace logsink::logctl {

// Whether the pager runs in secure mode: always when logctl runs set-uid or
// set-gid (AT_SECURE, euid != uid, egid != gid; less is then looked up in
// /usr/bin:/bin only, not in the caller's PATH); else $LOGSINK_PAGERSECURE
// when set (0/no/false/off: not), else when logctl runs with privileges
// another user holds the keys to (SUDO_UID or PKEXEC_UID set). Then only
// less runs, with LESSSECURE=1 and without a shell; $LOGSINK_PAGER and
// $PAGER can only turn the pager off ("" or "cat").
bool PagerSecure();

class Pager {
 public:
  Pager() = default;
  Pager(const Pager &) = delete;
  Pager &operator=(const Pager &) = delete;
  ~Pager() { Finish(); }

  // Starts the pager when standard output is a terminal and one is
  // configured, and points standard output at it; at_end: start it at the
  // end (" +G" is appended to the command, which less reads as "go to the
  // end"). A pager that cannot be started is reported as a warning and the
  // output goes to the terminal.
  void Start(bool at_end);
  // Closes standard output (everything must be flushed) and waits for the
  // pager to exit. Nothing when none was started.
  void Finish();

 private:
  pid_t pid_ = -1;
};

}  // namespace logsink::logctl
