// durability.h: when what the daemon stored reaches the file and the disk:
// writing the partial block (the flush timer: records visible to readers
// within flush_interval) and fdatasync under the [ring] fsync policy (the
// fsync timer, or after each sealed block), run on libuv's thread pool,
// never on the loop. The server owns one; everything else runs on the loop.
#pragma once

#include <uv.h>

#include <cstdint>
#include <mutex>

#include "context.h"
#include "logsink/config/config.h"
#include "sync_policy.h"

namespace logsink::daemon {

// Wakes the loop when the ring's writer thread has written a batch
// (storage::WriterOptions::on_written, called on that thread), so that
// followers read on and the thread's errors are counted at once rather
// than at the loop's next event. Made before the writer, so it outlives
// the writer's thread; the loop attaches its handle while it runs.
class WriteWake {
 public:
  void Ring() {
    std::lock_guard lock(mu_);
    if (async_) uv_async_send(async_);
  }
  void Attach(uv_async_t *async) {
    std::lock_guard lock(mu_);
    async_ = async;
  }

 private:
  std::mutex mu_;
  uv_async_t *async_ = nullptr;
};

// The writer thread's failed calls since the last look: counted
// (write_errors) and logged.
void CountWriterErrors(Context *ctx);

class Durability {
 public:
  // cfg: the server's configuration, read as it is at each use (a SIGHUP
  // changes it in place, then calls Reload).
  Durability(Context *ctx, const config::Config *cfg) : ctx_(ctx), cfg_(cfg) {}
  ~Durability();
  Durability(const Durability &) = delete;
  Durability &operator=(const Durability &) = delete;

  // Opens the descriptor fdatasync runs on (a warning when it cannot: the
  // ring is then never synced).
  void OpenSyncFile();
  // Sets up and starts the timers on loop (the fsync timer under an
  // interval policy) and counts what the writer wrote so far as synced.
  void Start(uv_loop_t *loop);

  // Once per turn of the loop, before it waits: writes the partial block
  // when its gap has passed, else arms the flush timer for it; asks for an
  // fdatasync when fsync = "block" and a block was sealed. So every record
  // stored in a turn, however many reads stored them, is covered by one
  // check.
  void AfterWrites();
  // Writes the partial block now (one pwrite) and notes when and at what
  // cost. With the writer thread ([ring] write_queue), asks the thread to
  // write it and goes on: whoever must know when it is written takes
  // RingWriter::Mark() after this and waits for written() to reach it.
  void FlushNow();
  // After a SIGHUP changed the configuration: the fsync policy and timer,
  // and the gap of a flush that waits.
  void Reload();
  // At a stop: an fdatasync asked for while one ran is not run any more.
  void Stopping() { stopping_ = true; }
  // Closes the timers (the end of the drain).
  void Close();

 private:
  static void OnFlushTimer(uv_timer_t *t);
  static void OnFsyncTimer(uv_timer_t *t);
  static void OnSyncDone(uv_fs_t *req);
  static void OnWritten(uv_async_t *a);
  void StartFsyncTimer();
  uint64_t FlushGapNs() const;
  void FlushWhenDue();
  void RequestSync();

  Context *ctx_;
  const config::Config *cfg_;
  uv_loop_t *loop_ = nullptr;
  uv_timer_t flush_timer_, fsync_timer_;
  uv_async_t written_;  // WriteWake's, with the writer thread
  bool wake_attached_ = false;
  // The last partial-block write: when it ended and what it cost
  // (uv_hrtime, ns); the next one waits FlushGapNs() after it.
  uint64_t last_flush_end_ns_ = 0, last_flush_cost_ns_ = 0;
  uv_fs_t sync_req_;
  int sync_fd_ = -1;
  bool sync_in_flight_ = false, sync_again_ = false, stopping_ = false;
  // The fsync timer fired with the writer thread: the sync is asked for
  // once written() reaches sync_mark_ (AfterWrites).
  bool sync_waits_ = false;
  uint64_t sync_mark_ = 0;
  SyncPolicy sync_policy_;  // which writes the last fdatasync request covered
};

}  // namespace logsink::daemon
