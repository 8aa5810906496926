// signals.h: the signals logsinkd's loop handles, listed once: SIGTERM and
// SIGINT stop it (a drain, then exit 0), SIGHUP reloads the configuration.
// main() holds them from its first line until Server::Run handles them, so
// that a stop asked for during startup is a clean stop; once the drain has
// closed the loop's handlers they are ignored, so that a second SIGTERM
// cannot kill the final flush.
#pragma once

#include <csignal>

namespace logsink::daemon {

inline constexpr int kLoopSignals[] = {SIGTERM, SIGINT, SIGHUP};

// Blocks them (main, before anything else).
void HoldLoopSignals();
// Unblocks them once the loop handles them: one that arrived meanwhile is
// delivered then.
void ReleaseLoopSignals();
// Their action becomes SIG_IGN (closing a loop's last handler of a signal
// restores its default action).
void IgnoreLoopSignals();

}  // namespace logsink::daemon
