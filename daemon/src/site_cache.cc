// site_cache.cc: see site_cache.h.
#include "site_cache.h"

namespace logsink::daemon {

storage::Site SiteCache::InlineSite(const Entry &e) const {
  storage::Site s = e.site;
  s.fmt = inline_[e.inline_idx];
  s.file = inline_[e.inline_idx + 1];
  return s;
}

void SiteCache::Add(uint32_t site_id, uint32_t global, const storage::Site &site, const char *sig,
                    size_t nargs) {
  Entry e;
  e.site.level = site.level;
  e.site.flags = site.flags;  // FIELDS: an inline site keeps its fields
  e.site.line = site.line;
  e.global = global;
  if (global == 0) {  // string table full: records carry the site inline
    e.inline_idx = uint32_t(inline_.size());
    inline_.emplace_back(site.fmt);
    inline_.emplace_back(site.file);
    inline_bytes_ += site.fmt.size() + site.file.size();
  }
  e.sig_off = uint32_t(sigs_.size());
  e.sig_len = uint32_t(nargs);
  sigs_.append(sig, nargs + 1);
  entries_.push_back(e);
  if (site_id < kDenseSites) {
    if (site_id >= index_.size()) index_.resize(size_t(site_id) + 1, 0);
    index_[site_id] = uint32_t(entries_.size());
  } else {
    sparse_[site_id] = uint32_t(entries_.size());
  }
}

uint64_t SiteCache::Holding() const {
  return index_.capacity() * sizeof(uint32_t) + sparse_.size() * 48 +
         entries_.capacity() * sizeof(Entry) + sigs_.capacity() +
         inline_.capacity() * sizeof(std::string) + inline_bytes_;
}

}  // namespace logsink::daemon
