// forwarder.cc: see forwarder.h.
#include "forwarder.h"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <sstream>
#include <vector>

#include "cursor_file.h"
#include "logsink/render/escape.h"
#include "logsink/render/filter.h"
#include "logsink/render/printer.h"
#include "logsink/storage/cursor.h"
#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"
#include "logsink/storage/small_file.h"
#include "rfc5424.h"
#include "subject.h"

namespace logsink::forward {
namespace {

using storage::Record;
using storage::RingReader;
using storage::Status;

uint64_t NowMs() { return uv_hrtime() / 1000000; }
uint64_t WallNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

class Reporter : public storage::Reporter {
 public:
  explicit Reporter(ForwardCounters *c) : c_(c) {}
  void Corruption(uint64_t off, std::string_view reason) override {
    ++c_->skipped_blocks;
    spdlog::warn("skipped a damaged part of the ring at offset {}: {}", off, reason);
  }
  void Lost(uint64_t) override {}  // computed from the sequence numbers instead

 private:
  ForwardCounters *c_;
};

struct Entry {
  Message msg;
  uint64_t ts_ns = 0;  // the record's timestamp (lag in seconds)
  bool acked = false;
  bool unsent = false;  // to hand over (again) at resend_at_ms
  uint64_t resend_at_ms = 0;
  uint64_t backoff_ms = 0;
  bool replaced = false;  // its body is an "oversize" notice already (ReplaceTooBig)
};

class Forwarder {
 public:
  Forwarder(const Options &o, std::unique_ptr<Sink> sink)
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
  }

  int Run();

 private:
  bool OpenAndPosition();
  void Pump();
  void TakeAcks();
  void Commit(bool force, bool sync = false);
  void Committed(uint64_t next);
  void Fill();
  void FillBatches();
  bool FlushBatch();
  void TryResume();
  void ResendAfterReconnect();
  void Resend();
  bool Hand(Entry *e);
  bool Passes(const Record &rec) const;
  Message Build(const Record &rec);
  Message LostNotice(uint64_t first, uint64_t n);
  std::string NoticeLine(const char *key, uint64_t count, uint64_t first, uint64_t last,
                         const std::string &text);
  std::string OversizeLine(uint64_t seq, size_t bytes, size_t limit);
  void OpenBatch(uint64_t seq, uint64_t ts_ns);
  void AppendToBatch(const std::string &line, uint64_t first, uint64_t last);
  void AddLost(uint64_t first, uint64_t n, uint64_t ts_ns);
  void ReplaceTooBig(Entry *e, const std::string &why);
  void WriteStatus();
  void BeginDrain();
  void Finish();

  static Forwarder *Of(void *h) {
    return static_cast<Forwarder *>(static_cast<uv_handle_t *>(h)->data);
  }

  Options o_;
  std::unique_ptr<Sink> sink_;
  ForwardCounters c_;
  Reporter reporter_;
  render::Printer json_, text_;
  std::string host_, ring_id_;
  std::unique_ptr<RingReader> reader_;
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
  void LogNack(const Ack &a);

