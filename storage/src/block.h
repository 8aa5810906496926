// block.h: the block codec shared by the writer, the reader and Verify: block
// header, entry encoders (sizes computed first, then varints written straight
// into the block) and BlockCursor, the one entry decoder that tracks the
// per-block state (sources, tid, timestamp). proto/FORMAT.md, "Blocks".
// Internal to the storage library.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::internal {

class Dictionary;

struct BlockHeader {
  uint32_t magic = 0, crc = 0;
  uint64_t seq = 0, first_rec = 0, base_ts = 0, max_ts = 0;
  uint32_t used = 0, count = 0, flags = 0;
  uint32_t opened = 0;  // LS_BLK_OFF_OPENED
  uint32_t raw = 0;     // bytes of entries once decoded
  uint8_t codec = LS_CODEC_NONE;
  uint8_t tier = 0;  // LS_BLK_OFF_TIER
  // The summary (FORMAT.md, "Block summaries"), covered by the block's CRC.
  uint8_t levels = 0;
  uint64_t min_time = 0, max_time = 0;
  std::array<uint8_t, LS_BOOT_ID_LEN> boot_id{};
  uint64_t open_mono = 0, open_real = 0;
  std::array<uint8_t, LS_BLK_BLOOM_BYTES> bloom{};
  bool sealed() const { return flags & LS_BLK_F_SEALED; }
};

BlockHeader ParseBlockHeader(const uint8_t *p);
// Writes h (except crc) into p, then the CRC of [8, h.used).
void FinishBlock(uint8_t *p, const BlockHeader &h);

// ---- summary filter -------------------------------------------------------

// FNV-1a 64 of a key (its type byte, then the value), and the three bits it
// sets: (lo + i * (hi | 1)) % 512 for i = 0..2, lo/hi the hash's 32-bit halves.
uint64_t BloomHash(uint8_t type, const void *value, size_t n);
void BloomAdd(uint8_t *bloom, uint64_t hash);
bool BloomMayHave(const uint8_t *bloom, uint64_t hash);
inline uint64_t BloomU32(uint8_t type, uint32_t v) {
  uint8_t le[4];
  ls_put_u32(le, v);
  return BloomHash(type, le, 4);
}
inline uint64_t BloomStr(uint8_t type, std::string_view s) {
  return BloomHash(type, s.data(), s.size());
}
// Adds a source's uid, pid, app, comm and unit (when it has one) to a block's filter.
void BloomAddSource(uint8_t *bloom, uint32_t uid, uint32_t pid, std::string_view app,
                    std::string_view comm, std::string_view unit);

enum class BlockState {
  kValid,      // magic, used, slot and CRC all fine
  kEmpty,      // all-zero header: never written
  kBadHeader,  // wrong magic, used out of range, or seq in the wrong slot
  kBadCrc,     // header plausible, CRC mismatch
  kBadData,    // CRC fine, but the payload does not decode to `raw` bytes
};
const char *BlockStateName(BlockState s);
// Header-only check: magic, used range, seq % block_count == slot, and the
// tier byte naming l's tier (l is the tier's layout, Layout::Tier()).
BlockState CheckBlockHeader(const BlockHeader &h, const Layout &l, uint64_t slot);
// Full check of a whole block image (block_size bytes) read from slot.
BlockState CheckBlock(const uint8_t *p, const Layout &l, uint64_t slot, BlockHeader *h);
// Decodes a checked block's payload: the image a BlockCursor reads (header
// and `raw` bytes of entries). One per reader; reuses its zstd context and
// buffer. Never allocates more than LS_BLK_RAW_FACTOR * block_size.
class BlockExpander {
 public:
  BlockExpander();
  ~BlockExpander();
  BlockExpander(const BlockExpander &) = delete;
  BlockExpander &operator=(const BlockExpander &) = delete;
  // img: a whole slot that CheckBlock found valid. Returns the image to read
  // (img itself when stored as it is), or nullptr when the payload does not
  // decode to exactly h.raw bytes (damage CRC32C did not catch, or a
  // crafted block): the caller reports kBadData. A block compressed with the
  // file's dictionary (LS_CODEC_ZSTD_DICT) needs UseDictionaryOf first.
  const uint8_t *Expand(const uint8_t *img, const BlockHeader &h);
  // The file whose dictionary region (l.dict_off, l.dict_size) holds the
  // dictionary: read and checked when the first block needs it, then kept
  // (the region is written once, before any block that uses it). A missing
  // or damaged dictionary makes those blocks fail to expand.
  void UseDictionaryOf(File *f, const Layout &l);
  // Or the dictionary itself (the writer, which wrote it).
  void SetDictionary(std::shared_ptr<Dictionary> d);
  // The heap it holds now: the decoded block, zstd's context, the dictionary.
  size_t HeldBytes() const;
  // The most it holds for blocks of l (the decoded block at its largest, its
  // zstd context, and, for a file with a dictionary region, that
  // dictionary's bytes and digested form).
  size_t BoundBytes(const Layout &l) const;

 private:
  void *dctx_ = nullptr;  // ZSTD_DCtx
  std::vector<uint8_t> out_;
  File *dict_file_ = nullptr;
  uint64_t dict_off_ = 0;
  uint32_t dict_size_ = 0;
  bool dict_tried_ = false;
  std::shared_ptr<Dictionary> dict_;
};

