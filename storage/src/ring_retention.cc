// ring_retention.cc: retention (FORMAT.md, "Tiers"): the bytes each source
// holds in a tier, and what happens to a block its tier overwrites: the
// records the policy keeps go to the next tier (record by record, or the
// whole block while that tier fills), the rest are counted as evicted.
#include <cstring>

#include "logsink/proto/printf.h"
#include "ring_writer_impl.h"
#include "summary_index.h"

namespace logsink::storage {

uint32_t SourceKeys::Of(uint32_t uid, std::string_view app) {
  std::string k(4 + app.size(), '\0');
  std::memcpy(k.data(), &uid, 4);
  std::memcpy(k.data() + 4, app.data(), app.size());
  auto it = ids_.find(k);
  if (it != ids_.end()) return it->second;
  const bool kernel = uid == 0 && app == "kernel";  // a class of its own: never shares a key
  uint32_t &labels = labels_[uid];
  const bool full = kernel     ? false
                    : uid == 0 ? labels >= kMax
                               : labels >= kPerUid || others_ >= kMax;
  if (full) {
    // This uid's further labels count together (a key no label has: labels
    // never hold a NUL byte... and if one did it would only share it).
    k.resize(4);
    k.push_back('\0');
    it = ids_.find(k);
    if (it != ids_.end()) return it->second;
  } else {
    labels++;
    if (uid != 0) others_++;
  }
  const uint32_t id = uint32_t(classes_.size());
  classes_.push_back(kernel ? kKernelClass : uid);
  ids_.emplace(std::move(k), id);
  return id;
}

void RingWriter::Impl::AddUse(uint64_t slot, std::vector<std::pair<uint32_t, uint32_t>> use) {
  DropUse(slot);
  for (const auto &[key, n] : use) {
    key_bytes_[key] += n;
    class_bytes_[keys_->cls(key)] += n;
  }
  slot_use_[slot] = std::move(use);
}

void RingWriter::Impl::DropUse(uint64_t slot) {
  for (const auto &[key, n] : slot_use_[slot]) {
    auto sub = [](std::unordered_map<uint32_t, uint64_t> &m, uint32_t k, uint64_t v) {
      auto it = m.find(k);
      if (it == m.end()) return;
      if (it->second <= v)
        m.erase(it);
      else
        it->second -= v;
    };
    sub(key_bytes_, key, n);
    sub(class_bytes_, keys_->cls(key), n);
  }
  slot_use_[slot].clear();
}

uint32_t RingWriter::Impl::Dominant() const {
  uint32_t cls = 0;
  uint64_t most = 0;
  for (const auto &[c, n] : class_bytes_) {
    if (n > most || (n == most && c < cls)) cls = c, most = n;
  }
  if (most == 0) return ~0u;
  uint32_t key = ~0u;
  most = 0;
  for (const auto &[k, n] : key_bytes_) {
    if (keys_->cls(k) == cls && (n > most || (n == most && k < key))) key = k, most = n;
  }
  return key;
}

Status RingWriter::Impl::Evict(uint64_t victim) {
  if (!tiered_) return Status::OK();  // one tier: nothing is kept or counted
  const uint64_t slot = victim % layout_.block_count;
  size_t got = 0;
  Status s = f_->PRead(layout_.blocks_off + slot * layout_.block_size, evict_img_.data(),
                       layout_.block_size, &got);
  if (!s.ok()) return s;
  if (got < layout_.block_size) std::memset(evict_img_.data() + got, 0, layout_.block_size - got);
  BlockHeader h;
  const bool valid =
      internal::CheckBlock(evict_img_.data(), layout_, slot, &h) == BlockState::kValid &&
      h.seq == victim;
  std::vector<std::pair<uint32_t, uint32_t>> use;
  if (account_) {
    use = slot_use_[slot];
    DropUse(slot);
  }
  if (!valid || h.count == 0) return Status::OK();  // damaged or never written: nothing to move
  if (!next_ && account_ && fairness_) {
    bool done = false;
    s = Rescue(victim, h, use, &done);
    if (!s.ok() || done) return s;
  }

  const KeepPolicy p = Policy();
  // The summary and the byte counts may prove that nothing in it is kept:
  // then it is not decoded at all (a flood's own blocks cost nothing here).
  const uint8_t keep_mask = uint8_t((1u << (keep_level_ + 1)) - 1);  // levels 0..keep_level_
  bool none_kept = !next_;
  if (next_ && !p.take_all && !(h.levels & keep_mask)) {
    none_kept = true;
    if (fairness_) {
      for (const auto &[key, n] : use) {
        if (!IsDominant(p, key)) none_kept = false;
      }
      if (use.empty()) none_kept = false;  // not counted (damage): look inside
    }
  }
  auto single_class = [](uint8_t levels) {  // the class all these levels share, or -1
    int c = -1;
    for (int l = 0; l < 8; l++) {
      if (!(levels & (1u << l))) continue;
      if (c >= 0 && c != LevelClass(uint8_t(l))) return -1;
      c = LevelClass(uint8_t(l));
    }
    return c;
  };
  const int cls = single_class(h.levels);
  if (none_kept && cls >= 0) {
    stats_.evicted[cls] += h.count;
    return Status::OK();
  }
  // Everything moves on: the block itself, not its records one by one (its
  // payload decodes the same in any tier: a block numbered without gaps is
  // a valid block of a sparse tier).
  // (It passed its CRC: whatever its payload holds, it is what the writer
  // wrote, and readers check it in the next tier as they did in this one.)
  // (Not when some of its records are there already: see AppendKept.)
  if (p.take_all && h.first_rec >= next_->kept_below_) {
    return next_->AppendBlock(evict_img_.data(), h, std::move(use));
  }
  return KeepRecords(h, p, none_kept);
}

RingWriter::Impl::KeepPolicy RingWriter::Impl::Policy() const {
  KeepPolicy p;
  // Until the next tier has filled once it takes everything (its slots do
  // not sit unused); after that, what the policy keeps. Never into the last
  // tier: there nothing moves on, and the records that fill it would wrap
  // it over the oldest records kept for a reason (the last of them to come
  // in can overflow into its first slot). So tier 2 only ever holds what
  // the policy keeps.
  p.take_all = next_ && next_->next_ && next_->cur_.seq < next_->layout_.block_count;
  // Whose records go first. Leaving tier 0: the largest source, by uid and
  // then by label. Past it the uid alone: a label is the client's choice,
  // and a user who spreads a flood over many labels must not carry it into
  // the last tier (where one uid is alone, only its level keeps a record).
  p.dominant = fairness_ && next_ ? Dominant() : ~0u;
  p.by_class = tier_ > 0 && p.dominant != ~0u;
  p.dominant_class = p.dominant != ~0u ? keys_->cls(p.dominant) : 0;
  return p;
}

Status RingWriter::Impl::KeepRecords(const BlockHeader &h, const KeepPolicy &p, bool none_kept) {
  if (!evict_exp_) evict_exp_ = std::make_unique<internal::BlockExpander>();
  evict_exp_->SetDictionary(*dictp_);
  const uint8_t *entries = evict_exp_->Expand(evict_img_.data(), h);
  if (!entries) return Status::OK();  // does not decode: damage, nothing to keep
  BlockCursor cursor;
  cursor.Reset(entries, h);
  internal::DecodedRecord d;
  bool kept_any = false;
  while (cursor.Next(&d) == BlockCursor::kRecord) {
    const internal::SourceInfo *si = d.has_source ? cursor.FindSource(d.source_id) : nullptr;
    uint8_t level = kDroppedLevel;  // a drop report counts as a warning
    if (d.kind == Record::Kind::kRecord)
      level = d.site_id ? SiteLevel(d.site_id) : d.inline_site.level;
    bool keep = false;
    if (!none_kept && si) {
      keep = p.take_all || level <= keep_level_ ||
             (fairness_ && !IsDominant(p, keys_->Of(si->uid, si->app)));
    }
    if (!keep) {
      stats_.evicted[LevelClass(level)]++;
      continue;
    }
    Status s = next_->AppendKept(d, *si, h.first_rec + d.seq_off, h);
    if (!s.ok()) return s;
    kept_any = true;
  }
  // The kept records are written before their block's slot is overwritten
  // (the caller's next write): a crash in between would lose records that
  // were already in the file, not only ones that had just come in.
  return kept_any ? next_->Flush() : Status::OK();
}

// A record decoded from a block (r, its source si) appended again, as it
// was: Split carries records to the next block this way, and AppendKept
// moves them to the next tier.
Status RingWriter::Impl::AppendAgain(const internal::DecodedRecord &r,
                                     const internal::SourceInfo &si) {
  Source src;
  src.id = si.id;
  src.pid = si.pid;
  src.uid = si.uid;
  src.gid = si.gid;
  src.app = si.app;
  src.comm = si.comm;
  src.unit = si.unit;
  if (r.kind == Record::Kind::kDropped) {
    return AppendDropped(src, r.ts, r.dropped_count, r.dropped_since);
  }
  RecordIn in;
  in.source = &src;
  in.tid = r.tid;
  in.site_id = r.site_id;
  in.inline_site = r.site_id ? nullptr : &r.inline_site;
  in.ts_ns = r.ts;
  in.args = r.args;
  in.args_len = r.args_len;
  in.truncated = r.truncated;
  // Its signature only should it need cutting (a source declaration more
  // in the next block can push a record near the slot size over it): the
  // site's lookup takes the string table's lock, and rescues and splits
  // append thousands of records again at a time.
  Site site = r.inline_site;
  char sig[LS_FMT_MAX_ARGS + 1] = {};
  if (!FitsEmptyBlock(in) && (r.site_id == 0 || SiteOf(r.site_id, &site)) &&
      ls_fmt_signature(site.fmt.data(), site.fmt.size(), sig, sizeof sig) < 0) {
    sig[0] = 0;
  }
  in.signature = sig;
  Status s = AppendSlow(in);
  if (s.ok() && r.truncated) stats_.truncated_records--;  // counted when it first came in
  return s;
}

Status RingWriter::Impl::AppendBlock(uint8_t *img, const BlockHeader &h,
                                     std::vector<std::pair<uint32_t, uint32_t>> use) {
  if (cur_.count > 0 || dirty_) {  // the records before it first, in their own block
    Status s = Seal();
    if (!s.ok()) return s;
  }
  // The slot it goes to gives its block up first, as for any write.
  if (evicted_ <= cur_.seq && cur_.seq >= layout_.block_count) {
    evicted_ = cur_.seq + 1;
    Status s = Evict(cur_.seq - layout_.block_count);
    if (!s.ok()) return s;
  }
  BlockHeader nh = h;
  nh.seq = cur_.seq;
  nh.tier = uint8_t(tier_);
  nh.flags |= LS_BLK_F_SEALED;
  internal::FinishBlock(img, nh);
  Status s = f_->PWrite(layout_.SlotOffset(nh.seq), img, layout_.block_size);
  if (!s.ok()) return s;
  stats_.blocks_written++;
  stats_.kept[tier_] += h.count;
  kept_below_ = h.first_rec + h.count;
  last_opened_ = std::max(last_opened_, h.opened);
  if (account_) AddUse(nh.seq % layout_.block_count, std::move(use));
  StartBlock(nh.seq + 1, h.first_rec + h.count);
  // The entry last: the block is written and accounted for whatever happens
  // to it (without it, readers read the block).
  return internal::WriteIndexEntry(f_, layout_, img);
}

Status RingWriter::Impl::AppendKept(const internal::DecodedRecord &d,
                                    const internal::SourceInfo &si, uint64_t seq,
                                    const BlockHeader &origin) {
  // Kept already (a crash came after this block's records were kept and
  // before its slot was overwritten: it is evicted again after the restart).
  if (seq < kept_below_) return Status::OK();
  // A block holds one boot's records (FORMAT.md, "Boots"); a seal that
  // splits carries records of the old boot into the next block: seal again.
  for (int i = 0; cur_.count > 0 && cur_.boot_id != origin.boot_id; i++) {
    if (i == 3) return Status::Corruption("a kept block does not close");
    Status s = Seal();
    if (!s.ok()) return s;
  }
  rseq_ = seq;
  origin_ = &origin;
  Status s = AppendAgain(d, si);
  origin_ = nullptr;
  if (s.ok()) {
    stats_.kept[tier_]++;
    kept_below_ = seq + 1;
  }
  return s;
}

}  // namespace logsink::storage
