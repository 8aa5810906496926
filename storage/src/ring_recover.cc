// ring_recover.cc: RingWriter::Open: creates a new ring file, or reopens an
// existing one and recovers the writer's state from it (the newest valid
// block, the next record and source numbers, a partial block to continue).
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ring_writer_impl.h"
#include "scan.h"
#include "summary_index.h"

namespace logsink::storage {

namespace {

// 16 bytes from the kernel's CSPRNG (getrandom blocks only until it is
// seeded, early at boot).
Status NewRingId(Layout *l) {
  size_t got = 0;
  while (got < l->ring_id.size()) {
    ssize_t n = getrandom(l->ring_id.data() + got, l->ring_id.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError(std::string("getrandom: ") + std::strerror(errno));
    got += size_t(n);
  }
  return Status::OK();
}

std::string Geometry(const Layout &l) {
  return "file size " + std::to_string(l.file_size) + ", block size " +
         std::to_string(l.block_size) + ", string table " + std::to_string(l.strtab_size) +
         ", tiers " + std::to_string(l.TierBlocks(0)) + "/" + std::to_string(l.kept_blocks) + "/" +
         std::to_string(l.error_blocks) + " blocks";
}

}  // namespace

Status RingWriter::Impl::Open(Env *env, const std::string &path, const WriterOptions &opts) {
  path_ = path;
  env_ = env;
  codec_ = opts.codec;
  level_ = opts.level;
  dict_train_bytes_ = opts.dictionary_train_bytes;
  Status s = SetupCodec();
  if (!s.ok()) return s;
  boot_id_ = env->BootId();
  Layout want;
  s = Layout::Compute(opts.file_size, opts.block_size, opts.strtab_size, &want);
  if (s.ok()) s = want.SetTiers(opts.kept_share, opts.error_share);
  if (!s.ok()) return s;
  auto create = [&]() {
    Status c = Create(env, path, want, opts.mode);
    return c.ok() ? MakeTiers(opts) : c;
  };
  if (!env->FileExists(path)) return create();
  s = OpenExisting(env, path, opts, want);
  if (s.IsMismatch() && opts.recreate_on_mismatch) {
    file_.reset();
    s = env->RemoveFile(path);
    return s.ok() ? create() : s;
  }
  if (s.IsOldVersion() && !moved_aside_.empty()) return create();
  if (!s.ok()) return s;
  s = MakeTiers(opts);
  return s.ok() ? Recover() : s;
}

Status RingWriter::Impl::SetupCodec() {
  if (codec_ != LS_CODEC_NONE && codec_ != LS_CODEC_ZSTD && codec_ != LS_CODEC_LZ4) {
    return Status::InvalidArgument("unknown compression codec " + std::to_string(codec_));
  }
  if (codec_ == LS_CODEC_ZSTD) {
    if (level_ < ZSTD_minCLevel() || level_ > ZSTD_maxCLevel()) {
      return Status::InvalidArgument("zstd level " + std::to_string(level_) + " is not within " +
                                     std::to_string(ZSTD_minCLevel()) + ".." +
                                     std::to_string(ZSTD_maxCLevel()));
    }
    auto *cctx = ZSTD_createCCtx();
    cctx_ = cctx;
    if (!cctx || ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level_))) {
      return Status::IOError("cannot set up zstd");
    }
    // The frame states its content size (readers check it against the
    // header's `raw`) and carries no checksum (the block's CRC32C covers it).
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0);
  }
  return Status::OK();
}

