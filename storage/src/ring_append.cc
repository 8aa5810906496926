// ring_append.cc: appending records and drop reports to the current block:
// the one-pass path of the common record, the planned path of any other
// (a new source, an inline site, a full block), and cutting the string
// arguments of a record too big for an empty block.
#include <algorithm>
#include <cstring>

#include "logsink/proto/args.h"
#include "logsink/proto/printf.h"
#include "ring_writer_impl.h"

namespace logsink::storage {

uint8_t *RingWriter::Impl::DeclareSource(uint8_t *p, const Source &src) {
  declared_.push_back(src.id);
  internal::BloomAddSource(cur_.bloom.data(), src.uid, src.pid, src.app, src.comm, src.unit);
  return internal::PutSourceEntry(p, src);
}

namespace {

// A RECORD's flags past GAP and SOURCE: TID (against the block's current
// tid), TRUNC, and the site (inline or by id).
void PlanTail(const RecordIn &rec, uint64_t tid, uint64_t truncated, RecordFields *f) {
  if (rec.tid != tid) {
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
}

}  // namespace

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
  PlanTail(rec, tid_, truncated, f);
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
  const uint8_t cls = rec.site_id ? SiteClass(rec.site_id) : 0;
  const uint8_t level = rec.site_id ? cls & 7 : rec.inline_site->level;
  if (rec.site_id == 0 || (cls & kSiteFields)) NoteFields(rec, cls, args, args_len);
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
      (rec.site_id <= sites_ || rec.site_id <= (sites_ = LastSiteId()))) {
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
      const uint8_t cls = SiteClass(rec.site_id);
      if (cls & kSiteFields) NoteFields(rec, cls, rec.args, rec.args_len);
      Commit(need, id, rec.ts_ns, cls & 7);
      return Status::OK();
    }
  }
  return AppendSlow(rec);
}

Status RingWriter::Impl::AppendSlow(const RecordIn &rec) {
  if (!rec.source) return Status::InvalidArgument("record without a source");
  if (rec.site_id == 0 ? !rec.inline_site : rec.site_id > LastSiteId()) {
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

size_t RingWriter::Impl::PlanFirst(const RecordIn &rec, size_t args_len, uint64_t truncated,
                                   RecordFields *f, size_t *fixed) const {
  f->flags = LS_E_F_SOURCE;
  f->source_id = rec.source->id;
  PlanTail(rec, 0, truncated, f);  // a block starts with tid 0
  f->ts_zz = 0;
  *fixed = internal::RecordFixedLen(*f);
  size_t body = *fixed + args_len;
  return internal::SourceEntrySize(*rec.source) + ls_varint_len(body) + body;
}

bool RingWriter::Impl::FitsEmptyBlock(const RecordIn &rec) const {
  RecordFields f;
  size_t fixed;
  return LS_BLK_HDR + PlanFirst(rec, rec.args_len, rec.truncated, &f, &fixed) <= layout_.block_size;
}

// Cuts the string arguments, longest first (all strings longer than a
// common cap are cut to it), so the record fits an empty block.
Status RingWriter::Impl::CutToFit(const RecordIn &rec, uint8_t *out, size_t *out_len,
                                  uint64_t *cut) const {
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
  PlanFirst(rec, 0, ~0ull, &f, &fixed);
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
  uint8_t *o = out;
  *cut = 0;
  p = rec.args;
  for (char type : rec.signature) {
    ls_arg a{};
    size_t n = ls_arg_get(type, p, end, &a);
    if (type == LS_ARG_STR) {
      const size_t l = ls_utf8_cut(a.s, a.len, lo);  // whole characters only
      *cut += a.len - l;
      o += ls_put_varint(o, l);
      std::memcpy(o, a.s, l);
      o += l;
    } else {
      std::memcpy(o, p, n);
      o += n;
    }
    p += n;
  }
  *out_len = static_cast<size_t>(o - out);
  return Status::OK();
}

// The record does not fit an empty block (the current one is empty: the
// caller sealed the previous one): its arguments cut, then stored.
Status RingWriter::Impl::AppendTruncated(const RecordIn &rec) {
  size_t args_len;
  uint64_t cut;
  Status st = CutToFit(rec, scratch_.data(), &args_len, &cut);
  if (!st.ok()) return st;
  RecordFields f;
  size_t fixed;
  bool declare;
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
      Commit(static_cast<size_t>(p - start), src.id, ts_ns, kDroppedLevel);
      return Status::OK();
    }
    if (cur_.count == 0) return Status::InvalidArgument("source does not fit a block");
    Status s = MakeRoom(need);
    if (!s.ok()) return s;
  }
}

}  // namespace logsink::storage
