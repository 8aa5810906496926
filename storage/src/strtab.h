// strtab.h: the string table (proto/FORMAT.md, "String table"): entry
// encode/parse, loading from the file (incrementally, for readers following a
// writer) and the writer's deduplicating append. Internal to the library.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "logsink/proto/format.h"
#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::internal {

// Bytes an entry for site takes.
inline size_t StrtabEntrySize(const Site &s) { return LS_ST_HDR + s.fmt.size() + s.file.size(); }
// Writes the entry for (id, site) at out (StrtabEntrySize bytes).
void EncodeStrtabEntry(uint32_t id, const Site &site, uint8_t *out);

enum class StParse { kOk, kEnd, kNeedMore };
// Parses one entry from [p, p + avail) whose id must be greater than last_id.
// kOk fills *id, *site (views into p) and *size; kNeedMore when avail is short
// of the entry (*size = bytes needed); kEnd when the bytes are not a valid
// entry (CRC, lengths, level, or an id not above last_id).
StParse ParseStrtabEntry(const uint8_t *p, size_t avail, uint32_t last_id, uint32_t *id, Site *site,
                         size_t *size);

// The string table region scanned whole (FORMAT.md, "String table"): calls
// on_entry for every valid entry in order, on_damage for every damaged
// stretch skipped (bytes that are neither entries nor the zero tail) and
// returns the offset where the table ends (after the last valid entry).
struct StScanner {
  std::function<void(size_t off, uint32_t id, const Site &site)> on_entry;
  std::function<void(size_t off, size_t len)> on_damage;
  size_t Scan(const uint8_t *p, size_t n, uint32_t last_id) const;
};

class StringTable {
 public:
  void Init(uint64_t region_off, uint64_t region_size);
  // Reads and parses entries from the current end of the table on (all of
  // them on the first call). Where they stop short of a zero tail (damage, a
  // zeroed entry, a write in progress) the rest of the region is scanned for
  // entries after it. Returns the I/O status.
  Status Load(File *f);
  // The largest id taken: loaded, or retired (RetireUpTo). Ids are never
  // reused, so an id <= last_id() that Get() does not know is damaged or lost.
  uint32_t last_id() const { return last_id_; }
  uint32_t count() const { return count_; }  // entries present
  uint64_t used_bytes() const { return end_; }
  uint64_t region_off() const { return off_; }
  // Damaged bytes between entries, and past the last one (0 when clean).
  uint64_t damaged_bytes() const { return damaged_; }
  uint64_t tail_damaged_from() const { return tail_damaged_ ? end_ : 0; }
  bool tail_damaged() const { return tail_damaged_; }
  // The damaged stretches between entries the loads found, as (file offset,
  // bytes), in file order: readers report them (FORMAT.md, "String table").
  const std::vector<std::pair<uint64_t, uint64_t>> &damage() const { return damage_; }
  bool Get(uint32_t id, Site *out) const;
  // The id of an equal site, or 0.
  uint32_t Find(const Site &site) const;
  // The writer's: ids up to `id` (referenced by records whose entry is
  // damaged or was never written) are never given to a new entry.
  void RetireUpTo(uint32_t id) { last_id_ = std::max(last_id_, id); }
  // The writer's, at open: zeroes damaged bytes after the last entry so new
  // entries are appended to a clean tail.
  Status ClearDamagedTail(File *f);
  // Writes a new entry for site (not already present) and returns its id in
  // *id, or *id = 0 when it does not fit (region full or strings too long).
  Status Append(File *f, const Site &site, uint32_t *id);

 private:
  struct Entry {
    bool present = false;
    uint8_t level = 0;
    uint8_t flags = 0;
    uint32_t line = 0;
    std::string fmt, file;
  };
  static std::string Key(const Site &s);
  void Add(uint32_t id, const Site &s);
  Status LoadWhole(File *f);
  bool ZeroTail(File *f, const std::vector<uint8_t> &buf, size_t pos, size_t got, Status *s) const;

  uint64_t off_ = 0, cap_ = 0, end_ = 0;
  uint32_t last_id_ = 0, count_ = 0;
  uint64_t damaged_ = 0;
  bool tail_damaged_ = false;
  std::vector<std::pair<uint64_t, uint64_t>> damage_;
  uint32_t tail_crc_ = 0;  // CRC of the damaged tail's first bytes when last scanned
  // Entries by id. Ids are dense in practice (the writer takes the next one;
  // only retired ids are skipped), but an entry may claim any id up to
  // 2^32 - 1, so memory must follow the entries present, not the ids
  // claimed: an id up to twice the entries present plus kDenseSlack extends
  // the dense part (so at most that many slots, half of them or more in
  // use past the slack), a larger one goes to sparse_.
  static constexpr uint32_t kDenseSlack = 1024;
  std::deque<Entry> entries_;                   // id - 1 -> entry; a deque keeps views stable
  std::unordered_map<uint32_t, Entry> sparse_;  // ids past entries_.size()
  std::unordered_map<std::string, uint32_t> index_;
};

}  // namespace logsink::storage::internal
