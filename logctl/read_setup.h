// read_setup.h: what the commands that read records (tail, cat, export,
// sites) share: the reporter of skipped blocks and lost records, -b's
// choice of a boot, and the end of their output.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common.h"
#include "logsink/storage/ring.h"
#include "options.h"
#include "out.h"
#include "source.h"

namespace logsink::logctl {

// Skipped blocks go to stderr; lost records go in-band to whoever listens.
class ReadReporter : public storage::Reporter {
 public:
  explicit ReadReporter(std::string path) : path_(std::move(path)) {}
  void Corruption(uint64_t off, std::string_view reason) override {
    WarnSkipped(path_, off, reason);
  }
  void Lost(uint64_t n) override {
    if (on_lost) on_lost(n);
  }
  std::function<void(uint64_t)> on_lost;

 private:
  std::string path_;
};

// What a reading command reads: the ring's path, the reporter of what the
// reader skips and loses (the source keeps a pointer to it), and the
// source itself (the file, or the daemon).
struct Reading {
  std::string path;
  std::unique_ptr<ReadReporter> rep;
  std::unique_ptr<RecordSource> source;
};

// Opens the ring o names (RingPath) from the file or through the daemon
// (OpenSource; follow: for -f). kExitOk, or an exit code after an error
// (printed).
int OpenReading(const Options &o, bool follow, Reading *out);

// -b: the boot o.boot names, added to the filter (records of other boots
// are not shown, and their blocks are skipped unread). kExitOk, or an error
// printed and its exit status when the ring holds no such boot (an empty
// ring followed with -f and the last boot asked: this machine's boot).
int SelectBoot(Options &o, RecordSource *r, const std::string &path);

// Whether lines are coloured: a short mode to a terminal, without
// --no-color or $NO_COLOR.
bool UseColor(const Options &o, bool tty);

// Flushes out; a write error other than a reader gone away (EPIPE) is
// printed as what's and returns kExitError, else kExitOk.
int FinishOutput(Out *out, const std::string &what);

}  // namespace logsink::logctl
