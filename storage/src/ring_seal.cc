// ring_seal.cc: the current block: starting one, compressing its entries
// into the slot image (and when to try), writing it (flush) and sealing it,
// splitting one that no longer packs, and the dictionary's training steps.
#include <lz4.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_c_srcSizeHint, ZSTD_c_forceAttachDict
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ring_writer_impl.h"
#include "summary_index.h"

namespace logsink::storage {

void RingWriter::Impl::StartBlock(uint64_t seq, uint64_t first_rec) {
  std::memset(buf_.data(), 0, cur_.used);
  cur_ = BlockHeader();
  cur_.seq = seq;
  cur_.first_rec = first_rec;
  cur_.used = LS_BLK_HDR;
  has_src_ = false;
  src_ = tid_ = ts_ = 0;
  declared_.clear();
  fkeys_.Clear();
  ResetUse();
  dirty_ = false;
  packed_used_ = 0;
  fit_used_ = LS_BLK_HDR;
  over_ = false;
  no_fit_used_ = 0;
  zs_in_ = 0;
  zs_pick_dict_ = true;
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

uint8_t RingWriter::Impl::SiteClassSlow(uint32_t id) {
  Site site;
  uint8_t cls = 7;
  if (SiteOf(id, &site)) {
    cls = site.level & 7;
    internal::FieldPlan plan = internal::FieldPlan::Of(site);
    if (plan.kind != internal::FieldPlan::Kind::kNone) {
      cls |= kSiteFields;
      plans_.insert_or_assign(id, std::move(plan));
    }
  }
  // Dense for the ids a writer normally hands out; a far id (damage retired
  // everything below it) is looked up each time rather than sizing the array by it.
  if (id < (1u << 20)) {
    // Ids not looked up yet hold kNoLevel: never a class (an id below one
    // looked up before must still be looked up, not taken as debug).
    if (site_level_.size() <= id) site_level_.resize(id + 1, kNoLevel);
    site_level_[id] = cls;
  }
  return cls;
}

void RingWriter::Impl::NoteFields(const RecordIn &rec, uint8_t site_class, const uint8_t *args,
                                  size_t len) {
  if (rec.site_id == 0) {
    const internal::FieldPlan plan = internal::FieldPlan::Of(*rec.inline_site);
    fkeys_.AddRecord(plan, args, len);
  } else if (site_class & kSiteFields) {
    auto it = plans_.find(rec.site_id);
    if (it != plans_.end()) fkeys_.AddRecord(it->second, args, len);
  }
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
      c = StreamZstd(raw, dst, room);
      codec = zs_use_dict_ ? LS_CODEC_ZSTD_DICT : LS_CODEC_ZSTD;
    } else {
      // Into zs_ first: lz4 may write into its output before it gives up,
      // and the image must keep what packed last (Split takes it).
      stats_.compressed_bytes += raw;
      int r = LZ4_compress_default(reinterpret_cast<const char *>(src),
                                   reinterpret_cast<char *>(zs_.data()), int(raw), int(room));
      c = r > 0 ? size_t(r) : 0;
      if (c > 0 && c < raw) std::memcpy(dst, zs_.data(), c);
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
  fkeys_.Apply(&h);
  uint8_t *img = pk_codec_ == LS_CODEC_NONE ? buf_.data() : zimg_.data();
  internal::FinishBlock(img, h);
  if (rewriting_) {
    captured_.emplace_back(cur_.seq, std::vector<uint8_t>(img, img + layout_.block_size));
    return Status::OK();
  }
  // buf_ is zero past cur_.used, zimg_ past the payload: the whole slot is written.
  Status s = f_->PWrite(layout_.SlotOffset(cur_.seq), img, layout_.block_size);
  // A sealed block's summary goes to the index after the block (FORMAT.md,
  // "Summary index"): an entry never names a block that is not written.
  if (s.ok() && (flags & LS_BLK_F_SEALED)) s = internal::WriteIndexEntry(f_, layout_, img);
  return s;
}

// A block's entries are compressed once: one zstd frame per block, fed
// as the block fills (ZSTD_e_flush at each check and each flush ends a
// zstd block there), instead of compressing the whole block again each
// time (the check at the predicted fill, the next ones, the partial block
// at each flush: 1.06 compressions per entry byte in the daemon flat out,
// 1.97 for records that compress ~30x; now 1.03 and 1.48). What is
// written is always one whole frame as FORMAT.md describes it: the
// stream's frame header with the content size added (the stream does not
// know it when it starts the frame), the blocks so far, and an empty last
// block (RFC 8878: a raw block of size 0 with Last_Block set; zstd writes
// the same one to end a frame with nothing left to compress). The stream
// itself is not ended: the next Pack goes on after its last block.
// (zstd has no call that writes such a snapshot of an unfinished frame:
// the two fields are written here, from RFC 8878, section 3.1.1.)
size_t RingWriter::Impl::StreamZstd(size_t raw, uint8_t *dst, size_t room) {
  auto *cctx = static_cast<ZSTD_CCtx *>(cctx_);
  if (zs_in_ > raw) zs_in_ = 0;  // cut back (Split, a reopen): a new frame
  if (zs_in_ == 0) {
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
    // Compressed as when the whole block went at once (same parameters,
    // same ratio): zstd picks its parameters by the source's size, which a
    // stream does not know (the hint: where the block is expected to end),
    // and for a source of unknown size uses the dictionary in place
    // (attached) where it copies it for a known one above 8 KiB. Without
    // both, a steady flow kept 16% fewer records (bench/codec_bench).
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_srcSizeHint,
                           int(std::max(limit_, size_t(layout_.block_size)) - LS_BLK_HDR));
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_forceAttachDict, ZSTD_dictForceCopy);
    // With the file's dictionary once it has one (the frame names it); the
    // choice holds for the block: entries that packed without it (a prefix
    // a flush wrote before it arrived: fit_used_) must pack again.
    if (zs_pick_dict_) zs_use_dict_ = dictp_->get() != nullptr;
    zs_pick_dict_ = false;
    internal::Dictionary *d = zs_use_dict_ ? dictp_->get() : nullptr;
    ZSTD_CCtx_refCDict(cctx, d ? static_cast<ZSTD_CDict *>(d->cdict(level_)) : nullptr);
    zs_use_dict_ = d != nullptr;
    zs_out_ = 0;
    zs_broken_ = false;
  }
  if (zs_broken_) return 0;
  if (zs_in_ < raw) {
    ZSTD_inBuffer in = {buf_.data() + LS_BLK_HDR + zs_in_, raw - zs_in_, 0};
    ZSTD_outBuffer out = {zs_.data(), zs_.size(), zs_out_};
    stats_.compressed_bytes += in.size;
    const size_t r = ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_flush);
    if (ZSTD_isError(r) || r != 0 || in.pos != in.size) {
      // Did not fit zs_ (two slots): far past the slot anyway. The stream
      // is unusable from here: a content of this size or more packs no
      // more, a shorter one (Split cutting back) starts a new frame.
      zs_broken_ = true;
      zs_in_ = raw;
      return 0;
    }
    zs_in_ = raw;
    zs_out_ = out.pos;
  }
  // The frame header: magic (4), descriptor (1), window descriptor (1, not
  // single-segment), dictionary id (0, 1, 2 or 4 bytes), and no content
  // size (descriptor bits 7-6 zero: the size was unknown).
  static constexpr uint8_t kDictIdBytes[4] = {0, 1, 2, 4};
  if (zs_out_ < 6) return 0;
  const uint8_t fhd = zs_[4];
  if ((fhd & 0xE0) != 0) return 0;  // not a header this function knows
  const size_t hdr = 6 + kDictIdBytes[fhd & 3];
  if (zs_out_ < hdr) return 0;
  const size_t total = zs_out_ + 4 + 3;  // + the content size, + the last block
  if (total > room) return 0;
  std::memcpy(dst, zs_.data(), hdr);
  dst[4] = uint8_t(fhd | 0x80);  // Frame_Content_Size_flag 2: 4 bytes, little-endian
  for (int i = 0; i < 4; i++) dst[hdr + size_t(i)] = uint8_t(raw >> (8 * i));
  std::memcpy(dst + hdr + 4, zs_.data() + hdr, zs_out_ - hdr);
  uint8_t *last = dst + total - 3;  // Last_Block 1, Raw_Block, Block_Size 0
  last[0] = 1;
  last[1] = last[2] = 0;
  return total;
}

