// listener.h: the daemon's Unix sockets: the listening stream socket
// clients connect to and the optional syslog datagram socket. Each is taken
// from systemd socket activation, or bound at a path after refusing to start
// over a live receiver and removing a stale socket file.
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

// The sockets systemd passed (LISTEN_FDS), told apart by type: one listening
// Unix stream socket (required when any is passed) and at most one Unix
// datagram socket; anything else is an error. -1 when not passed.
struct Activated {
  int stream = -1;
  int dgram = -1;
};

// Takes the sockets from systemd once (unsetting LISTEN_FDS). False with a
// message when they are not of that shape.
bool TakeActivatedSockets(Activated *out, std::string *error);

// Opens a socket of type SOCK_STREAM (listening) or SOCK_DGRAM, non-blocking
// and close-on-exec: the activated fd when it is >= 0, else one bound at
// path, with mode and group (a name, or "") applied to the socket file. On
// failure returns the kind of error and a message.
ListenError OpenSocket(const std::string &path, int type, unsigned mode, const std::string &group,
                       int activated, Listener *out, std::string *error);

// The stream socket: TakeActivatedSockets, then OpenSocket(SOCK_STREAM).
ListenError OpenListener(const std::string &path, unsigned mode, const std::string &group,
                         Listener *out, std::string *error);

// Removes the socket file if it is still the one we bound (new connects
// then fail; those already queued can still be accepted). Once only.
void UnlinkListener(Listener *l);
// UnlinkListener, then closes the fd (not one systemd passed).
void CloseListener(Listener *l);

// Creates the directories leading to path (mode 0755). Returns 0 or -errno.
int MakeParentDirs(const std::string &path);

}  // namespace logsink::daemon
