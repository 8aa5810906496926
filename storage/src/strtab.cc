// strtab.cc: string-table entries (CRC-protected, ids 1, 2, 3...), loading and
// deduplicating append.
#include "strtab.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"

namespace logsink::storage::internal {

// An entry's CRC covers everything after itself, from the id on.
constexpr size_t kStCrcFrom = LS_ST_OFF_ID;

void EncodeStrtabEntry(uint32_t id, const Site &site, uint8_t *out) {
  std::memset(out, 0, LS_ST_HDR);
  ls_put_u32(out + LS_ST_OFF_ID, id);
  ls_put_u32(out + LS_ST_OFF_LINE, site.line);
  out[LS_ST_OFF_LEVEL] = site.level;
  out[LS_ST_OFF_FLAGS] = site.flags;
  ls_put_u16(out + LS_ST_OFF_FMT_LEN, static_cast<uint16_t>(site.fmt.size()));
  ls_put_u16(out + LS_ST_OFF_FILE_LEN, static_cast<uint16_t>(site.file.size()));
  std::memcpy(out + LS_ST_HDR, site.fmt.data(), site.fmt.size());
  std::memcpy(out + LS_ST_HDR + site.fmt.size(), site.file.data(), site.file.size());
  size_t n = StrtabEntrySize(site);
  ls_put_u32(out + LS_ST_OFF_CRC, Crc32c(out + kStCrcFrom, n - kStCrcFrom));
}

StParse ParseStrtabEntry(const uint8_t *p, size_t avail, uint32_t last_id, uint32_t *id, Site *site,
                         size_t *size) {
  if (avail < LS_ST_HDR) {
    *size = LS_ST_HDR;
    return StParse::kNeedMore;
  }
  const uint32_t got_id = ls_get_u32(p + LS_ST_OFF_ID);
  if (got_id <= last_id) return StParse::kEnd;
  size_t fmt_len = ls_get_u16(p + LS_ST_OFF_FMT_LEN), file_len = ls_get_u16(p + LS_ST_OFF_FILE_LEN);
  if (fmt_len > LS_ST_MAX_FMT || file_len > LS_ST_MAX_FILE || p[LS_ST_OFF_LEVEL] > 7 ||
      (p[LS_ST_OFF_FLAGS] & ~LS_ST_F_FIELDS) != 0) {
    return StParse::kEnd;
  }
  size_t n = LS_ST_HDR + fmt_len + file_len;
  if (avail < n) {
    *size = n;
    return StParse::kNeedMore;
  }
  if (ls_get_u32(p + LS_ST_OFF_CRC) != Crc32c(p + kStCrcFrom, n - kStCrcFrom)) return StParse::kEnd;
  *id = got_id;
  site->level = p[LS_ST_OFF_LEVEL];
  site->flags = p[LS_ST_OFF_FLAGS];
  site->line = ls_get_u32(p + LS_ST_OFF_LINE);
  site->fmt = std::string_view(reinterpret_cast<const char *>(p + LS_ST_HDR), fmt_len);
  site->file = std::string_view(reinterpret_cast<const char *>(p + LS_ST_HDR + fmt_len), file_len);
  *size = n;
  return StParse::kOk;
}

size_t StScanner::Scan(const uint8_t *p, size_t n, uint32_t last_id) const {
  size_t last_nz = n;  // one past the last non-zero byte
  while (last_nz > 0 && p[last_nz - 1] == 0) last_nz--;
  size_t pos = 0, end = 0;
  while (pos < last_nz) {
    uint32_t id = 0;
    Site site;
    size_t sz = 0;
    if (ParseStrtabEntry(p + pos, n - pos, last_id, &id, &site, &sz) == StParse::kOk) {
      if (on_entry) on_entry(pos, id, site);
      last_id = id;
      pos += sz;
      end = pos;
      continue;
    }
    // Neither an entry nor the zero tail: damage. The next valid entry with
    // a larger id, if any, continues the table (one pass: the scan only
    // moves forward).
    size_t q = pos + 1;
    for (; q < last_nz; q++) {
      if (ParseStrtabEntry(p + q, n - q, last_id, &id, &site, &sz) == StParse::kOk) break;
    }
    if (q >= last_nz) break;  // a damaged tail: the table ends at `end`
    if (on_damage) on_damage(pos, q - pos);
    pos = q;
  }
  return end;
}

void StringTable::Init(uint64_t region_off, uint64_t region_size) {
  off_ = region_off;
  cap_ = region_size;
  end_ = 0;
  last_id_ = count_ = 0;
  damaged_ = 0;
  damage_.clear();
  tail_damaged_ = false;
  tail_crc_ = 0;
  entries_.clear();
  sparse_.clear();
  index_.clear();
}

std::string StringTable::Key(const Site &s) {
  std::string k;
  k.reserve(16 + s.fmt.size() + s.file.size());
  k.append(std::to_string(s.level)).push_back(':');
  k.append(std::to_string(s.flags)).push_back(':');
  k.append(std::to_string(s.line)).push_back(':');
  k.append(std::to_string(s.fmt.size())).push_back(':');
  k.append(s.fmt).append(s.file);
  return k;
}

void StringTable::Add(uint32_t id, const Site &s) {
  Entry e{true, s.level, s.flags, s.line, std::string(s.fmt), std::string(s.file)};
  if (id <= 2ull * (count_ + 1) + kDenseSlack) {
    if (entries_.size() < id) entries_.resize(id);
    entries_[id - 1] = std::move(e);
  } else {
    sparse_[id] = std::move(e);
  }
  index_.emplace(Key(s), id);
  last_id_ = std::max(last_id_, id);
  count_++;
}

// The bytes a damaged tail is recognised by: enough to cover any entry that
// a writer appends over it.
constexpr size_t kTailProbe = LS_ST_HDR + LS_ST_MAX_FMT + LS_ST_MAX_FILE;

Status StringTable::LoadWhole(File *f) {
  std::vector<uint8_t> buf(static_cast<size_t>(cap_ - end_));
  size_t got = 0;
  Status s = f->PRead(off_ + end_, buf.data(), buf.size(), &got);
  if (!s.ok()) return s;
  buf.resize(got);
  StScanner sc;
  sc.on_entry = [this](size_t, uint32_t id, const Site &site) { Add(id, site); };
  sc.on_damage = [this, from = off_ + end_](size_t pos, size_t len) {
    damaged_ += len;
    damage_.emplace_back(from + pos, len);
  };
  const size_t end = sc.Scan(buf.data(), buf.size(), last_id_);
  end_ += end;
  tail_damaged_ = std::any_of(buf.begin() + end, buf.end(), [](uint8_t b) { return b != 0; });
  if (tail_damaged_) {
    tail_crc_ = Crc32c(buf.data() + end, std::min(kTailProbe, buf.size() - end));
  }
  return Status::OK();
}

// Whether the table ends at end_ (buf[pos] is at end_): a whole entry's worth
// of zero bytes follows (or the region ends), so it is not a zeroed entry
// with more after it. Reads the probe when buf holds too little of it.
bool StringTable::ZeroTail(File *f, const std::vector<uint8_t> &buf, size_t pos, size_t got,
                           Status *s) const {
  const size_t tail = static_cast<size_t>(std::min<uint64_t>(kTailProbe, cap_ - end_));
  auto zero = [](const uint8_t *p, size_t n) {
    return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
  };
  if (got - pos >= tail) return zero(buf.data() + pos, tail);
  std::vector<uint8_t> probe(tail);
  size_t n = 0;
  *s = f->PRead(off_ + end_, probe.data(), tail, &n);
  return s->ok() && zero(probe.data(), n);  // bytes past the file's end read as zero
}

Status StringTable::Load(File *f) {
  std::vector<uint8_t> buf;
  if (tail_damaged_) {
    // Scan again only when the bytes there changed (a writer appended).
    buf.resize(static_cast<size_t>(std::min<uint64_t>(kTailProbe, cap_ - end_)));
    size_t got = 0;
    Status s = f->PRead(off_ + end_, buf.data(), buf.size(), &got);
    if (!s.ok()) return s;
    if (Crc32c(buf.data(), got) == tail_crc_) return Status::OK();
    return LoadWhole(f);
  }
  // Entries (all at first, then those a writer appended since), chunk by
  // chunk: opening a reader costs the table's entries, not its region.
  constexpr size_t kChunk = 64 * 1024;  // > the largest entry, so a re-read always fits one
  while (end_ < cap_) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, cap_ - end_));
    buf.resize(want);
    size_t got = 0;
    Status s = f->PRead(off_ + end_, buf.data(), want, &got);
    if (!s.ok()) return s;
    size_t pos = 0;
    bool more = false;
    for (;;) {
      Site site;
      uint32_t id = 0;
      size_t n = 0;
      StParse r = ParseStrtabEntry(buf.data() + pos, got - pos, last_id_, &id, &site, &n);
      if (r == StParse::kOk) {
        Add(id, site);
        pos += n;
        end_ += n;
        continue;
      }
      // Short of the entry: read on from it unless the region (or file) ends here.
      more = r == StParse::kNeedMore && got == want && end_ + n <= cap_ && pos > 0;
      if (!more && !ZeroTail(f, buf, pos, got, &s)) {
        // Not the zero tail: a write in progress, damage, or a zeroed entry
        // with more entries after it. Scan the rest of the region.
        return s.ok() ? LoadWhole(f) : s;
      }
      break;
    }
    if (!more) break;
  }
  return Status::OK();
}

