// forwarder.cc: the loop of logsink-forward (see forwarder.h): the ring
// opened and positioned at the cursor, the loop's handles, Pump (what every
// wakeup does, in order), and the stop; the jobs Pump calls are in the files
// forwarder_impl.h lists.
#include "forwarder.h"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>

#include "forwarder_impl.h"
#include "logsink/storage/env.h"

namespace logsink::forward {

using storage::RingReader;
using storage::Status;

void SkipReporter::Corruption(uint64_t off, std::string_view reason) {
  ++c_->skipped_blocks;
  spdlog::warn("skipped a damaged part of the ring at offset {}: {}", off, reason);
}

Forwarder::Forwarder(const Options &o, std::unique_ptr<Sink> sink)
    : o_(o),
      sink_(std::move(sink)),
      reporter_(&c_),
      json_(render::OutputMode::kJson, false, true),
      text_(render::OutputMode::kShort, false, true),
      host_(HostName()) {
  std::string err;
  subject_.Parse(o_.subject, &err);  // checked by Finish(); RELP has none
  batching_ = o_.batch > 1;
  resumed_ = !batching_;
  filter_.levels = storage::RecordFilter::LevelRange(0, o_.max_level);
  filter_.apps = o_.apps;
}

bool Forwarder::OpenAndPosition() {
  Status s = RingReader::Open(storage::Env::Default(), o_.file, &reporter_, &reader_);
  if (!s.ok()) {
    spdlog::critical("cannot open the ring file {}: {}", o_.file, s.message());
    return false;
  }
  std::string err;
  ring_id_ = RingIdentity(o_.file, &err);
  if (ring_id_.empty()) {
    spdlog::critical("{}", err);
    return false;
  }
  RingReader::Summary sum;
  s = reader_->Summarize(&sum);
  bool empty = s.IsNotFound();
  uint64_t end = empty ? 0 : sum.newest_seq + 1;  // one past the newest record
  Position pos;
  int have = ReadPosition(o_.cursor_file, &pos, &err);
  if (have < 0) {
    spdlog::critical("{}", err);
    return false;
  }
  if (have == 1) {
    if (pos.ring_id != ring_id_) {
      spdlog::critical(
          "the cursor file {} belongs to another ring (id {}), not to {} (id {}); the ring was "
          "recreated or replaced: remove the cursor file to start over from --start",
          o_.cursor_file, pos.ring_id, o_.file, ring_id_);
      return false;
    }
    if (pos.next_seq > end) {
      spdlog::critical(
          "the cursor file {} points past the newest record of {} ({} > {}): refusing to guess; "
          "remove the cursor file to start over",
          o_.cursor_file, o_.file, pos.next_seq, end);
      return false;
    }
    read_next_ = pos.next_seq;
    committed_ = pos.next_seq;
    committed_valid_ = true;
    spdlog::info("resuming {} at record {} (cursor {})", o_.file, read_next_, o_.cursor_file);
  } else {
    read_next_ = o_.start == "end" || empty ? end : sum.oldest_seq;
    spdlog::info("no cursor yet: starting {} at record {} ({})", o_.file, read_next_, o_.start);
  }
  // From read_next_ on; records overwritten since show up as a gap.
  s = reader_->SeekSeq(read_next_);
  if (!s.ok()) {
    spdlog::critical("cannot read the ring file {}: {}", o_.file, s.message());
    return false;
  }
  return true;
}

void Forwarder::Pump() {
  TakeAcks();
  if (batching_) ResendAfterReconnect();
  Resend();
  Commit(false);
  if (!resumed_ && !draining_) TryResume();  // in slices: SIGTERM is served between them
  if (resumed_) Fill();
  if (draining_) EndDrainWhenDone();
}

// The drain ends once everything handed over is acknowledged, or at once
// when nothing more can be (RELP with no session open: none is opened
// while stopping); what is not acknowledged stays in the ring, the cursor
// before it, and is sent again on the next start.
void Forwarder::EndDrainWhenDone() {
  if (!std::all_of(window_.begin(), window_.end(), [](const Entry &e) { return e.acked; })) {
    if (sink_->CanStillAcknowledge()) return;
    if (!drain_cut_) {
      drain_cut_ = true;
      const size_t unacked = size_t(
          std::count_if(window_.begin(), window_.end(), [](const Entry &e) { return !e.acked; }));
      spdlog::warn(
          "stopping: no session with the destination, so {} messages cannot be acknowledged; "
          "they stay in the ring and are sent again on restart",
          unacked);
    }
  }
  Commit(true);
  Finish();
}

void Forwarder::BeginDrain() {
  if (draining_) return;
  draining_ = true;
  sink_->BeginDrain();
  spdlog::info("stopping: waiting up to {} ms for {} outstanding acknowledgments",
               o_.shutdown_timeout_ms, window_.size());
  uv_timer_start(
      &drain_,
      [](uv_timer_t *t) {
        Forwarder *f = Of(t);
        spdlog::warn(
            "shutdown timeout: {} messages not acknowledged; they will be sent again "
            "on restart",
            f->window_.size());
        f->Finish();
      },
      o_.shutdown_timeout_ms, 0);
  Pump();
}

// Stops the loop, after the cursor write in flight (if any) completed:
// the drain is over, its timeout no longer runs (nor reports one that did
// not happen), and a write held up by its fsyncs is said to be the wait.
void Forwarder::Finish() {
  uv_timer_stop(&drain_);
  if (commit_busy_ && !finish_pending_)
    spdlog::info("stopping: waiting for the cursor write in flight to complete");
  finish_pending_ = commit_busy_;
  if (!commit_busy_) uv_stop(&loop_);
}

int Forwarder::Run() {
  if (!OpenAndPosition()) return 1;
  uv_loop_init(&loop_);
  for (uv_handle_t *h : {(uv_handle_t *)&async_, (uv_handle_t *)&poll_, (uv_handle_t *)&status_,
                         (uv_handle_t *)&watchdog_, (uv_handle_t *)&drain_, (uv_handle_t *)&fsev_,
                         (uv_handle_t *)&sigterm_, (uv_handle_t *)&sigint_})
    h->data = this;
  uv_async_init(&loop_, &async_, [](uv_async_t *a) { Of(a)->Pump(); });
  async_.data = this;
  sink_->set_wake([this] { uv_async_send(&async_); });
  sink_->set_loop(&loop_);
  std::string err;
  if (!sink_->Start(&err)) {
    spdlog::critical("{}", err);
    fatal_ = true;
  }
  uv_timer_init(&loop_, &poll_);
  uv_timer_init(&loop_, &status_);
  uv_timer_init(&loop_, &watchdog_);
  uv_timer_init(&loop_, &drain_);
  uv_fs_event_init(&loop_, &fsev_);
  uv_signal_init(&loop_, &sigterm_);
  uv_signal_init(&loop_, &sigint_);
  for (uv_handle_t *h : {(uv_handle_t *)&poll_, (uv_handle_t *)&status_, (uv_handle_t *)&watchdog_,
                         (uv_handle_t *)&drain_, (uv_handle_t *)&fsev_, (uv_handle_t *)&sigterm_,
                         (uv_handle_t *)&sigint_})
    h->data = this;
  if (!fatal_) {
    uv_timer_start(
        &poll_, [](uv_timer_t *t) { Of(t)->Pump(); }, 0, o_.poll_interval_ms);
    uv_timer_start(
        &status_, [](uv_timer_t *t) { Of(t)->WriteStatus(); }, 0, 1000);
    uv_fs_event_start(
        &fsev_, [](uv_fs_event_t *h, const char *, int, int) { Of(h)->Pump(); }, o_.file.c_str(),
        0);
    uv_signal_start(
        &sigterm_, [](uv_signal_t *s, int) { Of(s)->BeginDrain(); }, SIGTERM);
    uv_signal_start(
        &sigint_, [](uv_signal_t *s, int) { Of(s)->BeginDrain(); }, SIGINT);
    uint64_t wd_usec = 0;
    if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec >= 2000)
      uv_timer_start(
          &watchdog_, [](uv_timer_t *) { sd_notify(0, "WATCHDOG=1"); }, 0, wd_usec / 2000);
    sd_notifyf(0, "READY=1\nSTATUS=forwarding %s to %s", o_.file.c_str(), o_.to.c_str());
    spdlog::info("forwarding {} (ring {}) to {}", o_.file, ring_id_, o_.to);
    uv_run(&loop_, UV_RUN_DEFAULT);
    sd_notify(0, "STOPPING=1");
  }
  // Late acknowledgments while the sink stops, then the final cursor.
  sink_->Stop(draining_ ? 1000 : 0);
  TakeAcks();
  Commit(true, true);
  WriteStatus();
  uv_walk(
      &loop_,
      [](uv_handle_t *h, void *) {
        if (!uv_is_closing(h)) uv_close(h, nullptr);
      },
      nullptr);
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
  spdlog::info("exiting: forwarded={} acked={} duplicates={} lost={} in_flight={} cursor={}",
               c_.forwarded, c_.acked, c_.duplicates, c_.lost, window_.size(), committed_);
  return fatal_ ? 1 : 0;
}

std::string RingIdentity(const std::string &ring_path, std::string *error) {
  std::unique_ptr<RingReader> r;
  Status s = RingReader::Open(storage::Env::Default(), ring_path, nullptr, &r);
  if (!s.ok()) {
    *error = "cannot open the ring file " + ring_path + ": " + s.message();
    return "";
  }
  std::string id = r->layout().RingIdHex();
  if (id.empty())
    *error = ring_path +
             " has no ring identity yet (a file from an older logsink): start logsinkd on it "
             "once, which gives it one, then start logsink-forward";
  return id;
}

int RunForwarder(const Options &o, std::unique_ptr<Sink> sink) {
  Forwarder f(o, std::move(sink));
  return f.Run();
}

}  // namespace logsink::forward
