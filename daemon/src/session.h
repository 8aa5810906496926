// session.h: the protocol state of one client connection, without I/O: bytes
// in (split anywhere), frames decoded with proto/frame.h, records validated
// against their site's signature and appended to the ring; replies out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "counters.h"
#include "logsink/proto/read.h"
#include "logsink/storage/ring.h"
#include "peer.h"
#include "ratelimit.h"
#include "text_record.h"

struct ls_frame;

namespace logsink::daemon {

// The bytes of a text-stream line that are kept; the rest is cut and counted.
constexpr size_t kMaxTextLine = 8192;

// Per-connection limits, fixed when the connection is accepted.
struct Limits {
  uint32_t max_frame = 256u << 10;
  uint32_t max_sites = 65536;
  uint32_t max_app = 64;
};

// A record of a RECORDS frame that passed validation, waiting to be appended.
struct ParsedRecord {
  uint32_t entry;  // the site's index in the session's cache
  uint32_t args_len;
  const uint8_t *args;
  uint64_t ts_ns;
  uint64_t truncated;
};

// The rate limiter's kind for storage and accept errors (one past the Err kinds):
// they are rare and come from the disk or the kernel, not from one client.
constexpr int kLogKindWrite = int(Err::kCount);
// ... and for relayed streams whose pid was not taken (Session::OnHello).
constexpr int kLogKindRelay = int(Err::kCount) + 1;
// ... and for refused reads through the daemon (Server::StartReader).
constexpr int kLogKindRead = int(Err::kCount) + 2;

// The memory bound of all connection state (config: limits.max_memory and
// max_memory_per_uid). Sessions charge what they hold and release it when
// it shrinks or they go; a charge that would pass a bound is refused.
struct MemoryBudget {
  MemoryBudget() = default;
  MemoryBudget(const MemoryBudget &) = delete;
  MemoryBudget &operator=(const MemoryBudget &) = delete;
  uint64_t limit = 64ull << 20;
  uint64_t per_uid_limit = 16ull << 20;  // not applied to uid 0
  uint64_t own_used = 0;
  uint64_t *used = &own_used;  // the server points it at Counters::memory_used
  std::unordered_map<uint32_t, uint64_t> by_uid;

  bool Charge(uint32_t uid, uint64_t n) {
    uint64_t &mine = by_uid[uid];
    if (*used + n > limit || (uid != 0 && mine + n > per_uid_limit)) {
      if (mine == 0) by_uid.erase(uid);
      return false;
    }
    *used += n;
    mine += n;
    return true;
  }
  void Release(uint32_t uid, uint64_t n) {
    *used -= n;
    auto it = by_uid.find(uid);
    if (it != by_uid.end() && (it->second -= n) == 0) by_uid.erase(it);
  }
};

// What sessions share: the daemon's writer, counters and error log.
struct Context {
  storage::RingWriter *writer = nullptr;
  TextSites *text = nullptr;            // free-text records (text streams, syslog)
  std::string ring_path;                // the ring file's absolute path (RING replies)
  uint64_t ring_dev = 0, ring_ino = 0;  // its stat(2) st_dev and st_ino
  Counters *counters = nullptr;
  uint64_t next_source_id = 1;  // the next connection's Source id
  RateLimit<int(Err::kCount) + 3> log_limit;
  // One frame's validated records; shared (one thread), its capacity reused.
  std::vector<ParsedRecord> scratch;
  MemoryBudget memory;
};

class Session {
 public:
  Session(Context *ctx, const Limits &limits, Peer peer);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  // Consumes bytes read from the connection. Returns false when the
  // connection must be closed: the error is counted and logged, and out() may
  // hold a last frame (REFUSE) to send first.
  bool Feed(const uint8_t *p, size_t n, uint64_t now_ms);

  // The peer closed its end (EOF): a text stream's partial last line is
  // stored. Returns whether it stored one. While the daemon stops
  // (stopping), a relayed stream's partial line is discarded instead: its
  // relay resends it whole to the next daemon (PROTOCOL.md, "Relayed
  // streams").
  bool Finish(bool stopping = false);
  // Appends a text stream's acknowledgment to out(): a STATS frame with the
  // lines stored, cut and partial on this connection (PROTOCOL.md, "Text
  // streams").
  void AppendTextAck();

