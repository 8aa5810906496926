// listener.h: the listening Unix socket: taken from systemd socket
// activation, or bound at a path after refusing to start over a live daemon
// and removing a stale socket file.
#pragma once

#include <sys/types.h>

#include <string>

namespace logsink::daemon {

struct Listener {
  int fd = -1;
  bool from_systemd = false;
  std::string path;  // the path we bound ("" under systemd)
  ino_t inode = 0;   // of the socket file we bound, to unlink only our own
};

enum class ListenError { kNone, kInUse, kOther };

// Opens the listening socket (non-blocking, close-on-exec). mode and group
// (a name, or "") are applied to a socket file we bind. On failure returns
// the kind of error and a message.
ListenError OpenListener(const std::string &path, unsigned mode, const std::string &group,
                         Listener *out, std::string *error);

// Removes the socket file if it is still the one we bound; closes the fd.
void CloseListener(Listener *l);

// Creates the directories leading to path (mode 0755). Returns 0 or -errno.
int MakeParentDirs(const std::string &path);

}  // namespace logsink::daemon
