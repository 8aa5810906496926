// reader_session.cc: one read through the daemon (see reader_session.h).
#include "reader_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "reply.h"

namespace logsink::daemon {

ReaderSession::ReaderSession(Counters *counters, MemoryBudget *memory, uint32_t uid,
                             const ls_read_req &req, ReadLimits limits)
    : counters_(counters), uid_(uid), req_(req), limits_(limits), charge_(memory, uid) {
  counters_->readers_current++;
  counters_->readers_total++;
}

ReaderSession::~ReaderSession() { counters_->readers_current--; }

bool ReaderSession::Charge(std::string *why) {
  const uint64_t need =
      std::max(reader_->BoundBytes(), reader_->HeldBytes()) + uint64_t(limits_.chunk);
  if (need <= charged_) return true;
  if (!charge_.Hold(need, why)) return false;
  charged_ = need;
  return true;
}

bool ReaderSession::Open(const std::string &path, const storage::RingWriter *writer,
                         std::string *why) {
  // The daemon is the ring's only writer and writes on this thread: a block
  // is never read half written, so a bad CRC is not retried (the retries
  // sleep, which the loop must not); and its string table is the file's,
  // so each read need not load a copy (up to 2x the table's region each).
  storage::ReaderOptions opts;
  opts.crc_retries = 0;
  opts.sites_from = writer;
  opts.tails_from = writer;  // no pass over a tier not yet written, on the loop
  // Blocks that hold no record of this uid (their summaries, FORMAT.md
  // "Block summaries", most from the summary index without reading the
  // block) are passed over, kPassOversPerBlock of them for a block's
  // share of the turn's budget.
  opts.pass_over_per_next = uint32_t(
      std::min<uint64_t>(uint64_t(limits_.blocks_per_turn) * kPassOversPerBlock, UINT32_MAX));
  storage::Status s =
      storage::RingReader::Open(storage::Env::Default(), path, this, opts, &reader_);
  if (s.ok()) {
    storage::RecordFilter own;
    own.uids = {uid_};
    reader_->SetFilter(&own);
  }
  if (s.ok() && !Charge(why)) {
    *why = "a read " + *why;
    counters_->readers_refused++;
    return false;
  }
  if (s.ok()) {
    switch (req_.from) {
      case LS_READ_OLDEST:
        s = reader_->SeekOldest();
        break;
      case LS_READ_LAST:
        // The walk back to the n-th record from the end is done by Step,
        // a budget of blocks per turn (n may reach back over the ring).
        s = reader_->StartSeekLast(req_.arg);
        positioning_ = true;
        break;
      case LS_READ_TIME:
        s = reader_->SeekTime(req_.arg);
        break;
      case LS_READ_SEQ:
        s = reader_->SeekSeq(req_.arg);
        break;
      default:
        s = reader_->SeekEnd();
        break;
    }
  }
  if (!s.ok() && !s.IsNotFound()) {
    *why = s.ToString();
    counters_->read_errors++;
    return false;
  }
  return true;
}

void ReaderSession::Corruption(uint64_t off, std::string_view reason) {
  spdlog::debug("read for uid {}: offset {}: {} (skipped)", uid_, off, reason);
}

void ReaderSession::Lost(uint64_t n) {
  lost_ += n;
  counters_->read_lost += n;
}

storage::Record OwnView(const storage::Record &rec) {
  storage::Record r = rec;
  // Numbers every writer advances: the string table's ids (shared by every
  // uid's identical sites, so an old id tells that someone else logged the
  // same site first), the sources (everyone's connections) and the blocks.
  r.site_id = 0;
  r.source_id = 0;
  r.block_seq = 0;
  // The block's clock pair, moved to the record's own time: the monotonic
  // time a reader computes from it is the same, and when the block was
  // opened (by someone else's records) is not told.
  r.block_open_mono_ns = rec.ts_ns != 0 ? storage::MonotonicTime(rec) : 0;
  r.block_open_real_ns = rec.block_open_real_ns != 0 ? rec.ts_ns : 0;
  // The block's open time matters to a reader only where the record's own
  // clock is not trusted (more than kClockSlackNs behind it).
  if (storage::FilterTime(rec) == rec.ts_ns) r.block_opened_ns = 0;
  return r;
}

void ReaderSession::Step(std::string *out) {
  if (state_ == State::kDone) return;
  Take(out);
  const uint64_t skipped = reader_->blocks_skipped();
  counters_->read_blocks_skipped += skipped - skipped_;
  skipped_ = skipped;
  std::string why;
  if (!Charge(&why)) {
    // Its reader grew past the estimate (a block declaring many sources)
    // and the bound has no room: the read ends without READ_END (an error
    // of the read, as PROTOCOL.md says).
    spdlog::warn("read for uid {} ended: it {}", uid_, why);
    counters_->read_errors++;
    state_ = State::kDone;
  }
}

void ReaderSession::Take(std::string *out) {
  if (positioning_) {
    bool done = false;
    // The same budget as reading: blocks_per_turn blocks read per turn.
    storage::Status s = reader_->SeekLastStep(limits_.blocks_per_turn, &done);
    if (!s.ok()) {
      spdlog::warn("read for uid {} ended: {}", uid_, s.ToString());
      counters_->read_errors++;
      state_ = State::kDone;
      return;
    }
    // Positioned or not, the turn's blocks are spent: records next turn.
    positioning_ = !done;
    if (!done) counters_->read_budget_yields++;
    state_ = State::kReading;
    return;
  }
  storage::Record rec;
  uint64_t blocks = 0, block = 0;
  while (out->size() < limits_.chunk) {
    storage::Status s = reader_->Next(&rec);
    if (lost_) {  // reported where it happened: before the records after the gap
      AppendReadLost(lost_, out);
      lost_ = 0;
    }
    if (s.IsYield()) {  // passed over the turn's share of blocks
      counters_->read_budget_yields++;
      state_ = State::kReading;
      return;
    }
    if (s.IsNotFound()) {
      if (!ended_) {
        // The records of blocks passed over by their summaries were
        // examined too; at the end, the reader knows the next number.
        next_seq_ = std::max(next_seq_, reader_->next_seq());
        AppendReadEnd(reader_->layout().ring_id, examined_ + reader_->records_skipped(), next_seq_,
                      out);
        ended_ = true;
      }
      state_ = (req_.flags & LS_READ_FOLLOW) ? State::kCaughtUp : State::kDone;
      return;
    }
    if (!s.ok()) {
      // The client sees the connection end without READ_END: an error.
      spdlog::warn("read for uid {} ended: {}", uid_, s.ToString());
      counters_->read_errors++;
      state_ = State::kDone;
      return;
    }
    examined_++;
    next_seq_ = rec.seq + 1;
    if (rec.uid == uid_) {
      counters_->read_records++;
      counters_->read_bytes +=
          AppendReadRecord(OwnView(rec), (req_.flags & LS_READ_FIELDS) != 0, out);
    }
    if (blocks == 0 || rec.block_seq != block) {
      block = rec.block_seq;
      if (++blocks > limits_.blocks_per_turn) {
        counters_->read_budget_yields++;
        state_ = State::kReading;
        return;
      }
    }
  }
  state_ = State::kReading;
}

}  // namespace logsink::daemon
