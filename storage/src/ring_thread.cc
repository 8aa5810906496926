// ring_thread.cc: the writer thread (ring_thread.h): the batches' messages,
// the hand-over and its bound, and the file lock readers share.
#include "ring_thread.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "logsink/proto/fields.h"
#include "logsink/proto/format.h"

namespace logsink::storage {
namespace {

// A batch is a run of messages, each a kind byte and fixed-width fields in
// host order (memory only: it never leaves the process).
enum Kind : uint8_t { kRecord = 1, kDropped = 2, kSource = 3, kFlush = 4 };

template <typename T>
uint8_t *Put(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof v);
  return p + sizeof v;
}
// (memcpy only with bytes: an empty view's data() may be null.)
uint8_t *PutRaw(uint8_t *p, const void *src, size_t n) {
  if (n) std::memcpy(p, src, n);
  return p + n;
}
uint8_t *PutBytes(uint8_t *p, std::string_view s) {
  p = Put(p, uint32_t(s.size()));
  return PutRaw(p, s.data(), s.size());
}
template <typename T>
const uint8_t *Get(const uint8_t *p, T *v) {
  std::memcpy(v, p, sizeof *v);
  return p + sizeof *v;
}
const uint8_t *GetBytes(const uint8_t *p, std::string_view *s) {
  uint32_t n;
  p = Get(p, &n);
  *s = std::string_view(reinterpret_cast<const char *>(p), n);
  return p + n;
}

// The file as the thread writes it: each call under the lock a reader of
// the same file in this process takes around its reads (RingWriter::io_lock).
class LockedFile final : public File {
 public:
  LockedFile(std::unique_ptr<File> base, std::mutex *mu) : base_(std::move(base)), mu_(mu) {}
  Status PRead(uint64_t off, void *buf, size_t n, size_t *got) override {
    std::lock_guard lock(*mu_);
    return base_->PRead(off, buf, n, got);
  }
  Status PWrite(uint64_t off, const void *buf, size_t n) override {
    std::lock_guard lock(*mu_);
    return base_->PWrite(off, buf, n);
  }
  Status Sync() override { return base_->Sync(); }
  Status Size(uint64_t *size) override { return base_->Size(size); }
  Status LockExclusive() override { return base_->LockExclusive(); }
  bool OwnerUid(uint32_t *uid) override { return base_->OwnerUid(uid); }

 private:
  std::unique_ptr<File> base_;
  std::mutex *mu_;
};

}  // namespace

std::unique_ptr<File> LockFile(std::unique_ptr<File> base, std::mutex *mu) {
  return std::make_unique<LockedFile>(std::move(base), mu);
}

// Batches of at most 64 KiB (or a quarter of the queue): large enough that
// a hand-over (a lock and a wakeup) is rare against the records it carries,
// small enough that the thread starts on a burst at once.
RingWriter::Thread::Thread(Impl *impl, size_t queue_bytes, std::function<void()> on_written)
    : impl_(impl),
      limit_(queue_bytes),
      batch_bytes_(std::clamp<size_t>(queue_bytes / 4, 256, 64 << 10)),
      on_written_(std::move(on_written)),
      sources_(kSourceSlots) {
  impl_->UseFile(LockFile(impl_->TakeFile(), &io_mu_));
  cur_.reserve(batch_bytes_ + 256);
  Publish();
  thread_ = std::thread([this] { Run(); });
}

RingWriter::Thread::~Thread() {
  Hand(false);
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_.notify_one();
  thread_.join();
}

uint8_t *RingWriter::Thread::Grow(size_t n) {
  const size_t at = cur_.size();
  cur_.resize(at + n);
  return cur_.data() + at;
}

void RingWriter::Thread::SendSource(const Source &src) {
  uint8_t *p = Grow(1 + 8 + 12 + 12 + src.app.size() + src.comm.size() + src.unit.size());
  p = Put(p, kSource);
  p = Put(p, src.id);
  p = Put(p, src.pid);
  p = Put(p, src.uid);
  p = Put(p, src.gid);
  p = PutBytes(p, src.app);
  p = PutBytes(p, src.comm);
  PutBytes(p, src.unit);
  sent_[src.id % kSourceSlots] = {src.id, true};
}

