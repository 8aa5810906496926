// records.h: ring records read back into owned copies, with a Reporter that
// keeps every corruption and loss the reader reports, and one record
// appended with the writer's RecordIn filled in.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "logsink/storage/ring.h"

namespace logsink::test {

// A record read back, with its views copied.
struct OwnedRecord {
  storage::Record::Kind kind = storage::Record::Kind::kRecord;
  uint64_t seq = 0, block_seq = 0, ts_ns = 0, tid = 0, source_id = 0;
  uint32_t pid = 0, uid = 0, gid = 0;
  std::string app, comm, unit;
  uint32_t site_id = 0;
  bool site_known = false;
  uint8_t level = 0;
  uint8_t site_flags = 0;  // LS_ST_F_*
  uint32_t line = 0;
  std::string fmt, file, args;
  uint64_t truncated = 0, dropped_count = 0, dropped_since_ns = 0;

  bool dropped() const { return kind == storage::Record::Kind::kDropped; }
};

OwnedRecord Copy(const storage::Record &r);

// Remembers what the reader dropped and why.
class RecordingReporter : public storage::Reporter {
 public:
  struct Bad {
    uint64_t off;
    std::string why;
  };
  void Corruption(uint64_t off, std::string_view why) override;
  void Lost(uint64_t n) override;
  size_t corruptions() const { return bad.size(); }
  std::string Dump() const;  // "off: why\n" per corruption

  std::vector<Bad> bad;
  uint64_t lost = 0;  // records overwritten before they were read
  int lost_events = 0;
};

// Appends one record of src at site (interned) with its signature and
// argument bytes to w.
storage::Status AppendRecord(storage::RingWriter *w, const storage::Source &src, uint32_t site,
                             std::string_view sig, std::string_view args, uint64_t ts_ns,
                             uint64_t tid = 1);

// Appends r's records up to the end to *out. Returns the first status other
// than NotFound (the end), or OK.
storage::Status ReadAllRecords(storage::RingReader *r, std::vector<OwnedRecord> *out);

// Opens path, seeks to the oldest record and reads everything (see above).
storage::Status ReadRingFile(const std::string &path, storage::Reporter *rep,
                             std::vector<OwnedRecord> *out);

}  // namespace logsink::test
