// unix_socket.h: Unix-domain sockets for tests: connect to a path, bind one
// (a listener, or a datagram socket), all close-on-exec. -1 on failure.
#pragma once

#include <string>

namespace logsink::test {

int ConnectUnix(const std::string &path);
// A socket of type (SOCK_STREAM, SOCK_DGRAM) bound to path.
int BindUnix(const std::string &path, int type);
// A SOCK_STREAM socket bound to path and listening (backlog).
int ListenUnix(const std::string &path, int backlog = 16);

}  // namespace logsink::test
