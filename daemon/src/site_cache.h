// site_cache.h: one connection's interned sites (INTERN frames): the
// client's site id -> the string-table id the ring knows the site by (or,
// when the table is full, the site's format and file, stored inline in
// each record) and the argument signature its records are checked against.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "logsink/storage/ring.h"

namespace logsink::daemon {

class SiteCache {
 public:
  struct Entry {
    uint32_t global = 0;   // string-table id; 0 = the table is full, store inline
    uint32_t sig_off = 0;  // NUL-terminated signature in sigs_
    uint32_t sig_len = 0;
    uint32_t inline_idx = 0;  // into inline_ when global == 0
    storage::Site site;       // level and line; fmt/file only when inline
  };

  // Entries added so far (a site interned again counts again).
  size_t size() const { return entries_.size(); }
  // The entry of the client's site id, or nullptr when it was not interned.
  const Entry *Lookup(uint32_t site) const {
    uint32_t i = 0;
    if (site < index_.size()) {
      i = index_[site];
    } else if (!sparse_.empty()) {
      auto it = sparse_.find(site);
      if (it != sparse_.end()) i = it->second;
    }
    return i ? &entries_[i - 1] : nullptr;
  }
  uint32_t IndexOf(const Entry *e) const { return uint32_t(e - entries_.data()); }
  const Entry &At(uint32_t i) const { return entries_[i]; }
  std::string_view Signature(const Entry &e) const {
    return std::string_view(sigs_.data() + e.sig_off, e.sig_len);
  }
  // The full site of an entry stored inline (global == 0).
  storage::Site InlineSite(const Entry &e) const;

  // Adds the client's site id as `site` (level, line, fmt, file) with
  // string-table id `global` (0: kept here, to be stored inline) and
  // signature sig[0, nargs); a later INTERN of the same id replaces it.
  void Add(uint32_t site_id, uint32_t global, const storage::Site &site, const char *sig,
           size_t nargs);

  // The heap this holds, by capacity (the memory budget's share).
  uint64_t Holding() const;

 private:
  // Dense below kDenseSites, a hash map above, so a huge site id costs one
  // entry, not a table up to it.
  static constexpr uint32_t kDenseSites = 4096;
  std::vector<uint32_t> index_;                    // site id -> entries_ index + 1
  std::unordered_map<uint32_t, uint32_t> sparse_;  // the same, from kDenseSites on
  std::vector<Entry> entries_;
  std::string sigs_;
  std::vector<std::string> inline_;  // fmt then file, per inline site
  uint64_t inline_bytes_ = 0;        // bytes of inline_
};

}  // namespace logsink::daemon
