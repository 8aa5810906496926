// session.h: the protocol state of one client connection, without I/O: bytes
// in (split anywhere), frames reassembled, decoded with proto/frame.h and
// dispatched by type: HELLO, INTERN (site_cache.h), RECORDS (validated
// against their site's signature, then appended to the ring), DROPPED,
// STATS_REQ, RING_REQ, READ_REQ; after a text HELLO the rest is lines
// (text_lines.h). Replies out; what it holds is charged to the memory
// budget (memory_budget.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "context.h"
#include "counters.h"
#include "levels.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/read.h"
#include "logsink/storage/ring.h"
#include "memory_budget.h"
#include "peer.h"
#include "shm_region.h"
#include "site_cache.h"
#include "text_lines.h"

struct ls_frame;

namespace logsink::daemon {

// Per-connection limits, fixed when the connection is accepted.
struct Limits {
  uint32_t max_frame = 256u << 10;
  uint32_t max_sites = 65536;
  uint32_t max_app = 64;
  // The shared buffers handed to a client with the capability SHM
  // (shm.h); slots 0: none.
  uint32_t shm_slots = 0;
  uint32_t shm_slot_bytes = 256u << 10;
  uint32_t shm_sites_bytes = 64u << 10;
};

class Session {
 public:
  Session(Context *ctx, const Limits &limits, Peer peer);
  ~Session() = default;
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
  bool text() const { return text_.has_value(); }
  uint64_t partial_since_ms() const { return partial_since_ms_; }

  // Bytes to send to the client (STATS, REFUSE). The owner sends at most
  // sendable() of them and erases what it sent through Sent().
  std::string &out() { return out_; }
  size_t sendable() const {
    return stats_wait_.empty() ? out_.size() : std::min(stats_wait_.front().at, out_.size());
  }
  void Sent(size_t n);
  // With the writer thread, a STATS_REQ's answer waits until the thread has
  // appended every record stored before the request (the loop does not
  // wait: RingWriter::Mark); what comes after it in out() waits too, so
  // answers keep the order of the requests. The owner calls AnswerStats
  // with RingWriter::written() while stats_waiting().
  bool stats_waiting() const { return !stats_wait_.empty(); }
  void AnswerStats(uint64_t written);

  // Counts and logs an error that the owner detected (stall). closes: the
  // connection ends for it; else one record alone is refused (a staged
  // record read from a region).
  void Fail(Err e, std::string_view detail, bool closes = true);

  const Peer &peer() const { return peer_; }
  // The READ_REQ this connection sent, if any: it is then a read through
  // the daemon (reader_session.h), served by the owner.
  const std::optional<ls_read_req> &read_request() const { return read_req_; }
  // Whether a whole frame has arrived yet (a silent connection holds a slot).
  bool any_frame() const { return frames_ > 0; }
  uint64_t source_id() const { return source_.id; }

  // Run-time levels (PROTOCOL.md, "Levels at run time"). A LEVEL_REQ this
  // connection sent, if any: the owner answers it (server_levels.cc).
  struct LevelRequest {
    uint8_t op;
    LevelRule rule;
  };
  const std::optional<LevelRequest> &level_request() const { return level_req_; }
  // A CENSUS_REQ came (the owner answers it, server_levels.cc); the call
  // sites this client sent (CENSUS: the wire form of each, one after the
  // other) and how many.
  bool census_request() const { return census_req_; }
  const std::string &census() const { return census_; }
  uint64_t census_count() const { return census_n_; }
  // Whether HELLO came, and with which capabilities in use (LS_CAP_*).
  bool hello() const { return hello_; }
  uint32_t caps() const { return caps_; }
  // What rules match this client against, its own rules (HELLO v2) and the
  // text last sent to it.
  LevelClient level_client() const;
  const std::string &own_levels() const { return own_levels_; }
  const std::string &pushed_levels() const { return pushed_levels_; }
  // Sends `text` in a LEVELS frame (appended to out()) when the client
  // takes them and its text changed. Returns whether it did.
  bool PushLevels(const std::string &text);
  // Stores a record of a level change made by this connection's peer (who,
  // what) in the ring.
  void RecordLevelChange(std::string_view what);
  // Charges the memory budget for what the session holds now (an answer
  // in out()); false (counted, logged) when that passes a bound.
  bool Charge() { return Account(); }

