// forwarder_impl.h: the Forwarder class that forwarder.h's RunForwarder
// runs, shared by the files of its jobs (included by them only):
//   forwarder.cc           the loop: positioning at start, handles, Pump,
//                          the stop
//   forwarder_messages.cc  records to messages (JSON, RFC 5424) and the
//                          forwarder's own notices (lost, oversize)
//   forwarder_fill.cc      following the ring into messages or batches
//   forwarder_window.cc    the window of unacknowledged messages: handing
//                          over, acknowledgments, resends, the cursor file
//   forwarder_resume.cc    batches: where the stream stopped, at start
//   forwarder_status.cc    the status file (rates, lag) and --status
// One class, not parts of their own: every job reads or moves the same
// window and the same reading position (docs/DESIGN.md, decision 31).
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cursor_file.h"
#include "forwarder.h"
#include "logsink/render/printer.h"
#include "logsink/storage/ring.h"
#include "options.h"
#include "sink.h"
#include "subject.h"

namespace logsink::forward {

inline uint64_t NowMs() { return uv_hrtime() / 1000000; }
inline uint64_t WallNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

constexpr uint64_t kMaxWindowBytes = 64ull << 20;  // a bound on bodies held for resending
// A batch's body at most (NATS' default max_payload is 1 MiB); a batch is
// closed at the first record that takes it past this.
constexpr size_t kMaxBatchBytes = 512u << 10;
constexpr uint64_t kCommitEveryMs = 200;

// Damaged blocks the reader skipped are counted and logged.
class SkipReporter : public storage::Reporter {
 public:
  explicit SkipReporter(ForwardCounters *c) : c_(c) {}
  void Corruption(uint64_t off, std::string_view reason) override;
  void Lost(uint64_t) override {}  // computed from the sequence numbers instead

 private:
  ForwardCounters *c_;
};

// A message in the window, from handing over until the cursor file is past
// it.
struct Entry {
  Message msg;
  uint64_t ts_ns = 0;  // the record's timestamp (lag in seconds)
  bool acked = false;
  bool unsent = false;  // to hand over (again) at resend_at_ms
  uint64_t resend_at_ms = 0;
  uint64_t backoff_ms = 0;
  bool replaced = false;  // its body is a notice already (ReplaceTooBig, ReplaceRefused)
  uint32_t refusals = 0;  // times the destination refused it (Ack::refused)
};

class Forwarder {
 public:
  Forwarder(const Options &o, std::unique_ptr<Sink> sink);

  int Run();

 private:
  // forwarder.cc
  bool OpenAndPosition();
  void Pump();
  void BeginDrain();
  void EndDrainWhenDone();
  void Finish();
  static Forwarder *Of(void *h) {
    return static_cast<Forwarder *>(static_cast<uv_handle_t *>(h)->data);
  }

  // forwarder_messages.cc
  bool Passes(const storage::Record &rec) const;
  Message Build(const storage::Record &rec);
  Message LostNotice(uint64_t first, uint64_t n);
  // A warning of the forwarder's own as an RFC 5424 message (RELP), with
  // the cursor it stands at.
  std::string SyslogNotice(const std::string &cursor, const std::string &text);
  std::string NoticeLine(const char *key, uint64_t count, uint64_t first, uint64_t last,
                         const std::string &text);
  std::string OversizeLine(uint64_t seq, size_t bytes, size_t limit);

  // forwarder_fill.cc
  void Fill();
  void FillBatches();
  void OpenBatch(uint64_t seq, uint64_t ts_ns);
  void AppendToBatch(const std::string &line, uint64_t first, uint64_t last);
  void AddLost(uint64_t first, uint64_t n, uint64_t ts_ns);
  bool FlushBatch();

  // forwarder_window.cc
  bool Hand(Entry *e);
  void ReplaceWithNotice(Entry *e, const char *key, const std::string &text);
  void ReplaceTooBig(Entry *e, const std::string &why);
  void ReplaceRefused(Entry *e, const std::string &why);
  void ResendAfterReconnect();
  void Resend();
  void TakeAcks();
  void LogNack(const Ack &a);
  void Commit(bool force, bool sync = false);
  void Committed(uint64_t next);

  // forwarder_resume.cc
  void TryResume();

  // forwarder_status.cc
  void WriteStatus();

  Options o_;
  // --level and --app as the one record filter (Passes).
  storage::RecordFilter filter_;
  std::unique_ptr<Sink> sink_;
  ForwardCounters c_;
  SkipReporter reporter_;
  render::Printer json_, text_;
  std::string host_, ring_id_;
  std::unique_ptr<storage::RingReader> reader_;
  std::deque<Entry> window_;
  uint64_t window_bytes_ = 0;
  size_t acked_front_ = 0;  // the first acked_front_ entries are acknowledged (Commit)
  uint64_t acked_front_bytes_ = 0;
  bool maybe_unsent_ = false;  // an entry may wait to be handed over again (Resend)
  uint64_t read_next_ = 0;     // the next record sequence number to read
  uint64_t committed_ = 0;     // what the cursor file holds
  bool committed_valid_ = false;
  uint64_t last_commit_ms_ = 0;
  uv_work_t commit_{};  // the cursor write in flight on the thread pool
  bool commit_busy_ = false, commit_ok_ = false, finish_pending_ = false;
  Position commit_pos_;
  std::string commit_err_;
  bool draining_ = false, fatal_ = false;
  bool drain_cut_ = false;  // the drain ended with messages unacknowledged (said once)
  std::string line_, msg_;
  SubjectTemplate subject_;
  // --batch > 1: records go into batch_ until it is full or the ring has no
  // more; batches start only once the stream said where it stopped.
  bool batching_ = false, resumed_ = true, batch_open_ = false;
  Entry batch_;
  size_t batch_limit_ = 0;  // the open batch's body at most (Sink::MaxBody; 0 = none known)
  uint64_t resume_logged_ms_ = 0;
  std::vector<Sink::Range> skip_;           // stored past a gap (TryResume), sorted
  std::vector<Sink::Range> resume_ranges_;  // read back, the ring not readable yet
  bool resume_ranges_held_ = false;
  uint64_t seen_reconnects_ = 0;
  // --status' rates, from one status write to the next.
  uint64_t rate_ms_ = 0, rate_next_ = 0, rate_end_ = 0;
  double out_rate_ = 0, in_rate_ = 0;
  bool behind_warned_ = false;
  std::string status_error_;  // the last status write failure logged
  // Refused acknowledgments are logged once a second, summed (a stream that
  // captures no subject refuses every record).
  uint64_t nack_logged_ms_ = 0, nacks_unlogged_ = 0;

  uv_loop_t loop_{};
  uv_async_t async_{};
  uv_timer_t poll_{}, status_{}, watchdog_{}, drain_{};
  uv_fs_event_t fsev_{};
  uv_signal_t sigterm_{}, sigint_{};
};

}  // namespace logsink::forward