void RingWriter::Thread::Record(const RecordIn &rec) {
  const Source &src = *rec.source;
  if (!Sent(src.id)) SendSource(src);
  size_t n = 1 + 8 + 8 + 4 + 8 + 8 + 4 + 1 + rec.signature.size() + rec.args_len;
  const Site *in = rec.site_id == 0 ? rec.inline_site : nullptr;
  if (in) n += 1 + 4 + 8 + in->fmt.size() + in->file.size();
  uint8_t *p = Grow(n);
  p = Put(p, kRecord);
  p = Put(p, src.id);
  p = Put(p, rec.tid);
  p = Put(p, rec.site_id);
  p = Put(p, rec.ts_ns);
  p = Put(p, rec.truncated);
  p = Put(p, uint32_t(rec.args_len));
  p = Put(p, uint8_t(rec.signature.size()));  // at most LS_FMT_MAX_ARGS
  if (in) {
    p = Put(p, uint8_t(in->level | (in->flags & LS_ST_F_FIELDS ? LS_SITE_FIELDS : 0)));
    p = Put(p, in->line);
    p = PutBytes(p, in->fmt);
    p = PutBytes(p, in->file);
  }
  p = PutRaw(p, rec.signature.data(), rec.signature.size());
  PutRaw(p, rec.args, rec.args_len);
  dirty_ = true;
  if (cur_.size() >= batch_bytes_) Hand(false);
}

void RingWriter::Thread::Dropped(const Source &src, uint64_t ts_ns, uint64_t count,
                                 uint64_t since_ns) {
  if (!Sent(src.id)) SendSource(src);
  uint8_t *p = Grow(1 + 4 * 8);
  p = Put(p, kDropped);
  p = Put(p, src.id);
  p = Put(p, ts_ns);
  p = Put(p, count);
  Put(p, since_ns);
  dirty_ = true;
  if (cur_.size() >= batch_bytes_) Hand(false);
}

// The queue's bound: a batch waits for room when the queue holds limit_
// bytes or more (one batch may pass it, so a batch is never refused); the
// caller's thread then waits for the writer thread, as it would have
// written the records itself without one (counted: queue_waits).
void RingWriter::Thread::Hand(bool flush) {
  if (flush && (dirty_ || RetryFlush())) {
    *Grow(1) = kFlush;
    dirty_ = false;
  }
  if (cur_.empty()) return;
  std::unique_lock lock(mu_);
  if (queued_ >= limit_) {
    const auto start = std::chrono::steady_clock::now();
    waits_++;
    room_.wait(lock, [this] { return queued_ < limit_; });
    wait_ns_ += uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count());
  }
  queued_ += cur_.size();
  batches_++;
  queue_.push_back(std::move(cur_));
  if (!spare_.empty()) {
    cur_ = std::move(spare_.back());
    spare_.pop_back();
  } else {
    cur_ = std::vector<uint8_t>();
    cur_.reserve(batch_bytes_ + 256);
  }
  lock.unlock();
  work_.notify_one();
}

Status RingWriter::Thread::Wait(bool flush) {
  Hand(flush);
  std::unique_lock lock(mu_);
  drains_++;
  room_.wait(lock, [this] { return queue_.empty() && !busy_; });
  Status s = wait_error_;
  wait_error_ = Status::OK();
  return s;
}

// batches_ changes only on the caller's thread (Hand): read here without
// the lock.
uint64_t RingWriter::Thread::Mark() {
  Hand(false);
  return batches_;
}

uint64_t RingWriter::Thread::written() const {
  std::lock_guard lock(mu_);
  return applied_;
}

void RingWriter::Thread::Run() {
  pthread_setname_np(pthread_self(), "logsink-write");
  std::unique_lock lock(mu_);
  for (;;) {
    work_.wait(lock, [this] { return !queue_.empty() || stop_; });
    if (queue_.empty()) return;  // stop_, and everything applied
    std::vector<uint8_t> batch = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    Apply(batch);
    lock.lock();
    Publish();
    applied_++;
    queued_ -= batch.size();
    busy_ = false;
    batch.clear();
    if (spare_.size() < 2) spare_.push_back(std::move(batch));
    room_.notify_all();
    if (on_written_) {
      lock.unlock();
      on_written_();
      lock.lock();
    }
  }
}

// A failed call: counted for TakeErrors. A failed flush is also what the
// next Wait returns, and is asked again by the next Hand(true) (the
// partial block stays unwritten until a flush works, as without the
// thread); a failed append is reported through TakeErrors only.
void RingWriter::Thread::Failed(const Status &s, bool flush) {
  std::lock_guard lock(mu_);
  failed_++;
  if (errors_++ == 0) error_why_ = s.message();
  if (flush) {
    retry_flush_ = true;
    if (wait_error_.ok()) wait_error_ = s;
  }
}

