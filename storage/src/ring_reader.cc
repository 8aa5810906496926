// ring_reader.cc: RingReader: reads records oldest -> newest across the
// file's tiers (each read by a TierReader: tier_walk.cc, tier_seek.cc),
// reports lost and skipped data, and opens the file (superblock, string
// table).
#include <algorithm>
#include <vector>

#include "locked_file.h"
#include "ring_reader_impl.h"
#include "superblock.h"
#include "verify.h"

namespace logsink::storage {

// ---- RingReader::Impl: the tiers in order -----------------------------------

// Every record of tier 2 is older (numbered lower) than every record of tier
// 1, and those than tier 0's (FORMAT.md, "Tiers"): reading the tiers one
// after the other, oldest first, gives the records in order. The chain keeps
// the next number wanted (next_) and enters each tier at it; losses are
// reported here: a jump the reader was asked to make (SeekSeq) and a lap of
// tier 0, after looking for the records it skipped in the older tiers (they
// may have been kept there).
class RingReader::Impl {
 public:
  File *file() const { return file_.get(); }
  uint64_t records_skipped() const {
    uint64_t n = 0;
    for (const auto &t : tiers_) n += t->skipped_records_;
    return n;
  }
  uint64_t next_seq() const {
    const uint64_t e = tiers_.empty() ? 0 : tiers_[cur_]->expect();
    return have_next_ ? std::max(next_, e) : e;
  }
  size_t HeldBytes() const {
    size_t n = 0;
    for (const auto &t : tiers_) n += t->HeldBytes();
    return n;
  }
  size_t BoundBytes() const {
    size_t n = 0;
    for (const auto &t : tiers_) n += t->BoundBytes();
    return n;
  }
  Status Open(Env *env, const std::string &path, Reporter *reporter, const ReaderOptions &opts) {
    std::unique_ptr<File> file;
    Status s = env->OpenFile(path, false, &file);
    if (!s.ok()) return s;
    return Init(env, std::move(file), path, reporter, opts);
  }
  Status Init(Env *env, std::unique_ptr<File> file, const std::string &path, Reporter *reporter,
              const ReaderOptions &opts) {
    path_ = path;
    reporter_ = reporter;
    file_ = std::move(file);
    // The writer in this process writes on a thread of its own: no read
    // overlaps one of its writes (so none sees a block half written).
    if (std::mutex *mu = opts.tails_from ? opts.tails_from->io_lock() : nullptr)
      file_ = LockFile(std::move(file_), mu);
    internal::Superblock sb;
    Status s = internal::ReadSuperblock(file_.get(), path, &sb);
    if (!s.ok()) return s;
    uint64_t off = 0;
    std::string why;
    if (reporter_ && internal::FileSizeProblem(file_.get(), sb, &off, &why))
      reporter_->Corruption(off, why);
    layout_ = sb.layout;
    version_ = sb.version;
    st_.Init(layout_.strtab_off, layout_.strtab_size);
    s = opts.sites_from ? Status::OK() : st_.Load(file_.get());  // (else: the writer's)
    if (!s.ok()) return s;
    // Damage between string-table entries, once, when the file is opened
    // (FORMAT.md, "String table"). Damage after the last entry ends the
    // table unreported: a reader cannot tell it from an entry being written.
    if (reporter_) {
      for (const auto &[off, len] : st_.damage())
        reporter_->Corruption(
            off, "damaged string-table bytes (" + std::to_string(len) + ") before the next entry");
    }
    proxy_.chain = this;
    for (int t = int(LS_TIERS) - 1; t >= 0; t--) {  // oldest records first
      if (!layout_.TierBlocks(t)) continue;
      tiers_.push_back(std::make_unique<TierReader>());
      tiers_.back()->Init(env, file_.get(), path, &st_, layout_.Tier(t), &proxy_, opts);
    }
    return SeekOldest();
  }