  // Shared buffers (PROTOCOL.md, "Shared buffers"). The descriptor to send
  // with the next bytes of out() (-1: none); FdSent once a send took it.
  int fd_to_send() const { return region_ && !fd_sent_ ? region_->fd() : -1; }
  void FdSent() { fd_sent_ = true; }
  // Whether the connection has a region not read or let go yet (a region
  // goes once it is).
  bool shm_pending() const { return region_ != nullptr; }
  // The peer ended its stream: whether its region is to be read (records
  // staged past a slot's last RECORDS_AT, and the client did not let them
  // go: `released`); if not, the region goes now (counted in shm_kept when
  // records were let go).
  bool ShmEnd();
  // Stores what the region holds past what the client sent (the site log,
  // then each slot from its last RECORDS_AT on), at most about `budget`
  // bytes of staged records per call. True once everything is read.
  bool ShmDrain(size_t budget);

 private:
  bool HandleFrame(const ls_frame &f);
  // A request frame that may be answered (else counted and logged: false).
  bool TakeRequest(const char *name, bool well_formed);
  // Whether the peer may read the ring file now (its owner, group and mode,
  // peer.h's MayReadFile): only then does it get STATS, every counter of
  // everyone's records (PROTOCOL.md, "STATS counters").
  bool MayReadRing() const;
  bool OnHello(const uint8_t *p, size_t n);
  bool OnIntern(const uint8_t *p, size_t n);
  bool TextStreamFields(const ls_hello &h, std::vector<std::pair<std::string, std::string>> *out);
  bool OnRecords(const uint8_t *p, size_t n);
  bool OnDropped(const uint8_t *p, size_t n);
  bool OnCensus(const uint8_t *p, size_t n);
  bool OnRecordsAt(const uint8_t *p, size_t n);
  // HELLO with the capability SHM: a region, if the memory bound allows.
  bool MakeRegion();
  bool DrainLogStep(size_t *budget);
  // The region goes (read, or let go), with its charge and the drain's
  // buffers.
  void ReleaseRegion();
  // Stores slot drain_slot_'s records from drain_pos_ on, about `budget`
  // bytes at most; false once the slot is done.
  bool DrainSlotStep(size_t *budget);
  // The rest of the connection is text (after a text HELLO).
  bool FeedText(const uint8_t *p, size_t n);
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
  uint64_t partial_since_ms_ = 0;
  uint64_t frames_ = 0;  // whole frames handled
  std::string out_;
  struct StatsWait {
    size_t at;      // where in out_ the answer goes
    uint64_t mark;  // RingWriter::Mark() at the request
  };
  std::deque<StatsWait> stats_wait_;
  std::optional<ls_read_req> read_req_;
  std::optional<LevelRequest> level_req_;
  bool census_req_ = false;
  bool census_dropped_ = false;  // its census passed a bound and was let go
  std::string census_;           // CENSUS sites, as sent
  uint64_t census_n_ = 0;
  uint32_t caps_ = 0;
  std::string own_levels_, pushed_levels_;
  SiteCache sites_;
  MemoryCharge charge_;
  MemoryCharge shm_charge_;        // the region, to ctx->shm_memory
  std::optional<TextLines> text_;  // a text stream's lines (PROTOCOL.md, "Text streams")
  // Shared buffers: the region, each slot's position after its last
  // RECORDS_AT, and the drain at the end: the site log's progress, then
  // slot and position, the copy read (the log's or a slot's: within the
  // region's charge), the frame it is stored in, and the slot's head and
  // tid.
  std::unique_ptr<ShmRegion> region_;
  std::vector<uint64_t> sent_at_;
  bool fd_sent_ = false, drain_started_ = false, slot_loaded_ = false;
  bool log_loaded_ = false, log_done_ = false;
  uint32_t drain_slot_ = 0;
  uint64_t drain_pos_ = 0, drain_head_ = 0, drain_tid_ = 0;
  std::vector<uint8_t> drain_copy_, drain_frame_;
};

}  // namespace logsink::daemon