Status RingWriter::Impl::MakeRoom(size_t need) {
  if (codec_ != LS_CODEC_NONE && cur_.count > 0 && limit_ < cap_) {
    const bool packed = Pack();
    if (packed) {
      // Room left in the slot, in entry bytes at the ratio so far, with a
      // margin for entries that compress worse than the ones before them.
      const size_t room = layout_.block_size - LS_BLK_HDR;
      const double ratio = double(cur_.used - LS_BLK_HDR) / double(pk_stored_);
      const size_t grow = size_t(double(room - pk_stored_) * ratio * 0.9);
      // Less than 1/8 of the slot left: another pass would win at most
      // that much history for a frame's flush and a check more, so seal.
      // Most blocks take one pass. (1/16 kept ~2% more text but cost the
      // daemon 0.11 instead of 0.09 us per record end to end, and more
      // splits: bench/README.md, "Compression".)
      if (grow >= need && room - pk_stored_ >= room / 8) {
        limit_ = std::min(cap_, cur_.used + grow);
        if (cur_.used + need <= limit_) return Status::OK();
      }
    }
    // Rescue's writer does not seal here: the block is full as far as the
    // checks tell (over_), and Rescue cuts it where the last one packed
    // (Split) once the records that must go into this slot are in. Each
    // byte is compressed once so, where filling it to the buffer and
    // searching for the cut afterwards compressed it about four times.
    if (rewriting_ && cur_.used + need <= cap_) {
      over_ = true;
      if (!packed) no_fit_used_ = cur_.used;
      limit_ = cap_;
      return Status::OK();
    }
    if (!packed) return Split();
  }
  return Seal();
}

