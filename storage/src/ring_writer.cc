// ring_writer.cc: RingWriter: creates or reopens a ring file, interns call
// sites, appends records to the current block in memory, seals full blocks
// with one pwrite each and overwrites the oldest slot when the ring is full.
#include <time.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "block.h"
#include "logsink/proto/args.h"
#include "scan.h"
#include "strtab.h"
#include "superblock.h"

namespace logsink::storage {

using internal::BlockCursor;
using internal::BlockHeader;
using internal::BlockState;
using internal::RecordFields;

class RingWriter::Impl {
 public:
  Status Open(Env *env, const std::string &path, const WriterOptions &opts);
  uint32_t Intern(const Site &site);
  bool LookupSite(uint32_t id, Site *out) const { return st_.Get(id, out); }
  Status Append(const RecordIn &rec);
  Status AppendDropped(const Source &src, uint64_t ts_ns, uint64_t count, uint64_t since_ns);
  Status Flush();
  Status Sync() { return file_->Sync(); }

  Layout layout_;
  WriterStats stats_;
  BlockHeader cur_;  // the current block's header fields (crc unused)
  bool dirty_ = false;
  uint64_t next_source_id_ = 1;

 private:
  Status Create(Env *env, const std::string &path, const Layout &want, uint32_t mode);
  Status Recover();
  void StartBlock(uint64_t seq, uint64_t first_rec);
  Status Seal();
  bool Declared(uint64_t id) const;
  // Sizes one RECORD (and the SOURCE entry it needs) against the current block.
  size_t Plan(const RecordIn &rec, size_t args_len, uint64_t truncated, RecordFields *f,
              size_t *fixed, bool *declare) const;
  void Emit(const RecordIn &rec, const RecordFields &f, size_t fixed, bool declare,
            const uint8_t *args, size_t args_len);
  // Append's general case: any record (plans it, seals a full block, cuts
  // arguments that cannot fit an empty block).
  Status AppendSlow(const RecordIn &rec);
  Status AppendTruncated(const RecordIn &rec);

