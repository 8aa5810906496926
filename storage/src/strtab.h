// strtab.h: the string table (proto/FORMAT.md, "String table"): entry
// encode/parse, loading from the file (incrementally, for readers following a
// writer) and the writer's deduplicating append. Internal to the library.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>

#include "logsink/proto/format.h"
#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::internal {

// Bytes an entry for site takes.
inline size_t StrtabEntrySize(const Site &s) { return LS_ST_HDR + s.fmt.size() + s.file.size(); }
// Writes the entry for (id, site) at out (StrtabEntrySize bytes).
void EncodeStrtabEntry(uint32_t id, const Site &site, uint8_t *out);

enum class StParse { kOk, kEnd, kNeedMore };
// Parses one entry from [p, p + avail) expecting id. kOk fills *site (views
// into p) and *size; kNeedMore when avail is short of the entry (*size = bytes
// needed); kEnd when the bytes are not a valid entry with that id.
StParse ParseStrtabEntry(const uint8_t *p, size_t avail, uint32_t expected_id, Site *site,
                         size_t *size);

class StringTable {
 public:
  void Init(uint64_t region_off, uint64_t region_size);
  // Reads and parses entries from the current end of the table on (all of
  // them on the first call). Returns the I/O status.
  Status Load(File *f);
  uint32_t size() const { return static_cast<uint32_t>(entries_.size()); }
  uint64_t used_bytes() const { return end_; }
  uint64_t region_off() const { return off_; }
  bool Get(uint32_t id, Site *out) const;
  // The id of an equal site, or 0.
  uint32_t Find(const Site &site) const;
  // Writes a new entry for site (not already present) and returns its id in
  // *id, or *id = 0 when it does not fit (region full or strings too long).
  Status Append(File *f, const Site &site, uint32_t *id);

 private:
  struct Entry {
    uint8_t level;
    uint32_t line;
    std::string fmt, file;
  };
  static std::string Key(const Site &s);
  void Add(const Site &s);

  uint64_t off_ = 0, cap_ = 0, end_ = 0;
  std::deque<Entry> entries_;  // id - 1 -> entry; a deque keeps views stable
  std::unordered_map<std::string, uint32_t> index_;
};

}  // namespace logsink::storage::internal
