// ring_rescue.cc: fairness in the last tier (FORMAT.md, "Tiers"). Nothing
// moves on from the last tier, so overwriting its oldest block would take
// everyone's records in it with it: only the records of the class holding
// the most of the tier leave (or of the classes over their share, when
// several floods leave too little room); the others move on into the
// blocks after it, rewritten in place with their own sequence numbers,
// where those classes' records give way to make room.
#include <algorithm>
#include <cstring>

#include "ring_writer_impl.h"
#include "summary_index.h"

namespace logsink::storage {

namespace {

// A block read for the rewrite: its entries copied out (the records' and
// sources' views point into them) and decoded whole.
struct Loaded {
  BlockHeader h;
  std::vector<uint8_t> bytes;
  BlockCursor cursor;
  struct Rec {
    internal::DecodedRecord d;
    const internal::SourceInfo *si = nullptr;
    uint64_t seq = 0;
    uint32_t bytes = 0, cls = 0;  // its entry's bytes (with a SOURCE entry before it), class
    uint32_t decl = 0;            // the bytes of that SOURCE entry (0: none)
    uint8_t level = 0;
    bool keep = true;
    bool duplicate = false;  // found again in a later block: kept in its first place
  };
  std::vector<Rec> recs;
};

}  // namespace

RingWriter::Impl *RingWriter::Impl::RescueWriter() {
  if (rescue_) return rescue_.get();
  auto w = std::make_unique<Impl>();
  w->path_ = path_;
  w->env_ = env_;
  w->f_ = f_;
  w->stp_ = stp_;
  w->st_mup_ = st_mup_;
  w->keys_ = keys_;
  w->codec_ = codec_;
  w->level_ = level_;
  w->dictp_ = dictp_;
  if (!w->SetupCodec().ok()) return nullptr;
  w->boot_id_ = boot_id_;
  w->full_ = full_;
  w->layout_ = layout_;
  w->tier_ = tier_;
  w->sparse_ = true;
  w->tiered_ = false;  // it rewrites blocks in place: nothing leaves for it
  w->evicted_ = ~0ull;
  w->rewriting_ = true;
  w->AllocBuffers();
  w->account_ = true;  // each rewritten block's byte counts (block_use_)
  w->cur_.used = LS_BLK_HDR;
  rescue_ = std::move(w);
  return rescue_.get();
}

Status RingWriter::Impl::Rescue(uint64_t victim, const BlockHeader &h, const Use &use,
                                bool *done_out) {
  *done_out = false;
  // The classes of the tier ranked by the bytes they hold over its sealed
  // blocks (the victim's included), the smallest first (a tie: the higher
  // class number first); the last is the largest.
  std::unordered_map<uint32_t, uint64_t> bytes = class_bytes_;
  for (const auto &[key, n] : use) bytes[keys_->cls(key)] += n;
  std::vector<std::pair<uint64_t, uint32_t>> ranked;  // (bytes, class)
  for (const auto &[c, n] : bytes) ranked.emplace_back(n, c);
  std::sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  std::unordered_map<uint32_t, size_t> rank;
  for (size_t i = 0; i < ranked.size(); i++) rank[ranked[i].second] = i;
  const uint32_t largest = ranked.empty() ? 0 : ranked.back().second;
  bool any = false;
  for (const auto &[key, n] : use) any = any || keys_->cls(key) != largest;
  if (!any) return Status::OK();  // only the largest class loses records here
  Impl *w = RescueWriter();
  if (!w) return Status::OK();
  if (!evict_exp_) evict_exp_ = std::make_unique<internal::BlockExpander>();
  evict_exp_->SetDictionary(*dictp_);
  if (rescue_img_.size() != layout_.block_size) rescue_img_.assign(layout_.block_size, 0);

  // A block decoded whole (img: its slot image, valid). false: it does not
  // decode, or a record has no source (damage).
  auto load = [&](const uint8_t *img, const BlockHeader &bh, Loaded *b) {
    const uint8_t *e = evict_exp_->Expand(img, bh);
    if (!e) return false;
    b->h = bh;
    b->bytes.assign(e, e + LS_BLK_HDR + bh.raw);
    b->cursor.Reset(b->bytes.data(), bh);
    internal::DecodedRecord d;
    BlockCursor::Result r;
    uint32_t prev = b->cursor.pos();
    while ((r = b->cursor.Next(&d)) == BlockCursor::kRecord) {
      Loaded::Rec x;
      x.d = d;
      x.seq = bh.first_rec + d.seq_off;
      x.bytes = b->cursor.pos() - prev;
      x.decl = d.entry_off - prev;
      prev = b->cursor.pos();
      x.level = d.kind == Record::Kind::kRecord
                    ? (d.site_id ? SiteLevel(d.site_id) : d.inline_site.level)
                    : kDroppedLevel;
      b->recs.push_back(x);
    }
    if (r != BlockCursor::kEnd) return false;
    for (Loaded::Rec &x : b->recs) {  // the cursor is done: its sources stay put
      x.si = x.d.has_source ? b->cursor.FindSource(x.d.source_id) : nullptr;
      if (!x.si) return false;
      x.cls = keys_->cls(keys_->Of(x.si->uid, x.si->app));
    }
    return true;
  };
  // Block seq of this tier from its slot into *b, when it is a sealed
  // block Rescue may rewrite; else *b holds no record (the rescue stops there).
  auto read = [&](uint64_t seq, Loaded *b) -> Status {
    const uint64_t slot = seq % layout_.block_count;
    size_t got = 0;
    Status s = f_->PRead(layout_.blocks_off + slot * layout_.block_size, rescue_img_.data(),
                         layout_.block_size, &got);
    if (!s.ok()) return s;
    BlockHeader bh;
    if (got < layout_.block_size ||
        internal::CheckBlock(rescue_img_.data(), layout_, slot, &bh) != BlockState::kValid ||
        bh.seq != seq || !bh.sealed() || bh.count == 0 || !load(rescue_img_.data(), bh, b)) {
      b->recs.clear();
      b->h = BlockHeader();
    }
    return Status::OK();
  };

  std::vector<std::unique_ptr<Loaded>> blocks;
  blocks.push_back(std::make_unique<Loaded>());
  if (!load(evict_img_.data(), h, blocks[0].get())) return Status::OK();  // evicted as it is
  // The blocks the victim's records may move into: up to kMaxRewrites
  // after it, never the current one (a damaged one is read as empty: room),
  // each read when first needed. ensure(i): blocks[i] is there (false: past
  // the last one, or a read failed: *io).
  constexpr size_t kMaxRewrites = LS_TIER_REWRITE_MAX;
  Status io;
  auto ensure = [&](size_t i) {
    while (blocks.size() <= i) {
      const uint64_t seq = victim + blocks.size();
      if (!io.ok() || seq >= cur_.seq || blocks.size() > kMaxRewrites) return false;
      blocks.push_back(std::make_unique<Loaded>());
      io = read(seq, blocks.back().get());
      if (!io.ok()) {
        blocks.pop_back();
        return false;
      }
    }
    return true;
  };
  auto room_of = [&](const Loaded &b) -> uint64_t { return b.recs.empty() ? w->cap_ : b.h.raw; };
  // Entries are written again, not copied: the first one after the
  // records carried in may gain fields (a source, a gap, a longer time
  // delta), the one after a record left out a gap, and the next record
  // of its source the SOURCE entry it declared. Counted so, a block's
  // new content nearly always fits where the old one did (a block
  // compressed or stored as it is had little room to spare), instead of
  // being split with its last records carried into one more rewrite.
  constexpr size_t kJoin = 24, kLeftOut = 4;

  // Which classes move on, and which give way in the blocks after the
  // victim. First choice: every class but the largest moves on, and the
  // largest gives way. When that does not fit (several floods of about
  // one size share the tier), the classes under their share (holding less
  // than the tier's bytes over the number of classes) move on and those
  // over it give way, the largest first. Whether a choice fits is found by
  // adding up entry bytes, no block built.
  uint64_t total = 0;
  for (const auto &[c, n] : bytes) total += n;
  const uint64_t k = bytes.size();
  bool all_but_largest = true;
  auto moves = [&](uint32_t c) { return all_but_largest ? c != largest : bytes[c] * k < total; };
  auto gives_way = [&](uint32_t c) {
    return all_but_largest ? c == largest : bytes[c] * k > total;
  };
  auto fits = [&]() {
    uint64_t carry = 0;
    for (const Loaded::Rec &x : blocks[0]->recs)
      if (moves(x.cls)) carry += x.bytes;
    if (!carry) return false;  // nothing would move
    for (size_t i = 1; ensure(i); i++) {
      const Loaded &b = *blocks[i];
      uint64_t need = carry + kJoin, droppable = 0;
      for (const Loaded::Rec &x : b.recs) {
        need += x.bytes;
        if (gives_way(x.cls)) droppable += x.bytes - std::min<uint64_t>(x.bytes, kLeftOut + x.decl);
      }
      const uint64_t room = room_of(b);
      need -= std::min(droppable, need > room ? need - room : 0);
      if (need <= room) return true;
      carry = need - room;
    }
    return false;
  };
  // The first choice that fits, and is built (a count that fitted may
  // still not pack), is written.
  Status s;
  bool done = false;
  for (int choice = 0; choice < 2 && !done; choice++) {
    all_but_largest = choice == 0;
    if (!fits()) continue;
    for (size_t i = 0; i < blocks.size(); i++) {
      for (Loaded::Rec &x : blocks[i]->recs) {
        x.keep = i > 0 || moves(x.cls);
        x.duplicate = false;
      }
    }

    // The victim's records move on into the blocks after it, each rewritten
    // with its number: a block's records of the classes that give way go
    // (the largest class first; least severe, then oldest) to make room;
    // what still does not fit moves on into the next block, and so on. The
    // new blocks are kept in memory (w captures them) and written only once
    // the records all found a place; else nothing is written and the victim
    // leaves as it is.
    w->captured_.clear();
    w->rewritten_.clear();
    w->StartBlock(victim + 1, 0);
    w->last_opened_ = 0;  // a block's clocks are its first record's block's
    uint64_t last = 0;    // the number of the last record appended (0: none yet)
    bool any_appended = false;
    auto append = [&](Loaded &b) -> Status {
      for (Loaded::Rec &x : b.recs) {
        if (!x.keep) continue;
        // A record found again (a crash came during an earlier rewrite,
        // FORMAT.md "Tiers"): it is there once, in its first place.
        if (any_appended && x.seq <= last) {
          x.keep = false;
          x.duplicate = true;
          continue;
        }
        // A block holds one boot's records (FORMAT.md, "Boots").
        if (w->cur_.count > 0 && w->cur_.boot_id != b.h.boot_id) {
          Status st = w->Seal();
          if (!st.ok()) return st;
        }
        w->rseq_ = x.seq;
        w->origin_ = &b.h;
        Status st = w->AppendAgain(x.d, *x.si);
        w->origin_ = nullptr;
        if (!st.ok()) return st;
        last = x.seq;
        any_appended = true;
      }
      return Status::OK();
    };
    s = append(*blocks[0]);
    for (size_t i = 1; s.ok() && !done && ensure(i); i++) {
      Loaded &b = *blocks[i];
      const uint64_t seq = victim + i;
      if (w->cur_.seq > seq) break;
      // Room: what the block held, in entry bytes; the records that give
      // way go until what comes into it fits that.
      std::vector<Loaded::Rec *> order;
      for (Loaded::Rec &x : b.recs)
        if (gives_way(x.cls)) order.push_back(&x);
      std::stable_sort(order.begin(), order.end(), [&](const Loaded::Rec *a, const Loaded::Rec *c) {
        if (a->cls != c->cls) return rank[a->cls] > rank[c->cls];  // the largest class first
        return a->level != c->level ? a->level > c->level : a->seq < c->seq;
      });
      const uint64_t room = room_of(b);
      size_t need = w->cur_.used - LS_BLK_HDR + (w->cur_.count ? kJoin : 0);
      for (const Loaded::Rec &x : b.recs) need += x.bytes;
      for (Loaded::Rec *x : order) {
        if (need <= room) break;
        x->keep = false;
        need = need - x->bytes + kLeftOut + x->decl;
      }
      s = append(b);
      if (!s.ok()) break;
      if (w->cur_.seq == seq && w->MightPack() && w->Pack()) {
        s = w->WriteCurrent(LS_BLK_F_SEALED);  // captured, as every block before it
        // Its ratio, as Seal keeps it: where the next rescue's first check comes.
        if (w->pk_stored_) w->ratio_ = double(w->cur_.used - LS_BLK_HDR) / double(w->pk_stored_);
        w->rewritten_.emplace_back(seq % layout_.block_count, std::move(w->block_use_));
        done = s.ok();
      } else if (w->cur_.seq == seq) {
        s = w->Split();  // the part that fits is this block; the rest moves on
      }
    }
    if (!s.ok()) return s;
    if (!done) {
      w->captured_.clear();
      w->rewritten_.clear();
    }
  }
  if (!io.ok()) return io;
  if (!done) return Status::OK();  // no room within reach: evicted as it is
  // Written newest first, each block before its index entry: a block takes
  // records only from blocks at or before its own, so whenever a crash
  // comes, every record is in a block not yet rewritten or in one written
  // (some in both: readers skip a number they passed).
  for (auto it = w->captured_.rbegin(); it != w->captured_.rend(); ++it) {
    const auto &[seq, img] = *it;
    s = f_->PWrite(layout_.SlotOffset(seq), img.data(), layout_.block_size);
    if (s.ok()) s = internal::WriteIndexEntry(f_, layout_, img.data());
    if (!s.ok()) return s;
    stats_.rewrites++;
    // Sealed blocks as any: with the rescue writer's compressions (AddStats)
    // they make compressed_bytes / sealed_raw_bytes count its work too.
    const BlockHeader bh = internal::ParseBlockHeader(img.data());
    stats_.sealed_raw_bytes += bh.raw;
    stats_.sealed_stored_bytes += bh.used - LS_BLK_HDR;
  }
  w->captured_.clear();
  // The counts follow the records: the rewritten slots' are the new blocks'.
  for (auto &[slot, u] : w->rewritten_) AddUse(slot, std::move(u));
  w->rewritten_.clear();
  w->ResetUse();
  for (size_t i = 0; i < blocks.size(); i++) {
    for (const Loaded::Rec &x : blocks[i]->recs) {
      if (i == 0 && x.keep) {
        stats_.rescued++;
      } else if (!x.keep && !x.duplicate) {
        stats_.evicted[LevelClass(x.level)]++;
        if (i > 0) stats_.evicted_for_rescue++;
      }
    }
  }
  *done_out = true;
  return Status::OK();
}

}  // namespace logsink::storage