  // A frame has started but not completed; since when (loop time, ms). A
  // text stream's unfinished line is not a partial frame: a program may
  // write half a line and take its time.
  bool partial() const { return !pending_.empty(); }
  // The connection carries text lines (HELLO with LS_HELLO_TEXT).
  bool text() const { return text_; }
  uint64_t partial_since_ms() const { return partial_since_ms_; }

  // Bytes to send to the client (STATS, REFUSE). The owner sends and erases.
  std::string &out() { return out_; }

  // Counts and logs an error that the owner detected (stall).
  void Fail(Err e, std::string_view detail);

  const Peer &peer() const { return peer_; }
  // The READ_REQ this connection sent, if any: it is then a read through
  // the daemon (reader_session.h), served by the owner.
  const std::optional<ls_read_req> &read_request() const { return read_req_; }
  // Whether a whole frame has arrived yet (a silent connection holds a slot).
  bool any_frame() const { return frames_ > 0; }
  uint64_t source_id() const { return source_.id; }

 private:
  struct SiteEntry {
    uint32_t global = 0;   // string-table id; 0 = the table is full, store inline
    uint32_t sig_off = 0;  // NUL-terminated signature in sigs_
    uint32_t sig_len = 0;
    uint32_t inline_idx = 0;  // into inline_ when global == 0
    storage::Site site;       // level and line; fmt/file only when inline
  };

  bool HandleFrame(const ls_frame &f);
  bool OnHello(const uint8_t *p, size_t n);
  bool OnIntern(const uint8_t *p, size_t n);
  bool InlineSiteFits(uint64_t site_id, const char *sig, size_t nargs, storage::Site *site);
  bool OnRecords(const uint8_t *p, size_t n);
  bool OnDropped(const uint8_t *p, size_t n);
  // Text streams: splits bytes into lines, each one record.
  bool FeedText(const uint8_t *p, size_t n);
  void EndLine();
  // Counts and reports (rate-limited) a failed append to the ring.
  void WriteFailed(const storage::Status &s);
  const SiteEntry *Lookup(uint32_t site) const {
    uint32_t i = 0;
    if (site < index_.size()) {
      i = index_[site];
    } else if (!sparse_.empty()) {
      auto it = sparse_.find(site);
      if (it != sparse_.end()) i = it->second;
    }
    return i ? &entries_[i - 1] : nullptr;
  }
  // Charges the budget for what this session holds now (or releases what it
  // no longer holds). False (counted, logged) when a bound would be passed.
  bool Account();
  uint64_t Holding() const;

  Context *ctx_;
  Limits limits_;
  Peer peer_;
  bool hello_ = false;
  std::string app_;
  storage::Source source_;
  std::string relay_comm_;  // a relayed stream's child's name (source_.comm points here)

  std::vector<uint8_t> pending_;  // a partial frame, at most max_frame + 4 bytes

  // Text streams (PROTOCOL.md, "Text streams").
  bool text_ = false;
  uint32_t text_flags_ = 0;
  std::string line_;       // the current line's first kMaxTextLine bytes
  uint64_t line_cut_ = 0;  // bytes of the current line past those
  uint64_t lines_ = 0, lines_cut_ = 0, partial_lines_ = 0;  // this connection's
  uint64_t partial_since_ms_ = 0;
  std::string out_;
  std::optional<ls_read_req> read_req_;

  // client site id -> entries_ index + 1: dense below kDenseSites, a hash
  // map above, so a huge site id costs one entry, not a table up to it.
  static constexpr uint32_t kDenseSites = 4096;
  std::vector<uint32_t> index_;
  std::unordered_map<uint32_t, uint32_t> sparse_;
  uint64_t inline_bytes_ = 0;  // bytes of inline_
  uint64_t charged_ = 0;       // what Account() charged to ctx_->memory
  uint64_t frames_ = 0;        // whole frames handled
  std::vector<SiteEntry> entries_;
  std::string sigs_;
  std::vector<std::string> inline_;  // fmt then file, per inline site
};

}  // namespace logsink::daemon
