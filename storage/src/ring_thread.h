// ring_thread.h: RingWriter's writer thread (WriterOptions::queue_bytes):
// the caller's thread copies records into batches and hands them over; the
// thread appends them to the writer (RingWriter::Impl: sealing,
// compressing, writing, retention) in order, and publishes the counters
// the caller reads. Internal.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "locked_file.h"
#include "ring_writer_impl.h"

namespace logsink::storage {

// Only the thread touches *impl between hand-overs; the caller touches it
// only after Wait() (the thread idle, nothing queued) and before it hands
// anything again. The string table is the exception: the caller interns
// (under Impl::st_mu_) while the thread looks sites up.
class RingWriter::Thread {
 public:
  Thread(Impl *impl, size_t queue_bytes, std::function<void()> on_written);
  ~Thread();  // appends what is queued (no flush of the partial block), then stops

  // The caller's side. Record and Dropped copy what they are given.
  void Record(const RecordIn &rec);
  void Dropped(const Source &src, uint64_t ts_ns, uint64_t count, uint64_t since_ns);
  // Hands the batch being filled to the thread, with a flush of the
  // partial block after it when flush (nothing when there is nothing new).
  void Hand(bool flush);
  // Hand(flush), then waits until the thread has done everything handed
  // to it: the first error it met since the last Wait.
  Status Wait(bool flush);
  // Hand(false), then the number of batches handed so far: written()
  // reaches it once the thread has applied them (RingWriter::Mark).
  uint64_t Mark();
  uint64_t written() const;
  // Appended since the last Hand(true), or the thread's last flush failed
  // (the next Hand(true) asks it again).
  bool dirty() const;
  // The counters published again (the caller changed the writer after
  // Wait: FinishDictionary).
  void Republish();
  // The counters as the thread last published them, with the queue's.
  void Stats(WriterStats *out) const;
  uint64_t next_record_seq() const;
  uint64_t current_block_seq(int tier) const;
  uint64_t TakeErrors(std::string *why);
  std::mutex *io_lock() { return &io_mu_; }

 private:
  void Run();
  void Apply(const std::vector<uint8_t> &batch);  // on the thread
  void Failed(const Status &s, bool flush);       // on the thread
  bool RetryFlush() const;
  void Publish();  // on the thread, under mu_
  void SendSource(const Source &src);
  uint8_t *Grow(size_t n);  // n more bytes at the end of cur_

  Impl *impl_;
  const size_t limit_, batch_bytes_;
  std::function<void()> on_written_;
  std::mutex io_mu_;  // held by the thread's file (LockedFile) around each I/O

  // The caller's side.
  std::vector<uint8_t> cur_;  // the batch being filled
  bool dirty_ = false;
  // The sources the thread knows (by id, direct-mapped): a record's source
  // is sent whole before it when its slot names another id (or none yet).
  // The thread's table mirrors this one. A source id names one source for
  // the writer's life (RecordIn, ring.h), so a slot that names it is it.
  static constexpr size_t kSourceSlots = 256;
  struct SentSlot {
    uint64_t id = 0;
    bool valid = false;
  };
  SentSlot sent_[kSourceSlots];
  bool Sent(uint64_t id) const {
    const SentSlot &s = sent_[id % kSourceSlots];
    return s.valid && s.id == id;
  }

  // The thread's side.
  struct OwnedSource {
    Source src;
    std::string app, comm, unit;
  };
  std::vector<OwnedSource> sources_;

  // Shared, under mu_.
  mutable std::mutex mu_;
  std::condition_variable work_, room_;
  std::deque<std::vector<uint8_t>> queue_;
  std::vector<std::vector<uint8_t>> spare_;
  size_t queued_ = 0;     // bytes in queue_ and in the batch being applied
  uint64_t applied_ = 0;  // batches applied: every mark (batches_) up to it is done
  bool busy_ = false, stop_ = false;
  Status wait_error_;         // the first failed flush since the last Wait
  bool retry_flush_ = false;  // the last flush failed
  uint64_t errors_ = 0;
  std::string error_why_;
  WriterStats snap_;
  uint64_t snap_next_rec_ = 0, snap_block_[3] = {};
  uint64_t batches_ = 0, waits_ = 0, wait_ns_ = 0, failed_ = 0, drains_ = 0;
  std::thread thread_;
};

}  // namespace logsink::storage
