// summary_filter.cc: a RecordFilter as block summaries judge it (see
// summary_filter.h).
#include "summary_filter.h"

#include <algorithm>
#include <charconv>

#include "field_keys.h"

namespace logsink::storage::internal {

bool SummaryFilter::Set(const RecordFilter &f) {
  // A record whose call site is missing from the string table (damaged)
  // is filtered by Site's default level (info), while its block's summary
  // has its real level: when that default passes, no block can be skipped
  // by its levels without hiding such records (kernel_only passes none of
  // them: they have no site file).
  levels_ = f.levels;
  const int unknown_site_level = Site().level;
  if (!f.kernel_only && (f.levels >> unknown_site_level & 1)) levels_ = 0xff;
  since_ns_ = f.since_ns.value_or(0);
  until_ns_ = f.until_ns.value_or(~0ull);
  boots_ = f.boots;
  uid_keys_.clear();
  pid_keys_.clear();
  app_keys_.clear();
  unit_keys_.clear();
  for (const std::string &u : f.units) unit_keys_.push_back(BloomStr(LS_BLOOM_KEY_UNIT, u));
  for (uint32_t u : f.uids) uid_keys_.push_back(BloomU32(LS_BLOOM_KEY_UID, u));
  for (uint32_t p : f.pids) pid_keys_.push_back(BloomU32(LS_BLOOM_KEY_PID, p));
  for (const std::string &a : f.apps) {
    app_keys_.push_back(BloomStr(LS_BLOOM_KEY_APP, a));
    app_keys_.push_back(BloomStr(LS_BLOOM_KEY_COMM, a));
  }
  field_groups_.clear();
  for (const auto &group : f.field_groups) {
    std::vector<FieldTermKeys> g;
    for (const RecordFilter::FieldTerm &t : group) {
      FieldTermKeys k;
      if (t.name.empty() || t.name[0] != '_') {
        k.any = FieldAnyKey(t.name);
        for (const std::string &v : t.values) k.keys.push_back(FieldValueKey(t.name, v));
      } else {
        k.stored = false;
        const uint8_t type = t.name == "_PID"            ? LS_BLOOM_KEY_PID
                             : t.name == "_UID"          ? LS_BLOOM_KEY_UID
                             : t.name == "_COMM"         ? LS_BLOOM_KEY_COMM
                             : t.name == "_SYSTEMD_UNIT" ? LS_BLOOM_KEY_UNIT
                                                         : 0;
        k.always = type == 0;
        for (const std::string &v : t.values) {
          if (type == LS_BLOOM_KEY_PID || type == LS_BLOOM_KEY_UID) {
            uint32_t n = 0;  // a value that is no number matches no record: no key
            auto r = std::from_chars(v.data(), v.data() + v.size(), n);
            if (r.ec == std::errc() && r.ptr == v.data() + v.size())
              k.keys.push_back(BloomU32(type, n));
          } else if (type) {
            k.keys.push_back(BloomStr(type, v));
          }
        }
      }
      g.push_back(std::move(k));
    }
    field_groups_.push_back(std::move(g));
  }
  return levels_ != 0xff || f.since_ns || f.until_ns || !f.uids.empty() || !f.pids.empty() ||
         !f.apps.empty() || !f.units.empty() || !f.boots.empty() || !field_groups_.empty();
}

bool SummaryFilter::FieldsMayMatch(const BlockHeader &h) const {
  if (field_groups_.empty()) return true;
  const bool keyed = h.flags & LS_BLK_F_FIELD_KEYS;
  auto term = [&](const FieldTermKeys &t) {
    if (t.stored ? !keyed : t.always) return true;
    if (t.stored && BloomMayHave(h.bloom.data(), t.any)) return true;
    for (uint64_t k : t.keys)
      if (BloomMayHave(h.bloom.data(), k)) return true;
    return false;
  };
  for (const auto &g : field_groups_) {
    if (std::all_of(g.begin(), g.end(), term)) return true;
  }
  return false;
}

// The summary is inside the CRC the block passed (or the index entry's);
// the writer may have over-claimed (a split block keeps its summary), never
// under-claimed.
bool SummaryFilter::MayMatch(const BlockHeader &h) const {
  if (h.count == 0) return true;
  if (!(h.levels & levels_)) return false;
  if (h.max_time < since_ns_ || h.min_time > until_ns_) return false;
  auto any = [&h](const std::vector<uint64_t> &keys) {
    if (keys.empty()) return true;
    for (uint64_t k : keys) {
      if (BloomMayHave(h.bloom.data(), k)) return true;
    }
    return false;
  };
  if (!boots_.empty() && std::find(boots_.begin(), boots_.end(), h.boot_id) == boots_.end()) {
    return false;  // a block holds one boot's records
  }
  return any(uid_keys_) && any(pid_keys_) && any(app_keys_) && any(unit_keys_) && FieldsMayMatch(h);
}

}  // namespace logsink::storage::internal