  Status SeekOldest() {
    Reset(0);
    return tiers_[0]->SeekOldest();
  }
  Status SeekEnd() {
    Reset(tiers_.size() - 1);
    return tiers_.back()->SeekEnd();
  }
  Status SeekSeq(uint64_t seq) {
    // At or after tier 0's oldest record: tier 0 alone, which reports what
    // was overwritten exactly as a ring of one tier does.
    bool found = false;
    uint64_t oldest = 0;
    Status s = tiers_.back()->OldestRecord(&found, &oldest);
    if (!s.ok()) return s;
    if (tiers_.size() == 1 || !found || seq >= oldest) {
      Reset(tiers_.size() - 1);
      have_next_ = true;
      next_ = seq;
      strict_ = true;
      return tiers_.back()->SeekSeq(seq, false);
    }
    // Older: from the oldest tier on, every number not returned being lost.
    Reset(0);
    have_next_ = true;
    next_ = seq;
    strict_ = true;
    return tiers_[0]->SeekSeq(seq, true);
  }
  Status SeekLast(uint64_t n) {
    Status s = StartSeekLast(n);
    bool done = false;
    while (s.ok() && !done) s = SeekLastStep(UINT64_MAX, &done);
    return s;
  }
  // From the newest tier back, each giving what it has until n are found.
  Status StartSeekLast(uint64_t n) {
    last_n_ = n;
    last_tier_ = tiers_.size();
    last_at_ = tiers_.size() - 1;
    last_started_ = false;
    Reset(last_at_);
    return Status::OK();
  }
  Status SeekLastStep(uint64_t max_blocks, bool *done) {
    *done = false;
    uint64_t budget = max_blocks;
    while (last_tier_ > 0) {
      TierReader &t = *tiers_[last_tier_ - 1];
      if (!last_started_) {
        Status s = t.StartLast(last_n_);
        if (!s.ok()) return s;
        last_started_ = true;
      }
      bool tier_done = false;
      uint64_t got = 0;
      Status s = t.StepLast(&budget, &tier_done, &got);
      if (!s.ok() || !tier_done) return s;
      last_started_ = false;
      if (got) last_at_ = last_tier_ - 1;
      last_n_ -= std::min(last_n_, got);
      last_tier_ = last_n_ == 0 ? 0 : last_tier_ - 1;
    }
    Reset(last_at_);
    *done = true;
    return Status::OK();
  }
  Status SeekTime(uint64_t ts_ns) {
    // The first tier (oldest first) whose newest block reaches the time.
    const uint64_t from = ts_ns > kClockSlackNs ? ts_ns - kClockSlackNs : 0;
    for (size_t i = 0; i + 1 < tiers_.size(); i++) {
      bool found;
      BlockHeader h;
      Status s = tiers_[i]->Newest(&found, &h);
      if (!s.ok()) return s;
      // A kept block's open time is its first record's block's, and it
      // keeps taking records: its summary's largest time says how late it
      // reaches.
      if (found && (h.max_time >= ts_ns ||
                    (h.opened ? tiers_[i]->OpenedNs(h) >= from : h.max_ts >= ts_ns))) {
        Reset(i);
        return tiers_[i]->SeekTime(ts_ns);
      }
    }
    Reset(tiers_.size() - 1);
    return tiers_.back()->SeekTime(ts_ns);
  }

  Status Next(Record *rec) { return Next(rec, nullptr, nullptr); }
  Status NextOrBlock(Record *rec, BlockImage *img, bool *whole) {
    *whole = false;
    if (tiers_.size() != 1 || strict_) return Next(rec);
    return Next(rec, img, whole);
  }
  // img: see NextOrBlock (nullptr: records only).
  Status Next(Record *rec, BlockImage *img, bool *whole) {
    for (;;) {
      lost_ = yield_lost_;
      yield_lost_ = 0;
      // Bounded here only: a Yield leaves the chain where it is, with the
      // losses it met pending for the next call (they may be found in an
      // older tier below). (The search of older tiers must finish once it
      // started: the record it found in this tier would be dropped.)
      Status s = tiers_[cur_]->Next(rec, img, whole, true);
      if (s.IsYield()) {
        yield_lost_ = lost_;
        return s;
      }
      if (s.IsNotFound() && cur_ + 1 < tiers_.size()) {
        // This tier is read: the next one from the number wanted on.
        cur_++;
        s = tiers_[cur_]->SeekSeq(have_next_ ? next_ : 0, true);
        if (!s.ok()) return s;
        continue;
      }
      if (!s.ok()) {
        if (lost_ && reporter_) reporter_->Lost(lost_);
        return s;
      }
      if (whole && *whole) {
        // One tier, not strict: what the tier lost is what is reported.
        if (lost_) strict_ = true;
        if (lost_ && reporter_) reporter_->Lost(lost_);
        have_next_ = true;
        next_ = img->first_seq + img->count;
        return Status::OK();
      }
      if (have_next_ && rec->seq < next_) continue;  // returned already
      if (lost_ && have_next_ && cur_ > 0 && !(searched_ && searched_at_ == next_)) {
        // Tier 0 lapped this reader: the records it skipped may be kept in
        // an older tier. Look there first (once per position: a damaged or
        // crafted file must not send the reader round in circles). The
        // record found is returned as it is; that tier goes on after it.
        searched_ = true;
        searched_at_ = next_;
        for (size_t i = 0; i < cur_; i++) {
          s = tiers_[i]->SeekSeq(next_, true);
          if (!s.ok()) return s;
          Record older;
          s = tiers_[i]->Next(&older);
          if (s.IsNotFound()) continue;
          if (!s.ok()) return s;
          if (older.seq >= rec->seq || older.seq < next_) continue;
          cur_ = i;
          lost_ = 0;
          strict_ = true;
          *rec = older;  // its views stay valid until tier i is read again
          break;
        }
      }
      // A reader that was somewhere (a cursor, or lapped) is told of every
      // number it does not get; one that started at the oldest, the last n
      // or a time, only of laps (the gaps between kept records are not its
      // loss). With a filter, blocks skipped leave gaps too: laps only.
      if (lost_) strict_ = true;
      uint64_t n = lost_;
      if (strict_ && !filter_on_ && have_next_) n = rec->seq > next_ ? rec->seq - next_ : 0;
      if (n && reporter_) reporter_->Lost(n);
      have_next_ = true;
      next_ = rec->seq + 1;
      return Status::OK();
    }
  }

