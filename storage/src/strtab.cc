// strtab.cc: string-table entries (CRC-protected, ids 1, 2, 3...), loading and
// deduplicating append.
#include "strtab.h"

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
  ls_put_u16(out + LS_ST_OFF_FMT_LEN, static_cast<uint16_t>(site.fmt.size()));
  ls_put_u16(out + LS_ST_OFF_FILE_LEN, static_cast<uint16_t>(site.file.size()));
  std::memcpy(out + LS_ST_HDR, site.fmt.data(), site.fmt.size());
  std::memcpy(out + LS_ST_HDR + site.fmt.size(), site.file.data(), site.file.size());
  size_t n = StrtabEntrySize(site);
  ls_put_u32(out + LS_ST_OFF_CRC, Crc32c(out + kStCrcFrom, n - kStCrcFrom));
}

StParse ParseStrtabEntry(const uint8_t *p, size_t avail, uint32_t expected_id, Site *site,
                         size_t *size) {
  if (avail < LS_ST_HDR) {
    *size = LS_ST_HDR;
    return StParse::kNeedMore;
  }
  if (ls_get_u32(p + LS_ST_OFF_ID) != expected_id) return StParse::kEnd;
  size_t fmt_len = ls_get_u16(p + LS_ST_OFF_FMT_LEN), file_len = ls_get_u16(p + LS_ST_OFF_FILE_LEN);
  if (fmt_len > LS_ST_MAX_FMT || file_len > LS_ST_MAX_FILE || p[LS_ST_OFF_LEVEL] > 7) {
    return StParse::kEnd;
  }
  size_t n = LS_ST_HDR + fmt_len + file_len;
  if (avail < n) {
    *size = n;
    return StParse::kNeedMore;
  }
  if (ls_get_u32(p + LS_ST_OFF_CRC) != Crc32c(p + kStCrcFrom, n - kStCrcFrom)) return StParse::kEnd;
  site->level = p[LS_ST_OFF_LEVEL];
  site->line = ls_get_u32(p + LS_ST_OFF_LINE);
  site->fmt = std::string_view(reinterpret_cast<const char *>(p + LS_ST_HDR), fmt_len);
  site->file = std::string_view(reinterpret_cast<const char *>(p + LS_ST_HDR + fmt_len), file_len);
  *size = n;
  return StParse::kOk;
}

void StringTable::Init(uint64_t region_off, uint64_t region_size) {
  off_ = region_off;
  cap_ = region_size;
  end_ = 0;
  entries_.clear();
  index_.clear();
}

std::string StringTable::Key(const Site &s) {
  std::string k;
  k.reserve(16 + s.fmt.size() + s.file.size());
  k.append(std::to_string(s.level)).push_back(':');
  k.append(std::to_string(s.line)).push_back(':');
  k.append(std::to_string(s.fmt.size())).push_back(':');
  k.append(s.fmt).append(s.file);
  return k;
}

void StringTable::Add(const Site &s) {
  entries_.push_back(Entry{s.level, s.line, std::string(s.fmt), std::string(s.file)});
  index_.emplace(Key(s), size());
}

Status StringTable::Load(File *f) {
  constexpr size_t kChunk = 64 * 1024;  // > the largest entry, so a re-read always fits one
  std::vector<uint8_t> buf;
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
      size_t n = 0;
      StParse r = ParseStrtabEntry(buf.data() + pos, got - pos, size() + 1, &site, &n);
      if (r == StParse::kOk) {
        Add(site);
        pos += n;
        end_ += n;
        continue;
      }
      // Short of the entry: read on from it unless the region (or file) ends here.
      more = r == StParse::kNeedMore && got == want && end_ + n <= cap_ && pos > 0;
      break;
    }
    if (!more) break;
  }
  return Status::OK();
}

bool StringTable::Get(uint32_t id, Site *out) const {
  if (id == 0 || id > entries_.size()) return false;
  const Entry &e = entries_[id - 1];
  out->level = e.level;
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
  if (site.fmt.size() > LS_ST_MAX_FMT || site.file.size() > LS_ST_MAX_FILE || site.level > 7) {
    return Status::OK();
  }
  size_t n = StrtabEntrySize(site);
  if (end_ + n > cap_) return Status::OK();
  std::vector<uint8_t> buf(n);
  EncodeStrtabEntry(size() + 1, site, buf.data());
  Status s = f->PWrite(off_ + end_, buf.data(), n);
  if (!s.ok()) return s;
  Add(site);
  end_ += n;
  *id = size();
  return Status::OK();
}

}  // namespace logsink::storage::internal
