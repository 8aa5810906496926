// forwarder_fill.cc: following the ring: reading records from where the
// forwarder is into the window, one message per record or in batches of
// consecutive records (skipping what the stream holds already), with a
// notice for records overwritten before they were read (see
// forwarder_impl.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "forwarder_impl.h"
#include "logsink/storage/cursor.h"

namespace logsink::forward {

using storage::Record;
using storage::Status;

void Forwarder::Fill() {
  if (batching_) return FillBatches();
  Record rec;
  while (!draining_ && window_.size() < size_t(o_.window) && window_bytes_ < kMaxWindowBytes) {
    if (!window_.empty() && window_.back().unsent) return;  // the destination is not taking
    Status s = reader_->Next(&rec);
    if (s.IsNotFound()) return;
    if (!s.ok()) {
      spdlog::error("reading {}: {}", o_.file, s.message());
      return;
    }
    if (rec.seq < read_next_) continue;  // already shipped (positioning)
    std::vector<Message> out;
    if (rec.seq > read_next_) {
      uint64_t n = rec.seq - read_next_;
      c_.lost += n;
      spdlog::warn("{} records were overwritten before they were forwarded", n);
      out.push_back(LostNotice(read_next_, n));
    }
    read_next_ = rec.seq + 1;
    if (Passes(rec)) {
      out.push_back(Build(rec));
      const size_t limit = sink_->MaxBody();
      if (limit && out.back().body.size() > limit && sink_->body() == Sink::Body::kJson)
        out.back().body = OversizeLine(rec.seq, out.back().body.size(), limit);
    } else {
      ++c_.filtered;
    }
    for (Message &m : out) {
      Entry e;
      e.ts_ns = m.seq == rec.seq ? rec.ts_ns : WallNs();
      e.msg = std::move(m);
      window_bytes_ += e.msg.body.size() + e.msg.id.size();
      window_.push_back(std::move(e));
      ++c_.forwarded;
      if (!Hand(&window_.back())) return;
    }
  }
}

// Batches: JSON lines of consecutive records (filtered ones left out) with
// the ring and the sequence range in headers; the id names the range, so a
// batch sent again within this run is the same message and the stream
// drops it, and a batch of other records can never be taken for it.
void Forwarder::FillBatches() {
  Record rec;
  while (!draining_ && window_.size() < size_t(o_.window) && window_bytes_ < kMaxWindowBytes) {
    if (!window_.empty() && window_.back().unsent) return;  // the destination is not taking
    Status s = reader_->Next(&rec);
    if (s.IsNotFound()) {
      FlushBatch();  // the ring has no more now: ship what there is
      return;
    }
    if (!s.ok()) {
      spdlog::error("reading {}: {}", o_.file, s.message());
      FlushBatch();
      return;
    }
    if (rec.seq < read_next_) continue;  // already shipped (positioning)
    // What lies between the last record read and this one: stored ranges
    // (skipped; a batch never reaches into one) and records the writer
    // overwrote before they were read (lost: a notice line for each piece
    // that is not stored).
    uint64_t at = read_next_;
    for (size_t i = 0; at < rec.seq;) {
      while (i < skip_.size() && skip_[i].last < at) ++i;
      if (i < skip_.size() && skip_[i].first <= at) {
        FlushBatch();  // refused: the loop's check stops at the unsent entry
        at = std::min(skip_[i].last + 1, rec.seq);
        continue;
      }
      uint64_t end = i < skip_.size() ? std::min(rec.seq, skip_[i].first) : rec.seq;
      AddLost(at, end - at, rec.ts_ns);
      at = end;
    }
    read_next_ = std::max(read_next_, at);
    while (!skip_.empty() && rec.seq > skip_.front().last) skip_.erase(skip_.begin());
    if (!skip_.empty() && rec.seq >= skip_.front().first) {
      // Stored already (found at the start): the open batch ends before it.
      bool taken = FlushBatch();
      read_next_ = rec.seq + 1;
      if (!taken) return;
      continue;
    }
    read_next_ = rec.seq + 1;
    if (Passes(rec)) {
      // Rendered straight into the batch (one line, '\n' included); moved
      // out again only when it takes the batch past what a message holds.
      if (!batch_open_) OpenBatch(rec.seq, rec.ts_ns);
      std::string &body = batch_.msg.body;
      const size_t at = body.size();
      json_.Print(rec, &body);
      if (batch_limit_ && body.size() > batch_limit_) {
        line_.assign(body, at, std::string::npos);
        body.resize(at);
        AppendToBatch(line_, rec.seq, rec.seq);
      } else {
        ++batch_.msg.lines;
        batch_.msg.last_seq = rec.seq;
      }
    } else {
      ++c_.filtered;
      // Inside the next batch's range (so that stored ranges follow each
      // other without a gap); a batch of filtered records only is not sent.
      if (!batch_open_) OpenBatch(rec.seq, rec.ts_ns);
      batch_.msg.last_seq = rec.seq;
    }
    if (batch_open_ &&
        (batch_.msg.lines >= uint32_t(o_.batch) || batch_.msg.body.size() >= kMaxBatchBytes)) {
      if (!FlushBatch()) return;
    }
  }
}

void Forwarder::OpenBatch(uint64_t seq, uint64_t ts_ns) {
  batch_ = Entry{};
  batch_.msg.seq = seq;
  batch_.msg.batch = true;
  batch_.ts_ns = ts_ns;
  batch_.msg.body.reserve(kMaxBatchBytes + 4096);  // grown once, not copied while it fills
  batch_open_ = true;
  batch_limit_ = sink_->MaxBody();  // asked once a batch, not once a record (a lock in cnats)
}

// Appends a line covering the records first..last (read_next_ is past
// them): first into a new batch when the open one could not take it whole
// (the destination's size limit), in place of a record that no message
// could hold a notice.
void Forwarder::AppendToBatch(const std::string &line, uint64_t first, uint64_t last) {
  const size_t limit = batch_open_ ? batch_limit_ : sink_->MaxBody();
  if (batch_open_ && limit && batch_.msg.lines > 0 &&
      batch_.msg.body.size() + line.size() > limit) {
    // Ends before `first`; whatever it holds past its last line (filtered
    // records) is in its range already.
    batch_.msg.last_seq = first - 1;
    FlushBatch();  // refused: the loop's check stops at the unsent entry
  }
  if (!batch_open_) OpenBatch(first, WallNs());
  if (limit && line.size() > limit)
    batch_.msg.body += OversizeLine(first, line.size(), limit) + "\n";
  else
    batch_.msg.body += line;
  ++batch_.msg.lines;
  batch_.msg.last_seq = last;
}

void Forwarder::AddLost(uint64_t first, uint64_t n, uint64_t ts_ns) {
  c_.lost += n;
  spdlog::warn("{} records were overwritten before they were forwarded", n);
  if (!batch_open_) OpenBatch(first, ts_ns);
  AppendToBatch(LostNotice(first, n).body + "\n", first, first + n - 1);
}

// Hands the open batch over; false when the destination did not take it.
bool Forwarder::FlushBatch() {
  if (!batch_open_) return true;
  batch_open_ = false;
  if (batch_.msg.lines == 0) return true;  // every record filtered out
  static const char kHex[] = "0123456789abcdef";
  std::string last;
  uint64_t v = batch_.msg.last_seq;
  do {
    last.insert(last.begin(), kHex[v & 15]);
    v >>= 4;
  } while (v);
  batch_.msg.id = storage::FormatCursor(ring_id_, batch_.msg.seq) + "-" + last;
  // A partial batch (the ring's end) gives back the room reserved for a full
  // one: the window holds up to --window of them.
  std::string &body = batch_.msg.body;
  if (body.capacity() > 2 * body.size() + 4096) body.shrink_to_fit();
  window_bytes_ += batch_.msg.body.size() + batch_.msg.id.size();
  window_.push_back(std::move(batch_));
  batch_ = Entry{};
  ++c_.forwarded;
  return Hand(&window_.back());
}

}  // namespace logsink::forward
