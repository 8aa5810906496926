// summary_filter.h: a RecordFilter as block summaries judge it (FORMAT.md,
// "Block summaries"): the fields a summary records (levels, time range,
// boot, and uids, pids, apps, comms and units in its Bloom filter), with
// the keys hashed once. Used by the reader to skip blocks, from the header
// or the summary index entry. Internal.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "block.h"
#include "logsink/storage/record_filter.h"

namespace logsink::storage::internal {

class SummaryFilter {
 public:
  // Takes f's fields. False when no summary can rule a block out for f (it
  // filters by nothing a summary records, or by nothing at all): then
  // MayMatch is always true, and a reader reads as without a filter.
  bool Set(const RecordFilter &f);
  // False only when the summary in h (a block's header, or its summary
  // index entry) proves that no record of the block matches.
  bool MayMatch(const BlockHeader &h) const;

 private:
  uint8_t levels_ = 0xff;
  uint64_t since_ns_ = 0, until_ns_ = ~0ull;
  std::vector<std::array<uint8_t, 16>> boots_;
  std::vector<uint64_t> uid_keys_, pid_keys_, app_keys_, unit_keys_;
  // field_groups, hashed: a term of a stored field may be in a block with
  // FIELD_KEYS when the filter has one of its value keys or its NAME-alone
  // key (a block without FIELD_KEYS may hold anything); a trusted field's
  // term looks up the source keys (_PID, _UID, _COMM, _SYSTEMD_UNIT) or
  // passes every block (the others).
  struct FieldTermKeys {
    bool stored = true;   // else a trusted field's, in keys
    bool always = false;  // a trusted field no summary records
    uint64_t any = 0;
    std::vector<uint64_t> keys;
  };
  std::vector<std::vector<FieldTermKeys>> field_groups_;
  bool FieldsMayMatch(const BlockHeader &h) const;
};

}  // namespace logsink::storage::internal
