// block.cc: the block header, entry encoders and BlockCursor (the single
// entry decoder used by writer recovery, the reader and Verify).
#include "block.h"

#include <lz4.h>
#include <zstd.h>

#include <cstring>

#include "dict.h"
#include "logsink/proto/fields.h"

namespace logsink::storage::internal {

// The block CRC covers [8, used): everything after the magic and the CRC itself.
constexpr size_t kBlkCrcFrom = LS_BLK_OFF_SEQ;
static_assert(LS_BLK_OFF_BLOOM + LS_BLK_BLOOM_BYTES == LS_BLK_HDR, "the filter ends the header");

// The header's fields past magic and CRC, as one table that ParseBlockHeader
// and FinishBlock both walk, so the two cannot disagree on an offset.
template <typename T>
struct Field {
  size_t off;
  T BlockHeader::*member;
};
constexpr Field<uint64_t> kWide[] = {{LS_BLK_OFF_SEQ, &BlockHeader::seq},
                                     {LS_BLK_OFF_FIRST_REC, &BlockHeader::first_rec},
                                     {LS_BLK_OFF_BASE_TS, &BlockHeader::base_ts},
                                     {LS_BLK_OFF_MAX_TS, &BlockHeader::max_ts},
                                     {LS_BLK_OFF_MIN_TIME, &BlockHeader::min_time},
                                     {LS_BLK_OFF_MAX_TIME, &BlockHeader::max_time},
                                     {LS_BLK_OFF_OPEN_MONO, &BlockHeader::open_mono},
                                     {LS_BLK_OFF_OPEN_REAL, &BlockHeader::open_real}};
constexpr Field<uint32_t> kNarrow[] = {{LS_BLK_OFF_USED, &BlockHeader::used},
                                       {LS_BLK_OFF_COUNT, &BlockHeader::count},
                                       {LS_BLK_OFF_FLAGS, &BlockHeader::flags},
                                       {LS_BLK_OFF_OPENED, &BlockHeader::opened},
                                       {LS_BLK_OFF_RAW, &BlockHeader::raw}};

BlockHeader ParseBlockHeader(const uint8_t *p) {
  BlockHeader h;
  h.magic = ls_get_u32(p + LS_BLK_OFF_MAGIC);
  h.crc = ls_get_u32(p + LS_BLK_OFF_CRC);
  for (const auto &f : kWide) h.*f.member = ls_get_u64(p + f.off);
  for (const auto &f : kNarrow) h.*f.member = ls_get_u32(p + f.off);
  h.codec = p[LS_BLK_OFF_CODEC];
  h.levels = p[LS_BLK_OFF_LEVELS];
  h.tier = p[LS_BLK_OFF_TIER];
  std::memcpy(h.boot_id.data(), p + LS_BLK_OFF_BOOT_ID, h.boot_id.size());
  std::memcpy(h.bloom.data(), p + LS_BLK_OFF_BLOOM, h.bloom.size());
  return h;
}

void FinishBlock(uint8_t *p, const BlockHeader &h) {
  ls_put_u32(p + LS_BLK_OFF_MAGIC, LS_BLK_MAGIC);
  for (const auto &f : kWide) ls_put_u64(p + f.off, h.*f.member);
  for (const auto &f : kNarrow) ls_put_u32(p + f.off, h.*f.member);
  p[LS_BLK_OFF_CODEC] = h.codec;
  p[LS_BLK_OFF_LEVELS] = h.levels;
  p[LS_BLK_OFF_TIER] = h.tier;
  p[LS_BLK_OFF_RESERVED] = 0;
  std::memcpy(p + LS_BLK_OFF_BOOT_ID, h.boot_id.data(), h.boot_id.size());
  std::memcpy(p + LS_BLK_OFF_BLOOM, h.bloom.data(), h.bloom.size());
  ls_put_u32(p + LS_BLK_OFF_CRC, Crc32c(p + kBlkCrcFrom, h.used - kBlkCrcFrom));
}

// ---- summary filter -------------------------------------------------------

uint64_t BloomHash(uint8_t type, const void *value, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64: offset basis, then prime per byte
  auto mix = [&h](uint8_t b) { h = (h ^ b) * 0x100000001b3ull; };
  mix(type);
  const auto *b = static_cast<const uint8_t *>(value);
  for (size_t i = 0; i < n; i++) mix(b[i]);
  return h;
}

static uint32_t BloomBit(uint64_t hash, uint32_t i) {
  const uint32_t lo = uint32_t(hash), hi = uint32_t(hash >> 32) | 1u;
  return (lo + i * hi) % (LS_BLK_BLOOM_BYTES * 8);
}

void BloomAdd(uint8_t *bloom, uint64_t hash) {
  for (uint32_t i = 0; i < LS_BLK_BLOOM_HASHES; i++) {
    const uint32_t bit = BloomBit(hash, i);
    bloom[bit / 8] |= uint8_t(1u << (bit % 8));
  }
}

bool BloomMayHave(const uint8_t *bloom, uint64_t hash) {
  for (uint32_t i = 0; i < LS_BLK_BLOOM_HASHES; i++) {
    const uint32_t bit = BloomBit(hash, i);
    if (!(bloom[bit / 8] & (1u << (bit % 8)))) return false;
  }
  return true;
}

void BloomAddSource(uint8_t *bloom, uint32_t uid, uint32_t pid, std::string_view app,
                    std::string_view comm, std::string_view unit) {
  BloomAdd(bloom, BloomU32(LS_BLOOM_KEY_UID, uid));
  BloomAdd(bloom, BloomU32(LS_BLOOM_KEY_PID, pid));
  BloomAdd(bloom, BloomStr(LS_BLOOM_KEY_APP, app));
  BloomAdd(bloom, BloomStr(LS_BLOOM_KEY_COMM, comm));
  if (!unit.empty()) BloomAdd(bloom, BloomStr(LS_BLOOM_KEY_UNIT, unit));
}

const char *BlockStateName(BlockState s) {
  switch (s) {
    case BlockState::kValid:
      return "valid";
    case BlockState::kEmpty:
      return "empty";
    case BlockState::kBadHeader:
      return "bad block header";
    case BlockState::kBadCrc:
      return "block CRC mismatch";
    case BlockState::kBadData:
      return "block payload does not decode";
  }
  return "?";
}

BlockState CheckBlockHeader(const BlockHeader &h, const Layout &l, uint64_t slot) {
  if (h.magic != LS_BLK_MAGIC) {
    return (h.magic == 0 && h.crc == 0 && h.seq == 0 && h.used == 0) ? BlockState::kEmpty
                                                                     : BlockState::kBadHeader;
  }
  if (h.used < LS_BLK_HDR || h.used > l.block_size || h.seq % l.block_count != slot ||
      h.tier != l.tier) {
    return BlockState::kBadHeader;
  }
  // The payload's codec is known and its decoded size within the bound (a
  // block claiming more is refused before anything is allocated for it).
  switch (h.codec) {
    case LS_CODEC_NONE:
      if (h.raw != h.used - LS_BLK_HDR) return BlockState::kBadHeader;
      break;
    case LS_CODEC_ZSTD:
    case LS_CODEC_LZ4:
    case LS_CODEC_ZSTD_DICT:
      if (uint64_t(h.raw) > uint64_t(LS_BLK_RAW_FACTOR) * l.block_size) {
        return BlockState::kBadHeader;
      }
      break;
    default:
      return BlockState::kBadHeader;
  }
  return BlockState::kValid;
}

BlockState CheckBlock(const uint8_t *p, const Layout &l, uint64_t slot, BlockHeader *h) {
  *h = ParseBlockHeader(p);
  BlockState s = CheckBlockHeader(*h, l, slot);
  if (s != BlockState::kValid) return s;
  if (Crc32c(p + kBlkCrcFrom, h->used - kBlkCrcFrom) != h->crc) return BlockState::kBadCrc;
  return BlockState::kValid;
}

// ---- encoding -------------------------------------------------------------

static size_t SourceBodyLen(const Source &s) {
  return 1 + ls_varint_len(s.id) + ls_varint_len(s.pid) + ls_varint_len(s.uid) +
         ls_varint_len(s.gid) + StrLen(s.app) + StrLen(s.comm) + StrLen(s.unit);
}

size_t SourceEntrySize(const Source &s) {
  size_t body = SourceBodyLen(s);
  return ls_varint_len(body) + body;
}

uint8_t *PutSourceEntry(uint8_t *p, const Source &s) {
  p += ls_put_varint(p, SourceBodyLen(s));
  *p++ = LS_E_SOURCE;
  p += ls_put_varint(p, s.id);
  p += ls_put_varint(p, s.pid);
  p += ls_put_varint(p, s.uid);
  p += ls_put_varint(p, s.gid);
  p = PutStr(p, s.app);
  p = PutStr(p, s.comm);
  return PutStr(p, s.unit);
}

size_t RecordFixedLen(const RecordFields &f) {
  size_t n = 1 + ls_varint_len(f.ts_zz);
  if (f.flags & LS_E_F_GAP) n += ls_varint_len(f.gap);
  if (f.flags & LS_E_F_SOURCE) n += ls_varint_len(f.source_id);
  if (f.flags & LS_E_F_TID) n += ls_varint_len(f.tid);
  if (f.flags & LS_E_F_TRUNC) n += ls_varint_len(f.truncated);
  if (f.flags & LS_E_F_INLINE) {
    n += 1 + ls_varint_len(f.inline_site->line) + StrLen(f.inline_site->fmt) +
         StrLen(f.inline_site->file);
  } else {
    n += ls_varint_len(f.site_id);
  }
  return n;
}

uint8_t *PutRecordEntry(uint8_t *p, const RecordFields &f, size_t fixed_len, const uint8_t *args,
                        size_t args_len) {
  p += ls_put_varint(p, fixed_len + args_len);
  *p++ = static_cast<uint8_t>(LS_E_RECORD | f.flags);
  if (f.flags & LS_E_F_GAP) p += ls_put_varint(p, f.gap);
  if (f.flags & LS_E_F_SOURCE) p += ls_put_varint(p, f.source_id);
  if (f.flags & LS_E_F_TID) p += ls_put_varint(p, f.tid);
  if (f.flags & LS_E_F_TRUNC) p += ls_put_varint(p, f.truncated);
  if (f.flags & LS_E_F_INLINE) {
    *p++ = static_cast<uint8_t>(f.inline_site->level |
                                (f.inline_site->flags & LS_ST_F_FIELDS ? LS_SITE_FIELDS : 0));
    p += ls_put_varint(p, f.inline_site->line);
    p = PutStr(p, f.inline_site->fmt);
    p = PutStr(p, f.inline_site->file);
  } else {
    p += ls_put_varint(p, f.site_id);
  }
  p += ls_put_varint(p, f.ts_zz);
  if (args_len) std::memcpy(p, args, args_len);
  return p + args_len;
}

size_t DroppedBodyLen(uint64_t gap, bool with_source, uint64_t source_id, uint64_t ts_zz,
                      uint64_t count, uint64_t since) {
  return 1 + (gap ? ls_varint_len(gap) : 0) + (with_source ? ls_varint_len(source_id) : 0) +
         ls_varint_len(ts_zz) + ls_varint_len(count) + ls_varint_len(since);
}

uint8_t *PutDroppedEntry(uint8_t *p, uint64_t gap, bool with_source, uint64_t source_id,
                         uint64_t ts_zz, uint64_t count, uint64_t since, size_t body_len) {
  p += ls_put_varint(p, body_len);
  *p++ = static_cast<uint8_t>(LS_E_DROPPED | (with_source ? LS_E_F_SOURCE : 0) |
                              (gap ? LS_E_F_GAP : 0));
  if (gap) p += ls_put_varint(p, gap);
  if (with_source) p += ls_put_varint(p, source_id);
  p += ls_put_varint(p, ts_zz);
  p += ls_put_varint(p, count);
  return p + ls_put_varint(p, since);
}

// ---- decoding -------------------------------------------------------------

BlockExpander::BlockExpander() : dctx_(ZSTD_createDCtx()) {}
BlockExpander::~BlockExpander() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx *>(dctx_)); }