bool RingWriter::Thread::RetryFlush() const {
  std::lock_guard lock(mu_);
  return retry_flush_;
}

bool RingWriter::Thread::dirty() const { return dirty_ || RetryFlush(); }

void RingWriter::Thread::Republish() {
  std::lock_guard lock(mu_);
  Publish();
}

void RingWriter::Thread::Apply(const std::vector<uint8_t> &batch) {
  const uint8_t *p = batch.data(), *end = p + batch.size();
  while (p < end) {
    const uint8_t kind = *p++;
    Status s;
    if (kind == kSource) {
      uint64_t id;
      p = Get(p, &id);
      OwnedSource &o = sources_[id % kSourceSlots];
      o.src.id = id;
      p = Get(p, &o.src.pid);
      p = Get(p, &o.src.uid);
      p = Get(p, &o.src.gid);
      std::string_view app, comm, unit;
      p = GetBytes(p, &app);
      p = GetBytes(p, &comm);
      p = GetBytes(p, &unit);
      o.app.assign(app);
      o.comm.assign(comm);
      o.unit.assign(unit);
      o.src.app = o.app;
      o.src.comm = o.comm;
      o.src.unit = o.unit;
    } else if (kind == kRecord) {
      uint64_t id;
      uint32_t args_len;
      uint8_t sig_len;
      RecordIn rec;
      Site site;
      p = Get(p, &id);
      p = Get(p, &rec.tid);
      p = Get(p, &rec.site_id);
      p = Get(p, &rec.ts_ns);
      p = Get(p, &rec.truncated);
      p = Get(p, &args_len);
      p = Get(p, &sig_len);
      if (rec.site_id == 0) {
        p = Get(p, &site.level);
        site.flags = site.level & LS_SITE_FIELDS ? LS_ST_F_FIELDS : 0;
        site.level &= LS_SITE_LEVEL_MASK;
        p = Get(p, &site.line);
        p = GetBytes(p, &site.fmt);
        p = GetBytes(p, &site.file);
        rec.inline_site = &site;
      }
      rec.signature = std::string_view(reinterpret_cast<const char *>(p), sig_len);
      p += sig_len;
      rec.args = p;
      rec.args_len = args_len;
      p += args_len;
      rec.source = &sources_[id % kSourceSlots].src;
      s = impl_->Append(rec);
    } else if (kind == kDropped) {
      uint64_t id, ts, count, since;
      p = Get(p, &id);
      p = Get(p, &ts);
      p = Get(p, &count);
      p = Get(p, &since);
      s = impl_->AppendDropped(sources_[id % kSourceSlots].src, ts, count, since);
    } else {  // kFlush
      s = impl_->FlushAll();
      if (s.ok()) {
        std::lock_guard lock(mu_);
        retry_flush_ = false;
      }
    }
    if (!s.ok()) Failed(s, kind == kFlush);
  }
}

void RingWriter::Thread::Publish() {
  snap_ = WriterStats();
  impl_->AddStats(&snap_);
  snap_next_rec_ = impl_->cur_.first_rec + impl_->cur_.count;
  for (int t = 0; t < 3; t++) {
    const Impl *i = impl_->Tier(t);
    snap_block_[t] = i ? i->cur_.seq : 0;
  }
}

void RingWriter::Thread::Stats(WriterStats *out) const {
  std::lock_guard lock(mu_);
  *out = snap_;
  out->queue_batches = batches_;
  out->queue_waits = waits_;
  out->queue_wait_ns = wait_ns_;
  out->queue_drains = drains_;
  out->queue_errors = failed_;
}

uint64_t RingWriter::Thread::next_record_seq() const {
  std::lock_guard lock(mu_);
  return snap_next_rec_;
}

uint64_t RingWriter::Thread::current_block_seq(int tier) const {
  std::lock_guard lock(mu_);
  return tier >= 0 && tier < 3 ? snap_block_[tier] : 0;
}

uint64_t RingWriter::Thread::TakeErrors(std::string *why) {
  std::lock_guard lock(mu_);
  const uint64_t n = errors_;
  if (n && why) *why = error_why_;
  errors_ = 0;
  error_why_.clear();
  return n;
}

}  // namespace logsink::storage
