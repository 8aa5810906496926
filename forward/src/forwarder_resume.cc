// forwarder_resume.cc: batches at start: which records past the cursor the
// stream already holds (its messages read back by the sink), checked
// against the ring, so that the forwarder resumes without a gap or a
// stored batch cut again (see forwarder_impl.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "forwarder_impl.h"

namespace logsink::forward {

using storage::RingReader;
using storage::Status;

// Batches are cut where the ring's end happened to be, so a restarted
// forwarder would cut them elsewhere: it first asks the stream which records
// past its cursor it already holds (a message's records are stored together
// or not at all), skips those and sends the rest, cutting batches so that
// none reaches into a stored range.
void Forwarder::TryResume() {
  std::vector<Sink::Range> ranges;
  std::string err;
  // Ranges read back already, waiting for a readable ring: not read again.
  int r = resume_ranges_held_
              ? 1
              : sink_->StoredRanges(ring_id_, read_next_, 2 * o_.window, &ranges, &err);
  if (resume_ranges_held_) ranges.swap(resume_ranges_);
  resume_ranges_held_ = false;
  if (r == 2) return;  // still reading (the sink wakes the loop)
  if (r < 0) {
    uint64_t now = NowMs();
    if (!resume_logged_ms_ || now - resume_logged_ms_ >= 10000) {
      spdlog::info("waiting to learn from NATS where the stream stopped: {}", err);
      resume_logged_ms_ = now;
    }
    return;
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Sink::Range &a, const Sink::Range &b) { return a.first < b.first; });
  if (!ranges.empty()) {
    // The ring must hold them: a stream ahead of the ring's newest record is
    // another ring's (or a bug), and skipping there would skip records.
    RingReader::Summary sum;
    Status st = reader_->Summarize(&sum);
    if (!st.ok()) {  // not readable now: try again with the same ranges
      resume_ranges_.swap(ranges);
      resume_ranges_held_ = true;
      uint64_t now = NowMs();
      if (!resume_logged_ms_ || now - resume_logged_ms_ >= 10000) {
        spdlog::info("checking the ring's range against the stream: {}", st.ToString());
        resume_logged_ms_ = now;
      }
      return;
    }
    // Every range is checked: a message on the subject carrying this ring's
    // id and a range the ring cannot have (past its newest record, or
    // ending before it begins) is not the forwarder's own (nobody else may
    // publish on its subject: see the man page), and trusting it would
    // skip records. A range reaching before the ring's oldest record is
    // possible (stored, then overwritten) and harmless: the reader starts
    // at the oldest one.
    std::vector<Sink::Range> kept;
    for (const Sink::Range &rg : ranges) {
      if (rg.first > rg.last || rg.last > sum.newest_seq) {
        spdlog::error(
            "the stream holds a message claiming records {}..{} of this ring, which holds "
            "records {}..{}: not the forwarder's own, ignored (nobody else may publish on {})",
            rg.first, rg.last, sum.oldest_seq, sum.newest_seq, o_.subject);
        continue;
      }
      kept.push_back(rg);
    }
    ranges.swap(kept);
  }
  resumed_ = true;
  skip_.clear();
  const uint64_t cursor = read_next_;
  uint64_t next = read_next_;
  size_t k = 0;
  for (; k < ranges.size() && ranges[k].first <= next; ++k)  // stored from the cursor on
    next = std::max(next, ranges[k].last + 1);
  for (; k < ranges.size(); ++k) {  // stored past a gap: skipped when the reader gets there
    if (!skip_.empty() && ranges[k].first <= skip_.back().last + 1)
      skip_.back().last = std::max(skip_.back().last, ranges[k].last);
    else
      skip_.push_back(ranges[k]);
  }
  if (!skip_.empty())
    spdlog::warn(
        "the stream holds records {}..{} of this ring but not all before them (from {} on): "
        "sending the missing ones, then going on after {}",
        skip_.front().first, skip_.back().last, next, skip_.back().last);
  if (next == cursor) return;
  spdlog::info("the stream already holds records up to {} (the cursor said {}): resuming at {}",
               next - 1, cursor, next);
  read_next_ = next;
  Status s = reader_->SeekSeq(read_next_);
  if (!s.ok()) spdlog::error("cannot read the ring file {}: {}", o_.file, s.message());
}

}  // namespace logsink::forward
