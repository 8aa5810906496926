// landed.cc: on-disk counting for compare_run (see landed.h).
#include "landed.h"

#include <fcntl.h>
#include <logsink/storage/env.h>
#include <logsink/storage/ring.h>
#include <unistd.h>

#include <cstring>
#include <memory>

namespace logsink::compare {

LineCounter::LineCounter(std::string path, std::string marker)
    : path_(std::move(path)), marker_(std::move(marker)) {}

LineCounter::~LineCounter() {
  if (fd_ >= 0) close(fd_);
}

uint64_t LineCounter::Count() {
  if (fd_ < 0) fd_ = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return lines_;
  static char buf[1 << 20];
  for (;;) {
    ssize_t n = pread(fd_, buf, sizeof buf, static_cast<off_t>(off_));
    if (n <= 0) break;
    off_ += static_cast<uint64_t>(n);
    const char *p = buf, *end = buf + n;
    while (p < end) {
      const char *nl = static_cast<const char *>(memchr(p, '\n', static_cast<size_t>(end - p)));
      if (!nl) {
        carry_.append(p, static_cast<size_t>(end - p));
        break;
      }
      std::string_view line(p, static_cast<size_t>(nl - p));
      if (!carry_.empty()) {
        carry_.append(line);
        if (carry_.find(marker_) != std::string::npos) lines_++;
        carry_.clear();
      } else if (line.find(marker_) != std::string_view::npos) {
        lines_++;
      }
      p = nl + 1;
    }
  }
  return lines_;
}

namespace {

class CountingReporter : public storage::Reporter {
 public:
  void Corruption(uint64_t, std::string_view) override { corrupt++; }
  void Lost(uint64_t n) override { lost += n; }
  uint64_t corrupt = 0, lost = 0;
};

}  // namespace

int64_t RingNextSeq(const std::string &path) {
  // The newest record only (a binary search over block headers, then one
  // block), not a Summarize pass over every header: the parent polls this
  // while the senders and the daemon share the machine with it.
  CountingReporter rep;
  std::unique_ptr<storage::RingReader> r;
  if (!storage::RingReader::Open(storage::Env::Default(), path, &rep, &r).ok()) return -1;
  storage::Status s = r->SeekLast(1);
  if (s.IsNotFound()) return 0;
  if (!s.ok()) return -1;
  storage::Record rec;
  s = r->Next(&rec);
  if (s.IsNotFound()) return 0;
  if (!s.ok()) return -1;
  return static_cast<int64_t>(rec.seq + 1);
}

RingCount CountRing(const std::string &path) {
  RingCount c;
  CountingReporter rep;
  std::unique_ptr<storage::RingReader> r;
  storage::Status s = storage::RingReader::Open(storage::Env::Default(), path, &rep, &r);
  if (!s.ok()) {
    c.error = s.ToString();
    return c;
  }
  storage::RingReader::Summary sum;
  s = r->Summarize(&sum);
  if (s.code() == storage::Status::Code::kNotFound) {
    c.ok = true;
    return c;
  }
  if (!s.ok()) {
    c.error = s.ToString();
    return c;
  }
  c.next_seq = sum.newest_seq + 1;
  c.overwritten = sum.oldest_seq;
  c.block_bytes = sum.blocks_used * r->layout().block_size;
  c.entry_bytes = sum.bytes_used;
  s = r->SeekOldest();
  storage::Record rec;
  while (s.ok() && (s = r->Next(&rec)).ok()) {
    if (rec.kind == storage::Record::Kind::kDropped) {
      c.dropped_entries++;
      c.dropped_count += rec.dropped_count;
    } else {
      c.in_ring++;
    }
  }
  if (!s.ok() && s.code() != storage::Status::Code::kNotFound) {
    c.error = s.ToString();
    return c;
  }
  if (rep.corrupt) {
    c.error = std::to_string(rep.corrupt) + " corrupt blocks";
    return c;
  }
  c.ok = true;
  return c;
}

}  // namespace logsink::compare
