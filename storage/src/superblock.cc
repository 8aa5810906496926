// superblock.cc: the two superblock copies: encode, decode (magic, version,
// CRC, sane geometry) and pick the newer valid one.
#include "superblock.h"

#include <algorithm>
#include <cstring>

#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"

namespace logsink::storage::internal {

// A copy's CRC covers [16, LS_SB_SIZE): from the generation on, so magic and
// version are checked on their own (FORMAT.md, "Superblock").
constexpr size_t kSbCrcFrom = LS_SB_OFF_GENERATION;

void EncodeSuperblock(const Superblock &sb, uint8_t *p) {
  std::memset(p, 0, LS_SB_SIZE);
  std::memcpy(p + LS_SB_OFF_MAGIC, LS_SB_MAGIC, 8);
  ls_put_u32(p + LS_SB_OFF_VERSION, LS_FORMAT_VERSION);
  ls_put_u64(p + LS_SB_OFF_GENERATION, sb.generation);
  ls_put_u64(p + LS_SB_OFF_FILE_SIZE, sb.layout.file_size);
  ls_put_u32(p + LS_SB_OFF_BLOCK_SIZE, sb.layout.block_size);
  ls_put_u32(p + LS_SB_OFF_BLOCK_COUNT, sb.layout.block_count);
  ls_put_u64(p + LS_SB_OFF_STRTAB_OFF, sb.layout.strtab_off);
  ls_put_u64(p + LS_SB_OFF_STRTAB_SIZE, sb.layout.strtab_size);
  ls_put_u64(p + LS_SB_OFF_BLOCKS_OFF, sb.layout.blocks_off);
  ls_put_u64(p + LS_SB_OFF_CREATED_NS, sb.layout.created_ns);
  ls_put_u64(p + LS_SB_OFF_TAIL_HINT, sb.tail_hint);
  std::memcpy(p + LS_SB_OFF_RING_ID, sb.layout.ring_id.data(), LS_RING_ID_LEN);
  ls_put_u32(p + LS_SB_OFF_KEPT_BLOCKS, sb.layout.kept_blocks);
  ls_put_u32(p + LS_SB_OFF_ERROR_BLOCKS, sb.layout.error_blocks);
  ls_put_u32(p + LS_SB_OFF_DICT_SIZE, sb.layout.dict_size);
  ls_put_u64(p + LS_SB_OFF_INDEX_SIZE, sb.layout.index_size);
  ls_put_u32(p + LS_SB_OFF_CRC, Crc32c(p + kSbCrcFrom, LS_SB_SIZE - kSbCrcFrom));
}

SbCopy DecodeSuperblock(const uint8_t *p, Superblock *out, std::string *why) {
  if (std::memcmp(p + LS_SB_OFF_MAGIC, LS_SB_MAGIC, 8) != 0) {
    *why = "no superblock magic";
    return SbCopy::kNoMagic;
  }
  // The CRC first (every version so far keeps it at 12, over [16, 128)): a
  // copy that fails it says nothing, its version included.
  if (ls_get_u32(p + LS_SB_OFF_CRC) != Crc32c(p + kSbCrcFrom, LS_SB_SIZE - kSbCrcFrom)) {
    *why = "superblock CRC mismatch";
    return SbCopy::kBad;
  }
  uint32_t version = ls_get_u32(p + LS_SB_OFF_VERSION);
  if (version < LS_FORMAT_VERSION_MIN || version > LS_FORMAT_VERSION) {
    *why = "format version " + std::to_string(version);
    return SbCopy::kVersion;
  }
  Superblock sb;
  sb.version = version;
  sb.generation = ls_get_u64(p + LS_SB_OFF_GENERATION);
  sb.tail_hint = ls_get_u64(p + LS_SB_OFF_TAIL_HINT);
  Layout &l = sb.layout;
  l.file_size = ls_get_u64(p + LS_SB_OFF_FILE_SIZE);
  l.block_size = ls_get_u32(p + LS_SB_OFF_BLOCK_SIZE);
  l.block_count = ls_get_u32(p + LS_SB_OFF_BLOCK_COUNT);
  l.strtab_off = ls_get_u64(p + LS_SB_OFF_STRTAB_OFF);
  l.strtab_size = ls_get_u64(p + LS_SB_OFF_STRTAB_SIZE);
  l.blocks_off = ls_get_u64(p + LS_SB_OFF_BLOCKS_OFF);
  l.created_ns = ls_get_u64(p + LS_SB_OFF_CREATED_NS);
  std::memcpy(l.ring_id.data(), p + LS_SB_OFF_RING_ID, LS_RING_ID_LEN);
  l.kept_blocks = ls_get_u32(p + LS_SB_OFF_KEPT_BLOCKS);
  l.error_blocks = ls_get_u32(p + LS_SB_OFF_ERROR_BLOCKS);
  l.dict_size = ls_get_u32(p + LS_SB_OFF_DICT_SIZE);
  l.dict_off = l.strtab_off + l.strtab_size;
  l.index_size = ls_get_u64(p + LS_SB_OFF_INDEX_SIZE);
  l.index_off = l.dict_off + l.dict_size;
  // The geometry must be the one Compute gives for these parameters.
  Layout want;
  if (!Layout::Compute(l.file_size, l.block_size, l.strtab_size, &want).ok() ||
      want.block_count != l.block_count || want.strtab_off != l.strtab_off ||
      want.blocks_off != l.blocks_off || want.dict_size != l.dict_size ||
      want.index_size != l.index_size || l.kept_blocks == 1 || l.error_blocks == 1 ||
      uint64_t(l.kept_blocks) + l.error_blocks + 2 > l.block_count) {
    *why = "superblock geometry is inconsistent";
    return SbCopy::kBad;
  }
  *out = sb;
  return SbCopy::kValid;
}

Status ReadSuperblock(File *f, const std::string &path, Superblock *out, bool copy_ok[2],
                      std::string why[2]) {
  uint8_t buf[2][LS_SB_SIZE];
  Superblock sb[2];
  SbCopy st[2];
  std::string reason[2];
  for (int i = 0; i < 2; i++) {
    size_t got = 0;
    Status s = f->PRead(uint64_t(i) * LS_SB_SLOT, buf[i], LS_SB_SIZE, &got);
    if (!s.ok()) return s;
    if (got < LS_SB_SIZE) {
      st[i] = SbCopy::kNoMagic;
      reason[i] = "file too short for a superblock";
    } else {
      st[i] = DecodeSuperblock(buf[i], &sb[i], &reason[i]);
    }
    if (copy_ok) copy_ok[i] = st[i] == SbCopy::kValid;
    if (why) why[i] = reason[i];
  }
  if (st[0] == SbCopy::kNoMagic && st[1] == SbCopy::kNoMagic) {
    return Status::NotOurs(path + " is not a logsink ring file (no LSRING superblock)");
  }
  // The version field is outside the CRC: two copies that name different
  // versions are damage, not a version.
  if (st[0] == SbCopy::kVersion && st[1] == SbCopy::kVersion &&
      ls_get_u32(buf[0] + LS_SB_OFF_VERSION) != ls_get_u32(buf[1] + LS_SB_OFF_VERSION)) {
    return Status::Corruption(path + ": the superblock copies disagree on the format version (" +
                              reason[0] + "; " + reason[1] + ")");
  }
  if ((st[0] == SbCopy::kVersion && st[1] != SbCopy::kValid) ||
      (st[1] == SbCopy::kVersion && st[0] != SbCopy::kValid)) {
    const int i = st[0] == SbCopy::kVersion ? 0 : 1;
    return Status::OldVersion(
        path + " is a logsink ring of " + reason[i] + "; this build reads format versions " +
        std::to_string(LS_FORMAT_VERSION_MIN) + " to " + std::to_string(LS_FORMAT_VERSION) +
        (ls_get_u32(buf[i] + LS_SB_OFF_VERSION) < LS_FORMAT_VERSION_MIN
             ? " (logsinkd moves an older ring aside to " + path + ".v" +
                   std::to_string(ls_get_u32(buf[i] + LS_SB_OFF_VERSION)) +
                   " and starts a new one; read that with the logctl that wrote it)"
             : " (written by a newer logsink: use its logctl)"));
  }
  int best = -1;
  for (int i = 0; i < 2; i++) {
    if (st[i] != SbCopy::kValid) continue;
    if (best < 0 || sb[i].generation > sb[best].generation) best = i;
  }
  if (best < 0) {
    return Status::Corruption(path + ": no valid superblock copy (" + reason[0] + "; " + reason[1] +
                              ")");
  }
  *out = sb[best];
  return Status::OK();
}

Status CheckFileSize(File *f, const std::string &path, const Superblock &sb) {
  uint64_t size = 0;
  Status s = f->Size(&size);
  if (!s.ok()) return s;
  if (size == sb.layout.file_size) return Status::OK();
  return Status::Corruption(path + " is " + std::to_string(size) +
                            " bytes but its superblock says " +
                            std::to_string(sb.layout.file_size));
}

bool FileSizeProblem(File *f, const Superblock &sb, uint64_t *off, std::string *why) {
  uint64_t size = 0;
  const uint64_t want = sb.layout.file_size;
  if (!f->Size(&size).ok() || size == want) return false;
  *off = std::min(size, want);
  *why = size < want ? "the file ends here but its superblock says " + std::to_string(want) +
                           " bytes: what lay beyond is missing"
                     : "the file goes on " + std::to_string(size - want) +
                           " bytes past the size its superblock says (" + std::to_string(want) +
                           "); they are not read";
  return true;
}

Status WriteSuperblock(File *f, const Superblock &sb) {
  uint8_t buf[LS_SB_SIZE];
  EncodeSuperblock(sb, buf);
  return f->PWrite((sb.generation % 2) * LS_SB_SLOT, buf, LS_SB_SIZE);
}

}  // namespace logsink::storage::internal
