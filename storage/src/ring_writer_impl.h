// ring_writer_impl.h: RingWriter's state, shared by ring_writer.cc (its
// calls), ring_append.cc (appending), ring_seal.cc (packing, sealing),
// ring_retention.cc (moves between tiers), ring_rescue.cc (fairness in the
// last tier) and ring_recover.cc (creating, opening and recovering). Internal.
#pragma once

#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "block.h"
#include "dict.h"
#include "field_keys.h"
#include "logsink/storage/ring.h"
#include "strtab.h"
#include "superblock.h"

namespace logsink::storage {

using internal::BlockCursor;
using internal::BlockHeader;
using internal::BlockState;
using internal::RecordFields;

// Sources as retention counts them (uid, then app label within the uid),
// numbered once per writer. Shared by the tiers of one file. Keys are never
// freed, so the table is bounded so that no uid can use it up for others:
// each uid other than root has at most kPerUid labels of its own, all of
// them together at most kMax, and root at most kMax of its own; past its
// bound a uid's further labels share one key of that uid (the uid's
// records still count as its own).
// A key's class is whose records its bytes count with (FORMAT.md,
// "Tiers"): its uid, except the kernel's records (uid 0, label "kernel"),
// a class of their own (kKernelClass: no uid is -1).
class SourceKeys {
 public:
  static constexpr size_t kMax = 4096;
  static constexpr size_t kPerUid = 64;
  static constexpr uint32_t kKernelClass = ~0u;
  uint32_t Of(uint32_t uid, std::string_view app);
  uint32_t cls(uint32_t key) const { return classes_[key]; }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<uint32_t> classes_;
  std::unordered_map<uint32_t, uint32_t> labels_;  // uid -> labels with a key of their own
  size_t others_ = 0;                              // those labels of uids other than root
};

// One tier's ring of blocks is written by one Impl (FORMAT.md, "Tiers"):
// tier 0's owns the file, the string table and the superblock, and the
// tiers after it (next_) receive the records it keeps as its oldest blocks
// are overwritten.
class RingWriter::Impl {
 public:
  ~Impl();
  Status Open(Env *env, const std::string &path, const WriterOptions &opts);
  uint32_t Intern(const Site &site);
  bool InlineSiteFits(const Source &src, const Site &site, size_t args_floor) const;
  // RingWriter::FitToBlock's parts (they read only the record and the
  // block size): whether rec fits an empty block as it is, and its
  // arguments cut so it does (out has room for a block).
  bool FitsEmptyBlock(const RecordIn &rec) const;
  Status CutToFit(const RecordIn &rec, uint8_t *out, size_t *out_len, uint64_t *cut) const;
  bool LookupSite(uint32_t id, Site *out) const { return st_.Get(id, out); }
  Status Append(const RecordIn &rec);
  Status AppendDropped(const Source &src, uint64_t ts_ns, uint64_t count, uint64_t since_ns);
  Status Flush();
  Status Sync() { return f_->Sync(); }
  // The file, taken out and put back (the writer thread's LockedFile): every
  // tier (and rescue writer) writes through the one put back.
  std::unique_ptr<File> TakeFile() { return std::move(file_); }
  void UseFile(std::unique_ptr<File> f) {
    file_ = std::move(f);
    for (Impl *t = this; t; t = t->next_) {
      t->f_ = file_.get();
      if (t->rescue_) t->rescue_->f_ = file_.get();
    }
  }
  // Tier 0, after each sealed block (and RingWriter::FinishDictionary):
  // feeds the dictionary's builder (builder_, while a dictionary is being
  // made), and once it has trained one writes it into the file and uses it.
  Status DictionaryStep();
  std::unique_ptr<internal::DictionaryBuilder> builder_;
  // Flushes this tier and the ones after it.
  Status FlushAll();
  bool AnyDirty() const { return dirty_ || (next_ && next_->AnyDirty()); }
  // Adds this tier's counters, and those after it, to *out.
  void AddStats(WriterStats *out) const;
  // Tier t's Impl (this one for its own number), nullptr when it has no slots.
  const Impl *Tier(int t) const {
    for (const Impl *i = this; i; i = i->next_)
      if (i->tier_ == t) return i;
    return nullptr;
  }

