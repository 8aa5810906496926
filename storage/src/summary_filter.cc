// summary_filter.cc: a RecordFilter as block summaries judge it (see
// summary_filter.h).
#include "summary_filter.h"

#include <algorithm>

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
  return levels_ != 0xff || f.since_ns || f.until_ns || !f.uids.empty() || !f.pids.empty() ||
         !f.apps.empty() || !f.units.empty() || !f.boots.empty();
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
  return any(uid_keys_) && any(pid_keys_) && any(app_keys_) && any(unit_keys_);
}

}  // namespace logsink::storage::internal
