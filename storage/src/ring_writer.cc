// ring_writer.cc: RingWriter: interns call sites, appends records to the
// current block in memory, seals full blocks with one pwrite each and
// overwrites the oldest slot when the ring is full (opening and recovery are
// in ring_recover.cc).
#include <time.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "logsink/proto/args.h"
#include "ring_writer_impl.h"

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
  dirty_ = false;
}

Status RingWriter::Impl::Seal() {
  cur_.flags = LS_BLK_F_SEALED;
  internal::FinishBlock(buf_.data(), cur_);
  Status s = file_->PWrite(layout_.SlotOffset(cur_.seq), buf_.data(), layout_.block_size);
  if (!s.ok()) {
    cur_.flags = 0;
    return s;
  }
  stats_.blocks_written++;
  uint64_t next = cur_.seq + 1;
  StartBlock(next, cur_.first_rec + cur_.count);
  if (next % layout_.block_count == 0) {
    // Once per lap: refresh the tail hint (the other superblock copy).
    stats_.wraps++;
    sb_.generation++;
    sb_.tail_hint = next;
    return internal::WriteSuperblock(file_.get(), sb_);
  }
  return Status::OK();
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
  if (declare) {
    p = internal::PutSourceEntry(p, *rec.source);
    declared_.push_back(rec.source->id);
  }
  p = internal::PutRecordEntry(p, f, fixed, args, args_len);
  tid_ = rec.tid;
  Commit(static_cast<size_t>(p - start), rec.source->id, rec.ts_ns);
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
      (rec.site_id <= sites_ || rec.site_id <= (sites_ = st_.last_id()))) {
    const uint64_t id = src->id;
    const bool new_src = !has_src_ || src_ != id;
    if (!new_src || Declared(id)) {
      const bool new_tid = rec.tid != tid_;
      const uint64_t zz = ls_zigzag(static_cast<int64_t>(rec.ts_ns - ts_));
      const uint8_t head = static_cast<uint8_t>(LS_E_RECORD | (new_src ? LS_E_F_SOURCE : 0) |
                                                (new_tid ? LS_E_F_TID : 0));
      uint8_t *start = buf_.data() + cur_.used;
      size_t need;
      if (rec.args_len <= kShortArgs && layout_.block_size - cur_.used >= kShortEntry) {
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
        if (need > layout_.block_size - cur_.used) return AppendSlow(rec);  // seals the block
        uint8_t *p = start + ls_put_varint(start, body);
        *p++ = head;
        if (new_src) p += ls_put_varint(p, id);
        if (new_tid) p += ls_put_varint(p, rec.tid);
        p += ls_put_varint(p, rec.site_id);
        p += ls_put_varint(p, zz);
        CopyArgs(p, rec.args, rec.args_len);
      }
      tid_ = rec.tid;
      Commit(need, id, rec.ts_ns);
      return Status::OK();
    }
  }
  return AppendSlow(rec);
}

Status RingWriter::Impl::AppendSlow(const RecordIn &rec) {
  if (!rec.source) return Status::InvalidArgument("record without a source");
  if (rec.site_id == 0 ? !rec.inline_site : rec.site_id > st_.last_id()) {
    return Status::InvalidArgument("record with an unknown site id " + std::to_string(rec.site_id));
  }
  for (;;) {
    RecordFields f;
    size_t fixed;
    bool declare;
    size_t need = Plan(rec, rec.args_len, rec.truncated, &f, &fixed, &declare);
    if (cur_.used + need <= layout_.block_size) {
      Emit(rec, f, fixed, declare, rec.args, rec.args_len);
      if (rec.truncated) stats_.truncated_records++;  // cut by its client
      return Status::OK();
    }
    if (cur_.count == 0) break;  // does not fit even an empty block
    Status s = Seal();           // never leave a record spanning blocks
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
      size_t l = std::min(a.len, lo);
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
    size_t body = internal::DroppedBodyLen(with_source, src.id, ts_zz, count, since_ns);
    size_t need = (declare ? internal::SourceEntrySize(src) : 0) + ls_varint_len(body) + body;
    if (cur_.used + need <= layout_.block_size) {
      uint8_t *start = buf_.data() + cur_.used, *p = start;
      if (declare) {
        p = internal::PutSourceEntry(p, src);
        declared_.push_back(src.id);
      }
      p = internal::PutDroppedEntry(p, with_source, src.id, ts_zz, count, since_ns, body);
      Commit(static_cast<size_t>(p - start), src.id, ts_ns);  // a DROPPED entry keeps the tid
      return Status::OK();
    }
    if (cur_.count == 0) return Status::InvalidArgument("source does not fit a block");
    Status s = Seal();
    if (!s.ok()) return s;
  }
}

Status RingWriter::Impl::Flush() {
  if (!dirty_) return Status::OK();
  cur_.flags = 0;
  internal::FinishBlock(buf_.data(), cur_);
  Status s = file_->PWrite(layout_.SlotOffset(cur_.seq), buf_.data(), layout_.block_size);
  if (!s.ok()) return s;
  dirty_ = false;
  stats_.flushes++;
  return Status::OK();
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
  uint32_t id = st_.Find(site);
  if (id) return id;
  // An I/O error also yields 0: the caller stores the site inline, nothing is lost.
  if (!st_.Append(file_.get(), site, &id).ok()) id = 0;
  if (!id) stats_.strtab_full++;
  return id;
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
Status RingWriter::Flush() { return impl_->Flush(); }
Status RingWriter::Sync() { return impl_->Sync(); }
const Layout &RingWriter::layout() const { return impl_->layout_; }
const WriterStats &RingWriter::stats() const { return impl_->stats_; }
bool RingWriter::InlineSiteFits(const Source &src, const Site &site, size_t args_floor) const {
  return impl_->InlineSiteFits(src, site, args_floor);
}
uint64_t RingWriter::next_record_seq() const { return impl_->cur_.first_rec + impl_->cur_.count; }
uint64_t RingWriter::current_block_seq() const { return impl_->cur_.seq; }
uint64_t RingWriter::next_source_id() const { return impl_->next_source_id_; }
bool RingWriter::dirty() const { return impl_->dirty_; }

}  // namespace logsink::storage