Status RingWriter::Impl::MakeTiers(const WriterOptions &opts) {
  tiered_ = full_.kept_blocks || full_.error_blocks;
  Impl *prev = this;
  for (int t = 1; t < int(LS_TIERS); t++) {
    if (!full_.TierBlocks(t)) continue;
    auto impl = std::make_unique<Impl>();
    impl->path_ = path_;
    impl->env_ = env_;
    impl->f_ = f_;
    impl->stp_ = &st_;
    impl->st_mup_ = &st_mu_;
    impl->keys_ = &own_keys_;
    impl->codec_ = codec_;
    impl->level_ = level_;
    impl->dictp_ = &dict_;
    Status s = impl->SetupCodec();
    if (!s.ok()) return s;
    impl->boot_id_ = boot_id_;
    impl->full_ = full_;
    impl->layout_ = full_.Tier(t);
    impl->tier_ = t;
    impl->sparse_ = true;
    impl->tiered_ = true;
    impl->fairness_ = opts.fairness;
    impl->AllocBuffers();
    impl->cur_.used = LS_BLK_HDR;
    impl->StartBlock(0, 0);
    prev->next_ = impl.get();
    prev->keep_level_ = t == 1 ? opts.kept_level : opts.error_level;
    prev->fairness_ = opts.fairness;
    prev->account_ = true;
    prev->slot_use_.assign(prev->layout_.block_count, {});
    prev = impl.get();
    tiers_.push_back(std::move(impl));
  }
  if (prev != this && opts.fairness) {
    // The last tier counts bytes too: the classes' bytes decide which
    // records of its overwritten blocks move on (Rescue).
    prev->account_ = true;
    prev->slot_use_.assign(prev->layout_.block_count, {});
  }
  return Status::OK();
}