  // This tier's slots (the whole file's geometry for tier 0 is full_).
  Layout layout_;
  Layout full_;
  WriterStats stats_;
  BlockHeader cur_;  // the current block's header fields (crc unused)
  bool dirty_ = false;
  uint64_t next_source_id_ = 1;
  std::string moved_aside_;     // where Open moved a ring of another version
  uint32_t upgraded_from_ = 0;  // the version Open upgraded in place, 0: none
  // Guards the string table when a writer thread appends (RingWriter::Thread):
  // the caller's thread interns (exclusive), the writer thread looks sites
  // up (shared). The caller's own lookups need no lock: it is the table's
  // only writer.
  std::shared_mutex st_mu_;
  uint32_t last_site_id() const { return st_.last_id(); }  // tier 0, the table's writer

 private:
  Status Create(Env *env, const std::string &path, const Layout &want, uint32_t mode);
  // Opens and checks an existing file (Mismatch, OldVersion after moving it
  // aside: the caller creates a new one).
  Status OpenExisting(Env *env, const std::string &path, const WriterOptions &opts,
                      const Layout &want);
  Status Recover();
  Status SetupCodec();
  // Tier 0, at Create and Recover: starts collecting samples when the file
  // can take a dictionary, has none, and no block needs one (a region that
  // blocks need is never written over, even when it does not check).
  void MaybeStartDictionary();
  // Tier 0 only: makes the Impls of tiers 1 and 2 of full_ (those with slots).
  Status MakeTiers(const WriterOptions &opts);
  // Recovery of one tier: scans its slots (the newest block, the largest site
  // and source ids, retention's byte counts), then continues after it.
  Status ScanTier(uint32_t *max_site, uint64_t *max_source);
  Status ResumeTier();
  // Before the first write of block cur_.seq: the block its slot holds now
  // (victim) leaves this tier; the records retention keeps go to next_.
  Status Evict(uint64_t victim);
  // What retention keeps of the records of a block leaving this tier.
  struct KeepPolicy {
    bool take_all = false;  // the next tier takes every record (it has not filled once)
    // The source whose records go first (~0u: none), judged by its class
    // alone (by_class, past tier 0) or by class and label.
    uint32_t dominant = ~0u, dominant_class = 0;
    bool by_class = false;
  };
  KeepPolicy Policy() const;
  bool IsDominant(const KeepPolicy &p, uint32_t key) const {
    return p.by_class ? keys_->cls(key) == p.dominant_class : key == p.dominant;
  }
  // The last tier, as it overwrites block victim (header h, its byte counts
  // use; its image in evict_img_): the records of every class but the one
  // holding the most of the tier (or of those under their share, when that
  // does not fit) move into the blocks after it, rewritten in place without
  // enough of the largest (or over-share) classes' records to make room
  // (FORMAT.md, "Tiers"). *done: it did (the victim's other records are
  // counted as evicted); else the caller evicts the block as it is.
  using Use = std::vector<std::pair<uint32_t, uint32_t>>;
  Status Rescue(uint64_t victim, const BlockHeader &h, const Use &use, bool *done);
  // The writer Rescue builds the next block with (same tier, its own block
  // state; it never evicts).
  Impl *RescueWriter();
  // Evict's record by record case: each record of block h (in evict_img_)
  // the policy keeps goes to next_ (none when none_kept), the others are
  // counted as evicted.
  Status KeepRecords(const BlockHeader &h, const KeepPolicy &p, bool none_kept);
  // A record of another tier's block (origin) kept in this one, with its
  // sequence number.
  Status AppendKept(const internal::DecodedRecord &d, const internal::SourceInfo &si, uint64_t seq,
                    const BlockHeader &origin);
  // A decoded record (its source si) appended again as it was (Split, AppendKept).
  Status AppendAgain(const internal::DecodedRecord &r, const internal::SourceInfo &si);
  // The whole block (img: a valid slot image of another tier, header h) as
  // this tier's next block, sealed; use: its byte counts.
  Status AppendBlock(uint8_t *img, const BlockHeader &h,
                     std::vector<std::pair<uint32_t, uint32_t>> use);
  // Retention's byte counts: a record of n bytes from src into the current block.
  void Account(uint64_t source_id, uint32_t uid, std::string_view app, size_t n) {
    if (!account_) return;
    if (source_id != acc_src_ || acc_idx_ >= block_use_.size()) {
      // Once per change of source: the key, and its place in the block's
      // counts (a map, so that a block of many sources costs no scan).
      acc_src_ = source_id;
      const uint32_t key = keys_->Of(uid, app);
      auto [it, fresh] = use_idx_.try_emplace(key, uint32_t(block_use_.size()));
      if (fresh) block_use_.emplace_back(key, 0);
      acc_idx_ = it->second;
    }
    block_use_[acc_idx_].second += uint32_t(n);
  }
  // block_use_ starts again (a new block): the places Account keeps go with it.
  void ResetUse() {
    block_use_.clear();
    use_idx_.clear();
    acc_src_ = ~0ull;
  }
  void AddUse(uint64_t slot, std::vector<std::pair<uint32_t, uint32_t>> use);
  void DropUse(uint64_t slot);
  // The source holding the most bytes of this tier (uid first, then label).
  uint32_t Dominant() const;
  void StartBlock(uint64_t seq, uint64_t first_rec);
  // Commits the entry of n bytes just written at cur_.used (RECORD or
  // DROPPED, with its SOURCE entry if any): advances the block, its summary
  // and the per-block state the next entry is delta-encoded against. The one
  // place an entry becomes part of the block; callers set tid_ first when it
  // applies.
  void Commit(size_t n, uint64_t source_id, uint64_t ts_ns, uint8_t level) {
    if (sparse_) {
      if (cur_.count == 0) cur_.first_rec = rseq_;
      last_seq_ = rseq_;
    }
    if (cur_.count == 0) {
      cur_.base_ts = cur_.max_ts = ts_ns;
      if (origin_) {
        // A kept block takes the clocks of the block its first record came
        // from (FORMAT.md, "Tiers").
        cur_.opened = last_opened_ = std::max(last_opened_, origin_->opened);
        cur_.open_real = origin_->open_real;
        cur_.open_mono = origin_->open_mono;
        cur_.boot_id = origin_->boot_id;
      } else {
        cur_.opened = OpenTime();
        cur_.open_real = env_->NowNanos();
        cur_.open_mono = env_->MonoNanos();
        cur_.boot_id = boot_id_;
      }
      opened_ns_ = cur_.opened ? layout_.created_ns + uint64_t(cur_.opened - 1) * 1000000000ull : 0;
      cur_.min_time = ~0ull;
      cur_.max_time = 0;
    }
    if (ts_ns > cur_.max_ts) cur_.max_ts = ts_ns;
    // The summary's time range is over the times readers filter by
    // (FilterTime in ring.h: the timestamp, or the open time for a clock
    // more than kClockSlackNs behind it).
    const uint64_t t = ts_ns + kClockSlackNs >= opened_ns_ ? ts_ns : opened_ns_;
    if (t < cur_.min_time) cur_.min_time = t;
    if (t > cur_.max_time) cur_.max_time = t;
    cur_.levels = uint8_t(cur_.levels | (1u << (level & 7)));
    cur_.used += static_cast<uint32_t>(n);
    cur_.count++;
    has_src_ = true;
    src_ = source_id;
    ts_ = ts_ns;
    dirty_ = true;
    stats_.records++;
    stats_.bytes += n;
  }
  // The open time of a block starting now (LS_BLK_OFF_OPENED): never less
  // than the previous block's, so it orders blocks even if the clock steps back.
  uint32_t OpenTime() {
    const uint64_t now = env_->NowNanos(), created = layout_.created_ns;
    const uint64_t secs = now > created ? (now - created) / 1000000000ull + 1 : 1;
    last_opened_ = std::max<uint32_t>(last_opened_, uint32_t(std::min<uint64_t>(secs, UINT32_MAX)));
    return last_opened_;
  }
  // What the block's summary needs of string-table site id: its level
  // (bits 0-2) and kSiteFields when its records carry fields (plans_ has
  // its FieldPlan).
  uint8_t SiteClass(uint32_t id) {
    if (id < site_level_.size() && site_level_[id] != kNoLevel) return site_level_[id];
    return SiteClassSlow(id);
  }
  uint8_t SiteLevel(uint32_t id) { return SiteClass(id) & 7; }
  uint8_t SiteClassSlow(uint32_t id);
  static constexpr uint8_t kNoLevel = 0xff, kSiteFields = 0x08;
  // A record's fields into the block's field keys (site_class: SiteClass of
  // its table site; an inline site is planned here).
  void NoteFields(const RecordIn &rec, uint8_t site_class, const uint8_t *args, size_t len);
  // Compresses the current entries into the slot image (once per content).
  // false: they no longer fit one slot.
  bool Pack();
  // zstd's part of Pack: the frame for the current entries into dst (at
  // most room bytes); 0 when it does not fit (or cannot be made).
  size_t StreamZstd(size_t raw, uint8_t *dst, size_t room);
  // Writes the packed current block (Pack() returned true) with flags.
  Status WriteCurrent(uint32_t flags);
  // Room for an entry of `need` bytes that passes limit_: raises the limit
  // when the content still packs into the slot with room to spare, else seals.
  Status MakeRoom(size_t need);
  // The current content does not fit its slot: seals the longest prefix of
  // records that does and carries the rest into the next block.
  Status Split();
  void SetLimit();
  void AllocBuffers();  // buf_, zimg_, scratch_ for layout_ and codec_
  Status Seal();
  // Writes a SOURCE entry for src at cur_.used (the caller sized it) and
  // adds it to the block's summary filter.
  uint8_t *DeclareSource(uint8_t *p, const Source &src);
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
  // Plan for the first record of an empty block (the state after Seal),
  // from the record alone: safe beside the writer thread.
  size_t PlanFirst(const RecordIn &rec, size_t args_len, uint64_t truncated, RecordFields *f,
                   size_t *fixed) const;