  Status Summarize(Summary *out) {
    *out = Summary();
    bool any = false;
    for (size_t i = 0; i < tiers_.size(); i++) {
      Summary t;
      Status s = tiers_[i]->Summarize(&t);
      Summary::Tier ti;
      ti.tier = tiers_[i]->layout_.tier;
      ti.blocks = tiers_[i]->layout_.block_count;
      if (s.ok()) {
        ti.blocks_used = t.blocks_used;
        ti.bytes_used = t.bytes_used;
        ti.raw_bytes = t.raw_bytes;
        ti.records = t.records;
        ti.oldest_seq = t.oldest_seq;
        ti.oldest_ts_ns = t.oldest_ts_ns;
        ti.newest_ts_ns = t.newest_ts_ns;
        if (!any) {
          out->oldest_seq = t.oldest_seq;
          out->oldest_block = t.oldest_block;
          out->oldest_ts_ns = t.oldest_ts_ns;
        }
        any = true;
        out->newest_seq = t.newest_seq;
        out->newest_block = t.newest_block;
        out->newest_ts_ns = t.newest_ts_ns;
        out->wraps = t.wraps;
        out->blocks_used += t.blocks_used;
        out->bytes_used += t.bytes_used;
        out->raw_bytes += t.raw_bytes;
        out->records += t.records;
      } else if (!s.IsNotFound()) {
        return s;
      }
      out->strings = t.strings;
      out->strtab_bytes = t.strtab_bytes;
      out->tiers.push_back(ti);
    }
    std::sort(out->tiers.begin(), out->tiers.end(),
              [](const Summary::Tier &a, const Summary::Tier &b) { return a.tier < b.tier; });
    return any ? Status::OK() : Status::NotFound("the ring holds no records");
  }

  void SetFilter(const RecordFilter *f, bool use_index) {
    internal::SummaryFilter summary;
    filter_on_ = f && summary.Set(*f);
    for (auto &t : tiers_) t->SetFilter(filter_on_ ? &summary : nullptr, use_index);
  }
  uint64_t skipped() const {
    uint64_t n = 0;
    for (const auto &t : tiers_) n += t->skipped_;
    return n;
  }
  uint64_t index_skipped() const {
    uint64_t n = 0;
    for (const auto &t : tiers_) n += t->index_skipped_;
    return n;
  }
  Status ListBoots(std::vector<BootInfo> *out) {
    out->clear();
    for (auto &t : tiers_) {
      std::vector<BootInfo> part;
      Status s = t->ListBoots(&part);
      if (!s.ok()) return s;
      for (const BootInfo &b : part) {
        if (!out->empty() && out->back().boot_id == b.boot_id) {
          BootInfo &o = out->back();
          o.last_block = b.last_block;
          o.last_seq = b.last_seq;
          o.first_ns = std::min(o.first_ns, b.first_ns);
          o.last_ns = std::max(o.last_ns, b.last_ns);
          o.records += b.records;
        } else {
          out->push_back(b);
        }
      }
    }
    return Status::OK();
  }
  Status Verify(const std::function<void(uint64_t, uint64_t)> &progress) {
    return internal::VerifyRing(file_.get(), path_, reporter_, progress);
  }

  Layout layout_;
  uint32_t version_ = LS_FORMAT_VERSION;

 private:
  // Tier readers report corruption straight through; their losses (tier 0
  // only: lapped, or a block that starts later than expected) come here.
  struct Proxy : Reporter {
    Impl *chain = nullptr;
    void Corruption(uint64_t off, std::string_view reason) override {
      if (chain->reporter_) chain->reporter_->Corruption(off, reason);
    }
    void Lost(uint64_t n) override { chain->lost_ += n; }
  };
  // A SeekLast under way (StartSeekLast): records still wanted, the tier
  // walked now + 1 (0: none left), the tier reading starts at, and whether
  // that tier's walk has started.
  uint64_t last_n_ = 0;
  size_t last_tier_ = 0, last_at_ = 0;
  bool last_started_ = false;

  void Reset(size_t at) {
    cur_ = at;
    have_next_ = false;
    strict_ = false;
    lost_ = yield_lost_ = 0;
  }

