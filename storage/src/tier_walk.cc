// tier_walk.cc: reading one tier block by block (TierReader::Next): slot
// reads (re-read while the writer may be writing the slot), decoding into
// Records, damaged and missing blocks, laps, blocks skipped by their
// summaries; and BlockDecoder, the same decoding of a block handed over whole.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ring_reader_impl.h"

namespace logsink::storage {

namespace {

// A record as Next returns it: d of the block with header h (opened_ns: when
// its writer opened it), its site looked up in the writer w's table when
// there is one (ReaderOptions::sites_from), else in st (reloaded from file
// when the writer interned it since).
void FillRecord(const internal::DecodedRecord &d, const BlockHeader &h, uint64_t opened_ns,
                internal::StringTable *st, const RingWriter *w, File *file, Record *rec) {
  // Every field, one by one (no `*rec = Record()`: per record, a reset of
  // the whole struct costs as much as the rest). A field added to Record
  // must be set here too.
  rec->kind = d.kind;
  rec->seq = h.first_rec + d.seq_off;
  rec->block_seq = h.seq;
  rec->block_opened_ns = opened_ns;
  rec->boot_id = h.boot_id;
  rec->block_open_mono_ns = h.open_mono;
  rec->block_open_real_ns = h.open_real;
  rec->ts_ns = d.ts;
  rec->source_id = d.has_source ? d.source_id : 0;
  if (d.source) {
    rec->pid = d.source->pid;
    rec->uid = d.source->uid;
    rec->gid = d.source->gid;
    rec->app = d.source->app;
    rec->comm = d.source->comm;
    rec->unit = d.source->unit;
  } else {
    rec->pid = rec->uid = rec->gid = 0;
    rec->app = rec->comm = rec->unit = {};
  }
  if (d.kind == Record::Kind::kDropped) {
    rec->dropped_count = d.dropped_count;
    rec->dropped_since_ns = d.dropped_since;
    rec->tid = 0;
    rec->site_id = 0;
    rec->site_known = false;
    rec->site = Site();
    rec->args = {};
    rec->truncated = 0;
    return;
  }
  rec->dropped_count = rec->dropped_since_ns = 0;
  rec->tid = d.tid;
  rec->site_id = d.site_id;
  if (d.site_id == 0) {
    rec->site = d.inline_site;
    rec->site_known = true;
  } else if (w) {
    // The writer interned every site before its records: nothing to reload.
    rec->site_known = w->LookupSite(d.site_id, &rec->site);
    if (!rec->site_known) rec->site = Site();
  } else {
    rec->site_known = st->Get(d.site_id, &rec->site);
    // An id above the table's last one: the writer interned it since. (One
    // at or below it that is not there is damaged or lost for good.)
    if (!rec->site_known && d.site_id > st->last_id() && st->Load(file).ok()) {
      rec->site_known = st->Get(d.site_id, &rec->site);
    }
    if (!rec->site_known) rec->site = Site();
  }
  rec->args = std::string_view(reinterpret_cast<const char *>(d.args), d.args_len);
  rec->truncated = d.truncated;
}

}  // namespace

Status TierReader::ReadBlock(uint64_t seq, std::vector<uint8_t> *buf, BlockHeader *h, Got *got,
                             BlockState *state, bool may_race) {
  const uint64_t slot = seq % layout_.block_count;
  uint32_t sleep_us = opts_.crc_retry_sleep_us;
  const int retries = may_race ? opts_.crc_retries : 0;
  for (int attempt = 0;; attempt++) {
    size_t n = 0;
    Status s = file_->PRead(layout_.SlotOffset(seq), buf->data(), layout_.block_size, &n);
    if (!s.ok()) return s;
    if (n < layout_.block_size) std::memset(buf->data() + n, 0, layout_.block_size - n);
    *state = internal::CheckBlock(buf->data(), layout_, slot, h);
    if (*state != BlockState::kBadCrc || attempt >= retries) break;
    // Possibly a read racing the writer's pwrite of this slot: look again.
    if (sleep_us) {
      env_->SleepMicros(sleep_us);
      sleep_us *= 2;
    }
  }
  switch (*state) {
    case BlockState::kValid:
      *got = h->seq == seq ? Got::kValid : h->seq > seq ? Got::kOverwritten : Got::kAbsent;
      break;
    case BlockState::kBadData:
      *got = Got::kBad;
      break;
    case BlockState::kEmpty:
      *got = Got::kAbsent;
      break;
    case BlockState::kBadHeader:
      *got = Got::kBad;
      break;
    case BlockState::kBadCrc:
      // A plausible header naming a later block: the asked one is gone either way.
      *got = h->seq > seq ? Got::kOverwritten : Got::kBad;
      break;
  }
  return Status::OK();
}

void TierReader::SkipDamaged(Got got, BlockState state, const BlockHeader &h) {
  // A block older than the newest is missing or corrupt: report it once and
  // go on after it (a jump in record numbers there is not "lost").
  if (reported_ != b_) {
    std::string why;
    if (got == Got::kBad) {
      why = internal::BlockStateName(state);
    } else {
      why = "block ";
      why += std::to_string(b_);
      why += " is missing (slot holds ";
      if (state == BlockState::kEmpty) {
        why += "nothing";
      } else {
        why += "block ";
        why += std::to_string(h.seq);
      }
      why += ")";
    }
    Report(layout_.SlotOffset(b_), why);
    reported_ = b_;
  }
  gap_ok_ = true;
  b_++;
}

// Step 1, the common case (one record of the loaded block), comes first,
// without a Status of its own and inlined into Next, which runs it once per
// record: as a call of its own it cost 1.5% more instructions in a plain
// `logctl cat` of a tiered ring (callgrind).
[[gnu::always_inline]] inline bool TierReader::TakeLoaded(Record *rec, Step *step) {
  internal::DecodedRecord d;
  BlockCursor::Result r;
  while ((r = cursor_.Next(&d)) == BlockCursor::kRecord) {
    uint64_t seq = h_.first_rec + d.seq_off;
    if (have_expect_ && seq < expect_) continue;  // already returned (or before the seek)
    if (skip_) {
      skip_--;
      continue;
    }
    FillRecord(d, h_, OpenedNs(h_), st_, opts_.sites_from, file_, rec);
    have_expect_ = true;
    expect_ = seq + 1;
    *step = Step::kRecord;
    return true;
  }
  if (r == BlockCursor::kMalformed) {
    if (reported_ != b_) {
      Report(layout_.SlotOffset(b_) + cursor_.pos(), "malformed entry");
      reported_ = b_;
    }
    gap_ok_ = true;
    b_++;
    loaded_ = false;
    *step = Step::kAgain;
    return true;
  }
  if (h_.sealed()) {
    b_++;
    loaded_ = false;
    *step = Step::kAgain;
    return true;
  }
  return false;  // a partial block: read it again and see whether it grew
}

// Next is a loop over one question: "what is in block b_ now?". Each pass
// takes the first of these steps that applies (TakeLoaded, else ReadStep)
// and says what it did; Next returns a record or a block, returns "no new
// records", or goes on:
//   1. TakeLoaded (block b_ is decoded in cursor_): its next record with
//      sequence >= expect_; at the end of a sealed block, or at a malformed
//      entry (reported once), go to b_ + 1; a partial block falls to 3.
//   2. PassOverByIndex: a filtered read below the newest block passes b_
//      over when its summary index entry cannot match, without reading it.
//   3. read block b_. Valid and matching: TakeBlock loads it (a partial
//      block that did not grow is "no new records"), first counting a jump
//      in sequence numbers as lost unless gap_ok_ says a damaged block was
//      skipped just before; or hands it over whole. Valid but not matching
//      its summary: PassOver.
//   4. not valid: Missing. Below the newest block seen, damage: read it once
//      more, then report and skip it. Else ask FindNewest. Lapped by the
//      writer -> jump to the oldest block present; b_ is newest now -> read
//      again; b_ is past the newest -> caught up ("no new records"; a torn
//      newest block is reported once); else b_ is missing between valid
//      blocks -> read it once more (reread_: the writer may have been
//      mid-write), then report it and skip it.
// The state: b_ (block), expect_/have_expect_ (next record wanted; unset after
// a seek), gap_ok_ (skipped damage: a jump is not loss), reported_ (report a
// block once), reread_ (re-read a block once). The guard only turns a damaged
// ring that would loop forever into Corruption; a sound ring never nears it.
Status TierReader::Next(Record *rec, BlockImage *img, bool *whole, bool bounded) {
  if (whole) *whole = false;
  const int limit = 4 * int(std::min<uint64_t>(layout_.block_count, 1 << 20)) + 16;
  const uint64_t budget = bounded ? opts_.pass_over_per_next : 0;
  uint64_t passed = 0;
  for (int guard = 0; guard < limit; guard++) {
    Step step;
    if (!loaded_ || !TakeLoaded(rec, &step)) {
      Status s = ReadStep(img, whole, &step);
      if (!s.ok()) return s;
    }
    switch (step) {
      case Step::kRecord:
      case Step::kBlock:
        return Status::OK();
      case Step::kCaughtUp:
        return Status::NotFound("no new records");
      case Step::kPassedOver:
        guard--;  // a pass-over always moves on by one block: not a loop
        if (budget && ++passed >= budget) return Status::Yield("passed over its budget of blocks");
        break;
      case Step::kAgain:
        break;
    }
  }
  return Status::Corruption(path_ + ": no progress while reading (damaged ring?)");
}

Status TierReader::ReadStep(BlockImage *img, bool *whole, Step *step) {
  bool passed = false;
  Status s = PassOverByIndex(step, &passed);
  if (!s.ok() || passed) return s;
  Got got;
  BlockState state;
  BlockHeader h;
  s = ReadBlock(b_, &blk_, &h, &got, &state, !have_newest_ || b_ >= newest_);
  if (!s.ok()) return s;
  if (got == Got::kValid) {
    *step = MayMatch(h) ? TakeBlock(h, img, whole) : PassOver(h);
    return Status::OK();
  }
  loaded_ = false;
  return Missing(got, state, h, step);
}

Status TierReader::PassOverByIndex(Step *step, bool *passed) {
  // Below the newest block found, a filtered read asks the summary index
  // first (FORMAT.md, "Summary index"): an entry that cannot match passes
  // the block over without reading it; no entry, or one that may match,
  // reads the block as always.
  // (Not where the newest block seen says the writer lapped b_: reading
  // it finds out, and reports the records lost.)
  if (!filter_on_ || !use_index_ || loaded_ || !have_newest_ || b_ >= newest_ ||
      b_ + layout_.block_count <= newest_) {
    return Status::OK();
  }
  BlockHeader h;
  bool have = false;
  Status s = index_.Get(file_, layout_, b_, newest_, &h, &have);
  if (!s.ok() || !have || MayMatch(h)) return s;
  index_skipped_++;
  *step = PassOver(h);
  *passed = true;
  return Status::OK();
}

TierReader::Step TierReader::TakeBlock(const BlockHeader &h, BlockImage *img, bool *whole) {
  // Records are only appended: the same count is the same block.
  if (loaded_ && h.count == h_.count && h.raw == h_.raw && h.flags == h_.flags) {
    return Step::kCaughtUp;  // the partial block did not grow
  }
  // The next record wanted once this block is taken, and the records
  // the writer overwrote before it.
  uint64_t expect = expect_, lost = 0;
  if (!gap_ok_ && have_expect_ && h.first_rec > expect) {
    lost = h.first_rec - expect;
    expect = h.first_rec;
  }
  if (!have_expect_ || gap_ok_) expect = std::max(gap_ok_ ? expect : 0, h.first_rec);
  // Every record of a sealed block is wanted: hand it over undecoded.
  const bool hand = img && h.sealed() && !sparse_ && skip_ == 0 && expect == h.first_rec;
  const uint8_t *entries = hand ? nullptr : expander_.Expand(blk_.data(), h);
  if (!hand && !entries) {
    // The CRC passed, so this is no write in progress: damage (or a crafted file).
    loaded_ = false;
    SkipDamaged(Got::kBad, BlockState::kBadData, h);
    return Step::kAgain;
  }
  if (lost && reporter_ && !sparse_) reporter_->Lost(lost);
  have_expect_ = true;
  expect_ = expect;
  gap_ok_ = false;
  if (hand) {
    img->bytes.assign(blk_.begin(), blk_.end());
    img->block_seq = h.seq;
    img->first_seq = h.first_rec;
    img->count = h.count;
    img->offset = layout_.SlotOffset(b_);
    expect_ = h.first_rec + h.count;
    loaded_ = false;
    b_++;
    *whole = true;
    return Step::kBlock;
  }
  h_ = h;
  cursor_.Reset(entries, h_);
  loaded_ = true;
  return Step::kAgain;  // the cursor skips records before expect_
}

Status TierReader::Missing(Got got, BlockState state, const BlockHeader &h, Step *step) {
  const uint64_t count = layout_.block_count;
  *step = Step::kAgain;
  // A slot past the end of a file cut short, below the newest block: its
  // block is gone with the rest of the file, which the reader reported once
  // when it opened the file. On to slot 0 of the next lap, the jump in
  // records not counted as lost, as after skipped damage.
  if (b_ % count >= slots_in_file_ && have_newest_ && b_ < newest_) {
    b_ = (b_ / count + 1) * count;
    gap_ok_ = true;
    return Status::OK();
  }
  // Below the newest block seen and not lapped by it: the writer is done
  // with block b_, so this is damage (or the writer lapping b_ right now,
  // which the re-read shows as a valid newer block). A slot whose damaged
  // header claims a newer block is damage too: only a valid newer block
  // proves a lap, or a slot holding the block right after the newest (the
  // writer's write in progress, or torn by a crash): both take the search
  // below. Otherwise no search, so each damaged block costs two reads.
  const bool maybe_lap =
      got == Got::kOverwritten && (state == BlockState::kValid || h.seq == newest_ + 1);
  if (!maybe_lap && have_newest_ && b_ < newest_ && b_ + count > newest_) {
    RereadOrSkip(got, state, h);
    return Status::OK();
  }

  bool found;
  BlockHeader newest;
  Status s = FindNewest(&found, &newest);
  if (!s.ok()) return s;
  // Lapped: the newest block is a lap ahead, or the slot holds a valid newer
  // block, or the torn block right after the newest (the writer writing it).
  // A damaged header that merely claims some later number proves nothing: a
  // reader that jumped on it would read on past the newest block (so "the
  // last n" would be more than n).
  const bool lapped = (found && b_ + count <= newest.seq) ||
                      (got == Got::kOverwritten &&
                       (state == BlockState::kValid || (found && h.seq == newest.seq + 1)));
  if (lapped) {
    // Lapped by the writer: go on at the oldest block present. The records
    // skipped are reported as lost when the next block is read.
    uint64_t lowest = found ? Lowest(newest.seq) : b_ + 1;
    b_ = std::max(b_ + 1, lowest);
    return Status::OK();
  }
  if (found && newest.seq == b_) return Status::OK();  // it became valid meanwhile: read it again
  if (!found || b_ > newest.seq) {
    // Caught up: block b_ is not written yet (or is being written).
    if (got == Got::kBad && h.seq == b_ && state == BlockState::kBadCrc && reported_ != b_) {
      Report(layout_.SlotOffset(b_),
             "newest block " + std::to_string(b_) + " fails its CRC (torn write?)");
      reported_ = b_;
    }
    *step = Step::kCaughtUp;
    return Status::OK();
  }
  // Block b_ looked missing, but a newer block exists now. The writer
  // writes block b_ before it starts b_ + 1, so the first read may simply
  // have raced that write: read b_ once more before calling it missing.
  RereadOrSkip(got, state, h);
  return Status::OK();
}

void TierReader::RereadOrSkip(Got got, BlockState state, const BlockHeader &h) {
  if (reread_ != b_) {
    reread_ = b_;
    return;
  }
  SkipDamaged(got, state, h);
}

TierReader::Step TierReader::PassOver(const BlockHeader &h) {
  if (!sparse_ && !gap_ok_ && have_expect_ && h.first_rec > expect_ && reporter_) {
    reporter_->Lost(h.first_rec - expect_);
  }
  have_expect_ = true;
  // (A sparse block's last number is not in its header; the next block
  // starts after it.)
  expect_ = std::max(expect_, h.first_rec + (sparse_ ? std::min<uint64_t>(h.count, 1) : h.count));
  skip_ = 0;
  gap_ok_ = false;
  loaded_ = false;
  skipped_++;
  skipped_records_ += h.count;
  if (!h.sealed()) return Step::kCaughtUp;  // read again when it grows
  b_++;
  return Step::kPassedOver;
}

void TierReader::SetFilter(const internal::SummaryFilter *f, bool use_index) {
  filter_on_ = f != nullptr;
  if (f) filter_ = *f;
  use_index_ = use_index;
}

// ---- BlockDecoder -----------------------------------------------------------

BlockDecoder::BlockDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockDecoder::~BlockDecoder() = default;

void BlockDecoder::Decode(const BlockImage &img, std::vector<Record> *out, std::string *problem,
                          uint64_t *problem_off) {
  Impl &d = *impl_;
  problem->clear();
  *problem_off = 0;
  // (A failed read is tried again at the next block; meanwhile a site not
  // loaded is tried again as Next tries one the writer interned since.)
  if (!d.loaded_) d.loaded_ = d.st_.Load(d.file_).ok();
  const BlockHeader h = internal::ParseBlockHeader(img.bytes.data());
  const uint8_t *entries = d.expander_.Expand(img.bytes.data(), h);
  if (!entries) {
    *problem = internal::BlockStateName(BlockState::kBadData);
    *problem_off = img.offset;
    out->clear();
    return;
  }
  d.cursor_.Reset(entries, h);
  const uint64_t opened = OpenedNs(d.layout_, h);
  // The records of the last block are overwritten, not made anew (FillRecord
  // sets every field).
  internal::DecodedRecord r;
  BlockCursor::Result res;
  size_t n = 0;
  while ((res = d.cursor_.Next(&r)) == BlockCursor::kRecord) {
    if (n == out->size()) out->emplace_back();
    FillRecord(r, h, opened, &d.st_, nullptr, d.file_, &(*out)[n++]);
  }
  out->resize(n);
  if (res == BlockCursor::kMalformed) {
    *problem = "malformed entry";
    *problem_off = img.offset + d.cursor_.pos();
  }
}

}  // namespace logsink::storage