// The oldest block sequence that can still be in the ring when newest is the
// newest: one lap back (0 before the first wrap).
inline uint64_t OldestLive(const Layout &l, uint64_t newest) {
  return newest + 1 >= l.block_count ? newest + 1 - l.block_count : 0;
}

// ---- encoding -------------------------------------------------------------

inline size_t StrLen(std::string_view s) { return ls_varint_len(s.size()) + s.size(); }
inline uint8_t *PutStr(uint8_t *p, std::string_view s) {
  p += ls_put_varint(p, s.size());
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// Bytes of the SOURCE entry for src (length prefix included).
size_t SourceEntrySize(const Source &src);
uint8_t *PutSourceEntry(uint8_t *p, const Source &src);

// The head and body fields of a RECORD entry, except its arguments.
struct RecordFields {
  uint8_t flags = 0;  // LS_E_F_*
  uint64_t source_id = 0, tid = 0, truncated = 0;
  uint32_t site_id = 0;
  const Site *inline_site = nullptr;
  uint64_t ts_zz = 0;  // zigzag timestamp delta
  uint64_t gap = 0;    // with LS_E_F_GAP: records skipped since the previous one
};
// Bytes of the entry's head and body without the arguments and length prefix.
size_t RecordFixedLen(const RecordFields &f);
// Writes the whole entry (length prefix included) and returns the end.
uint8_t *PutRecordEntry(uint8_t *p, const RecordFields &f, size_t fixed_len, const uint8_t *args,
                        size_t args_len);

// DROPPED: [varint gap] [varint source] zigzag delta, varint count, varint
// since (gap 0: no GAP flag).
size_t DroppedBodyLen(uint64_t gap, bool with_source, uint64_t source_id, uint64_t ts_zz,
                      uint64_t count, uint64_t since);
uint8_t *PutDroppedEntry(uint8_t *p, uint64_t gap, bool with_source, uint64_t source_id,
                         uint64_t ts_zz, uint64_t count, uint64_t since, size_t body_len);

// ---- decoding -------------------------------------------------------------

struct SourceInfo {
  uint64_t id = 0;
  uint32_t pid = 0, uid = 0, gid = 0;
  std::string_view app, comm, unit;
};

struct DecodedRecord {
  Record::Kind kind = Record::Kind::kRecord;
  uint32_t index = 0;      // record index in the block
  uint64_t seq_off = 0;    // its sequence number minus the block's first (index + gaps)
  uint32_t entry_off = 0;  // offset of the entry in the block
  uint64_t ts = 0, tid = 0, source_id = 0;
  const SourceInfo *source = nullptr;  // nullptr: no source or not declared in the block
  bool has_source = false;
  uint32_t site_id = 0;  // 0: inline
  Site inline_site;      // when site_id == 0
  const uint8_t *args = nullptr;
  size_t args_len = 0;
  uint64_t truncated = 0;
  uint64_t dropped_count = 0, dropped_since = 0;
};

// Walks the entries of one block image, keeping the per-block state.
class BlockCursor {
 public:
  enum Result { kRecord = 1, kEnd = 0, kMalformed = -1 };
  // p must hold the header and h.raw bytes of entries (a decoded image, see
  // BlockExpander) and stay valid while the cursor is used.
  void Reset(const uint8_t *p, const BlockHeader &h);
  // Decodes entries up to the next RECORD or DROPPED. SOURCE entries are
  // absorbed (see sources()). kMalformed leaves pos() at the bad entry (and
  // *out partly overwritten: use it only after kRecord).
  Result Next(DecodedRecord *out);
  uint32_t pos() const { return pos_; }
  uint32_t records() const { return index_; }
  const std::vector<SourceInfo> &sources() const { return sources_; }
  const SourceInfo *FindSource(uint64_t id) const;
  size_t HeldBytes() const { return sources_.capacity() * sizeof(SourceInfo); }
  // The state after the last entry, for a writer continuing this block.
  bool has_source() const { return has_source_; }
  uint64_t source() const { return source_; }
  uint64_t tid() const { return tid_; }
  uint64_t ts() const { return ts_; }
  uint64_t max_ts() const { return max_ts_; }
  uint64_t gaps() const { return gaps_; }

 private:
  // Next's steps, over one entry's bytes (In): a SOURCE entry into
  // sources(); a RECORD or DROPPED entry into *out (TakeRecord: the fields
  // every record has, then RecordBody or DroppedBody). Each returns false
  // for a malformed entry.
  struct In;
  bool TakeSource(In *in, uint8_t flags);
  bool TakeRecord(In *in, uint8_t kind, uint8_t flags, DecodedRecord *out);
  bool RecordBody(In *in, uint8_t flags, DecodedRecord *r);
  bool DroppedBody(In *in, uint8_t flags, DecodedRecord *r);

  const uint8_t *p_ = nullptr;
  uint32_t used_ = 0, pos_ = 0, index_ = 0, count_ = 0;  // count_: records the header claims
  uint64_t gaps_ = 0;                                    // sum of the GAP fields so far
  bool has_source_ = false;
  uint64_t source_ = 0, tid_ = 0, ts_ = 0, max_ts_ = 0;
  std::vector<SourceInfo> sources_;
  const SourceInfo *last_source_ = nullptr;  // FindSource(source_), kept while source_ stays
};

}  // namespace logsink::storage::internal