  std::string path_;
  std::unique_ptr<File> file_;
  Reporter *reporter_ = nullptr;
  internal::StringTable st_;
  Proxy proxy_;
  std::vector<std::unique_ptr<TierReader>> tiers_;  // oldest records first
  size_t cur_ = 0;                                  // the tier being read
  bool have_next_ = false;
  uint64_t next_ = 0;      // the next record number wanted
  bool strict_ = false;    // every number skipped is lost (after SeekSeq or a lap)
  bool searched_ = false;  // the lapped reader's search ran at searched_at_
  uint64_t searched_at_ = 0;
  bool filter_on_ = false;
  uint64_t lost_ = 0;        // tier 0's losses during this Next
  uint64_t yield_lost_ = 0;  // ... met before a Yield, for the next Next
};

// ---- RingReader -------------------------------------------------------------

RingReader::RingReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RingReader::~RingReader() = default;

Status RingReader::Open(Env *env, const std::string &path, Reporter *reporter,
                        std::unique_ptr<RingReader> *out) {
  return Open(env, path, reporter, ReaderOptions(), out);
}

Status RingReader::Open(Env *env, const std::string &path, Reporter *reporter,
                        const ReaderOptions &opts, std::unique_ptr<RingReader> *out) {
  auto impl = std::make_unique<Impl>();
  Status s = impl->Open(env, path, reporter, opts);
  if (!s.ok()) return s;
  out->reset(new RingReader(std::move(impl)));
  return Status::OK();
}

Status RingReader::FromFile(Env *env, std::unique_ptr<File> file, const std::string &path,
                            Reporter *reporter, std::unique_ptr<RingReader> *out) {
  auto impl = std::make_unique<Impl>();
  Status s = impl->Init(env, std::move(file), path, reporter, ReaderOptions());
  if (!s.ok()) return s;
  out->reset(new RingReader(std::move(impl)));
  return Status::OK();
}

const Layout &RingReader::layout() const { return impl_->layout_; }
uint32_t RingReader::format_version() const { return impl_->version_; }
Status RingReader::SeekOldest() { return impl_->SeekOldest(); }
Status RingReader::SeekLast(uint64_t n) { return impl_->SeekLast(n); }
Status RingReader::StartSeekLast(uint64_t n) { return impl_->StartSeekLast(n); }
Status RingReader::SeekLastStep(uint64_t max_blocks, bool *done) {
  return impl_->SeekLastStep(max_blocks, done);
}
Status RingReader::SeekTime(uint64_t ts_ns) { return impl_->SeekTime(ts_ns); }
Status RingReader::SeekEnd() { return impl_->SeekEnd(); }
Status RingReader::SeekSeq(uint64_t seq) { return impl_->SeekSeq(seq); }
Status RingReader::Next(Record *rec) { return impl_->Next(rec); }
Status RingReader::NextOrBlock(Record *rec, BlockImage *img, bool *whole) {
  return impl_->NextOrBlock(rec, img, whole);
}

std::unique_ptr<BlockDecoder> RingReader::NewDecoder() const {
  auto d = std::make_unique<BlockDecoder::Impl>();
  d->file_ = impl_->file();
  d->layout_ = impl_->layout_.Tier(0);
  d->st_.Init(impl_->layout_.strtab_off, impl_->layout_.strtab_size);
  d->expander_.UseDictionaryOf(d->file_, d->layout_);
  return std::unique_ptr<BlockDecoder>(new BlockDecoder(std::move(d)));
}
Status RingReader::Summarize(Summary *out) { return impl_->Summarize(out); }

size_t TierReader::BoundBytes() const {
  return 2 * size_t(layout_.block_size) + expander_.BoundBytes(layout_) +
         (filter_on_ && use_index_ ? internal::IndexWindow::BoundBytes() : 0);
}

size_t RingReader::HeldBytes() const { return impl_->HeldBytes(); }
uint64_t RingReader::records_skipped() const { return impl_->records_skipped(); }
uint64_t RingReader::next_seq() const { return impl_->next_seq(); }
size_t RingReader::BoundBytes() const { return impl_->BoundBytes(); }
void RingReader::SetFilter(const RecordFilter *f, bool use_index) {
  impl_->SetFilter(f, use_index);
}
uint64_t RingReader::blocks_skipped() const { return impl_->skipped(); }
uint64_t RingReader::blocks_skipped_by_index() const { return impl_->index_skipped(); }
Status RingReader::ListBoots(std::vector<BootInfo> *out) { return impl_->ListBoots(out); }
Status RingReader::Verify() { return impl_->Verify({}); }
Status RingReader::Verify(const std::function<void(uint64_t, uint64_t)> &progress) {
  return impl_->Verify(progress);
}

}  // namespace logsink::storage
