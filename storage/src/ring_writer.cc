// ring_writer.cc: RingWriter: interns call sites, appends records to the
// current block in memory, seals full blocks with one pwrite each and
// overwrites the oldest slot when the ring is full (opening and recovery are
// in ring_recover.cc).
#include <lz4.h>
#include <time.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "logsink/proto/args.h"
#include "logsink/proto/printf.h"
#include "ring_writer_impl.h"
#include "summary_index.h"

namespace logsink::storage {

RingWriter::Impl::~Impl() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx *>(cctx_)); }

void RingWriter::Impl::StartBlock(uint64_t seq, uint64_t first_rec) {
  std::memset(buf_.data(), 0, cur_.used);
  cur_ = BlockHeader();
  cur_.seq = seq;
  cur_.first_rec = first_rec;
  cur_.used = LS_BLK_HDR;
  has_src_ = false;
  src_ = tid_ = ts_ = 0;
  declared_.clear();
  ResetUse();
  dirty_ = false;
  packed_used_ = 0;
  fit_used_ = LS_BLK_HDR;
  SetLimit();
}

// Without compression a block is full at the slot size. With it, the first
// check comes where the last sealed block's ratio says the slot would be
// about 92% full (never before the slot size: that much always fits, stored
// as it is); most blocks are sealed at that one compression.
constexpr double kFirstFill = 0.96;
void RingWriter::Impl::SetLimit() {
  const size_t slot = layout_.block_size;
  if (codec_ == LS_CODEC_NONE) {
    limit_ = slot;
    return;
  }
  const double guess = double(slot - LS_BLK_HDR) * ratio_ * kFirstFill;
  limit_ = std::clamp<size_t>(LS_BLK_HDR + size_t(guess), slot, cap_);
}

uint8_t RingWriter::Impl::SiteLevelSlow(uint32_t id) {
  Site site;
  const uint8_t level = stp_->Get(id, &site) ? site.level : 7;
  // Dense for the ids a writer normally hands out; a far id (damage retired
  // everything below it) is looked up each time rather than sizing the array by it.
  if (id < (1u << 20)) {
    // Ids not looked up yet hold kNoLevel: never a level (an id below one
    // looked up before must still be looked up, not taken as debug).
    if (site_level_.size() <= id) site_level_.resize(id + 1, kNoLevel);
    site_level_[id] = level;
  }
  return level;
}

bool RingWriter::Impl::Pack() {
  if (packed_used_ == cur_.used) return true;
  const size_t raw = cur_.used - LS_BLK_HDR, room = layout_.block_size - LS_BLK_HDR;
  size_t c = 0;
  uint8_t codec = codec_;
  if (codec_ != LS_CODEC_NONE && raw > 0) {
    stats_.packs++;
    uint8_t *dst = zimg_.data() + LS_BLK_HDR;
    const uint8_t *src = buf_.data() + LS_BLK_HDR;
    if (codec_ == LS_CODEC_ZSTD) {
      // With the file's dictionary once it has one (the frame names it).
      internal::Dictionary *d = dictp_->get();
      auto *cdict = d ? static_cast<ZSTD_CDict *>(d->cdict(level_)) : nullptr;
      auto *cctx = static_cast<ZSTD_CCtx *>(cctx_);
      ZSTD_CCtx_refCDict(cctx, cdict);
      // dst holds exactly the slot's room: a payload that would not fit
      // fails with dstSize_tooSmall instead of being written anywhere.
      size_t r = ZSTD_compress2(cctx, dst, room, src, raw);
      codec = cdict ? LS_CODEC_ZSTD_DICT : LS_CODEC_ZSTD;
      if (cdict && ZSTD_isError(r)) {
        // Entries that packed without the dictionary (a prefix flushed before
        // it arrived: fit_used_) may not with it: then as before, without.
        ZSTD_CCtx_refCDict(cctx, nullptr);
        r = ZSTD_compress2(cctx, dst, room, src, raw);
        codec = LS_CODEC_ZSTD;
      }
      c = ZSTD_isError(r) ? 0 : r;
    } else {
      int r = LZ4_compress_default(reinterpret_cast<const char *>(src),
                                   reinterpret_cast<char *>(dst), int(raw), int(room));
      c = r > 0 ? size_t(r) : 0;
    }
  }
  if (c > 0 && c < raw) {
    pk_codec_ = codec;
    pk_stored_ = uint32_t(c);
    std::memset(zimg_.data() + LS_BLK_HDR + c, 0, room - c);  // the slot is zero past `used`
  } else if (raw <= room) {
    pk_codec_ = LS_CODEC_NONE;  // does not shrink (or no codec): stored as it is
    pk_stored_ = uint32_t(raw);
  } else {
    return false;
  }
  packed_used_ = cur_.used;
  fit_used_ = std::max(fit_used_, size_t(cur_.used));
  return true;
}