void BlockExpander::UseDictionaryOf(File *f, const Layout &l) {
  dict_file_ = f;
  dict_off_ = l.dict_off;
  dict_size_ = l.dict_size;
  dict_tried_ = false;
  dict_.reset();
}

void BlockExpander::SetDictionary(std::shared_ptr<Dictionary> d) {
  dict_ = std::move(d);
  dict_tried_ = true;
}

size_t BlockExpander::HeldBytes() const {
  return out_.capacity() + ZSTD_sizeof_DCtx(static_cast<const ZSTD_DCtx *>(dctx_)) +
         (dict_ ? dict_->HeldBytes() : 0);
}

// A dictionary's digested form for decoding holds its entropy tables (about
// 27 KiB with zstd 1.5) beside a copy of its bytes: 32 KiB covers them.
constexpr size_t kDDictTables = 32u << 10;
size_t BlockExpander::BoundBytes(const Layout &l) const {
  const size_t dict = l.dict_size ? 2 * size_t(l.dict_size) + kDDictTables : 0;
  return LS_BLK_HDR + size_t(l.block_size) * LS_BLK_RAW_FACTOR +
         ZSTD_sizeof_DCtx(static_cast<const ZSTD_DCtx *>(dctx_)) + dict;
}

const uint8_t *BlockExpander::Expand(const uint8_t *img, const BlockHeader &h) {
  if (h.codec == LS_CODEC_NONE) return img;
  const size_t want = LS_BLK_HDR + size_t(h.raw);  // h.raw was bounded by CheckBlockHeader
  if (out_.size() < want) out_.resize(want);
  std::memcpy(out_.data(), img, LS_BLK_HDR);
  const uint8_t *src = img + LS_BLK_HDR;
  const size_t n = h.used - LS_BLK_HDR;
  if (h.codec == LS_CODEC_ZSTD) {
    // A frame that declares another content size, or decodes to more than
    // h.raw bytes, fails (the output buffer is exactly h.raw bytes).
    unsigned long long declared = ZSTD_getFrameContentSize(src, n);
    if (declared != h.raw || !dctx_) return nullptr;
    size_t got = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx *>(dctx_), out_.data() + LS_BLK_HDR,
                                     h.raw, src, n);
    if (ZSTD_isError(got) || got != h.raw) return nullptr;
    return out_.data();
  }
  if (h.codec == LS_CODEC_ZSTD_DICT) {
    if (!dict_tried_ && dict_file_) {
      Layout l;
      l.dict_off = dict_off_;
      l.dict_size = dict_size_;
      Status s = ReadDictionary(dict_file_, l, &dict_);
      if (!s.ok()) dict_.reset();
      // What the region holds is final once a block needs it (written once,
      // before any such block); an I/O error is tried again next time.
      dict_tried_ = s.ok() || s.IsCorruption();
    }
    // The frame names its dictionary: another than the file's (a block of a
    // file whose dictionary was replaced, or a crafted one) does not decode.
    if (!dict_ || !dctx_ || ZSTD_getDictID_fromFrame(src, n) != dict_->id() ||
        ZSTD_getFrameContentSize(src, n) != h.raw) {
      return nullptr;
    }
    size_t got =
        ZSTD_decompress_usingDDict(static_cast<ZSTD_DCtx *>(dctx_), out_.data() + LS_BLK_HDR, h.raw,
                                   src, n, static_cast<const ZSTD_DDict *>(dict_->ddict()));
    if (ZSTD_isError(got) || got != h.raw) return nullptr;
    return out_.data();
  }
  if (h.codec == LS_CODEC_LZ4) {
    if (n > size_t(INT32_MAX) || h.raw > uint32_t(INT32_MAX)) return nullptr;
    int got =
        LZ4_decompress_safe(reinterpret_cast<const char *>(src),
                            reinterpret_cast<char *>(out_.data() + LS_BLK_HDR), int(n), int(h.raw));
    if (got < 0 || uint32_t(got) != h.raw) return nullptr;
    return out_.data();
  }
  return nullptr;
}