Status RingWriter::Impl::OpenExisting(Env *env, const std::string &path, const WriterOptions &opts,
                                      const Layout &want) {
  Status s = env->OpenFile(path, true, &file_);  // never through a symlink
  if (!s.ok()) return s;
  uint32_t owner;
  if (!opts.allow_other_owner && file_->OwnerUid(&owner) && owner != geteuid()) {
    return Status::InvalidArgument(path + " is owned by uid " + std::to_string(owner) + ", not " +
                                   std::to_string(geteuid()) + ": refusing to write into it");
  }
  f_ = file_.get();
  s = file_->LockExclusive();
  if (!s.ok()) return s;
  s = internal::ReadSuperblock(file_.get(), path, &sb_);
  if (s.IsOldVersion() && opts.move_old_version) {
    // A ring of another format version is kept, under a name that says
    // which (FORMAT.md, "Versions"), never overwritten; a new ring starts.
    // Only an older version: a newer logsink's ring stays where it is.
    uint8_t v[4] = {};
    size_t got = 0;
    if (!file_->PRead(LS_SB_OFF_VERSION, v, 4, &got).ok() || got != 4) return s;
    if (ls_get_u32(v) >= LS_FORMAT_VERSION_MIN) return s;
    file_.reset();
    // PATH.vN, or PATH.vN.1 .. .9 when earlier ones were kept already.
    const std::string base = path + ".v" + std::to_string(ls_get_u32(v));
    Status r;
    for (int i = 0; i < 10; i++) {
      const std::string aside = i ? base + "." + std::to_string(i) : base;
      r = env->RenameFile(path, aside);
      if (r.ok()) {
        moved_aside_ = aside;
        return s;  // the caller creates the new ring
      }
      if (!r.IsBusy()) return r;
    }
    return Status::Busy(path + ": " + base + " and " + base +
                        ".1 .. .9 exist already; move them "
                        "away (the older rings they hold) to let logsinkd start a new ring");
  }
  if (!s.ok()) return s;  // NotOurs: never touched
  const Layout &have = sb_.layout;
  if (have.file_size != want.file_size || have.block_size != want.block_size ||
      have.strtab_size != want.strtab_size || have.kept_blocks != want.kept_blocks ||
      have.error_blocks != want.error_blocks) {
    return Status::Mismatch(path + " has " + Geometry(have) + "; requested " + Geometry(want));
  }
  s = internal::CheckFileSize(file_.get(), path, sb_);
  if (!s.ok()) return s;
  full_ = have;
  layout_ = full_.Tier(0);
  // Each copy's version field as written, valid copy or not: an older one
  // left by a crash between the two writes below is rewritten too.
  uint32_t oldest = sb_.version;
  for (uint64_t at : {uint64_t{0}, uint64_t{LS_SB_SLOT}}) {
    uint8_t v[4] = {};
    size_t got = 0;
    s = file_->PRead(at + LS_SB_OFF_VERSION, v, 4, &got);
    if (!s.ok()) return s;
    if (got == 4) oldest = std::min(oldest, ls_get_u32(v));
  }
  if (oldest < LS_FORMAT_VERSION) {
    // An older version this one extends (FORMAT.md, "Versions"): made the
    // current one in place, both copies, so its records stay where they
    // are, readable by this version's readers. A crash between the two
    // writes leaves copies of two versions; the newer generation wins,
    // and the next open rewrites the older copy.
    upgraded_from_ = sb_.version < LS_FORMAT_VERSION ? sb_.version : 0;
    sb_.version = LS_FORMAT_VERSION;
    for (int i = 0; i < 2 && s.ok(); i++) {
      sb_.generation++;
      s = internal::WriteSuperblock(file_.get(), sb_);
    }
    if (s.ok()) s = file_->Sync();
    if (!s.ok()) return s;
  }
  if (full_.RingIdHex().empty()) {
    // A file from before ring identities: give it one now (FORMAT.md).
    s = NewRingId(&full_);
    if (!s.ok()) return s;
    layout_.ring_id = full_.ring_id;
    sb_.layout = full_;
    sb_.generation++;
    s = internal::WriteSuperblock(file_.get(), sb_);
    if (s.ok()) s = file_->Sync();
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status RingWriter::Impl::Create(Env *env, const std::string &path, const Layout &want,
                                uint32_t mode) {
  full_ = want;
  full_.created_ns = env->NowNanos();
  Status s = NewRingId(&full_);
  if (!s.ok()) return s;
  layout_ = full_.Tier(0);
  CreateFileOptions co;
  co.mode = mode;
  s = env->CreateFile(path, full_.file_size, co, &file_);
  if (!s.ok()) return s;
  f_ = file_.get();
  s = file_->LockExclusive();
  if (!s.ok()) return s;
  // Both copies valid from the start; the next update replaces generation 0.
  for (uint64_t gen = 0; gen < 2; gen++) {
    sb_.layout = full_;
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
  AllocBuffers();
  cur_.used = LS_BLK_HDR;
  StartBlock(0, 0);
  MaybeStartDictionary();
  return Status::OK();
}

void RingWriter::Impl::AllocBuffers() {
  cap_ =
      codec_ == LS_CODEC_NONE ? layout_.block_size : size_t(LS_BLK_RAW_FACTOR) * layout_.block_size;
  buf_.assign(cap_, 0);
  zimg_.assign(layout_.block_size, 0);
  if (codec_ == LS_CODEC_ZSTD) zs_.assign(2 * layout_.block_size, 0);
  if (codec_ == LS_CODEC_LZ4) zs_.assign(layout_.block_size, 0);  // Pack's output first
  scratch_.resize(layout_.block_size);
  evict_img_.assign(layout_.block_size, 0);
  newest_img_.assign(layout_.block_size, 0);
  slot_use_.assign(account_ ? layout_.block_count : 0, {});
}

// Loads the string table and finds each tier's newest valid block: every
// header is scanned (the tail hint is only a hint; FORMAT.md, "Writing").
Status RingWriter::Impl::Recover() {
  st_.Init(layout_.strtab_off, layout_.strtab_size);
  Status s = st_.Load(f_);
  if (!s.ok()) return s;
  // The dictionary first: blocks compressed with it decode only with it. One
  // that does not check leaves those blocks unreadable (readers report them).
  Status ds = internal::ReadDictionary(f_, full_, &dict_);
  if (!ds.ok() && !ds.IsCorruption()) return ds;
  uint32_t max_site = 0;  // the largest string id a record refers to
  uint64_t max_source = 0;
  bool dict_blocks = false;
  for (Impl *t = this; t; t = t->next_) {
    s = t->ScanTier(&max_site, &max_source);
    if (!s.ok()) return s;
    dict_blocks |= t->dict_blocks_;
  }
  dict_blocks_ = dict_blocks;
  MaybeStartDictionary();
  next_source_id_ = max_source + 1;
  // String ids are never reused (FORMAT.md, "String table"): an id records
  // refer to whose entry is damaged, or was lost with a power loss (entries
  // and blocks are not written in order), stays retired, and damaged bytes
  // after the last entry are cleared before new entries go there.
  st_.RetireUpTo(max_site);
  s = st_.ClearDamagedTail(f_);
  if (!s.ok()) return s;
  // Index entries naming each tier's newest block or later ones are cleared,
  // and synced, before any block is written (FORMAT.md, "Summary index"):
  // one that outlived a block lost in a crash must not describe the records
  // written under that number next.
  bool cleared = false;
  for (Impl *t = this; t; t = t->next_) {
    bool c = false;
    const uint64_t newest = internal::ParseBlockHeader(t->newest_img_.data()).seq;
    s = internal::ClearIndexFrom(f_, t->layout_, t->found_, newest, &c);
    if (!s.ok()) return s;
    cleared |= c;
  }
  if (cleared) {
    s = f_->Sync();
    if (!s.ok()) return s;
  }
  for (Impl *t = this; t; t = t->next_) {
    s = t->ResumeTier();
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status RingWriter::Impl::ScanTier(uint32_t *max_site, uint64_t *max_source) {
  AllocBuffers();
  found_ = false;
  uint64_t newest = 0;
  BlockCursor cursor;
  internal::BlockExpander expander;
  expander.SetDictionary(*dictp_);
  return internal::ForEachSlot(f_, layout_, [&](uint64_t slot, const uint8_t *img) {
    BlockHeader h;
    if (internal::CheckBlock(img, layout_, slot, &h) != BlockState::kValid) return;
    if (h.codec == LS_CODEC_ZSTD_DICT) dict_blocks_ = true;
    // A block that passes its CRC is where it says it is, decoded or not:
    // the writer goes on after the newest one (ResumeTier seals it if it
    // does not decode), never back over newer blocks. A damaged dictionary
    // leaves every block written with it in that state at once.
    if (!found_ || h.seq > newest) {
      newest = h.seq;
      found_ = true;
      last_opened_ = std::max(last_opened_, h.opened);
      std::memcpy(newest_img_.data(), img, layout_.block_size);
    }
    const uint8_t *entries = expander.Expand(img, h);
    if (!entries) {
      // Its records are not known: numbers up to first_rec + count at least.
      if (h.count) kept_below_ = std::max(kept_below_, h.first_rec + h.count);
      return;
    }
    cursor.Reset(entries, h);
    internal::DecodedRecord r;
    std::vector<std::pair<uint32_t, uint32_t>> use;
    uint64_t last = 0;
    bool any = false;
    while (cursor.Next(&r) == BlockCursor::kRecord) {
      if (r.kind == Record::Kind::kRecord) *max_site = std::max(*max_site, r.site_id);
      last = h.first_rec + r.seq_off;
      any = true;
      if (account_ && r.source) {
        const uint32_t key = keys_->Of(r.source->uid, r.source->app);
        auto it = std::find_if(use.begin(), use.end(), [key](auto &u) { return u.first == key; });
        if (it == use.end()) it = use.insert(use.end(), {key, 0});
        it->second += cursor.pos() - r.entry_off;
      }
    }
    if (any) kept_below_ = std::max(kept_below_, last + 1);
    if (account_) AddUse(slot, std::move(use));
    for (const auto &src : cursor.sources()) *max_source = std::max(*max_source, src.id);
  });
}

Status RingWriter::Impl::ResumeTier() {
  cur_.used = layout_.block_size;  // StartBlock clears the whole buffer
  ResetUse();
  if (!found_) {
    StartBlock(0, 0);
    return Status::OK();
  }
  internal::BlockExpander expander;
  expander.SetDictionary(*dictp_);
  BlockCursor cursor;
  Status s;
  std::vector<uint8_t> &newest_img = newest_img_;
  BlockHeader h = internal::ParseBlockHeader(newest_img.data());
  // A block holds one boot's records (its monotonic open time means nothing
  // in another boot), and a partial block written compressed may not fit a
  // writer that now stores blocks as they are, or compresses them with
  // another codec (lz4 after zstd: its entries need not pack into the slot
  // again). In each case it is sealed as it is (its image rewritten with
  // the SEALED flag: only the newest block is ever partial) and a new block
  // starts.
  const uint8_t *entries = h.sealed() ? nullptr : expander.Expand(newest_img.data(), h);
  // (A kept tier's block holds the boot its records came from.)
  if (!h.sealed() &&
      ((!sparse_ && h.boot_id != boot_id_) || !entries || LS_BLK_HDR + size_t(h.raw) > cap_ ||
       (h.codec != LS_CODEC_NONE && h.codec != codec_ &&
        !(h.codec == LS_CODEC_ZSTD_DICT && codec_ == LS_CODEC_ZSTD)))) {
    h.flags |= LS_BLK_F_SEALED;
    internal::FinishBlock(newest_img.data(), h);
    s = f_->PWrite(layout_.SlotOffset(h.seq), newest_img.data(), layout_.block_size);
    if (!s.ok()) return s;
  }
  if (h.sealed()) {
    // Its entry again (Recover cleared it with the ones after it).
    s = internal::WriteIndexEntry(f_, layout_, newest_img.data());
    if (!s.ok()) return s;
    StartBlock(h.seq + 1, h.first_rec + h.count);
    return Status::OK();
  }
  // Continue the partial block after its last entry.
  std::memcpy(buf_.data(), entries, LS_BLK_HDR + size_t(h.raw));
  cursor.Reset(buf_.data(), h);
  internal::DecodedRecord r;
  BlockCursor::Result res;
  fkeys_.Clear();  // its field keys again, from its records
  while ((res = cursor.Next(&r)) == BlockCursor::kRecord) {
    if (r.kind != Record::Kind::kRecord) continue;
    RecordIn in;
    in.site_id = r.site_id;
    in.inline_site = r.site_id ? nullptr : &r.inline_site;
    NoteFields(in, r.site_id ? SiteClass(r.site_id) : 0, r.args, r.args_len);
  }
  cur_ = h;
  cur_.flags = 0;
  cur_.used = LS_BLK_HDR + h.raw;        // the writer's `used` counts decoded entries
  if (res == BlockCursor::kMalformed) {  // keep what decodes (cannot happen with a valid CRC)
    cur_.used = cursor.pos();
    cur_.count = cursor.records();
  }
  std::memset(buf_.data() + cur_.used, 0, cap_ - cur_.used);
  opened_ns_ = cur_.opened ? layout_.created_ns + uint64_t(cur_.opened - 1) * 1000000000ull : 0;
  packed_used_ = 0;
  if (res != BlockCursor::kMalformed) {
    // Its image as stored is the packed image of these entries (Split
    // falls back on it: packed again in one piece they may take more).
    std::memcpy(zimg_.data(), newest_img.data(), layout_.block_size);
    pk_codec_ = h.codec;
    pk_stored_ = h.used - LS_BLK_HDR;
    packed_used_ = cur_.used;
  }
  zs_in_ = 0;  // compressed again from its start, as it was: with or without the dictionary
  zs_use_dict_ = h.codec == LS_CODEC_ZSTD_DICT;
  zs_pick_dict_ = false;
  SetLimit();
  fit_used_ = cur_.used;  // it was stored, so it packs
  limit_ = std::max(limit_, size_t(cur_.used));
  has_src_ = cursor.has_source();
  src_ = cursor.source();
  tid_ = cursor.tid();
  ts_ = cursor.ts();
  declared_.clear();
  for (const auto &src : cursor.sources()) declared_.push_back(src.id);
  if (sparse_ && cur_.count > 0) last_seq_ = cur_.first_rec + cur_.count - 1 + cursor.gaps();
  if (account_) {
    // The block goes on: its byte counts are the current block's again, not
    // a sealed slot's (they are added back when it is sealed).
    const uint64_t slot = cur_.seq % layout_.block_count;
    std::vector<std::pair<uint32_t, uint32_t>> use = slot_use_[slot];
    DropUse(slot);
    for (const auto &[key, n] : use) {
      use_idx_[key] = uint32_t(block_use_.size());
      block_use_.emplace_back(key, n);
    }
  }
  dirty_ = false;
  return Status::OK();
}

}  // namespace logsink::storage