Status RingWriter::Impl::WriteCurrent(uint32_t flags) {
  if (evicted_ <= cur_.seq && cur_.seq >= layout_.block_count) {
    evicted_ = cur_.seq + 1;
    Status s = Evict(cur_.seq - layout_.block_count);
    if (!s.ok()) return s;
  }
  BlockHeader h = cur_;
  h.tier = uint8_t(tier_);
  h.flags = flags;
  h.raw = cur_.used - LS_BLK_HDR;
  h.codec = pk_codec_;
  h.used = LS_BLK_HDR + pk_stored_;
  uint8_t *img = pk_codec_ == LS_CODEC_NONE ? buf_.data() : zimg_.data();
  internal::FinishBlock(img, h);
  // buf_ is zero past cur_.used, zimg_ past the payload: the whole slot is written.
  Status s = f_->PWrite(layout_.SlotOffset(cur_.seq), img, layout_.block_size);
  // A sealed block's summary goes to the index after the block (FORMAT.md,
  // "Summary index"): an entry never names a block that is not written.
  if (s.ok() && (flags & LS_BLK_F_SEALED)) s = internal::WriteIndexEntry(f_, layout_, img);
  return s;
}

Status RingWriter::Impl::MakeRoom(size_t need) {
  if (codec_ != LS_CODEC_NONE && cur_.count > 0 && limit_ < cap_) {
    if (!Pack()) return Split();
    // Room left in the slot, in entry bytes at the ratio so far, with a
    // margin for entries that compress worse than the ones before them.
    const size_t room = layout_.block_size - LS_BLK_HDR;
    const double ratio = double(cur_.used - LS_BLK_HDR) / double(pk_stored_);
    const size_t grow = size_t(double(room - pk_stored_) * ratio * 0.9);
    // Less than 1/8 of the slot left: another pass (which compresses the
    // whole block again) would win at most that much history for as much
    // CPU as the block took so far, so seal. Most blocks take one pass.
    // (1/16 kept ~2% more text but cost the daemon 0.11 instead of 0.09 us
    // per record end to end, and more splits: bench/README.md, "Compression".)
    if (grow >= need && room - pk_stored_ >= room / 8) {
      limit_ = std::min(cap_, cur_.used + grow);
      if (cur_.used + need <= limit_) return Status::OK();
    }
  }
  return Seal();
}

Status RingWriter::Impl::Seal() {
  if (!Pack()) return Split();
  Status s = WriteCurrent(LS_BLK_F_SEALED);
  if (!s.ok()) return s;
  stats_.blocks_written++;
  stats_.sealed_raw_bytes += cur_.used - LS_BLK_HDR;
  stats_.sealed_stored_bytes += pk_stored_;
  if (pk_stored_) ratio_ = double(cur_.used - LS_BLK_HDR) / double(pk_stored_);
  if (account_) AddUse(cur_.seq % layout_.block_count, std::move(block_use_));
  if (builder_) {
    s = DictionaryStep();
    if (!s.ok()) return s;
  }
  uint64_t next = cur_.seq + 1;
  StartBlock(next, cur_.first_rec + cur_.count);
  if (next % layout_.block_count == 0 && tier_ == 0) {
    // Once per lap: refresh the tail hint (the other superblock copy).
    stats_.wraps++;
    sb_.generation++;
    sb_.tail_hint = next;
    return internal::WriteSuperblock(f_, sb_);
  }
  return Status::OK();
}

Status RingWriter::Impl::DictionaryStep() {
  if (builder_->collecting()) {
    builder_->Add(buf_.data() + LS_BLK_HDR, cur_.used - LS_BLK_HDR);
    return Status::OK();
  }
  bool failed = false;
  std::shared_ptr<internal::Dictionary> d = builder_->Take(&failed);
  if (!d && !failed) return Status::OK();  // still training
  builder_.reset();
  dict_failed_ = failed;
  if (!d) return Status::OK();
  // Into the file (synced) before the first block that needs it. A write
  // that fails leaves the writer without one (blocks go on as plain zstd);
  // nothing else depends on it.
  if (!internal::WriteDictionary(f_, full_, *d, env_->NowNanos()).ok()) {
    dict_failed_ = true;
    return Status::OK();
  }
  dict_ = std::move(d);
  return Status::OK();
}

void RingWriter::Impl::MaybeStartDictionary() {
  if (dict_ || !full_.dict_size || codec_ != LS_CODEC_ZSTD || !dict_train_bytes_) return;
  if (dict_blocks_) return;
  builder_ =
      std::make_unique<internal::DictionaryBuilder>(dict_train_bytes_, internal::kDictionaryBytes);
}

