// nats_host.h: one host's records in a JetStream stream, as `logctl
// --nats` reads them (nats_read.cc merges the hosts). A HostReader owns one
// ephemeral consumer filtered on that host's subjects: a pull consumer for
// what the stream held when the read began (the snapshot), then, with -f,
// an ordered push consumer from where the snapshot ended, whose messages
// go to an Inbox shared by every host. It turns each message (one record,
// or a batch of JSON lines, compressed or not: logsink-forward.8) into
// entries, one line each, and skips a record it has returned before (the
// forwarder sent it again under another message id).
#pragma once

#include <nats/nats.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace logsink::logctl::fleet {

// What a reader needs of a published JSON line (render/RENDERING.md,
// "JSON"; the forwarder's notices, logsink-forward.8): the object's own
// keys only, read without building the whole object. A key of another type
// than its own is left at its default; u64 keys prefer their exact decimal
// copies (seq_str, ts_ns_str, dropped_since_ns_str).
struct Fields {
  uint64_t seq = 0, ts_ns = 0;
  uint32_t pid = 0, uid = 0, gid = 0, tid = 0, line = 0;
  uint32_t priority = 6;
  std::string app, comm, unit, file, msg, ring;
  bool has_fmt = false, mismatch = false;
  bool dropped = false;  // a DROPPED report
  uint64_t dropped_count = 0, dropped_since_ns = 0;
  bool lost = false, oversize = false;  // the forwarder's notices
  uint64_t notice_count = 0, first_seq = 0, last_seq = 0;
};
// Reads line (one JSON object) into *f. False when it is not one.
bool ParseFields(std::string_view line, Fields *f);

// One line of a body: a record, or the forwarder's notice in place of
// records (lost, oversize).
struct Entry {
  std::string line;  // the JSON line as published
  Fields f;
  bool notice = false;
  uint64_t ts_ns = 0;            // a notice: the time of the record before it
  uint64_t first = 0, last = 0;  // the record sequence numbers it covers
  std::string ring;              // the ring they are of (32 hex digits; "" unknown)
  uint64_t msg_seq = 0;          // the stream sequence of its message
  uint32_t line_no = 0;          // its line in that message, from 1
};

// Where a host's read resumes: one item of a fleet cursor (nats_read.cc).
struct HostPos {
  uint64_t msg_seq = 0;  // the message of the last entry read
  uint32_t lines = 0;    // that message's lines read
  std::string ring;      // the last entry's ring and record: the ring's records
  uint64_t rec_seq = 0;  //   up to it count as read
};

// The ranges of record sequence numbers of one ring a host has returned.
// At most kMaxRanges: past that the two lowest become one (the numbers
// between them, which a forwarder's --level or --app filter left out,
// count as returned), so gaps cost no memory per record.
class Shown {
 public:
  static constexpr size_t kMaxRanges = 1024;
  bool Covers(uint64_t first, uint64_t last) const;
  void Add(uint64_t first, uint64_t last);
  // The end of the lowest range: everything of the ring up to it is
  // returned (a cursor's record), whatever a publisher claims beyond.
  uint64_t LowestEnd() const { return ranges_.empty() ? 0 : ranges_.begin()->second; }

 private:
  std::map<uint64_t, uint64_t> ranges_;  // first -> last
};
// A host's rings: shared by the host's readers (PREFIX.HOST and
// PREFIX.HOST.>), so a record on both subjects shows once.
using ShownByRing = std::map<std::string, Shown>;

// Follow: the messages of every host's push consumer, in arrival order;
// a delivery waits for room while kMaxBytes of bodies wait (then the
// server's flow control holds the rest).
struct Inbox {
  static constexpr size_t kMaxBytes = 16u << 20;
  std::mutex mu;
  std::condition_variable ready, room;
  std::deque<std::pair<size_t, natsMsg *>> q;  // reader index, message (owned)
  size_t bytes = 0;                            // the bodies in q
  bool closing = false;                        // deliveries drop their message
  ~Inbox();
};