  uv_loop_t loop_{};
  uv_async_t async_{};
  uv_timer_t poll_{}, status_{}, watchdog_{}, drain_{};
  uv_fs_event_t fsev_{};
  uv_signal_t sigterm_{}, sigint_{};
};

constexpr uint64_t kMaxWindowBytes = 64ull << 20;  // a bound on bodies held for resending
// A batch's body at most (NATS' default max_payload is 1 MiB); a batch is
// closed at the first record that takes it past this.
constexpr size_t kMaxBatchBytes = 512u << 10;
constexpr uint64_t kCommitEveryMs = 200;

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

Message Forwarder::Build(const Record &rec) {
  Message m;
  m.seq = rec.seq;
  m.id = storage::FormatCursor(ring_id_, rec.seq);
  if (!subject_.fixed()) {
    int level = rec.kind == Record::Kind::kDropped ? render::kDroppedLevel : rec.site.level;
    SubjectFields f;
    f.host = host_;
    f.app = rec.app.empty() ? rec.comm : rec.app;
    f.comm = rec.comm;
    f.level = render::LevelName(level);
    f.uid = rec.uid;
    subject_.Render(f, &m.subject);
  }
  if (sink_->body() == Sink::Body::kJson) {
    line_.clear();
    json_.Print(rec, &line_);
    if (!line_.empty() && line_.back() == '\n') line_.pop_back();
    m.body = line_;
  } else {
    text_.Message(rec, &msg_);
    SyslogFields f;
    f.facility = uint8_t(o_.facility);
    f.level = rec.kind == Record::Kind::kDropped ? render::kDroppedLevel : rec.site.level;
    f.ts_ns = rec.ts_ns;
    f.host = host_;
    f.app = rec.app.empty() ? rec.comm : rec.app;
    f.pid = rec.pid;
    f.uid = rec.uid;
    f.gid = rec.gid;
    f.tid = rec.tid;
    f.sd_id = o_.sd_id;
    f.cursor = m.id;
    f.msg = msg_;
    m.body = FormatRfc5424(f);
  }
  return m;
}

// A line of the forwarder's own: {"KEY":COUNT,"first_seq":..,"last_seq":..,
// "ring":..,"app":"logsink-forward","level":"warning","msg":TEXT}.
std::string Forwarder::NoticeLine(const char *key, uint64_t count, uint64_t first, uint64_t last,
                                  const std::string &text) {
  std::string out = fmt::format("{{\"{}\":{},\"first_seq\":{},\"last_seq\":{},\"ring\":", key,
                                count, first, last);
  render::AppendJsonString(&out, ring_id_);
  out += ",\"app\":\"logsink-forward\",\"level\":\"warning\",\"msg\":";
  render::AppendJsonString(&out, text);
  out += '}';
  return out;
}

Message Forwarder::LostNotice(uint64_t first, uint64_t n) {
  Message m;
  m.seq = first;
  m.id = storage::FormatCursor(ring_id_, first);
  if (!subject_.fixed()) {
    // The notice's own fields, not a record's: a template's subject (the
    // wildcard is no subject to publish on).
    SubjectFields f;
    f.host = host_;
    f.app = "logsink-forward";
    f.comm = "logsink-forward";
    f.level = "warning";
    f.uid = unsigned(getuid());
    subject_.Render(f, &m.subject);
  }
  std::string text = fmt::format(
      "{} records lost: overwritten in {} before they were forwarded "
      "(records {}..{})",
      n, o_.file, first, first + n - 1);
  if (sink_->body() == Sink::Body::kJson) {
    m.body = NoticeLine("lost", n, first, first + n - 1, text);
  } else {
    SyslogFields f;
    f.facility = uint8_t(o_.facility);
    f.level = 4;
    f.ts_ns = WallNs();
    f.host = host_;
    f.app = "logsink-forward";
    f.pid = uint32_t(getpid());
    f.uid = uint32_t(getuid());
    f.gid = uint32_t(getgid());
    f.sd_id = o_.sd_id;
    f.cursor = m.id;
    f.msg = text;
    m.body = FormatRfc5424(f);
  }
  return m;
}

// In place of a record whose JSON is too big for one message.
std::string Forwarder::OversizeLine(uint64_t seq, size_t bytes, size_t limit) {
  ++c_.oversize;
  spdlog::warn(
      "record {} is {} bytes as JSON, more than one message may hold ({}): sending a "
      "notice in its place",
      seq, bytes, limit);
  return NoticeLine("oversize", 1, seq, seq,
                    fmt::format("record {} of {} left out: {} bytes as JSON, more than one NATS "
                                "message may hold ({} bytes)",
                                seq, o_.file, bytes, limit));
}

// A message the destination refused for its size for good (the stream's
// max_msg_size is lower than what the forwarder knew): its records go as
// one notice under the same id and range, so that the forwarder moves on.
void Forwarder::ReplaceTooBig(Entry *e, const std::string &why) {
  Message &m = e->msg;
  uint64_t last = m.batch ? m.last_seq : m.seq;
  ++c_.oversize;
  spdlog::warn("records {}..{} ({} bytes) refused as too big ({}): sending a notice in their place",
               m.seq, last, m.body.size(), why);
  window_bytes_ -= m.body.size();
  m.body = NoticeLine("oversize", last - m.seq + 1, m.seq, last,
                      fmt::format("records {}..{} of {} left out: refused by the destination as "
                                  "too big ({} bytes; {})",
                                  m.seq, last, o_.file, m.body.size(), why));
  if (m.batch) {
    m.body += '\n';
    m.lines = 1;
  }
  window_bytes_ += m.body.size();
  e->replaced = true;
  e->unsent = true;
  maybe_unsent_ = true;
  e->backoff_ms = 0;
  e->resend_at_ms = NowMs();
}

bool Forwarder::Hand(Entry *e) {
  if (sink_->Publish(e->msg)) {
    e->unsent = false;
    return true;
  }
  e->unsent = true;
  maybe_unsent_ = true;
  e->backoff_ms = std::clamp<uint64_t>(e->backoff_ms * 2, 50, 5000);
  e->resend_at_ms = NowMs() + e->backoff_ms;
  return false;
}

// --max-level and --app: whether a record is forwarded.
bool Forwarder::Passes(const Record &rec) const {
  int level = rec.kind == Record::Kind::kDropped ? render::kDroppedLevel : rec.site.level;
  std::string_view app = rec.app.empty() ? rec.comm : rec.app;
  return level <= o_.max_level &&
         (o_.apps.empty() || std::find(o_.apps.begin(), o_.apps.end(), app) != o_.apps.end());
}

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

// After a reconnect, batches in flight may be lost while cnats sent later
// ones it still had buffered: the earlier ones go out again at once (the
// stream drops those it has) instead of at their acknowledgment timeout, so
// that the stream's last message soon has everything before it again (what
// a restarted batching forwarder relies on).
void Forwarder::ResendAfterReconnect() {
  uint64_t reconnects = sink_->state().reconnects;
  if (reconnects == seen_reconnects_) return;
  seen_reconnects_ = reconnects;
  uint64_t now = NowMs();
  for (Entry &e : window_) {
    if (e.acked || e.unsent) continue;
    e.unsent = true;
    maybe_unsent_ = true;
    e.resend_at_ms = now;
  }
}

// Walks the window only when some entry may wait to be sent again (a walk
// per wake-up over --window entries was ~10% of the CPU at 100 k records/s).
void Forwarder::Resend() {
  if (!maybe_unsent_) return;
  uint64_t now = NowMs();
  bool waiting = false;
  for (Entry &e : window_) {
    if (!e.unsent) continue;
    if (e.resend_at_ms > now) {
      waiting = true;
      continue;
    }
    ++c_.retries;
    if (!Hand(&e)) return;  // keep order: stop at the first refusal
  }
  maybe_unsent_ = waiting;
}

void Forwarder::TakeAcks() {
  std::vector<Ack> acks;
  sink_->TakeAcks(&acks);
  for (Ack &a : acks) {
    auto it = std::lower_bound(window_.begin(), window_.end(), a.seq,
                               [](const Entry &e, uint64_t s) { return e.msg.seq < s; });
    if (it == window_.end() || it->msg.seq != a.seq || it->acked) continue;
    if (a.ok) {
      it->acked = true;
      ++c_.acked;
      if (a.duplicate) ++c_.duplicates;
    } else if (a.too_big && !it->replaced) {  // a notice refused too: sent again as usual
      ReplaceTooBig(&*it, a.error);
    } else {
      LogNack(a);
      it->unsent = true;
      maybe_unsent_ = true;
      it->backoff_ms = std::clamp<uint64_t>(it->backoff_ms * 2, 50, 5000);
      it->resend_at_ms = NowMs() + it->backoff_ms;
    }
  }
}

void Forwarder::LogNack(const Ack &a) {
  ++nacks_unlogged_;
  const uint64_t now = NowMs();
  if (nack_logged_ms_ && now - nack_logged_ms_ < 1000) return;
  std::string hint;
  std::string lower(a.error);
  for (char &ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.find("no responders") != std::string::npos)
    hint = "; no JetStream stream captures the subject " + subject_.wildcard() +
           ": create one that does (nats stream add NAME --subjects '" + subject_.wildcard() +
           "'), or start logsink-forward once with --create-stream NAME";
  if (nacks_unlogged_ == 1)
    spdlog::warn("record {} not acknowledged ({}): sending it again{}", a.seq, a.error, hint);
  else
    spdlog::warn(
        "{} records not acknowledged since the last report, record {} the last ({}): "
        "sending them again{}",
        nacks_unlogged_, a.seq, a.error, hint);
  nack_logged_ms_ = now;
  nacks_unlogged_ = 0;
}

// Entries leave the window only once the cursor file is past them, so a
// forwarder killed at any moment sends at most one window again. The write
// (with its two fsyncs) runs on libuv's thread pool so that shipping goes on
// meanwhile; `sync` writes at once (at exit, when the loop has stopped).
void Forwarder::Commit(bool force, bool sync) {
  if (commit_busy_) return;
  // The acknowledged entries at the window's front, counted on from the
  // last call (entries never lose their acknowledgment).
  for (; acked_front_ < window_.size() && window_[acked_front_].acked; ++acked_front_)
    acked_front_bytes_ +=
        window_[acked_front_].msg.body.size() + window_[acked_front_].msg.id.size();
  const size_t acked = acked_front_;
  const uint64_t acked_bytes = acked_front_bytes_;  // what moving the cursor past them frees
  uint64_t next = acked < window_.size() ? window_[acked].msg.seq
                  : batch_open_          ? batch_.msg.seq  // read, not handed over yet
                                         : read_next_;
  if (committed_valid_ && next == committed_) return;
  uint64_t now = NowMs();
  // At once when half the window (by messages or by bytes) waits only for
  // the cursor: batches fill the 64 MiB before --window messages, and
  // waiting for the timer then left the forwarder idle most of the time
  // (issue 29: 0.35 M records/s with the window full of acknowledged
  // batches; the write itself takes 1-50 ms).
  if (!force && acked < size_t(o_.window) / 2 && acked_bytes < kMaxWindowBytes / 2 &&
      now - last_commit_ms_ < kCommitEveryMs)
    return;
  last_commit_ms_ = now;
  if (sync) {
    std::string err;
    if (!WritePosition(o_.cursor_file, Position{ring_id_, next}, &err))
      spdlog::error("{}", err);
    else
      Committed(next);
    return;
  }
  commit_busy_ = true;
  commit_.data = this;
  commit_pos_ = Position{ring_id_, next};
  uv_queue_work(
      &loop_, &commit_,
      [](uv_work_t *w) {
        auto *f = static_cast<Forwarder *>(w->data);
        f->commit_ok_ = WritePosition(f->o_.cursor_file, f->commit_pos_, &f->commit_err_);
      },
      [](uv_work_t *w, int) {
        auto *f = static_cast<Forwarder *>(w->data);
        f->commit_busy_ = false;
        if (f->commit_ok_)
          f->Committed(f->commit_pos_.next_seq);
        else
          spdlog::error("{}", f->commit_err_);
        if (f->finish_pending_)
          f->Finish();
        else
          f->Pump();
      });
}

void Forwarder::Committed(uint64_t next) {
  committed_ = next;
  committed_valid_ = true;
  while (!window_.empty() && window_.front().acked && window_.front().msg.seq < next) {
    const uint64_t bytes = window_.front().msg.body.size() + window_.front().msg.id.size();
    window_bytes_ -= bytes;
    if (acked_front_) --acked_front_, acked_front_bytes_ -= bytes;
    window_.pop_front();
  }
}

void Forwarder::Pump() {
  TakeAcks();
  if (batching_) ResendAfterReconnect();
  Resend();
  Commit(false);
  if (!resumed_ && !draining_) TryResume();  // in slices: SIGTERM is served between them
  if (resumed_) Fill();
  if (draining_ &&
      std::all_of(window_.begin(), window_.end(), [](const Entry &e) { return e.acked; })) {
    Commit(true);
    Finish();
  }
}

void Forwarder::WriteStatus() {
  SinkState st = sink_->state();
  RingReader::Summary sum;
  bool have_sum = reader_->Summarize(&sum).ok();
  uint64_t end = have_sum ? sum.newest_seq + 1 : read_next_;
  uint64_t next = committed_;
  uint64_t lag_s = 0;
  if (!window_.empty()) {
    uint64_t now = WallNs();
    lag_s = now > window_.front().ts_ns ? (now - window_.front().ts_ns) / 1000000000u : 0;
  }
  // Rates over the time since the last status (about a second): records
  // the cursor moved past, records the writer added.
  const uint64_t now_ms = NowMs();
  uint64_t lag = end > next ? end - next : 0;
  if (rate_ms_ && now_ms > rate_ms_) {
    double dt = double(now_ms - rate_ms_) / 1000.0;
    out_rate_ = double(next >= rate_next_ ? next - rate_next_ : 0) / dt;
    in_rate_ = double(end >= rate_end_ ? end - rate_end_ : 0) / dt;
  }
  rate_ms_ = now_ms;
  rate_next_ = next;
  rate_end_ = end;
  std::string catch_up = lag == 0 ? "0"
                         : out_rate_ > in_rate_
                             ? fmt::format("{:.0f}", double(lag) / (out_rate_ - in_rate_))
                             : "never";
  // Falling a lap behind: the writer overwrites what is not shipped yet;
  // at these rates it reaches the cursor in lap seconds.
  uint64_t ring_records = have_sum ? sum.newest_seq + 1 - sum.oldest_seq : 0;
  std::string lap =
      in_rate_ > out_rate_ && ring_records
          ? fmt::format("{:.0f}", double(ring_records > lag ? ring_records - lag : 0) /
                                      (in_rate_ - out_rate_))
          : "never";
  if (ring_records && lag > ring_records / 2 && !behind_warned_) {
    behind_warned_ = true;
    spdlog::warn(
        "falling behind the ring: {} records not shipped, more than half of the {} it holds "
        "(in {:.0f}/s, out {:.0f}/s); records are lost once the writer laps the cursor "
        "(at these rates: {})",
        lag, ring_records, in_rate_, out_rate_, lap == "never" ? "never" : "in " + lap + " s");
  } else if (behind_warned_ && lag < ring_records / 4) {
    behind_warned_ = false;
    spdlog::info("caught up with the ring again: {} records not shipped", lag);
  }
  std::string text = fmt::format(
      "pid={}\nto={}\nring={}\nring_id={}\ndestination={}\nforwarded={}\nacked={}\nduplicates={}\n"
      "retries={}\nresent={}\nlost={}\nfiltered={}\nskipped_blocks={}\nin_flight={}\n"
      "cursor_next={}\nlag_records={}\nlag_seconds={}\nreconnects={}\nlast_error={}\n"
      "records_per_second={:.0f}\nring_records_per_second={:.0f}\ncatch_up_seconds={}\n"
      "ring_records={}\nbatch={}\noversize={}\nlap_seconds={}\ncompress={}\n",
      getpid(), o_.to, o_.file, ring_id_, st.connected ? "connected" : "disconnected", c_.forwarded,
      c_.acked, c_.duplicates, c_.retries, st.resent, c_.lost, c_.filtered, c_.skipped_blocks,
      window_.size(), next, lag, lag_s, st.reconnects, st.last_error, out_rate_, in_rate_, catch_up,
      ring_records, o_.batch, c_.oversize, lap, o_.compress);
  // Through a new file of a unique name (O_EXCL|O_NOFOLLOW) renamed over the
  // status: never a fixed "<status>.tmp" that whoever can write in the
  // directory could point at a file of root's. Whatever is at the status
  // path is replaced, not written through. Not fsynced: rewritten every
  // second, and a lost one matters to nobody.
  storage::SmallFileOptions opts;
  opts.mode = 0644;
  opts.only_own_regular = false;
  std::string why;
  if (storage::WriteSmallFile(StatusPath(o_), text, opts, &why)) {
    status_error_.clear();
  } else if (why != status_error_) {
    spdlog::warn("cannot write the status file {}: {}", StatusPath(o_), why);
    status_error_ = why;  // once per distinct reason, not every second
  }
}

void Forwarder::BeginDrain() {
  if (draining_) return;
  draining_ = true;
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

// Stops the loop, after the cursor write in flight (if any) completed.
void Forwarder::Finish() {
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

}  // namespace

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

std::string StatusPath(const Options &o) { return o.cursor_file + ".status"; }

int RunForwarder(const Options &o, std::unique_ptr<Sink> sink) {
  Forwarder f(o, std::move(sink));
  return f.Run();
}

int PrintStatus(const Options &o) {
  std::ifstream in(StatusPath(o));
  if (!in) {
    std::fprintf(stderr,
                 "logsink-forward: no status at %s: is an instance running with "
                 "--cursor-file %s?\n",
                 StatusPath(o).c_str(), o.cursor_file.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::fputs(ss.str().c_str(), stdout);
  return 0;
}

}  // namespace logsink::forward
