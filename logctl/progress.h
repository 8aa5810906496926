// progress.h: a progress line on standard error while logctl reads a large
// ring (export, cat, a --grep), only when standard error is a terminal (never
// in a pipe or a file) and the records do not go to that terminal (where they
// show the progress themselves, or a pager owns the screen):
// "logctl: export: 42% (1234567 of 2939000 records)",
// first drawn after 0.5 s, redrawn at most ten times a second, erased when
// the read ends. $LOGSINK_PROGRESS: "0" never, "1" from the first record
// (no 0.5 s wait); anything else or unset: as above.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace logsink::logctl {

class Progress {
 public:
  // what: the word after "logctl: " (export, cat, ...); output_on_terminal:
  // the records go to a terminal (directly or through the pager); unit:
  // what is counted.
  Progress(std::string what, bool output_on_terminal, std::string unit = "records");
  ~Progress();  // erases the line
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  bool enabled() const { return enabled_; }
  // The newest record's sequence number when the read starts: records come
  // in sequence order, so the share done is how far the current one is from
  // the first. Without it nothing is drawn.
  void set_last(uint64_t seq) {
    last_ = seq;
    have_last_ = true;
  }
  // The record with this sequence number was read. Cheap: looks at the
  // clock once every 4096 calls.
  void Update(uint64_t seq) {
    if (!enabled_ || !have_last_ || (++calls_ & 4095) != 1) return;
    Draw(seq);
  }

 private:
  void Draw(uint64_t seq);

  std::string what_, unit_;
  bool enabled_ = false, drawn_ = false, started_ = false, have_last_ = false;
  uint64_t first_ = 0, last_ = 0, calls_ = 0;
  std::chrono::steady_clock::time_point start_, next_;
};

}  // namespace logsink::logctl
