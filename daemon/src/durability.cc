// durability.cc: the flush timer, the fsync timer and fdatasync (see durability.h).
#include "durability.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace logsink::daemon {

// Records become visible to readers (tail -f) as soon as writing the
// partial block is cheap enough: the next write waits kFlushCostFactor times
// what the last one cost (rewriting a partial block compresses all of it),
// at least flush_min_interval (1 ms) and at most flush_interval. So partial-block
// writes take at most 1/(1 + kFlushCostFactor) of the loop's time: a record
// logged at a low rate shows within a few milliseconds, and a busy daemon
// writes its large partial blocks rarely (sealed blocks are written when
// they seal, whatever this says).
constexpr uint64_t kFlushCostFactor = 49;

Durability::~Durability() {
  if (sync_fd_ >= 0) close(sync_fd_);
}

// fdatasync runs on a second, read-only descriptor of the ring file from
// libuv's thread pool; fdatasync acts on the file, whichever fd names it,
// and the writer's own state is never touched off the loop thread.
void Durability::OpenSyncFile() {
  sync_fd_ = open(cfg_->ring_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (sync_fd_ < 0)
    spdlog::warn("cannot open {} for fdatasync: {}", cfg_->ring_file, strerror(errno));
}

void Durability::Start(uv_loop_t *loop) {
  loop_ = loop;
  for (uv_timer_t *t : {&flush_timer_, &fsync_timer_}) {
    uv_timer_init(loop_, t);
    t->data = this;
  }
  // flush_timer_ is one-shot, armed by AfterWrites() when records wait.
  if (ctx_->write_wake && ctx_->writer->io_lock()) {
    uv_async_init(loop_, &written_, OnWritten);
    written_.data = this;
    ctx_->write_wake->Attach(&written_);
    wake_attached_ = true;
  }
  StartFsyncTimer();
  sync_policy_.Reset(cfg_->fsync, ctx_->writer->stats());
}

void Durability::StartFsyncTimer() {
  if (cfg_->fsync == config::FsyncPolicy::kInterval)
    uv_timer_start(&fsync_timer_, OnFsyncTimer, cfg_->fsync_interval_ms, cfg_->fsync_interval_ms);
}

void Durability::Reload() {
  uv_timer_stop(&fsync_timer_);
  StartFsyncTimer();
  sync_policy_.Reset(cfg_->fsync, ctx_->writer->stats());
  if (uv_is_active(reinterpret_cast<uv_handle_t *>(&flush_timer_))) FlushWhenDue();  // new gap
}

void Durability::Close() {
  for (uv_timer_t *t : {&flush_timer_, &fsync_timer_})
    uv_close(reinterpret_cast<uv_handle_t *>(t), nullptr);
  if (wake_attached_) {
    ctx_->write_wake->Attach(nullptr);
    uv_close(reinterpret_cast<uv_handle_t *>(&written_), nullptr);
    wake_attached_ = false;
  }
}

void Durability::OnWritten(uv_async_t *a) {
  // The turn this wakeup makes runs OnBeforeWait: followers read on.
  CountWriterErrors(static_cast<Durability *>(a->data)->ctx_);
}

void CountWriterErrors(Context *ctx) {
  std::string why;
  if (const uint64_t n = ctx->writer->TakeErrors(&why)) {
    ctx->counters->write_errors += n;
    ctx->log_limit.Log(kLogKindWrite, spdlog::level::err, "writing failed ({} times): {}", n, why);
  }
}

uint64_t Durability::FlushGapNs() const {
  return std::min(
      cfg_->flush_interval_ms * 1000000,
      std::max(cfg_->flush_min_interval_ms * 1000000, kFlushCostFactor * last_flush_cost_ns_));
}

// Writes the partial block now if its gap has passed, else arms the timer
// for when it will have (libuv timers count in ms from the loop's cached
// time, which may lag: OnFlushTimer checks again).
void Durability::FlushWhenDue() {
  const uint64_t now = uv_hrtime(), due = last_flush_end_ns_ + FlushGapNs();
  if (now >= due) {
    FlushNow();
    return;
  }
  uv_update_time(loop_);
  uv_timer_start(&flush_timer_, OnFlushTimer, (due - now + 999999) / 1000000, 0);
}

void Durability::AfterWrites() {
  storage::RingWriter *writer = ctx_->writer;
  if (writer->dirty() && !uv_is_active(reinterpret_cast<uv_handle_t *>(&flush_timer_)))
    FlushWhenDue();
  if (sync_policy_.policy() == config::FsyncPolicy::kBlock && sync_policy_.Due(writer->stats()))
    RequestSync();
  if (sync_waits_ && writer->written() >= sync_mark_) {
    sync_waits_ = false;
    if (sync_policy_.Due(writer->stats())) RequestSync();
  }
}

void Durability::OnFlushTimer(uv_timer_t *t) {
  auto *d = static_cast<Durability *>(t->data);
  if (d->ctx_->writer->dirty()) d->FlushWhenDue();
}

void Durability::FlushNow() {
  uv_timer_stop(&flush_timer_);
  const uint64_t start = uv_hrtime();
  const bool thread = ctx_->writer->io_lock() != nullptr;
  storage::Status st = ctx_->writer->Post();  // Flush() without the thread
  last_flush_end_ns_ = uv_hrtime();
  last_flush_cost_ns_ = last_flush_end_ns_ - start;
  if (thread) {
    CountWriterErrors(ctx_);  // the thread's, st among them: counted once
    return;
  }
  if (!st.ok()) {
    ctx_->counters->write_errors++;
    ctx_->log_limit.Log(kLogKindWrite, spdlog::level::err, "flush failed: {}", st.message());
  }
}

// What the sync is for is written before it. With the writer thread the
// loop does not wait for that write: the sync is asked for once the
// thread has done what was handed to it before the timer fired
// (AfterWrites, each turn).
void Durability::OnFsyncTimer(uv_timer_t *t) {
  auto *d = static_cast<Durability *>(t->data);
  storage::RingWriter *writer = d->ctx_->writer;
  if (writer->dirty()) d->FlushNow();
  if (writer->io_lock()) {
    d->sync_mark_ = writer->Mark();
    d->sync_waits_ = true;
    return;
  }
  if (d->sync_policy_.Due(writer->stats())) d->RequestSync();
}

void Durability::RequestSync() {
  if (sync_fd_ < 0) return;
  if (sync_in_flight_) {
    sync_again_ = true;
    return;
  }
  sync_in_flight_ = true;
  sync_again_ = false;
  sync_req_.data = this;
  int rc = uv_fs_fdatasync(loop_, &sync_req_, sync_fd_, OnSyncDone);
  if (rc < 0) {
    sync_in_flight_ = false;
    ctx_->counters->sync_errors++;
  }
}

void Durability::OnSyncDone(uv_fs_t *req) {
  auto *d = static_cast<Durability *>(req->data);
  ssize_t result = req->result;
  uv_fs_req_cleanup(req);
  d->sync_in_flight_ = false;
  if (result < 0) {
    d->ctx_->counters->sync_errors++;
    d->ctx_->log_limit.Log(kLogKindWrite, spdlog::level::err, "fdatasync failed: {}",
                           uv_strerror(int(result)));
  } else {
    d->ctx_->counters->syncs++;
  }
  if (d->sync_again_ && !d->stopping_) d->RequestSync();
}

}  // namespace logsink::daemon