bool RingWriter::Impl::MightPack() const {
  if (!over_) return true;
  if (no_fit_used_ && cur_.used >= no_fit_used_) return false;
  const size_t room = layout_.block_size - LS_BLK_HDR;
  if (packed_used_ != fit_used_ || pk_stored_ == 0 || pk_stored_ >= room) return true;
  const double ratio = double(fit_used_ - LS_BLK_HDR) / double(pk_stored_);
  return double(cur_.used - fit_used_) <= double(room - pk_stored_) * ratio * 1.1;
}

Status RingWriter::Impl::Seal() {
  if (!Pack()) return Split();
  Status s = WriteCurrent(LS_BLK_F_SEALED);
  if (!s.ok()) return s;
  stats_.blocks_written++;
  stats_.sealed_raw_bytes += cur_.used - LS_BLK_HDR;
  stats_.sealed_stored_bytes += pk_stored_;
  if (pk_stored_) ratio_ = double(cur_.used - LS_BLK_HDR) / double(pk_stored_);
  if (rewriting_) {
    rewritten_.emplace_back(cur_.seq % layout_.block_count, std::move(block_use_));
  } else if (account_) {
    AddUse(cur_.seq % layout_.block_count, std::move(block_use_));
  }
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
  // The image that packed fit_used_ is kept aside: zstd's frame started
  // again for the same entries (one piece, not the stream's several) can
  // come out a few bytes longer, and those entries must stay in this slot.
  struct {
    std::vector<uint8_t> img;
    size_t used = 0;
    uint8_t codec = LS_CODEC_NONE;
    uint32_t stored = 0;
  } fit;
  if (packed_used_ == fit_used_ && fit_used_ > LS_BLK_HDR) {
    fit.img.assign(zimg_.begin(), zimg_.end());
    fit.used = packed_used_;
    fit.codec = pk_codec_;
    fit.stored = pk_stored_;
  }
  // The image that packed those entries is taken as it is: the same
  // entries compressed again would cost as much as the block did so far.
  auto try_pack = [&](size_t k) {
    cur_.used = ends[k - 1];
    cur_.count = uint32_t(k);
    cur_.max_ts = max_ts[k - 1];
    packed_used_ = 0;
    if (cur_.used != fit.used && Pack()) return true;
    if (cur_.used != fit.used) return false;
    std::copy(fit.img.begin(), fit.img.end(), zimg_.begin());
    pk_codec_ = fit.codec;
    pk_stored_ = fit.stored;
    packed_used_ = fit.used;
    return true;
  };
  // Rescue's writer, its checks having found the block full (less than
  // 1/8 of the slot left where the last one packed): that is the cut, no
  // search. A check that did not pack bounds the search.
  const size_t room = layout_.block_size - LS_BLK_HDR;
  const bool full = fit.used && fit.stored + room / 8 >= room;
  const int rounds = rewriting_ && over_ && full ? 0 : 2;
  if (no_fit_used_) hi = std::max(lo + 1, std::min(hi, prefix(no_fit_used_)));
  for (int round = 0; round < rounds && hi - lo > 1; round++) {
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

}  // namespace logsink::storage
