// source.h: where `logctl tail`/`cat`/`export` get records from. The ring
// file itself (LocalSource, a storage::RingReader), or, for a user who may
// not read the ring file, the daemon, which sends that user's own records
// only (DaemonSource, daemon_read.h; PROTOCOL.md, "Reading through the
// daemon"). The read pipeline (cmd_read.cc) is the same for both.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "logsink/storage/ring.h"

namespace logsink::logctl {

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // The ring's layout; through the daemon only ring_id is known.
  virtual const storage::Layout &layout() const = 0;
  // As storage::RingReader's: Next() returns records from the new position.
  virtual storage::Status SeekOldest() = 0;
  virtual storage::Status SeekLast(uint64_t n) = 0;
  virtual storage::Status SeekTime(uint64_t ts_ns) = 0;
  virtual storage::Status SeekEnd() = 0;
  virtual storage::Status SeekSeq(uint64_t seq) = 0;
  virtual storage::Status Next(storage::Record *rec) = 0;
  // As storage::RingReader's: a sealed block whole (*whole) instead of its
  // first record, when the source can hand one over; else Next().
  virtual storage::Status NextOrBlock(storage::Record *rec, storage::BlockImage *, bool *whole) {
    *whole = false;
    return Next(rec);
  }
  // The ring reader behind the source, to decode handed-over blocks with
  // (null: the source never hands one over).
  virtual const storage::RingReader *ring() const { return nullptr; }
  // As storage::RingReader's: skip the blocks filter rules out.
  virtual void SetFilter(const storage::RecordFilter *filter, bool use_index) = 0;
  virtual uint64_t blocks_skipped() const = 0;
  virtual storage::Status ListBoots(std::vector<storage::BootInfo> *out) = 0;
  // Through the daemon: Next() returns the caller's records only, so a
  // seek's position (SeekLast) counts records of every uid, and examined()
  // tells how many of those the read passed since the seek.
  virtual bool own_records_only() const { return false; }
  virtual uint64_t examined() const { return 0; }
  // A descriptor that becomes readable when a following read has new
  // records (-1: none; the ring file is watched instead).
  virtual int wait_fd() const { return -1; }
};

// The ring file, read directly.
class LocalSource : public RecordSource {
 public:
  explicit LocalSource(std::unique_ptr<storage::RingReader> r) : r_(std::move(r)) {}
  const storage::Layout &layout() const override { return r_->layout(); }
  storage::Status SeekOldest() override { return r_->SeekOldest(); }
  storage::Status SeekLast(uint64_t n) override { return r_->SeekLast(n); }
  storage::Status SeekTime(uint64_t ts_ns) override { return r_->SeekTime(ts_ns); }
  storage::Status SeekEnd() override { return r_->SeekEnd(); }
  storage::Status SeekSeq(uint64_t seq) override { return r_->SeekSeq(seq); }
  storage::Status Next(storage::Record *rec) override { return r_->Next(rec); }
  storage::Status NextOrBlock(storage::Record *rec, storage::BlockImage *img,
                              bool *whole) override {
    return r_->NextOrBlock(rec, img, whole);
  }
  const storage::RingReader *ring() const override { return r_.get(); }
  void SetFilter(const storage::RecordFilter *filter, bool use_index) override {
    r_->SetFilter(filter, use_index);
  }
  uint64_t blocks_skipped() const override { return r_->blocks_skipped(); }
  storage::Status ListBoots(std::vector<storage::BootInfo> *out) override {
    return r_->ListBoots(out);
  }

 private:
  std::unique_ptr<storage::RingReader> r_;
};

}  // namespace logsink::logctl