void BlockCursor::Reset(const uint8_t *p, const BlockHeader &h) {
  p_ = p;
  used_ = LS_BLK_HDR + h.raw;
  pos_ = LS_BLK_HDR;
  index_ = 0;
  gaps_ = 0;
  count_ = h.count;
  has_source_ = false;
  source_ = 0;
  tid_ = 0;
  ts_ = h.base_ts;
  max_ts_ = 0;
  sources_.clear();
  last_source_ = nullptr;
}

const SourceInfo *BlockCursor::FindSource(uint64_t id) const {
  for (const SourceInfo &s : sources_) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

// Bounded reader over one entry's bytes: every Get fails once past the end.
struct BlockCursor::In {
  const uint8_t *p, *end;
  bool ok = true;
  uint64_t Var() {
    uint64_t v = 0;
    size_t n = ok ? ls_get_varint(p, end, &v) : 0;
    if (!n) ok = false;
    p += n;
    return v;
  }
  uint32_t Var32() {
    uint64_t v = Var();
    if (v > 0xffffffffu) ok = false;
    return static_cast<uint32_t>(v);
  }
  uint8_t U8() {
    if (!ok || p >= end) {
      ok = false;
      return 0;
    }
    return *p++;
  }
  std::string_view Str() {
    uint64_t n = Var();
    if (!ok || n > static_cast<uint64_t>(end - p)) {
      ok = false;
      return {};
    }
    std::string_view s(reinterpret_cast<const char *>(p), static_cast<size_t>(n));
    p += n;
    return s;
  }
};

// The steps of Next are inlined into it (it runs once per record read).

[[gnu::always_inline]] inline bool BlockCursor::TakeSource(In *in, uint8_t flags) {
  if (flags) return false;  // GAP included: a SOURCE is no record
  SourceInfo s;
  s.id = in->Var();
  s.pid = in->Var32();
  s.uid = in->Var32();
  s.gid = in->Var32();
  s.app = in->Str();
  s.comm = in->Str();
  s.unit = in->Str();
  if (!in->ok || in->p != in->end) return false;
  sources_.push_back(s);
  last_source_ = nullptr;  // (the vector may have moved)
  return true;
}

[[gnu::always_inline]] inline bool BlockCursor::RecordBody(In *in, uint8_t flags,
                                                           DecodedRecord *r) {
  r->kind = Record::Kind::kRecord;
  if (flags & LS_E_F_SOURCE) {
    has_source_ = true;
    source_ = in->Var();
  }
  if (flags & LS_E_F_TID) tid_ = in->Var();
  if (flags & LS_E_F_TRUNC) r->truncated = in->Var();
  if (flags & LS_E_F_INLINE) {
    // The level byte: the level, and FIELDS (format 6; FORMAT.md, "Entries").
    const uint8_t level = in->U8();
    r->inline_site.level = level & LS_SITE_LEVEL_MASK;
    r->inline_site.flags = level & LS_SITE_FIELDS ? LS_ST_F_FIELDS : 0;
    r->inline_site.line = in->Var32();
    r->inline_site.fmt = in->Str();
    r->inline_site.file = in->Str();
  } else {
    r->site_id = in->Var32();
    if (in->ok && r->site_id == 0) return false;
  }
  ts_ += static_cast<uint64_t>(ls_unzigzag(in->Var()));
  if (!in->ok) return false;
  r->args = in->p;
  r->args_len = static_cast<size_t>(in->end - in->p);
  r->tid = tid_;
  return true;
}

[[gnu::always_inline]] inline bool BlockCursor::DroppedBody(In *in, uint8_t flags,
                                                            DecodedRecord *r) {
  r->kind = Record::Kind::kDropped;
  if (flags & ~(LS_E_F_SOURCE | LS_E_F_GAP)) return false;
  if (flags & LS_E_F_SOURCE) {
    has_source_ = true;
    source_ = in->Var();
  }
  ts_ += static_cast<uint64_t>(ls_unzigzag(in->Var()));
  r->dropped_count = in->Var();
  r->dropped_since = in->Var();
  return in->ok && in->p == in->end;
}

[[gnu::always_inline]] inline bool BlockCursor::TakeRecord(In *in, uint8_t kind, uint8_t flags,
                                                           DecodedRecord *out) {
  // Every field set below, one by one: a whole-struct reset costs more
  // than the rest of the decoding (it is per record).
  DecodedRecord &r = *out;
  r.entry_off = pos_;
  r.index = index_;
  r.tid = 0;
  r.truncated = 0;
  r.site_id = 0;
  r.inline_site = Site();
  r.args = nullptr;
  r.args_len = 0;
  r.dropped_count = r.dropped_since = 0;
  // A gap (kept tiers) moves this record's number on; the first record of
  // a block is numbered by the header and takes none.
  if (flags & LS_E_F_GAP) {
    const uint64_t gap = in->Var();
    if (!in->ok || index_ == 0 || gap == 0 || gap > (1ull << 62)) return false;
    gaps_ += gap;
  }
  r.seq_off = index_ + gaps_;
  if (kind == LS_E_RECORD) {
    if (!RecordBody(in, flags, &r)) return false;
  } else if (kind == LS_E_DROPPED) {
    if (!DroppedBody(in, flags, &r)) return false;
  } else {
    return false;
  }
  r.ts = ts_;
  if (ts_ > max_ts_) max_ts_ = ts_;
  r.has_source = has_source_;
  r.source_id = source_;
  if (has_source_ && (!last_source_ || last_source_->id != source_)) {
    last_source_ = FindSource(source_);
  }
  r.source = has_source_ ? last_source_ : nullptr;
  return true;
}

BlockCursor::Result BlockCursor::Next(DecodedRecord *out) {
  while (pos_ < used_) {
    const uint8_t *end = p_ + used_;
    uint64_t len = 0;
    size_t n = ls_get_varint(p_ + pos_, end, &len);
    if (!n || len == 0 || len > static_cast<uint64_t>(end - (p_ + pos_ + n))) return kMalformed;
    In in{p_ + pos_ + n, p_ + pos_ + n + len};
    uint8_t head = in.U8();
    uint8_t kind = head & LS_E_KIND_MASK, flags = head & ~LS_E_KIND_MASK;
    if (head & 0x80) return kMalformed;
    if (kind == LS_E_SOURCE) {
      if (!TakeSource(&in, flags)) return kMalformed;
      pos_ += static_cast<uint32_t>(n + len);
      continue;
    }
    if (!TakeRecord(&in, kind, flags, out)) return kMalformed;
    // More records than the header counts: the header and the entries
    // disagree (a damaged block); sequence numbers past `count` belong to
    // the next block.
    if (index_ >= count_) return kMalformed;
    pos_ += static_cast<uint32_t>(n + len);
    index_++;
    return kRecord;
  }
  return kEnd;
}

}  // namespace logsink::storage::internal
