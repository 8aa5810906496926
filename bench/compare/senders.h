// senders.h: the per-process sender loops of compare_run, one per system,
// each logging the same message shape ("user %d logged in from port %d
// request %d") the way an application would use that system.
#pragma once

#include <cstdint>
#include <string>

namespace logsink::compare {

enum class System { kLogsink, kLogsinkNonBlocking, kSyslog, kSpdlog };

// Where a sender logs to: the daemon's socket, or spdlog's output file.
struct Target {
  System system = System::kLogsink;
  std::string socket;      // logsink / syslog
  std::string out_file;    // spdlog: this process's file
  int send_delay_ms = -1;  // logsink: ls_options.send_delay_ms (-1: the default)
};

// What one sender process did; written through a pipe to the parent.
struct SenderResult {
  uint64_t sent = 0;              // calls made
  uint64_t dropped = 0;           // records the sender knows it lost (logsink stats, send errors)
  uint64_t dropped_reported = 0;  // logsink: of `dropped`, reported to the daemon
  int64_t loop_end_ns = 0;        // CLOCK_MONOTONIC after the last call returned
  int64_t done_ns = 0;            // CLOCK_MONOTONIC after flush/close (spdlog: file written)
  int error = 0;                  // 0 or a positive errno from setup
};

// A sender that has opened its connection / logger and waits for the start.
class Sender {
 public:
  virtual ~Sender() = default;
  // Logs records [first, first + count). Thread-safe: compare_run --threads
  // calls it from several threads at once, each with its own range.
  virtual void Run(uint64_t first, uint64_t count) = 0;
  // Flushes and closes; fills the result's counters.
  virtual void Finish(SenderResult *r) = 0;
};

// Opens the connection or logger (and for logsink waits until connected, up to
// 10 s). Returns nullptr and sets *err (positive errno) on failure.
Sender *OpenSender(const Target &t, int *err);

int64_t MonoNs();

}  // namespace logsink::compare
