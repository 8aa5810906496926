// netns.h: a Unix datagram socket whose kernel queue holds a chosen number
// of datagrams, whatever the host's setting: net.unix.max_dgram_qlen is per
// network namespace and fixed into a socket when it is made, so the socket
// is made in a fresh namespace with the value set there. Root uses
// unshare(CLONE_NEWNET); anyone else a new user namespace as well (where the
// kernel allows unprivileged ones). The socket's path stays reachable from
// every namespace (the lookup is by file).
#pragma once

#include <string>

namespace logsink::test {

// For a single-threaded process (a child after fork, before exec): moves it
// into a new network namespace whose max_dgram_qlen is qlen. Returns 0 or
// an errno value.
int EnterNetworkNamespace(int qlen);

// A Unix datagram socket bound to path, made in a new network namespace
// with max_dgram_qlen = qlen (a forked helper makes it and passes it back).
// Returns the descriptor (close-on-exec) or -1 with the reason in *err.
int BindDatagramWithQueue(const std::string &path, int qlen, std::string *err);

}  // namespace logsink::test