class HostReader {
 public:
  // host: the subject token; filter: the consumer's subject (PREFIX.HOST
  // or PREFIX.HOST.>); index: this reader's, in the Inbox; shown: the
  // host's, outliving the reader.
  HostReader(std::string host, std::string filter, size_t index, ShownByRing *shown);
  ~HostReader();
  HostReader(const HostReader &) = delete;
  HostReader &operator=(const HostReader &) = delete;

  const std::string &host() const { return host_; }
  const std::string &filter() const { return filter_; }

  // Before Open: resume after p (its message's first p.lines lines are
  // skipped; the records of p.ring up to p.rec_seq count as returned).
  // aged_out: the stream no longer holds p's message, so records between
  // p and what it still holds may be gone (TakeGap counts them).
  void Resume(const HostPos &p, bool aged_out);
  // The snapshot's pull consumer: from the resumed message, else the
  // messages stored since start_ns (> 0), else the stream's start; up to
  // stream sequence last_seq.
  bool Open(jsCtx *js, const std::string &stream, uint64_t start_ns, uint64_t last_seq,
            std::string *why);
  // The snapshot's next entry. False at its end (*why empty) or on an
  // error (*why).
  bool Next(Entry *e, std::string *why);
  // A reader that had no snapshot (its host came later): follow from the
  // stream sequence seq on.
  void FollowFrom(uint64_t seq) { next_seq_ = seq; }
  // After the snapshot: an ordered push consumer from the first message
  // after it; its messages go to inbox with this reader's index.
  bool Follow(jsCtx *js, const std::string &stream, Inbox *inbox, std::string *why);
  // Follow: a message from the inbox (taken over), then its entries.
  void Feed(natsMsg *m);
  bool NextFed(Entry *e);

  // After a Resume with aged_out: the records of the resumed ring between
  // the cursor's and the first one read since, gone from the stream (0:
  // none, or not known yet). Each gap is taken once.
  uint64_t TakeGap() { return std::exchange(gap_, 0); }
  uint64_t bad_lines() const { return bad_lines_; }
  // The ring's LowestEnd (Shown).
  uint64_t Progress(const std::string &ring) const;
  // Gives the consumer up without asking the server to delete it (it is
  // ephemeral and goes by itself): for a connection that is down.
  void Abandon();

 private:
  natsMsg *NextMessage(std::string *why);
  void Decode(natsMsg *m);
  void Bad(natsMsg *m, const std::string &what);
  bool NextLine(Entry *e);
  bool Take(std::string_view line, Entry *e);
  static void OnMessage(natsConnection *, natsSubscription *, natsMsg *m, void *closure);

  std::string host_, filter_;
  size_t index_;
  natsSubscription *sub_ = nullptr;  // the pull consumer, then the push one
  bool failed_ = false;              // Open failed: nothing to read
  Inbox *inbox_ = nullptr;
  natsMsgList list_{};
  int list_pos_ = 0;
  uint64_t pending_ = 0, last_seq_ = 0;
  uint64_t next_seq_ = 0;  // the stream sequence to follow from
  std::string body_;
  size_t body_pos_ = 0;
  uint64_t msg_seq_ = 0;  // the message being read
  uint32_t line_no_ = 0;
  uint32_t skip_lines_ = 0;  // Resume: lines of message resume_.msg_seq to pass over
  HostPos resume_;
  bool gap_check_ = false;  // Resume: the resumed ring's next record not seen yet
  uint64_t gap_ = 0;
  std::string ring_;                                    // the ring of the message being read
  uint64_t range_first_ = 0, range_last_ = UINT64_MAX;  // its batch's records
  uint64_t last_ts_ = 0;
  ShownByRing *shown_;
  uint64_t bad_lines_ = 0;
};

}  // namespace logsink::logctl::fleet