  std::string path_;
  Env *env_ = nullptr;
  uint32_t last_opened_ = 0;    // the newest block's open time
  std::unique_ptr<File> file_;  // tier 0 owns the file; f_ is it, for every tier
  File *f_ = nullptr;
  // Tiers: this one's number, whether its blocks number records sparsely
  // (tiers 1 and 2: LS_E_F_GAP), the next tier (records kept go there) and
  // the Impls of tiers 1 and 2, owned by tier 0.
  int tier_ = 0;
  bool sparse_ = false;
  Impl *next_ = nullptr;
  std::vector<std::unique_ptr<Impl>> tiers_;
  internal::StringTable *stp_ = &st_;    // tier 0's table, for every tier
  std::shared_mutex *st_mup_ = &st_mu_;  // tier 0's st_mu_, for every tier
  bool SiteOf(uint32_t id, Site *out) const {
    std::shared_lock lock(*st_mup_);
    return stp_->Get(id, out);
  }
  uint32_t LastSiteId() const {
    std::shared_lock lock(*st_mup_);
    return stp_->last_id();
  }
  // Sparse tiers: the number of the record being appended, and of the last one in the block.
  uint64_t rseq_ = 0, last_seq_ = 0;
  const BlockHeader *origin_ = nullptr;  // the block a kept record comes from
  uint64_t evicted_ = 0;                 // victims handled for blocks below this sequence
  uint64_t kept_below_ = 0;              // a sparse tier holds records numbered below this
  // Retention's policy for records leaving this tier into next_.
  uint8_t keep_level_ = 5;
  bool fairness_ = true;
  bool account_ = false;  // byte counts kept (this tier has a next one)
  bool tiered_ = false;   // the file has tiers: evictions are counted
  SourceKeys own_keys_;
  SourceKeys *keys_ = &own_keys_;
  uint64_t acc_src_ = ~0ull;
  size_t acc_idx_ = ~size_t(0);                           // acc_src_'s entry in block_use_
  std::unordered_map<uint32_t, uint32_t> use_idx_;        // key -> its entry in block_use_
  std::vector<std::pair<uint32_t, uint32_t>> block_use_;  // the current block's
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> slot_use_;  // per slot
  std::unordered_map<uint32_t, uint64_t> key_bytes_, class_bytes_;
  std::unique_ptr<Impl> rescue_;
  // Rescue's writer: blocks are sealed only where Rescue says, and their
  // byte counts collected (slot, counts), not kept. Its checks (MakeRoom)
  // compress the block as it fills, as any writer's do, but only to learn
  // how much of it packs (fit_used_): where a check would seal, the block
  // is over_ (limit_ becomes the buffer) and Split cuts it there when
  // Rescue says. The blocks it would write (sequence, slot image) are
  // captured_, not written: Rescue writes them once all of them are known.
  bool rewriting_ = false;
  bool over_ = false;       // Rescue's writer: a check found the block full
  size_t no_fit_used_ = 0;  // and the content a check found not to pack (0: none)
  // Rescue's writer, at the end of a block's records: whether all of them
  // may pack (false: they cannot, by what the checks found, with a margin
  // of 10%; it is cut where the last check packed without compressing the
  // rest first).
  bool MightPack() const;
  std::vector<std::pair<uint64_t, Use>> rewritten_;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> captured_;
  std::vector<uint8_t> rescue_img_;  // the block after the victim, as Rescue reads it
  std::vector<uint8_t> evict_img_, newest_img_;
  bool found_ = false;  // ScanTier found a valid block (newest_img_)
  std::unique_ptr<internal::BlockExpander> evict_exp_;
  internal::Superblock sb_;
  internal::StringTable st_;
  // The current block decoded: header room, then its entries (cur_.used is
  // LS_BLK_HDR + their length); zero past cur_.used. cap_ bytes: the slot
  // size, or LS_BLK_RAW_FACTOR slots' worth for a compressing codec.
  std::vector<uint8_t> buf_;
  size_t cap_ = 0;
  // Appends go on without compressing until cur_.used would pass limit_
  // (MakeRoom then checks how the content packs and moves the limit).
  size_t limit_ = 0;
  uint8_t codec_ = LS_CODEC_ZSTD;
  int level_ = 1;
  // The file's dictionary (tier 0's; dictp_ points at it from every tier).
  std::shared_ptr<internal::Dictionary> dict_;
  std::shared_ptr<internal::Dictionary> *dictp_ = &dict_;
  uint32_t dict_train_bytes_ = 0;
  bool dict_failed_ = false;
  bool dict_blocks_ = false;   // ScanTier found a valid block compressed with a dictionary
  void *cctx_ = nullptr;       // ZSTD_CCtx, reused
  std::vector<uint8_t> zimg_;  // the slot image of a compressed block
  // zstd compresses the current block as a stream (StreamZstd): each Pack
  // feeds only the entries added since the last one. zs_ holds the frame
  // so far; zs_in_ entry bytes went in (0: the next Pack starts a frame).
  // (lz4: Pack's output before it is known to fit.)
  std::vector<uint8_t> zs_;
  size_t zs_in_ = 0, zs_out_ = 0;
  bool zs_broken_ = false;    // output past zs_: packs no more (Split starts again)
  bool zs_use_dict_ = false;  // this block's frames use the dictionary
  bool zs_pick_dict_ = true;  // a new block: its first frame decides zs_use_dict_
  size_t packed_used_ = 0;    // cur_.used that zimg_ / pk_* describe (0: none)
  // The longest content of the current block known to pack (everything a
  // flush or a reopen may have shown readers): Split never cuts below it.
  size_t fit_used_ = LS_BLK_HDR;
  uint8_t pk_codec_ = LS_CODEC_NONE;
  uint32_t pk_stored_ = 0;  // payload bytes stored
  double ratio_ = 1.0;      // entry bytes per stored byte of the last sealed block
  std::array<uint8_t, LS_BOOT_ID_LEN> boot_id_{};
  uint64_t opened_ns_ = 0;           // the current block's open time in ns
  std::vector<uint8_t> site_level_;  // SiteClass by string id, dense for small ids
  std::unordered_map<uint32_t, internal::FieldPlan> plans_;  // of the table's sites with fields
  internal::FieldKeys fkeys_;                                // the current block's field keys
  std::vector<uint8_t> scratch_;                             // truncated arguments
  // Per-block entry state (FORMAT.md, "Entries").
  bool has_src_ = false;
  uint64_t src_ = 0, tid_ = 0, ts_ = 0;
  std::vector<uint64_t> declared_;  // sources declared in the current block
  // st_.last_id() as last seen: ids only grow, so an id <= sites_ was given out
  // without asking the table (refreshed when an id is larger).
  uint32_t sites_ = 0;
};

}  // namespace logsink::storage
