// verify.cc: VerifyRing: checks both superblock copies, every string-table
// entry, every block (CRC, slot, sequence continuity) and every entry
// (framing, string ids, declared sources, arguments against the format).
#include "verify.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "block.h"
#include "dict.h"
#include "field_keys.h"
#include "logsink/proto/args.h"
#include "logsink/proto/printf.h"
#include "scan.h"
#include "strtab.h"
#include "summary_index.h"
#include "superblock.h"

namespace logsink::storage::internal {
namespace {

struct SlotInfo {
  BlockState state = BlockState::kEmpty;
  uint64_t seq = 0, first_rec = 0, count = 0;
  uint64_t last_rec = 0;  // the number of its last record (sparse tiers count gaps)
};

class Verifier {
 public:
  Verifier(File *f, const std::string &path, Reporter *r,
           const std::function<void(uint64_t, uint64_t)> &progress)
      : f_(f), path_(path), r_(r), progress_(progress) {}
  Status Run();

 private:
  void Report(uint64_t off, const std::string &why) {
    problems_++;
    if (r_) r_->Corruption(off, why);
  }
  Status CheckStrtab();
  // entry: the block's summary index entry (entry_off its offset), or null.
  void CheckEntries(uint64_t off, const uint8_t *img, const BlockHeader &h, SlotInfo *si,
                    const BlockHeader *entry, uint64_t entry_off);
  // One tier's slots (l: its layout), done_ slots checked before it.
  Status CheckTier(const Layout &l, uint64_t size, uint64_t total);
  void CheckArgs(uint64_t off, const Site &site, const DecodedRecord &d);
  bool FieldsCovered(const uint8_t *bloom, const DecodedRecord &d);
  // The tier's summary index entries, each on its own: damaged, or naming a
  // block of another slot or tier.
  Status CheckIndex(const Layout &l);
  // The entry of a valid block's slot: when it names that block, it must
  // cover the block's summary (FORMAT.md, "Summary index").
  // The valid entry of slot naming h's block, if any (*off: where it is).
  std::optional<BlockHeader> IndexEntryOf(const Layout &l, uint64_t slot, const BlockHeader &h,
                                          uint64_t *off);
  void CheckIndexEntry(const BlockHeader &x, uint64_t off, const Layout &l, const BlockHeader &h);