Status StringTable::ClearDamagedTail(File *f) {
  if (!tail_damaged_) return Status::OK();
  std::vector<uint8_t> buf(static_cast<size_t>(cap_ - end_));
  size_t got = 0;
  Status s = f->PRead(off_ + end_, buf.data(), buf.size(), &got);
  if (!s.ok()) return s;
  while (got > 0 && buf[got - 1] == 0) got--;
  std::fill(buf.begin(), buf.begin() + got, 0);
  if (got) s = f->PWrite(off_ + end_, buf.data(), got);
  if (s.ok()) tail_damaged_ = false;
  return s;
}

bool StringTable::Get(uint32_t id, Site *out) const {
  const Entry *ep = nullptr;
  if (id == 0) return false;
  if (id <= entries_.size() && entries_[id - 1].present) {
    ep = &entries_[id - 1];
  } else if (auto it = sparse_.find(id); it != sparse_.end()) {
    ep = &it->second;  // also when the dense part grew past it later
  }
  if (!ep || !ep->present) return false;
  const Entry &e = *ep;
  out->level = e.level;
  out->flags = e.flags;
  out->line = e.line;
  out->fmt = e.fmt;
  out->file = e.file;
  return true;
}

uint32_t StringTable::Find(const Site &site) const {
  auto it = index_.find(Key(site));
  return it == index_.end() ? 0 : it->second;
}

Status StringTable::Append(File *f, const Site &site, uint32_t *id) {
  *id = 0;
  if (site.fmt.size() > LS_ST_MAX_FMT || site.file.size() > LS_ST_MAX_FILE || site.level > 7 ||
      (site.flags & ~LS_ST_F_FIELDS) != 0) {
    return Status::OK();
  }
  size_t n = StrtabEntrySize(site);
  if (end_ + n > cap_ || last_id_ == UINT32_MAX) return Status::OK();
  std::vector<uint8_t> buf(n);
  const uint32_t new_id = last_id_ + 1;
  EncodeStrtabEntry(new_id, site, buf.data());
  Status s = f->PWrite(off_ + end_, buf.data(), n);
  if (!s.ok()) return s;
  Add(new_id, site);
  end_ += n;
  *id = new_id;
  return Status::OK();
}

}  // namespace logsink::storage::internal