// Rare: the entries added since the last check compress worse than the
// limit assumed. The block's records are decoded from a copy, the block is
// cut back to the longest prefix of whole records that packs (the summary's
// levels, times and filter may then claim more than the block holds: a
// summary may over-claim, never under-claim), sealed, and the other records
// are appended again to the next block, keeping their sequence numbers.
Status RingWriter::Impl::Split() {
  stats_.splits++;
  std::vector<uint8_t> copy(buf_.begin(), buf_.begin() + cur_.used);
  BlockHeader h = cur_;
  h.raw = cur_.used - LS_BLK_HDR;
  BlockCursor cursor;
  cursor.Reset(copy.data(), h);
  std::vector<internal::DecodedRecord> recs;
  std::vector<uint32_t> ends;    // offset after each record's entry
  std::vector<uint64_t> max_ts;  // the largest timestamp up to each record
  internal::DecodedRecord d;
  while (cursor.Next(&d) == BlockCursor::kRecord) {
    recs.push_back(d);
    ends.push_back(cursor.pos());
    max_ts.push_back(cursor.max_ts());
  }
  if (recs.size() != cur_.count) return Status::Corruption("the writer's block does not decode");
  // The prefix to keep: never fewer records than the longest prefix known to
  // pack (fit_used_: what a flush may have put on disk already, so no record
  // a reader saw leaves the ring), at least one record (one always fits an
  // empty slot as it is), and at most two more compressions to find a longer
  // one between that and everything.
  auto prefix = [&](size_t used) {  // records whose entries end at or before `used`
    return size_t(std::upper_bound(ends.begin(), ends.end(), uint32_t(used)) - ends.begin());
  };
  size_t lo = std::max<size_t>(1, prefix(fit_used_)), hi = recs.size();  // lo packs, hi does not
  auto try_pack = [&](size_t k) {
    cur_.used = ends[k - 1];
    cur_.count = uint32_t(k);
    cur_.max_ts = max_ts[k - 1];
    packed_used_ = 0;
    return Pack();
  };
  for (int round = 0; round < 2 && hi - lo > 1; round++) {
    const size_t mid = lo + (hi - lo) / 2;
    if (try_pack(mid))
      lo = mid;
    else
      hi = mid;
  }
  const size_t k = lo;
  if (!try_pack(k)) return Status::Corruption("a record does not fit an empty block");
  // Entry bytes past the prefix are zeroed for the next block; the copy keeps them.
  std::memset(buf_.data() + cur_.used, 0, copy.size() - cur_.used);
  const size_t carried = recs.size() - k;
  uint64_t carried_bytes = ends.back() - ends[k - 1];
  Status s = Seal();
  if (!s.ok()) return s;
  // A kept tier's records keep their numbers, and the next block the clocks
  // of this one (the block their first record came from opened no later).
  const BlockHeader *saved_origin = origin_;
  const uint64_t saved_rseq = rseq_;  // the record being appended when the split came
  if (sparse_) origin_ = &h;
  stats_.records -= carried;
  stats_.bytes -= carried_bytes;
  for (size_t i = k; i < recs.size(); i++) {
    const internal::DecodedRecord &r = recs[i];
    // Looked up now: r.source pointed into the cursor's list of sources,
    // which grew (and moved) while later entries were decoded.
    const internal::SourceInfo *si = r.has_source ? cursor.FindSource(r.source_id) : nullptr;
    if (!si) {
      s = Status::Corruption("a carried record has no declared source");
      break;  // origin_ and rseq_ are given back below
    }
    rseq_ = h.first_rec + r.seq_off;
    s = AppendAgain(r, *si);
    if (!s.ok()) break;
  }
  origin_ = saved_origin;
  rseq_ = saved_rseq;
  return s;
}

uint8_t *RingWriter::Impl::DeclareSource(uint8_t *p, const Source &src) {
  declared_.push_back(src.id);
  internal::BloomAddSource(cur_.bloom.data(), src.uid, src.pid, src.app, src.comm, src.unit);
  return internal::PutSourceEntry(p, src);
}

bool RingWriter::Impl::Declared(uint64_t id) const {
  if (has_src_ && src_ == id) return true;
  return std::find(declared_.begin(), declared_.end(), id) != declared_.end();
}

size_t RingWriter::Impl::Plan(const RecordIn &rec, size_t args_len, uint64_t truncated,
                              RecordFields *f, size_t *fixed, bool *declare) const {
  const uint64_t id = rec.source->id;
  *declare = !Declared(id);
  f->flags = 0;
  if (sparse_ && cur_.count > 0 && rseq_ > last_seq_ + 1) {
    f->flags |= LS_E_F_GAP;
    f->gap = rseq_ - last_seq_ - 1;
  }
  if (!has_src_ || src_ != id) {
    f->flags |= LS_E_F_SOURCE;
    f->source_id = id;
  }
  if (rec.tid != tid_) {
    f->flags |= LS_E_F_TID;
    f->tid = rec.tid;
  }
  if (truncated) {
    f->flags |= LS_E_F_TRUNC;
    f->truncated = truncated;
  }
  if (rec.site_id == 0) {
    f->flags |= LS_E_F_INLINE;
    f->inline_site = rec.inline_site;
  } else {
    f->site_id = rec.site_id;
  }
  uint64_t base = cur_.count ? ts_ : rec.ts_ns;
  f->ts_zz = ls_zigzag(static_cast<int64_t>(rec.ts_ns - base));
  *fixed = internal::RecordFixedLen(*f);
  size_t body = *fixed + args_len;
  return (*declare ? internal::SourceEntrySize(*rec.source) : 0) + ls_varint_len(body) + body;
}

void RingWriter::Impl::Emit(const RecordIn &rec, const RecordFields &f, size_t fixed, bool declare,
                            const uint8_t *args, size_t args_len) {
  uint8_t *start = buf_.data() + cur_.used, *p = start;
  if (declare) p = DeclareSource(p, *rec.source);
  p = internal::PutRecordEntry(p, f, fixed, args, args_len);
  tid_ = rec.tid;
  const uint8_t level = rec.site_id ? SiteLevel(rec.site_id) : rec.inline_site->level;
  Account(rec.source->id, rec.source->uid, rec.source->app, size_t(p - start));
  Commit(static_cast<size_t>(p - start), rec.source->id, rec.ts_ns, level);
}

