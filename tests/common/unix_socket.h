// unix_socket.h: Unix-domain sockets for tests: connect to a path, bind one
// (a listener, or a datagram socket), all close-on-exec. -1 on failure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "logsink/proto/frame.h"

namespace logsink::test {

int ConnectUnix(const std::string &path);
// A socket of type (SOCK_STREAM, SOCK_DGRAM) bound to path.
int BindUnix(const std::string &path, int type);
// A SOCK_STREAM socket bound to path and listening (backlog).
int ListenUnix(const std::string &path, int backlog = 16);
// Sends one datagram to path from this process (a 1 MiB send buffer, so a
// large one fits); true when sent whole.
bool SendDatagram(const std::string &path, const std::string &bytes);

// Sends len bytes on the connected socket sock in one sendmsg, with the
// descriptor fd as SCM_RIGHTS (none when fd < 0); true when all were sent.
bool SendWithFd(int sock, const void *bytes, size_t len, int fd);

// For a test that plays the daemon: accepts a connection on lfd within
// the hang limit (process.h's kHang; -1 when none came), and reads one
// frame from fd within it into *f, its bytes in *buf, one byte at a time
// so that nothing past the frame is taken (false on a timeout, EOF or a
// malformed frame).
int AcceptWithin(int lfd);
bool ReadFrameWithin(int fd, std::vector<uint8_t> *buf, ls_frame *f);

}  // namespace logsink::test
