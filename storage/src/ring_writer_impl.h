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

 private:
  Status Create(Env *env, const std::string &path, const Layout &want, uint32_t mode);
  Status Recover();
  void StartBlock(uint64_t seq, uint64_t first_rec);
  // Commits the entry of n bytes just written at cur_.used (RECORD or
  // DROPPED, with its SOURCE entry if any): advances the block and the
  // per-block state the next entry is delta-encoded against. The one place
  // an entry becomes part of the block; callers set tid_ first when it applies.
  void Commit(size_t n, uint64_t source_id, uint64_t ts_ns) {
    if (cur_.count == 0) {
      cur_.base_ts = cur_.max_ts = ts_ns;
      cur_.opened = OpenTime();
    }
    if (ts_ns > cur_.max_ts) cur_.max_ts = ts_ns;
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
  Env *env_ = nullptr;
  uint32_t last_opened_ = 0;  // the newest block's open time
  std::unique_ptr<File> file_;
  internal::Superblock sb_;
  internal::StringTable st_;
  std::vector<uint8_t> buf_;      // the current block; zero past cur_.used
  std::vector<uint8_t> scratch_;  // truncated arguments
  // Per-block entry state (FORMAT.md, "Entries").
  bool has_src_ = false;
  uint64_t src_ = 0, tid_ = 0, ts_ = 0;
  std::vector<uint64_t> declared_;  // sources declared in the current block
  // st_.last_id() as last seen: ids only grow, so an id <= sites_ was given out
  // without asking the table (refreshed when an id is larger).
  uint32_t sites_ = 0;
};

}  // namespace logsink::storage