namespace {

// Fast-path bounds: arguments of at most kShortArgs bytes make a body of at
// most 1 + 10 (source) + 10 (tid) + 5 (site) + 10 (ts) + 90 = 126 < 128 bytes,
// so an entry of at most kShortEntry bytes with a one-byte length prefix.
constexpr size_t kShortArgs = 90, kShortEntry = 128;

// Copies the arguments: short ones (the common case: an int or a short
// string) with a few fixed-size moves instead of a memcpy call.
inline void CopyArgs(uint8_t *d, const uint8_t *s, size_t n) {
  if (n > 16) {
    std::memcpy(d, s, n);
  } else if (n >= 8) {  // two overlapping 8-byte moves
    uint64_t a, b;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
    std::memcpy(d, &a, 8);
    std::memcpy(d + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(d, &a, 4);
    std::memcpy(d + n - 4, &b, 4);
  } else if (n) {  // 1..3 bytes: first, middle, last
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

}  // namespace

// The common case in one pass: a site from the table, nothing cut, a block
// that already holds a record (so the timestamp base is the previous record)
// and a source already declared in it (current or not; tid may change). The
// entry is written straight into the block, no per-record planning struct,
// vector or signature walk; anything else (first record of a block, a source
// not declared in it yet, an inline site, TRUNC, a block too full for it)
// goes through AppendSlow, which writes the same bytes for the same record.
Status RingWriter::Impl::Append(const RecordIn &rec) {
  const Source *src = rec.source;
  if (src && rec.site_id != 0 && rec.truncated == 0 && cur_.count != 0 &&
      rec.args_len < layout_.block_size &&
      (rec.site_id <= sites_ || rec.site_id <= (sites_ = stp_->last_id()))) {
    const uint64_t id = src->id;
    const bool new_src = !has_src_ || src_ != id;
    if (!new_src || Declared(id)) {
      const bool new_tid = rec.tid != tid_;
      const uint64_t zz = ls_zigzag(static_cast<int64_t>(rec.ts_ns - ts_));
      const uint8_t head = static_cast<uint8_t>(LS_E_RECORD | (new_src ? LS_E_F_SOURCE : 0) |
                                                (new_tid ? LS_E_F_TID : 0));
      uint8_t *start = buf_.data() + cur_.used;
      size_t need;
      if (rec.args_len <= kShortArgs && limit_ - cur_.used >= kShortEntry) {
        // Short entry with room to spare: its body is < 128 bytes whatever the
        // varints, so the length prefix is one byte, filled in once written.
        uint8_t *p = start + 1;
        *p++ = head;
        if (new_src) p += ls_put_varint(p, id);
        if (new_tid) p += ls_put_varint(p, rec.tid);
        p += ls_put_varint(p, rec.site_id);
        p += ls_put_varint(p, zz);
        CopyArgs(p, rec.args, rec.args_len);
        need = static_cast<size_t>(p - start) + rec.args_len;
        *start = static_cast<uint8_t>(need - 1);
      } else {
        size_t body = 1 + ls_varint_len(rec.site_id) + ls_varint_len(zz) + rec.args_len;
        if (new_src) body += ls_varint_len(id);
        if (new_tid) body += ls_varint_len(rec.tid);
        need = ls_varint_len(body) + body;
        // Past the limit (makes room or seals), or too big for a slot as it is.
        if (need > limit_ - cur_.used || need > layout_.block_size - LS_BLK_HDR) {
          return AppendSlow(rec);
        }
        uint8_t *p = start + ls_put_varint(start, body);
        *p++ = head;
        if (new_src) p += ls_put_varint(p, id);
        if (new_tid) p += ls_put_varint(p, rec.tid);
        p += ls_put_varint(p, rec.site_id);
        p += ls_put_varint(p, zz);
        CopyArgs(p, rec.args, rec.args_len);
      }
      tid_ = rec.tid;
      Account(id, src->uid, src->app, need);
      Commit(need, id, rec.ts_ns, SiteLevel(rec.site_id));
      return Status::OK();
    }
  }
  return AppendSlow(rec);
}

Status RingWriter::Impl::AppendSlow(const RecordIn &rec) {
  if (!rec.source) return Status::InvalidArgument("record without a source");
  if (rec.site_id == 0 ? !rec.inline_site : rec.site_id > stp_->last_id()) {
    return Status::InvalidArgument("record with an unknown site id " + std::to_string(rec.site_id));
  }
  for (;;) {
    RecordFields f;
    size_t fixed;
    bool declare;
    size_t need = Plan(rec, rec.args_len, rec.truncated, &f, &fixed, &declare);
    // Every record fits an empty slot as it is (uncompressed), so a block
    // can always be cut back to one record that packs (Split).
    const bool too_big = LS_BLK_HDR + need > layout_.block_size;
    if (!too_big && cur_.used + need <= limit_) {
      Emit(rec, f, fixed, declare, rec.args, rec.args_len);
      if (rec.truncated) stats_.truncated_records++;  // cut by its client
      return Status::OK();
    }
    if (cur_.count == 0) break;                    // does not fit even an empty block
    Status s = too_big ? Seal() : MakeRoom(need);  // never leave a record spanning blocks
    if (!s.ok()) return s;
  }
  return AppendTruncated(rec);
}

// The record does not fit an empty block: cut its string arguments, longest
// first (all strings longer than a common cap are cut to it), until it fits.
Status RingWriter::Impl::AppendTruncated(const RecordIn &rec) {
  struct Str {
    size_t off, len;  // of the string's bytes within args
  };
  Str strs[LS_FMT_MAX_ARGS];
  size_t nstr = 0, other = 0, max_len = 0;
  const uint8_t *p = rec.args, *end = rec.args + rec.args_len;
  for (char type : rec.signature) {
    ls_arg a{};
    size_t n = ls_arg_get(type, p, end, &a);
    if (!n || nstr == LS_FMT_MAX_ARGS) {
      return Status::InvalidArgument("record arguments do not match the signature");
    }
    if (type == LS_ARG_STR) {
      strs[nstr++] = Str{static_cast<size_t>(a.s - rec.args), a.len};
      max_len = std::max(max_len, a.len);
    } else {
      other += n;
    }
    p += n;
  }
  if (p != end) return Status::InvalidArgument("record arguments do not match the signature");

  // Budget for the arguments in an empty block, with the largest TRUNC varint.
  RecordFields f;
  size_t fixed;
  bool declare;
  // The current block is empty here (the caller sealed the previous one).
  Plan(rec, 0, ~0ull, &f, &fixed, &declare);
  size_t overhead = LS_BLK_HDR + internal::SourceEntrySize(*rec.source) +
                    ls_varint_len(layout_.block_size) + fixed;
  if (overhead >= layout_.block_size) {
    return Status::InvalidArgument("record does not fit a block even without arguments");
  }
  size_t budget = layout_.block_size - overhead;
  auto size_at = [&](size_t cap) {
    size_t n = other;
    for (size_t i = 0; i < nstr; i++) {
      size_t l = std::min(strs[i].len, cap);
      n += ls_varint_len(l) + l;
    }
    return n;
  };
  if (size_at(0) > budget) {
    return Status::InvalidArgument("record does not fit a block even with its strings cut");
  }
  size_t lo = 0, hi = max_len;  // largest cap whose size fits
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2;
    if (size_at(mid) <= budget)
      lo = mid;
    else
      hi = mid - 1;
  }
  // Rebuild the arguments with every string cut to the cap.
  uint8_t *out = scratch_.data();
  uint64_t cut = 0;
  p = rec.args;
  for (char type : rec.signature) {
    ls_arg a{};
    size_t n = ls_arg_get(type, p, end, &a);
    if (type == LS_ARG_STR) {
      const size_t l = ls_utf8_cut(a.s, a.len, lo);  // whole characters only
      cut += a.len - l;
      out += ls_put_varint(out, l);
      std::memcpy(out, a.s, l);
      out += l;
    } else {
      std::memcpy(out, p, n);
      out += n;
    }
    p += n;
  }
  size_t args_len = static_cast<size_t>(out - scratch_.data());
  size_t need = Plan(rec, args_len, rec.truncated + cut, &f, &fixed, &declare);
  if (cut == 0 || cur_.used + need > layout_.block_size) {  // guarded by the budget above
    return Status::InvalidArgument("record does not fit a block");
  }
  Emit(rec, f, fixed, declare, scratch_.data(), args_len);
  stats_.truncated_records++;
  return Status::OK();
}

Status RingWriter::Impl::AppendDropped(const Source &src, uint64_t ts_ns, uint64_t count,
                                       uint64_t since_ns) {
  for (;;) {
    bool declare = !Declared(src.id);
    bool with_source = !has_src_ || src_ != src.id;
    uint64_t base = cur_.count ? ts_ : ts_ns;
    uint64_t ts_zz = ls_zigzag(static_cast<int64_t>(ts_ns - base));
    const uint64_t gap =
        sparse_ && cur_.count > 0 && rseq_ > last_seq_ + 1 ? rseq_ - last_seq_ - 1 : 0;
    size_t body = internal::DroppedBodyLen(gap, with_source, src.id, ts_zz, count, since_ns);
    size_t need = (declare ? internal::SourceEntrySize(src) : 0) + ls_varint_len(body) + body;
    if (cur_.used + need <= limit_) {
      uint8_t *start = buf_.data() + cur_.used, *p = start;
      if (declare) p = DeclareSource(p, src);
      p = internal::PutDroppedEntry(p, gap, with_source, src.id, ts_zz, count, since_ns, body);
      // A DROPPED entry keeps the tid; it counts at level warning (FORMAT.md).
      Account(src.id, src.uid, src.app, size_t(p - start));
      Commit(static_cast<size_t>(p - start), src.id, ts_ns, 4);
      return Status::OK();
    }
    if (cur_.count == 0) return Status::InvalidArgument("source does not fit a block");
    Status s = MakeRoom(need);
    if (!s.ok()) return s;
  }
}

Status RingWriter::Impl::Flush() {
  if (!dirty_) return Status::OK();
  while (!Pack()) {  // grew past its slot since the last check: seal what fits first
    Status s = Split();
    if (!s.ok()) return s;
    if (!dirty_) return Status::OK();
  }
  Status s = WriteCurrent(0);
  if (!s.ok()) return s;
  dirty_ = false;
  stats_.flushes++;
  return Status::OK();
}

Status RingWriter::Impl::FlushAll() {
  for (Impl *t = this; t; t = t->next_) {
    Status s = t->Flush();
    if (!s.ok()) return s;
  }
  return Status::OK();
}

void RingWriter::Impl::AddStats(WriterStats *out) const {
  for (const Impl *t = this; t; t = t->next_) {
    const WriterStats &s = t->stats_;
    if (t->tier_ == 0) {  // records and bytes appended; kept ones were counted there
      out->records += s.records;
      out->bytes += s.bytes;
      out->truncated_records += s.truncated_records;
      out->strtab_full += s.strtab_full;
      out->wraps += s.wraps;
    }
    out->blocks_written += s.blocks_written;
    out->flushes += s.flushes;
    out->sealed_raw_bytes += s.sealed_raw_bytes;
    out->sealed_stored_bytes += s.sealed_stored_bytes;
    out->packs += s.packs;
    out->splits += s.splits;
    if (t->tier_ == 0 && t->dict_) {
      out->dict_id = t->dict_->id();
      out->dict_bytes = uint32_t(t->dict_->content().size());
    }
    if (t->tier_ == 0) out->dict_failed = t->dict_failed_;
    for (int c = 0; c < 3; c++) {
      out->kept[c] += s.kept[c];
      out->evicted[c] += s.evicted[c];
    }
  }
}

// ---- retention --------------------------------------------------------------

uint32_t SourceKeys::Of(uint32_t uid, std::string_view app) {
  std::string k(4 + app.size(), '\0');
  std::memcpy(k.data(), &uid, 4);
  std::memcpy(k.data() + 4, app.data(), app.size());
  auto it = ids_.find(k);
  if (it != ids_.end()) return it->second;
  if (ids_.size() >= kMax) {
    // Full: this uid's further labels count together (a key no label has:
    // labels never hold a NUL byte... and if one did it would only share it).
    k.resize(4);
    k.push_back('\0');
    it = ids_.find(k);
    if (it != ids_.end()) return it->second;
  }
  const uint32_t id = uint32_t(uids_.size());
  uids_.push_back(uid);
  ids_.emplace(std::move(k), id);
  return id;
}

void RingWriter::Impl::AddUse(uint64_t slot, std::vector<std::pair<uint32_t, uint32_t>> use) {
  DropUse(slot);
  for (const auto &[key, n] : use) {
    key_bytes_[key] += n;
    uid_bytes_[keys_->uid(key)] += n;
  }
  slot_use_[slot] = std::move(use);
}

void RingWriter::Impl::DropUse(uint64_t slot) {
  for (const auto &[key, n] : slot_use_[slot]) {
    auto sub = [](std::unordered_map<uint32_t, uint64_t> &m, uint32_t k, uint64_t v) {
      auto it = m.find(k);
      if (it == m.end()) return;
      if (it->second <= v)
        m.erase(it);
      else
        it->second -= v;
    };
    sub(key_bytes_, key, n);
    sub(uid_bytes_, keys_->uid(key), n);
  }
  slot_use_[slot].clear();
}

uint32_t RingWriter::Impl::Dominant() const {
  uint32_t uid = 0;
  uint64_t most = 0;
  for (const auto &[u, n] : uid_bytes_) {
    if (n > most || (n == most && u < uid)) uid = u, most = n;
  }
  if (most == 0) return ~0u;
  uint32_t key = ~0u;
  most = 0;
  for (const auto &[k, n] : key_bytes_) {
    if (keys_->uid(k) == uid && (n > most || (n == most && k < key))) key = k, most = n;
  }
  return key;
}

Status RingWriter::Impl::Evict(uint64_t victim) {
  if (!tiered_) return Status::OK();  // one tier: nothing is kept or counted
  const uint64_t slot = victim % layout_.block_count;
  size_t got = 0;
  Status s = f_->PRead(layout_.blocks_off + slot * layout_.block_size, evict_img_.data(),
                       layout_.block_size, &got);
  if (!s.ok()) return s;
  if (got < layout_.block_size) std::memset(evict_img_.data() + got, 0, layout_.block_size - got);
  BlockHeader h;
  const bool valid =
      internal::CheckBlock(evict_img_.data(), layout_, slot, &h) == BlockState::kValid &&
      h.seq == victim;
  std::vector<std::pair<uint32_t, uint32_t>> use;
  if (account_) {
    use = slot_use_[slot];
    DropUse(slot);
  }
  if (!valid || h.count == 0) return Status::OK();  // damaged or never written: nothing to move

  // Until the next tier has filled once it takes everything (its slots do
  // not sit unused); after that, what the policy keeps. Never into the last
  // tier: there nothing moves on, and the records that fill it would wrap
  // it over the oldest records kept for a reason (the last of them to come
  // in can overflow into its first slot). So tier 2 only ever holds what
  // the policy keeps.
  const bool take_all = next_ && next_->next_ && next_->cur_.seq < next_->layout_.block_count;
  // Whose records go first. Leaving tier 0: the largest source, by uid and
  // then by label. Past it the uid alone: a label is the client's choice,
  // and a user who spreads a flood over many labels must not carry it into
  // the last tier (where one uid is alone, only its level keeps a record).
  const uint32_t dominant = fairness_ && next_ ? Dominant() : ~0u;
  const bool by_uid = tier_ > 0 && dominant != ~0u;
  const uint32_t dominant_uid = dominant != ~0u ? keys_->uid(dominant) : 0;
  auto is_dominant = [&](uint32_t key) {
    return by_uid ? keys_->uid(key) == dominant_uid : key == dominant;
  };
  const uint8_t keep_mask = uint8_t((1u << (keep_level_ + 1)) - 1);  // levels 0..keep_level_
  auto single_class = [](uint8_t levels) {  // the class all these levels share, or -1
    int c = -1;
    for (int l = 0; l < 8; l++) {
      if (!(levels & (1u << l))) continue;
      if (c >= 0 && c != LevelClass(uint8_t(l))) return -1;
      c = LevelClass(uint8_t(l));
    }
    return c;
  };
  // The summary and the byte counts may prove that nothing in it is kept:
  // then it is not decoded at all (a flood's own blocks cost nothing here).
  bool none_kept = !next_;
  if (next_ && !take_all && !(h.levels & keep_mask)) {
    none_kept = true;
    if (fairness_) {
      for (const auto &[key, n] : use) {
        if (!is_dominant(key)) none_kept = false;
      }
      if (use.empty()) none_kept = false;  // not counted (damage): look inside
    }
  }
  const int cls = single_class(h.levels);
  if (none_kept && cls >= 0) {
    stats_.evicted[cls] += h.count;
    return Status::OK();
  }
  // Everything moves on: the block itself, not its records one by one (its
  // payload decodes the same in any tier: a block numbered without gaps is
  // a valid block of a sparse tier).
  // (It passed its CRC: whatever its payload holds, it is what the writer
  // wrote, and readers check it in the next tier as they did in this one.)
  // (Not when some of its records are there already: see AppendKept.)
  if (take_all && h.first_rec >= next_->kept_below_) {
    return next_->AppendBlock(evict_img_.data(), h, std::move(use));
  }
  if (!evict_exp_) evict_exp_ = std::make_unique<internal::BlockExpander>();
  evict_exp_->SetDictionary(*dictp_);
  const uint8_t *entries = evict_exp_->Expand(evict_img_.data(), h);
  if (!entries) return Status::OK();  // does not decode: damage, nothing to keep
  BlockCursor cursor;
  cursor.Reset(entries, h);
  internal::DecodedRecord d;
  while (cursor.Next(&d) == BlockCursor::kRecord) {
    const internal::SourceInfo *si = d.has_source ? cursor.FindSource(d.source_id) : nullptr;
    uint8_t level = 4;  // a drop report counts as a warning
    if (d.kind == Record::Kind::kRecord)
      level = d.site_id ? SiteLevel(d.site_id) : d.inline_site.level;
    bool keep = false;
    if (!none_kept && si) {
      keep = take_all || level <= keep_level_ ||
             (fairness_ && !is_dominant(keys_->Of(si->uid, si->app)));
    }
    if (!keep) {
      stats_.evicted[LevelClass(level)]++;
      continue;
    }
    s = next_->AppendKept(d, *si, h.first_rec + d.seq_off, h);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

// A record decoded from a block (r, its source si) appended again, as it
// was: Split carries records to the next block this way, and AppendKept
// moves them to the next tier.
Status RingWriter::Impl::AppendAgain(const internal::DecodedRecord &r,
                                     const internal::SourceInfo &si) {
  Source src;
  src.id = si.id;
  src.pid = si.pid;
  src.uid = si.uid;
  src.gid = si.gid;
  src.app = si.app;
  src.comm = si.comm;
  src.unit = si.unit;
  if (r.kind == Record::Kind::kDropped) {
    return AppendDropped(src, r.ts, r.dropped_count, r.dropped_since);
  }
  // Its signature, should it need cutting (a source declaration more in
  // the next block can push a record near the slot size over it).
  Site site = r.inline_site;
  char sig[LS_FMT_MAX_ARGS + 1] = {};
  if ((r.site_id == 0 || stp_->Get(r.site_id, &site)) &&
      ls_fmt_signature(site.fmt.data(), site.fmt.size(), sig, sizeof sig) < 0) {
    sig[0] = 0;
  }
  RecordIn in;
  in.signature = sig;
  in.source = &src;
  in.tid = r.tid;
  in.site_id = r.site_id;
  in.inline_site = r.site_id ? nullptr : &r.inline_site;
  in.ts_ns = r.ts;
  in.args = r.args;
  in.args_len = r.args_len;
  in.truncated = r.truncated;
  Status s = AppendSlow(in);
  if (s.ok() && r.truncated) stats_.truncated_records--;  // counted when it first came in
  return s;
}

Status RingWriter::Impl::AppendBlock(uint8_t *img, const BlockHeader &h,
                                     std::vector<std::pair<uint32_t, uint32_t>> use) {
  if (cur_.count > 0 || dirty_) {  // the records before it first, in their own block
    Status s = Seal();
    if (!s.ok()) return s;
  }
  // The slot it goes to gives its block up first, as for any write.
  if (evicted_ <= cur_.seq && cur_.seq >= layout_.block_count) {
    evicted_ = cur_.seq + 1;
    Status s = Evict(cur_.seq - layout_.block_count);
    if (!s.ok()) return s;
  }
  BlockHeader nh = h;
  nh.seq = cur_.seq;
  nh.tier = uint8_t(tier_);
  nh.flags |= LS_BLK_F_SEALED;
  internal::FinishBlock(img, nh);
  Status s = f_->PWrite(layout_.SlotOffset(nh.seq), img, layout_.block_size);
  if (!s.ok()) return s;
  stats_.blocks_written++;
  stats_.kept[tier_] += h.count;
  kept_below_ = h.first_rec + h.count;
  last_opened_ = std::max(last_opened_, h.opened);
  if (account_) AddUse(nh.seq % layout_.block_count, std::move(use));
  StartBlock(nh.seq + 1, h.first_rec + h.count);
  // The entry last: the block is written and accounted for whatever happens
  // to it (without it, readers read the block).
  return internal::WriteIndexEntry(f_, layout_, img);
}

Status RingWriter::Impl::AppendKept(const internal::DecodedRecord &d,
                                    const internal::SourceInfo &si, uint64_t seq,
                                    const BlockHeader &origin) {
  // Kept already (a crash came after this block's records were kept and
  // before its slot was overwritten: it is evicted again after the restart).
  if (seq < kept_below_) return Status::OK();
  // A block holds one boot's records (FORMAT.md, "Boots"); a seal that
  // splits carries records of the old boot into the next block: seal again.
  for (int i = 0; cur_.count > 0 && cur_.boot_id != origin.boot_id; i++) {
    if (i == 3) return Status::Corruption("a kept block does not close");
    Status s = Seal();
    if (!s.ok()) return s;
  }
  rseq_ = seq;
  origin_ = &origin;
  Status s = AppendAgain(d, si);
  origin_ = nullptr;
  if (s.ok()) {
    stats_.kept[tier_]++;
    kept_below_ = seq + 1;
  }
  return s;
}

bool RingWriter::Impl::InlineSiteFits(const Source &src, const Site &site,
                                      size_t args_floor) const {
  RecordFields f;
  f.flags = LS_E_F_SOURCE | LS_E_F_TID | LS_E_F_TRUNC | LS_E_F_INLINE;
  f.source_id = src.id;
  f.tid = f.truncated = f.ts_zz = ~0ull;
  f.inline_site = &site;
  const size_t body = internal::RecordFixedLen(f) + args_floor;
  const size_t need = LS_BLK_HDR + internal::SourceEntrySize(src) + ls_varint_len(body) + body;
  return need <= layout_.block_size;
}

uint32_t RingWriter::Impl::Intern(const Site &site) {
  uint32_t id = stp_->Find(site);
  if (id) return id;
  // An I/O error also yields 0: the caller stores the site inline, nothing is lost.
  if (!stp_->Append(f_, site, &id).ok()) id = 0;
  if (!id) stats_.strtab_full++;
  return id;
}

bool ParseCodec(std::string_view name, uint8_t *codec) {
  for (uint8_t c : {LS_CODEC_NONE, LS_CODEC_ZSTD, LS_CODEC_LZ4}) {
    if (name == CodecName(c)) {
      *codec = c;
      return true;
    }
  }
  return false;
}

const char *CodecName(uint8_t codec) {
  switch (codec) {
    case LS_CODEC_NONE:
      return "none";
    case LS_CODEC_ZSTD:
      return "zstd";
    case LS_CODEC_LZ4:
      return "lz4";
    case LS_CODEC_ZSTD_DICT:
      return "zstd+dict";  // a block's codec only: the setting is "zstd"
  }
  return "?";
}

// ---- RingWriter -------------------------------------------------------------

RingWriter::RingWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RingWriter::~RingWriter() = default;

Status RingWriter::Open(Env *env, const std::string &path, const WriterOptions &opts,
                        std::unique_ptr<RingWriter> *out) {
  auto impl = std::make_unique<Impl>();
  Status s = impl->Open(env, path, opts);
  if (!s.ok()) return s;
  out->reset(new RingWriter(std::move(impl)));
  return Status::OK();
}

uint32_t RingWriter::Intern(const Site &site) { return impl_->Intern(site); }
bool RingWriter::LookupSite(uint32_t id, Site *out) const { return impl_->LookupSite(id, out); }
Status RingWriter::Append(const RecordIn &rec) { return impl_->Append(rec); }
Status RingWriter::AppendDropped(const Source &src, uint64_t ts_ns, uint64_t count,
                                 uint64_t since_ns) {
  return impl_->AppendDropped(src, ts_ns, count, since_ns);
}
Status RingWriter::Flush() { return impl_->FlushAll(); }
Status RingWriter::Sync() { return impl_->Sync(); }
Status RingWriter::FinishDictionary() {
  if (!impl_->builder_ || impl_->builder_->collecting()) return Status::OK();
  impl_->builder_->Wait();
  return impl_->DictionaryStep();
}
const Layout &RingWriter::layout() const { return impl_->full_; }
const WriterStats &RingWriter::stats() const {
  merged_ = WriterStats();
  impl_->AddStats(&merged_);
  return merged_;
}
bool RingWriter::InlineSiteFits(const Source &src, const Site &site, size_t args_floor) const {
  return impl_->InlineSiteFits(src, site, args_floor);
}
uint64_t RingWriter::next_record_seq() const { return impl_->cur_.first_rec + impl_->cur_.count; }
uint64_t RingWriter::current_block_seq() const { return impl_->cur_.seq; }
uint64_t RingWriter::next_source_id() const { return impl_->next_source_id_; }
bool RingWriter::dirty() const { return impl_->AnyDirty(); }
const std::string &RingWriter::moved_aside() const { return impl_->moved_aside_; }

}  // namespace logsink::storage