  std::string path_;
  std::unique_ptr<File> file_;
  internal::Superblock sb_;
  internal::StringTable st_;
  std::vector<uint8_t> buf_;      // the current block; zero past cur_.used
  std::vector<uint8_t> scratch_;  // truncated arguments
  // Per-block entry state (FORMAT.md, "Entries").
  bool has_src_ = false;
  uint64_t src_ = 0, tid_ = 0, ts_ = 0;
  std::vector<uint64_t> declared_;  // sources declared in the current block
  // st_.size() as last seen: the table only grows, so an id <= sites_ is known
  // without asking the table (refreshed when an id is larger).
  uint32_t sites_ = 0;
};

namespace {

uint64_t WallNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::string Geometry(const Layout &l) {
  return "file size " + std::to_string(l.file_size) + ", block size " +
         std::to_string(l.block_size) + ", string table " + std::to_string(l.strtab_size);
}

}  // namespace

Status RingWriter::Impl::Open(Env *env, const std::string &path, const WriterOptions &opts) {
  path_ = path;
  Layout want;
  Status s = Layout::Compute(opts.file_size, opts.block_size, opts.strtab_size, &want);
  if (!s.ok()) return s;
  if (!env->FileExists(path)) return Create(env, path, want, opts.mode);

  s = env->OpenFile(path, true, &file_);
  if (!s.ok()) return s;
  s = file_->LockExclusive();
  if (!s.ok()) return s;
  s = internal::ReadSuperblock(file_.get(), path, &sb_);
  if (!s.ok()) return s;  // NotOurs: never touched
  const Layout &have = sb_.layout;
  if (have.file_size != want.file_size || have.block_size != want.block_size ||
      have.strtab_size != want.strtab_size) {
    if (!opts.recreate_on_mismatch) {
      return Status::Mismatch(path + " has " + Geometry(have) + "; requested " + Geometry(want));
    }
    file_.reset();
    s = env->RemoveFile(path);
    if (!s.ok()) return s;
    return Create(env, path, want, opts.mode);
  }
  uint64_t size = 0;
  s = file_->Size(&size);
  if (!s.ok()) return s;
  if (size != have.file_size) {
    return Status::Corruption(path + " is " + std::to_string(size) +
                              " bytes but its superblock says " + std::to_string(have.file_size));
  }
  layout_ = have;
  return Recover();
}

Status RingWriter::Impl::Create(Env *env, const std::string &path, const Layout &want,
                                uint32_t mode) {
  layout_ = want;
  layout_.created_ns = WallNs();
  CreateFileOptions co;
  co.mode = mode;
  Status s = env->CreateFile(path, layout_.file_size, co, &file_);
  if (!s.ok()) return s;
  s = file_->LockExclusive();
  if (!s.ok()) return s;
  // Both copies valid from the start; the next update replaces generation 0.
  for (uint64_t gen = 0; gen < 2; gen++) {
    sb_.layout = layout_;
    sb_.generation = gen;
    sb_.tail_hint = 0;
    s = internal::WriteSuperblock(file_.get(), sb_);
    if (!s.ok()) return s;
  }
  // Kept on purpose although it dominates creating a small ring (0.4-4 ms
  // here): it orders the superblocks before any block pwrite. Without it a
  // crash could leave blocks on disk under zero superblocks, a file that
  // Open and every reader then refuse as NotOurs (never overwritten), so the
  // records in it would be unreadable and the daemon could not reopen it.
  s = file_->Sync();
  if (!s.ok()) return s;
  st_.Init(layout_.strtab_off, layout_.strtab_size);
  buf_.assign(layout_.block_size, 0);
  scratch_.resize(layout_.block_size);
  cur_.used = LS_BLK_HDR;
  StartBlock(0, 0);
  return Status::OK();
}

// Loads the string table and finds the newest valid block: every header is
// scanned (the tail hint is only a hint; FORMAT.md, "Writing").
Status RingWriter::Impl::Recover() {
  st_.Init(layout_.strtab_off, layout_.strtab_size);
  Status s = st_.Load(file_.get());
  if (!s.ok()) return s;
  buf_.assign(layout_.block_size, 0);
  scratch_.resize(layout_.block_size);

  bool found = false;
  uint64_t newest = 0, max_source = 0;
  BlockCursor cursor;
  s = internal::ForEachSlot(file_.get(), layout_, [&](uint64_t slot, const uint8_t *img) {
    BlockHeader h;
    if (internal::CheckBlock(img, layout_, slot, &h) != BlockState::kValid) return;
    if (!found || h.seq > newest) {
      newest = h.seq;
      found = true;
      std::memcpy(buf_.data(), img, layout_.block_size);
    }
    cursor.Reset(img, h);
    internal::DecodedRecord r;
    while (cursor.Next(&r) == BlockCursor::kRecord) {
    }
    for (const auto &src : cursor.sources()) max_source = std::max(max_source, src.id);
  });
  if (!s.ok()) return s;
  next_source_id_ = max_source + 1;
  cur_.used = layout_.block_size;  // StartBlock clears the whole buffer
  if (!found) {
    StartBlock(0, 0);
    return Status::OK();
  }
  BlockHeader h = internal::ParseBlockHeader(buf_.data());
  if (h.sealed()) {
    StartBlock(h.seq + 1, h.first_rec + h.count);
    return Status::OK();
  }
  // Continue the partial block after its last entry.
  cursor.Reset(buf_.data(), h);
  internal::DecodedRecord r;
  BlockCursor::Result res;
  while ((res = cursor.Next(&r)) == BlockCursor::kRecord) {
  }
  cur_ = h;
  cur_.flags = 0;
  if (res == BlockCursor::kMalformed) {  // keep what decodes (cannot happen with a valid CRC)
    cur_.used = cursor.pos();
    cur_.count = cursor.records();
  }
  std::memset(buf_.data() + cur_.used, 0, layout_.block_size - cur_.used);
  has_src_ = cursor.has_source();
  src_ = cursor.source();
  tid_ = cursor.tid();
  ts_ = cursor.ts();
  declared_.clear();
  for (const auto &src : cursor.sources()) declared_.push_back(src.id);
  dirty_ = false;
  return Status::OK();
}

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
  if (cur_.count == 0) cur_.base_ts = cur_.max_ts = rec.ts_ns;
  cur_.max_ts = std::max(cur_.max_ts, rec.ts_ns);
  cur_.used += static_cast<uint32_t>(p - start);
  cur_.count++;
  has_src_ = true;
  src_ = rec.source->id;
  tid_ = rec.tid;
  ts_ = rec.ts_ns;
  dirty_ = true;
  stats_.records++;
  stats_.bytes += static_cast<uint64_t>(p - start);
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
      (rec.site_id <= sites_ || rec.site_id <= (sites_ = st_.size()))) {
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
      if (rec.ts_ns > cur_.max_ts) cur_.max_ts = rec.ts_ns;
      cur_.used += static_cast<uint32_t>(need);
      cur_.count++;
      has_src_ = true;
      src_ = id;
      tid_ = rec.tid;
      ts_ = rec.ts_ns;
      dirty_ = true;
      stats_.records++;
      stats_.bytes += need;
      return Status::OK();
    }
  }
  return AppendSlow(rec);
}

Status RingWriter::Impl::AppendSlow(const RecordIn &rec) {
  if (!rec.source) return Status::InvalidArgument("record without a source");
  if (rec.site_id == 0 ? !rec.inline_site : rec.site_id > st_.size()) {
    return Status::InvalidArgument("record with an unknown site id " + std::to_string(rec.site_id));
  }
  for (;;) {
    RecordFields f;
    size_t fixed;
    bool declare;
    size_t need = Plan(rec, rec.args_len, rec.truncated, &f, &fixed, &declare);
    if (cur_.used + need <= layout_.block_size) {
      Emit(rec, f, fixed, declare, rec.args, rec.args_len);
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
      if (cur_.count == 0) cur_.base_ts = cur_.max_ts = ts_ns;
      cur_.max_ts = std::max(cur_.max_ts, ts_ns);
      cur_.used += static_cast<uint32_t>(p - start);
      cur_.count++;
      has_src_ = true;
      src_ = src.id;
      ts_ = ts_ns;
      dirty_ = true;
      stats_.records++;
      stats_.bytes += static_cast<uint64_t>(p - start);
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
uint64_t RingWriter::next_record_seq() const { return impl_->cur_.first_rec + impl_->cur_.count; }
uint64_t RingWriter::current_block_seq() const { return impl_->cur_.seq; }
uint64_t RingWriter::next_source_id() const { return impl_->next_source_id_; }
bool RingWriter::dirty() const { return impl_->dirty_; }

}  // namespace logsink::storage
