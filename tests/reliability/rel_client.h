// rel_client.h: the liblogsink load generators of the reliability tests, run
// in forked child processes (liblogsink on one side, the raw test harness of
// tests/daemon on the other).
#pragma once

#include <cstdint>

#define LSREL_CRASH_FMT "crash client %d seq %llu"
#define LSREL_LOAD_FMT "load client %d thread %d seq %llu"

namespace logsink::test {

// What a client process reports back through its result pipe.
struct ClientCounts {
  uint64_t calls;                                                      // LS_LOG calls made
  uint64_t logged, sent, dropped, dropped_reported, errors, connects;  // ls_get_stats
  double seconds;                                                      // how long it logged
};

// Logs LSREL_CRASH_FMT (id, 0, 1, 2, ...) in bursts of `burst` records with
// `pause_us` between them until stop_fd becomes readable (EOF), then flushes,
// writes its ClientCounts to res_fd and exits. Default (non-blocking) options,
// quick reconnects.
[[noreturn]] void CrashClientMain(int id, const char *socket, int burst, int pause_us, int stop_fd,
                                  int res_fd);

// Opens a client, waits for go_fd to reach EOF, then `threads` threads log
// LSREL_LOAD_FMT (id, thread, 0, 1, ...) in bursts of 64 with pause_us
// between them until run_ms passed or each logged cap records; flushes,
// writes its ClientCounts to res_fd and exits.
[[noreturn]] void LoadClientMain(int id, const char *socket, int threads, uint64_t cap, int run_ms,
                                 int pause_us, int go_fd, int res_fd);

}  // namespace logsink::test
