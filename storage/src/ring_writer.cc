// ring_writer.cc: RingWriter: the writer's calls, and what does not belong to
// one step of writing: interning call sites, the codec names, the counters
// of every tier together. Appending is in ring_append.cc, the current block's
// packing and sealing in ring_seal.cc, retention's moves between tiers in
// ring_retention.cc, opening and recovery in ring_recover.cc.
#include <zstd.h>

#include "ring_thread.h"
#include "ring_writer_impl.h"

namespace logsink::storage {

RingWriter::Impl::~Impl() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx *>(cctx_)); }

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
  return id;
}

void RingWriter::Impl::AddStats(WriterStats *out) const {
  for (const Impl *t = this; t; t = t->next_) {
    const WriterStats &s = t->stats_;
    if (t->tier_ == 0) {  // records and bytes appended; kept ones were counted there
      out->records += s.records;
      out->bytes += s.bytes;
      out->truncated_records += s.truncated_records;
      out->wraps += s.wraps;
    }
    out->blocks_written += s.blocks_written;
    out->flushes += s.flushes;
    out->sealed_raw_bytes += s.sealed_raw_bytes;
    out->sealed_stored_bytes += s.sealed_stored_bytes;
    out->packs += s.packs;
    out->compressed_bytes += s.compressed_bytes;
    out->splits += s.splits;
    if (t->rescue_) {  // its compressions; its blocks are counted as they are written (Rescue)
      const WriterStats &r = t->rescue_->stats_;
      out->packs += r.packs;
      out->compressed_bytes += r.compressed_bytes;
      out->splits += r.splits;
    }
    if (t->tier_ == 0 && t->dict_) {
      out->dict_id = t->dict_->id();
      out->dict_bytes = uint32_t(t->dict_->content().size());
    }
    if (t->tier_ == 0) out->dict_failed = t->dict_failed_;
    for (int c = 0; c < 3; c++) {
      out->kept[c] += s.kept[c];
      out->evicted[c] += s.evicted[c];
    }
    out->rescued += s.rescued;
    out->evicted_for_rescue += s.evicted_for_rescue;
    out->rewrites += s.rewrites;
  }
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
  if (opts.queue_bytes > 0) {
    (*out)->thread_ =
        std::make_unique<Thread>((*out)->impl_.get(), opts.queue_bytes, opts.on_written);
  }
  return Status::OK();
}

// With the thread, the string table is the one part of the writer both
// threads use: this thread is its only writer (under the lock, which the
// thread takes to look sites up) and reads it without the lock.
uint32_t RingWriter::Intern(const Site &site) {
  uint32_t id;
  if (thread_) {
    std::unique_lock lock(impl_->st_mu_);
    id = impl_->Intern(site);
  } else {
    id = impl_->Intern(site);
  }
  if (!id) strtab_full_++;
  return id;
}
bool RingWriter::LookupSite(uint32_t id, Site *out) const { return impl_->LookupSite(id, out); }
Status RingWriter::FitToBlock(const RecordIn &rec, std::string *args, uint64_t *cut) const {
  *cut = 0;
  if (!rec.source) return Status::OK();
  // Most records are far smaller than a block: no planning for them. 96
  // bounds an entry's varints and head bytes (a SOURCE entry's four ids and
  // three lengths, a RECORD's length, head, source, tid, TRUNC, site, ts).
  const Source &src = *rec.source;
  if (rec.site_id != 0 &&
      LS_BLK_HDR + 96 + src.app.size() + src.comm.size() + src.unit.size() + rec.args_len <=
          impl_->layout_.block_size)
    return Status::OK();
  if (impl_->FitsEmptyBlock(rec)) return Status::OK();
  args->resize(impl_->layout_.block_size);
  size_t len;
  Status st = impl_->CutToFit(rec, reinterpret_cast<uint8_t *>(args->data()), &len, cut);
  args->resize(st.ok() ? len : 0);
  return st;
}
Status RingWriter::Append(const RecordIn &rec) {
  if (!thread_) return impl_->Append(rec);
  // What Append would refuse at once is refused here, before the record is queued.
  if (!rec.source) return Status::InvalidArgument("record without a source");
  if (rec.site_id == 0 ? !rec.inline_site : rec.site_id > impl_->last_site_id()) {
    return Status::InvalidArgument("record with an unknown site id " + std::to_string(rec.site_id));
  }
  thread_->Record(rec);
  return Status::OK();
}
Status RingWriter::AppendDropped(const Source &src, uint64_t ts_ns, uint64_t count,
                                 uint64_t since_ns) {
  if (!thread_) return impl_->AppendDropped(src, ts_ns, count, since_ns);
  thread_->Dropped(src, ts_ns, count, since_ns);
  return Status::OK();
}
Status RingWriter::Flush() { return thread_ ? thread_->Wait(true) : impl_->FlushAll(); }
Status RingWriter::Drain() { return thread_ ? thread_->Wait(false) : Status::OK(); }
Status RingWriter::Post() {
  if (!thread_) return impl_->FlushAll();
  thread_->Hand(true);
  return Status::OK();
}
uint64_t RingWriter::Mark() { return thread_ ? thread_->Mark() : 0; }
uint64_t RingWriter::written() const { return thread_ ? thread_->written() : 0; }
uint64_t RingWriter::TakeErrors(std::string *why) { return thread_ ? thread_->TakeErrors(why) : 0; }
std::mutex *RingWriter::io_lock() const { return thread_ ? thread_->io_lock() : nullptr; }
Status RingWriter::Sync() {
  if (thread_) {
    Status s = thread_->Wait(true);
    if (!s.ok()) return s;
  }
  return impl_->Sync();
}
Status RingWriter::FinishDictionary() {
  if (thread_) {
    Status s =
        thread_->Wait(true);  // the thread idle: the writer is this thread's until the next call
    if (!s.ok()) return s;
  }
  if (!impl_->builder_ || impl_->builder_->collecting()) return Status::OK();
  impl_->builder_->Wait();
  return impl_->DictionaryStep();
}
const Layout &RingWriter::layout() const { return impl_->full_; }
const WriterStats &RingWriter::stats() const {
  merged_ = WriterStats();
  if (thread_)
    thread_->Stats(&merged_);
  else
    impl_->AddStats(&merged_);
  merged_.strtab_full = strtab_full_;
  return merged_;
}
bool RingWriter::InlineSiteFits(const Source &src, const Site &site, size_t args_floor) const {
  return impl_->InlineSiteFits(src, site, args_floor);
}
uint64_t RingWriter::next_record_seq() const {
  if (thread_) return thread_->next_record_seq();
  return impl_->cur_.first_rec + impl_->cur_.count;
}
uint64_t RingWriter::current_block_seq() const { return current_block_seq(0); }
uint64_t RingWriter::current_block_seq(int tier) const {
  if (thread_) return thread_->current_block_seq(tier);
  const Impl *t = impl_->Tier(tier);
  return t ? t->cur_.seq : 0;
}
uint64_t RingWriter::next_source_id() const { return impl_->next_source_id_; }
bool RingWriter::dirty() const { return thread_ ? thread_->dirty() : impl_->AnyDirty(); }
const std::string &RingWriter::moved_aside() const { return impl_->moved_aside_; }
uint32_t RingWriter::upgraded_from() const { return impl_->upgraded_from_; }

}  // namespace logsink::storage
