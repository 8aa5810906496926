// ring_writer_impl.h: RingWriter's state, shared by ring_writer.cc (appending,
// sealing) and ring_recover.cc (creating, opening and recovering). Internal.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "block.h"
#include "logsink/storage/ring.h"
#include "strtab.h"
#include "superblock.h"

namespace logsink::storage {

using internal::BlockCursor;
using internal::BlockHeader;
using internal::BlockState;
using internal::RecordFields;

class RingWriter::Impl {
 public:
  ~Impl();
  Status Open(Env *env, const std::string &path, const WriterOptions &opts);
  uint32_t Intern(const Site &site);
  bool InlineSiteFits(const Source &src, const Site &site, size_t args_floor) const;
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
  std::string moved_aside_;  // where Open moved a ring of another version

 private:
  Status Create(Env *env, const std::string &path, const Layout &want, uint32_t mode);
  Status Recover();
  void StartBlock(uint64_t seq, uint64_t first_rec);
  // Commits the entry of n bytes just written at cur_.used (RECORD or
  // DROPPED, with its SOURCE entry if any): advances the block, its summary
  // and the per-block state the next entry is delta-encoded against. The one
  // place an entry becomes part of the block; callers set tid_ first when it
  // applies.
  void Commit(size_t n, uint64_t source_id, uint64_t ts_ns, uint8_t level) {
    if (cur_.count == 0) {
      cur_.base_ts = cur_.max_ts = ts_ns;
      cur_.opened = OpenTime();
      cur_.open_real = env_->NowNanos();
      cur_.open_mono = env_->MonoNanos();
      cur_.boot_id = boot_id_;
      opened_ns_ = layout_.created_ns + uint64_t(cur_.opened - 1) * 1000000000ull;
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
  // The level of string-table site id (for the block's summary).
  uint8_t SiteLevel(uint32_t id) {
    if (id < site_level_.size()) return site_level_[id];
    return SiteLevelSlow(id);
  }
  uint8_t SiteLevelSlow(uint32_t id);
  // Compresses the current entries into the slot image (once per content).
  // false: they no longer fit one slot.
  bool Pack();
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

  std::string path_;
  Env *env_ = nullptr;
  uint32_t last_opened_ = 0;  // the newest block's open time
  std::unique_ptr<File> file_;
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
  void *cctx_ = nullptr;       // ZSTD_CCtx, reused
  std::vector<uint8_t> zimg_;  // the slot image of a compressed block
  size_t packed_used_ = 0;     // cur_.used that zimg_ / pk_* describe (0: none)
  // The longest content of the current block known to pack (everything a
  // flush or a reopen may have shown readers): Split never cuts below it.
  size_t fit_used_ = LS_BLK_HDR;
  uint8_t pk_codec_ = LS_CODEC_NONE;
  uint32_t pk_stored_ = 0;  // payload bytes stored
  double ratio_ = 1.0;      // entry bytes per stored byte of the last sealed block
  std::array<uint8_t, LS_BOOT_ID_LEN> boot_id_{};
  uint64_t opened_ns_ = 0;           // the current block's open time in ns
  std::vector<uint8_t> site_level_;  // level by string id, dense for small ids
  std::vector<uint8_t> scratch_;     // truncated arguments
  // Per-block entry state (FORMAT.md, "Entries").
  bool has_src_ = false;
  uint64_t src_ = 0, tid_ = 0, ts_ = 0;
  std::vector<uint64_t> declared_;  // sources declared in the current block
  // st_.last_id() as last seen: ids only grow, so an id <= sites_ was given out
  // without asking the table (refreshed when an id is larger).
  uint32_t sites_ = 0;
};

}  // namespace logsink::storage
