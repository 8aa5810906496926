// common.h: what every logctl subcommand shares: error messages in one format
// ("logctl: <what>: <why>"), exit codes, the default ring and socket paths,
// and opening the ring file with a clear reason when it cannot be read.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "logsink/storage/ring.h"
#include "source.h"

namespace logsink::logctl {

enum Exit { kExitOk = 0, kExitError = 1, kExitUsage = 2 };

// Prints "logctl: <what>: <why>" to stderr.
void Error(const std::string &what, const std::string &why);
// Prints a warning line "logctl: warning: <text>" to stderr.
void Warn(const std::string &text);
// What a ring reader skipped, as every command prints it:
// "logctl: warning: PATH: offset OFF: REASON (skipped)".
void WarnSkipped(const std::string &path, uint64_t off, std::string_view reason);

// The ring file to read: file (--file) if not empty, else $LOGSINK_FILE if
// set and not empty, else the ring the daemon on socket (--socket, else
// $LOGSINK_SOCKET, else the default socket: see SocketPath) writes, asked
// with RING_REQ; when no daemon answers, ls_default_ring(), or the system
// ring if the per-user directory or ring does not exist and the system one
// does. A per-user directory that fails the safe-path rule
// (ls_user_dir_check) is refused: prints the reason and returns false.
// When the path is the daemon's answer, *daemon (if given) gets it, with the
// socket it came from in daemon->socket; else daemon->socket is left empty.
struct RingOrigin {
  std::string socket;  // the daemon's socket, "" when the path is not its answer
  std::array<uint8_t, 16> ring_id{};
};
bool RingPath(const std::string &file, const std::string &socket, std::string *path,
              RingOrigin *origin = nullptr);
// The daemon's socket: --socket, $LOGSINK_SOCKET or the default (see
// ls_client_socket). A default in a per-user directory that fails the
// safe-path rule is refused: prints the reason (or, with why, stores it
// there instead) and returns false.
bool SocketPath(const std::string &explicit_path, std::string *path, std::string *why = nullptr);

// Opens path for reading, once: the descriptor checked to be a regular file
// is the one the reader reads (never a FIFO swapped in after the check). On
// failure prints the reason (missing, permission denied, not a regular file,
// not a logsink ring file, corrupted) and returns kExitError; kExitOk on
// success.
int OpenRing(const std::string &path, storage::Reporter *reporter,
             std::unique_ptr<storage::RingReader> *out);

// The records to read: the ring file, or, when this user may not read it
// (EACCES) and the path is the ring the daemon named, the daemon, which
// sends this user's own records only (daemon_read.h). On failure prints the
// reason and returns kExitError.
int OpenSource(const std::string &path, const RingOrigin &origin, bool follow,
               storage::Reporter *reporter, std::unique_ptr<RecordSource> *out);

uint64_t NowNs();

// Switches for benchmarks and tests (bench/README.md), not for users: read
// from the environment here only. LOGSINK_NO_SKIP=1: read every block, never
// skipping one by its summary. LOGSINK_NO_INDEX=1: judge each block by the
// summary in its header only, never by the summary index (every block is
// read). LOGSINK_PLAIN_READ=1: read, render and match
// on one thread, every --grep pattern through regexec (the reference the
// fast path is compared with).
struct ReadSwitches {
  bool no_skip = false;
  bool no_index = false;
  bool plain = false;
};
const ReadSwitches &ReadSwitchesFromEnv();

}  // namespace logsink::logctl