  File *f_;
  std::string path_;
  Reporter *r_;
  const std::function<void(uint64_t, uint64_t)> &progress_;
  Layout l_;
  uint64_t problems_ = 0;
  std::vector<uint8_t> strtab_;  // the region; sites_ point into it
  // id -> site. A map, not a vector indexed by id: ids may be skipped, so an
  // entry may claim any id up to 2^32 - 1, and memory must follow the
  // entries present.
  std::unordered_map<uint32_t, Site> sites_;
  std::unordered_map<uint32_t, FieldPlan> plans_;  // of sites_, made when a block needs them
  std::string field_tmp_;
  uint32_t last_id_ = 0;  // the largest id read
  BlockExpander expander_;
  uint64_t done_ = 0;  // slots checked (progress)
};

Status Verifier::Run() {
  Superblock sb;
  bool ok[2];
  std::string why[2];
  Status s = ReadSuperblock(f_, path_, &sb, ok, why);
  if (!s.ok()) {
    if (s.IsCorruption()) {
      for (int i = 0; i < 2; i++)
        Report(uint64_t(i) * LS_SB_SLOT, "bad superblock copy: " + why[i]);
    }
    return s;
  }
  for (int i = 0; i < 2; i++) {
    if (!ok[i]) Report(uint64_t(i) * LS_SB_SLOT, "bad superblock copy: " + why[i]);
  }
  l_ = sb.layout;
  uint64_t size = 0;
  s = f_->Size(&size);
  if (!s.ok()) return s;
  if (size != l_.file_size) {
    Report(0, "file is " + std::to_string(size) + " bytes, superblock says " +
                  std::to_string(l_.file_size));
  }
  s = CheckStrtab();
  if (!s.ok()) return s;
  // The dictionary (FORMAT.md, "Dictionary"): damage there is reported once
  // here, and again by every block that needed it.
  std::shared_ptr<Dictionary> dict;
  s = ReadDictionary(f_, l_, &dict);
  if (s.IsCorruption()) {
    Report(l_.dict_off, "the dictionary region: " + s.message());
  } else if (!s.ok()) {
    return s;
  }
  expander_.SetDictionary(dict);

  uint64_t total = 0;
  for (int t = 0; t < int(LS_TIERS); t++) {
    if (l_.TierBlocks(t)) total += SlotsInFile(l_.Tier(t), size);
  }
  for (int t = 0; t < int(LS_TIERS); t++) {
    if (!l_.TierBlocks(t)) continue;
    s = CheckTier(l_.Tier(t), size, total);
    if (!s.ok()) return s;
  }
  if (problems_) {
    return Status::Corruption(path_ + ": " + std::to_string(problems_) + " problem(s) found");
  }
  return Status::OK();
}

Status Verifier::CheckIndex(const Layout &l) {
  static const uint8_t kZero[LS_IDX_ENTRY] = {};
  return ForEachIndexEntry(f_, l, [&](uint64_t i, const uint8_t *e) {
    const uint64_t off = l.index_off + i * LS_IDX_ENTRY;
    BlockHeader h;
    uint32_t crc;
    if (std::equal(e, e + LS_IDX_ENTRY, kZero)) return Status::OK();  // none
    if (!DecodeIndexEntry(e, &h, &crc)) {
      Report(off, "summary index entry of slot " + std::to_string(i) + " of tier " +
                      std::to_string(l.tier) + " fails its CRC (readers read that block)");
    } else if (h.tier != l.tier || h.seq % l.block_count != i) {
      Report(off, "summary index entry of slot " + std::to_string(i) + " of tier " +
                      std::to_string(l.tier) + " names block " + std::to_string(h.seq) +
                      " of tier " + std::to_string(h.tier) + ", which is not that slot's");
    }
    return Status::OK();
  });
}

// An entry may claim more than the block on disk holds (after a power loss
// the block can be an earlier, partial image of the one the entry was made
// from), never less: what a reader skipping by it would miss.
std::optional<BlockHeader> Verifier::IndexEntryOf(const Layout &l, uint64_t slot,
                                                  const BlockHeader &h, uint64_t *off) {
  uint8_t e[LS_IDX_ENTRY];
  size_t got = 0;
  *off = l.index_off + slot * LS_IDX_ENTRY;
  if (!f_->PRead(*off, e, sizeof e, &got).ok() || got < sizeof e) return std::nullopt;
  BlockHeader x;
  uint32_t crc;
  if (!DecodeIndexEntry(e, &x, &crc) || x.seq != h.seq || x.tier != l.tier) return std::nullopt;
  return x;
}

// (Its FIELD_KEYS is checked against the block's records: CheckEntries.)
void Verifier::CheckIndexEntry(const BlockHeader &x, uint64_t off, const Layout &l,
                               const BlockHeader &h) {
  bool covers = (h.levels & ~x.levels) == 0 && x.first_rec == h.first_rec && x.count >= h.count &&
                (h.count == 0 || (x.min_time <= h.min_time && x.max_time >= h.max_time)) &&
                x.boot_id == h.boot_id;
  for (size_t i = 0; covers && i < h.bloom.size(); i++) covers = (h.bloom[i] & ~x.bloom[i]) == 0;
  if (!covers) {
    Report(off, "summary index entry of block " + std::to_string(h.seq) + " of tier " +
                    std::to_string(l.tier) + " does not cover the block's summary");
  }
}

Status Verifier::CheckTier(const Layout &l, uint64_t size, uint64_t total) {
  // Only slots inside the file: a superblock may claim far more than a
  // truncated (or crafted) file holds.
  std::vector<SlotInfo> slots(SlotsInFile(l, size));
  const bool sparse = l.tier != 0;
  Status s = CheckIndex(l);
  if (!s.ok()) return s;
  s = ForEachSlot(f_, l, [&](uint64_t slot, const uint8_t *img) {
    if (progress_) progress_(++done_, total);
    BlockHeader h;
    SlotInfo &si = slots[slot];
    si.state = CheckBlock(img, l, slot, &h);
    uint64_t off = l.SlotOffset(slot);
    switch (si.state) {
      case BlockState::kEmpty:
        return;
      case BlockState::kBadHeader:
        Report(off, std::string("bad block header in slot ") + std::to_string(slot) + " of tier " +
                        std::to_string(l.tier));
        return;
      case BlockState::kBadCrc:
        Report(off, "block " + std::to_string(h.seq) + " fails its CRC");
        return;
      case BlockState::kBadData:  // CheckBlock does not decode: see below
        return;
      case BlockState::kValid:
        break;
    }
    si.seq = h.seq;
    si.first_rec = h.first_rec;
    si.count = h.count;
    const uint8_t *entries = expander_.Expand(img, h);
    if (!entries) {
      Report(off, "block " + std::to_string(h.seq) + " passes its CRC but its " +
                      CodecName(h.codec) + " payload does not decode to " + std::to_string(h.raw) +
                      " bytes");
      return;
    }
    uint64_t entry_off = 0;
    std::optional<BlockHeader> entry;
    if (l.index_size) entry = IndexEntryOf(l, slot, h, &entry_off);
    CheckEntries(off, entries, h, &si, entry ? &*entry : nullptr, entry_off);
    if (entry) CheckIndexEntry(*entry, entry_off, l, h);
  });
  if (!s.ok()) return s;

  // Sequence continuity over the blocks a reader would show.
  bool any = false;
  uint64_t newest = 0;
  for (const SlotInfo &si : slots) {
    if (si.state == BlockState::kValid && (!any || si.seq > newest)) newest = si.seq, any = true;
  }
  if (any) {
    const uint64_t count = l.block_count;
    uint64_t lowest = newest + 1 >= count ? newest + 1 - count : 0;
    const SlotInfo *prev = nullptr;
    bool reported_past_end = false;
    for (uint64_t b = lowest; b <= newest; b++) {
      const uint64_t slot = b % count;
      if (slot >= slots.size()) {
        // The rest of this lap is past the end of the file: report it once
        // and continue at the next lap's slot 0.
        if (!reported_past_end) {
          Report(l.SlotOffset(slot), "slots " + std::to_string(slot) + ".." +
                                         std::to_string(count - 1) +
                                         " are past the end of the file");
          reported_past_end = true;
        }
        b += count - slot - 1;
        prev = nullptr;
        continue;
      }
      const SlotInfo &si = slots[slot];
      uint64_t off = l.SlotOffset(b);
      if (si.state != BlockState::kValid || si.seq != b) {
        if (si.state == BlockState::kValid || si.state == BlockState::kEmpty) {
          Report(off, "block sequence discontinuity: block " + std::to_string(b) +
                          " missing (slot holds " +
                          (si.state == BlockState::kEmpty ? std::string("nothing")
                                                          : "block " + std::to_string(si.seq)) +
                          ")");
        }
        prev = nullptr;
        continue;
      }
      // (Records found again in a later block near the oldest: a crash came
      // during a fairness rewrite of the last tier; FORMAT.md, "Tiers".
      // Readers skip them.)
      const bool rescued = sparse && b <= lowest + LS_TIER_REWRITE_MAX;
      if (sparse && prev && prev->count && si.first_rec <= prev->last_rec && !rescued) {
        Report(off, "record sequence goes back: block " + std::to_string(b) + " of tier " +
                        std::to_string(l.tier) + " starts at record " +
                        std::to_string(si.first_rec) + ", after record " +
                        std::to_string(prev->last_rec));
      } else if (!sparse && prev && prev->first_rec + prev->count != si.first_rec) {
        Report(off, "record sequence discontinuity: block " + std::to_string(b) +
                        " starts at record " + std::to_string(si.first_rec) + ", expected " +
                        std::to_string(prev->first_rec + prev->count));
      }
      prev = &si;
    }
  }
  return Status::OK();
}

Status Verifier::CheckStrtab() {
  strtab_.assign(l_.strtab_size, 0);
  size_t got = 0;
  Status s = f_->PRead(l_.strtab_off, strtab_.data(), strtab_.size(), &got);
  if (!s.ok()) return s;
  // One scanner for readers, the writer and verify: entries after a damaged
  // stretch are still found, and the damage is reported.
  StScanner sc;
  sc.on_entry = [this](size_t, uint32_t id, const Site &site) {
    sites_[id] = site;
    last_id_ = std::max(last_id_, id);
  };
  sc.on_damage = [this](size_t off, size_t len) {
    Report(l_.strtab_off + off, "damaged string-table bytes (" + std::to_string(len) +
                                    "), skipped up to the next entry");
  };
  const size_t end = sc.Scan(strtab_.data(), strtab_.size(), 0);
  // The table ends at the zero tail; anything else after the last entry is damage.
  bool clean = std::all_of(strtab_.begin() + end, strtab_.end(), [](uint8_t b) { return b == 0; });
  if (!clean) {
    std::string why = "bad string-table entry";
    if (strtab_.size() - end >= LS_ST_HDR) {
      why += " (id ";
      why += std::to_string(ls_get_u32(strtab_.data() + end + LS_ST_OFF_ID));
      why += ": not after id ";
      why += std::to_string(last_id_);
      why += ", or CRC or lengths wrong)";
    }
    Report(l_.strtab_off + end, why);
  }
  return Status::OK();
}

void Verifier::CheckEntries(uint64_t off, const uint8_t *img, const BlockHeader &h, SlotInfo *si,
                            const BlockHeader *entry, uint64_t entry_off) {
  BlockCursor c;
  c.Reset(img, h);
  DecodedRecord d;
  BlockCursor::Result r;
  // What the summary must cover (FORMAT.md, "Block summaries").
  uint8_t levels = 0;
  uint64_t min_time = ~0ull, max_time = 0;
  bool fields_covered = true, entry_fields_covered = true;
  const bool entry_keys = entry && (entry->flags & LS_BLK_F_FIELD_KEYS);
  const uint64_t opened = h.opened ? l_.created_ns + uint64_t(h.opened - 1) * 1000000000ull : 0;
  while ((r = c.Next(&d)) == BlockCursor::kRecord) {
    uint64_t eoff = off + d.entry_off;
    si->last_rec = h.first_rec + d.seq_off;
    const uint64_t t = d.ts + kClockSlackNs >= opened ? d.ts : opened;
    min_time = std::min(min_time, t);
    max_time = std::max(max_time, t);
    if (d.kind == Record::Kind::kDropped) {
      levels |= 1u << 4;
    } else if (d.site_id == 0) {
      levels = uint8_t(levels | (1u << (d.inline_site.level & 7)));
    } else if (auto it = sites_.find(d.site_id); it != sites_.end()) {
      levels = uint8_t(levels | (1u << (it->second.level & 7)));
    }
    if (d.has_source && !d.source) {
      Report(eoff,
             "record from source " + std::to_string(d.source_id) + " not declared in the block");
    } else if (!d.has_source) {
      Report(eoff, "record without a source");
    }
    if (d.kind != Record::Kind::kRecord) continue;
    if (h.flags & LS_BLK_F_FIELD_KEYS)
      fields_covered = fields_covered && FieldsCovered(h.bloom.data(), d);
    // The entry may be of a later image of the block (a power loss kept the
    // entry, not the block): it must still cover these records' fields.
    if (entry_keys)
      entry_fields_covered = entry_fields_covered && FieldsCovered(entry->bloom.data(), d);
    if (d.site_id == 0) {
      CheckArgs(eoff, d.inline_site, d);
    } else if (auto it = sites_.find(d.site_id); it == sites_.end()) {
      Report(eoff, "record references unknown string id " + std::to_string(d.site_id) +
                       " (its entry is damaged or was lost)");
    } else {
      CheckArgs(eoff, it->second, d);
    }
  }
  const char *under = nullptr;
  if (levels & ~h.levels) under = "levels";
  if (c.records() && (min_time < h.min_time || max_time > h.max_time)) under = "time range";
  for (const SourceInfo &src : c.sources()) {
    const uint64_t keys[] = {
        BloomU32(LS_BLOOM_KEY_UID, src.uid), BloomU32(LS_BLOOM_KEY_PID, src.pid),
        BloomStr(LS_BLOOM_KEY_APP, src.app), BloomStr(LS_BLOOM_KEY_COMM, src.comm)};
    for (uint64_t k : keys) {
      if (!BloomMayHave(h.bloom.data(), k)) under = "source filter";
    }
    if (!src.unit.empty() && !BloomMayHave(h.bloom.data(), BloomStr(LS_BLOOM_KEY_UNIT, src.unit))) {
      under = "source filter";
    }
  }
  if (!fields_covered) under = "field keys";
  if (!entry_fields_covered) {
    Report(entry_off, "summary index entry of block " + std::to_string(h.seq) +
                          ": FIELD_KEYS, but its filter lacks a field of the block's records");
  }
  if (under) {
    Report(off, "block " + std::to_string(h.seq) + ": its summary's " + under +
                    " does not cover its records (a reader could skip a match)");
  }
  if (h.tier == 0 && c.gaps()) {
    Report(off, "block " + std::to_string(h.seq) + " of tier 0 numbers its records with gaps");
  }
  if (r == BlockCursor::kMalformed) {
    Report(off + c.pos(), "malformed entry in block " + std::to_string(h.seq));
  } else if (c.records() != h.count) {
    Report(off, "block " + std::to_string(h.seq) + " header counts " + std::to_string(h.count) +
                    " records, entries hold " + std::to_string(c.records()));
  }
}

// With FIELD_KEYS, every field of d must have its value key or its
// NAME-alone key in the filter, and no record may hold fields not keyed.
bool Verifier::FieldsCovered(const uint8_t *bloom, const DecodedRecord &d) {
  FieldPlan inline_plan;
  const FieldPlan *plan = &inline_plan;
  if (d.site_id == 0) {
    inline_plan = FieldPlan::Of(d.inline_site);
  } else if (auto it = plans_.find(d.site_id); it != plans_.end()) {
    plan = &it->second;
  } else if (auto st = sites_.find(d.site_id); st != sites_.end()) {
    plan = &plans_.emplace(d.site_id, FieldPlan::Of(st->second)).first->second;
  } else {
    return true;  // an unknown site: reported as such, no fields to show
  }
  if (plan->kind == FieldPlan::Kind::kUnkeyed) return false;
  bool ok = true;
  ForEachFieldKey(*plan, d.args, d.args_len, &field_tmp_,
                  [&](uint64_t any, uint64_t v, bool keyed) {
                    if (!BloomMayHave(bloom, any) && !(keyed && BloomMayHave(bloom, v))) ok = false;
                  });
  return ok;
}

void Verifier::CheckArgs(uint64_t off, const Site &site, const DecodedRecord &d) {
  char sig[LS_FMT_MAX_ARGS + 1];
  if (ls_fmt_signature(site.fmt.data(), site.fmt.size(), sig, sizeof sig) < 0) {
    Report(off, "record's format string is malformed");
  } else if (ls_args_check(sig, d.args, d.args_len) != 0) {
    Report(off, "record's arguments do not match its format");
  }
}

}  // namespace

Status VerifyRing(File *f, const std::string &path, Reporter *reporter,
                  const std::function<void(uint64_t, uint64_t)> &progress) {
  return Verifier(f, path, reporter, progress).Run();
}

}  // namespace logsink::storage::internal
