// reader_session.h: one read through the daemon (PROTOCOL.md, "Reading
// through the daemon"): a user who cannot read the ring file asks for their
// own records over the socket. The daemon reads the ring with its own
// storage::RingReader and sends the records whose stored uid is the peer's
// (SO_PEERCRED), nothing else. Bounded per loop turn: at most
// blocks_per_turn blocks decoded and chunk bytes queued; the owner calls
// Step again only once the socket has taken what the last Step queued, so a
// reader that does not read costs nothing more and is lapped by the writer
// (told with READ_LOST when it reads on), never buffered.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "counters.h"
#include "logsink/proto/read.h"
#include "logsink/storage/ring.h"
#include "memory_budget.h"

namespace logsink::daemon {

// Blocks a read passes over by their summaries (most by their summary
// index entries, without reading them) for each block of its budget per
// turn (ReadLimits::blocks_per_turn): a pass-over costs a small fraction of
// decoding a block.
constexpr uint64_t kPassOversPerBlock = 64;

struct ReadLimits {
  uint32_t blocks_per_turn = 1;  // blocks decoded per Step (read_blocks_per_turn)
  uint32_t chunk = 64u << 10;    // bytes queued per Step (read_chunk)
};

// What a reader outside the ring's group gets of one of its own records
// (PROTOCOL.md, "Reading through the daemon"): the record, less the numbers
// that count everyone's writing (string-table id, source id, block number:
// 0) and with its block's times told only as far as they bear on this
// record (the clock pair moved to the record's timestamp; the open time only
// when the record's own clock is not trusted, else 0).
storage::Record OwnView(const storage::Record &rec);

class ReaderSession : private storage::Reporter {
 public:
  enum class State {
    kReading,   // more to read now: Step again once the socket drained
    kCaughtUp,  // following: Step again when the writer wrote
    kDone,      // READ_END sent, not following (or failed): close once sent
  };

  ReaderSession(Counters *counters, MemoryBudget *memory, uint32_t uid, const ls_read_req &req,
                ReadLimits limits);
  ~ReaderSession() override;
  ReaderSession(const ReaderSession &) = delete;
  ReaderSession &operator=(const ReaderSession &) = delete;

  // Opens the ring file and positions the read as the request says; sites
  // are looked up in the writer's string table (no copy per read). What
  // the read holds is charged to the memory bound of its uid (Charge).
  // False with the reason in *why (counted in readers_refused when the
  // memory bound refused it, else in read_errors).
  bool Open(const std::string &path, const storage::RingWriter *writer, std::string *why);
  // One turn's bounded work: appends READ_RECORD, READ_LOST and (once the
  // newest record was passed) READ_END frames to *out.
  void Step(std::string *out);
  State state() const { return state_; }
  uint32_t uid() const { return uid_; }

 private:
  void Take(std::string *out);  // Step's reading
  // Charges the read's memory: its reader's buffers at their largest for
  // this file (RingReader::BoundBytes; what it holds when that is more: a
  // block declaring many sources) and one chunk of frames. Charged whole
  // at the start, so that a read is refused rather than ended half way;
  // the price is a charge above what most reads hold (for 8 KiB blocks
  // 1.8 MiB where RSS grows by about 0.7 MiB a read), and for large
  // blocks a large one (the decoded block: 32 slots a tier). False (the
  // charge unchanged, the reason in *why) past a bound.
  bool Charge(std::string *why);
  void Corruption(uint64_t off, std::string_view reason) override;
  void Lost(uint64_t n) override;

  Counters *counters_;
  uint32_t uid_;
  ls_read_req req_;
  ReadLimits limits_;
  std::unique_ptr<storage::RingReader> reader_;
  MemoryCharge charge_;
  uint64_t charged_ = 0;
  State state_ = State::kReading;
  bool positioning_ = false;  // LAST: walking back to the n-th record, by Step
  bool ended_ = false;        // READ_END sent
  uint64_t lost_ = 0;         // records lost not yet reported
  uint64_t examined_ = 0;     // records of every uid passed over
  uint64_t next_seq_ = 0;     // one past the last record examined
  uint64_t skipped_ = 0;      // blocks passed over, as last counted
};

}  // namespace logsink::daemon
