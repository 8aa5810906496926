// refusal.h: the REFUSE a daemon sent before it closed a connection whose
// request then could not be sent. Past its connection limits logsinkd
// answers a new connection with REFUSE and closes it before reading
// anything (PROTOCOL.md, "Errors"), so the client's first send may fail
// (EPIPE) with the daemon's reason already waiting to be read.
#pragma once

#include <string>

namespace logsink::logctl {

// After a send on fd failed because the peer closed the connection (EPIPE,
// ECONNRESET): reads, without waiting, what the peer sent before it closed.
// True with its *reason (as the daemon wrote it) when that is a REFUSE
// frame; false otherwise (nothing, or anything else).
bool WaitingRefusal(int fd, std::string *reason);

}  // namespace logsink::logctl
