// record_filter.h: which records a reader shows (RecordFilter): levels,
// pids, uids, apps, systemd units, boots, kernel messages and a time range.
// One filter, built once (logctl builds it from its options): a RingReader
// given it (SetFilter) skips the blocks whose summaries prove that no record
// can match, and Match decides each record read. Header-only, as record.h.
// (--grep matches rendered text: it is the renderer's, render/filter.h; so
// are a record's named fields, whose FIELD=VALUE matches ride along here
// only so that the reader can pass over blocks: field_groups.)
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "logsink/proto/text_kinds.h"
#include "logsink/storage/record.h"

namespace logsink::storage {

struct RecordFilter {
  // Bit L: records of level L (0 emerg .. 7 debug) match; a DROPPED entry
  // is of level kDroppedLevel. A site that claims a level above 7 matches
  // no filter.
  uint8_t levels = 0xff;
  // A field given several values matches a record that has any of them
  // (empty: any record); the fields must all match.
  std::vector<uint32_t> pids, uids;
  std::vector<std::string> apps;               // the app label, or comm when the label is empty
  std::vector<std::string> units;              // the source's systemd unit, exactly
  std::vector<std::array<uint8_t, 16>> boots;  // the boot the record's block was written in
  bool kernel_only = false;  // records of the kernel's log (site file "kernel") only
  // FilterTime() at or after since_ns, at or before until_ns.
  std::optional<uint64_t> since_ns, until_ns;
  // FIELD=VALUE matches (logctl's, as journalctl's): a record passes when
  // some group holds, for each of its terms, one of the term's values (a
  // field's text, render/RENDERING.md "Named fields"; a name starting with
  // '_' is a trusted field: _PID, _UID, _COMM, _SYSTEMD_UNIT, ...). Match
  // does not decide them (a field is the renderer's: the caller matches
  // records itself); a RingReader uses them only to pass over the blocks
  // whose summaries prove that none of their records passes.
  struct FieldTerm {
    std::string name;
    std::vector<std::string> values;
  };
  std::vector<std::vector<FieldTerm>> field_groups;

  // The levels from..to (0..7, both included, from <= to) as `levels`.
  static uint8_t LevelRange(int from, int to) {
    uint8_t m = 0;
    for (int l = std::max(from, 0); l <= std::min(to, 7); l++) m = uint8_t(m | 1u << l);
    return m;
  }

  // Whether Match can refuse a record.
  bool any() const {
    return levels != 0xff || !pids.empty() || !uids.empty() || !apps.empty() || !units.empty() ||
           !boots.empty() || kernel_only || since_ns || until_ns;
  }

  bool Match(const Record &r) const {
    const int level = r.kind == Record::Kind::kDropped ? kDroppedLevel : r.site.level;
    if (level > 7 || !(levels >> level & 1)) return false;
    if (!pids.empty() && std::find(pids.begin(), pids.end(), r.pid) == pids.end()) return false;
    if (!uids.empty() && std::find(uids.begin(), uids.end(), r.uid) == uids.end()) return false;
    // The app label, or comm when the record has no label.
    if (!apps.empty() && std::none_of(apps.begin(), apps.end(), [&](const std::string &a) {
          return (r.app.empty() ? r.comm : r.app) == a;
        }))
      return false;
    if (!units.empty() && std::find(units.begin(), units.end(), r.unit) == units.end())
      return false;
    if (!boots.empty() && std::find(boots.begin(), boots.end(), r.boot_id) == boots.end())
      return false;
    if (kernel_only && (r.kind != Record::Kind::kRecord || !r.site_known ||
                        ls_text_kind_of(r.site.file.data(), r.site.file.size()) != LS_TEXT_KERNEL))
      return false;
    // Times the writer can vouch for, not the client's alone (record.h).
    if (since_ns && FilterTime(r) < *since_ns) return false;
    if (until_ns && FilterTime(r) > *until_ns) return false;
    return true;
  }
};

}  // namespace logsink::storage
