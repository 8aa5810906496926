// superblock.h: encoding, decoding and the A/B update of the two superblock
// copies (proto/FORMAT.md, "Superblock"). Internal to the storage library.
#pragma once

#include <cstdint>
#include <string>

#include "logsink/proto/format.h"
#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::internal {

struct Superblock {
  // The copy's format version, LS_FORMAT_VERSION_MIN .. LS_FORMAT_VERSION
  // (a writer writes LS_FORMAT_VERSION only: it upgrades an older file in
  // place as it opens it, FORMAT.md "Versions").
  uint32_t version = LS_FORMAT_VERSION;
  Layout layout;
  uint64_t generation = 0;
  uint64_t tail_hint = 0;
};

// Fills the first LS_SB_SIZE bytes of out (CRC included).
void EncodeSuperblock(const Superblock &sb, uint8_t *out);

enum class SbCopy { kValid, kNoMagic, kBad, kVersion };
// Decodes one copy (LS_SB_SIZE bytes). kBad sets *why.
SbCopy DecodeSuperblock(const uint8_t *p, Superblock *out, std::string *why);

// Reads both copies and picks the valid one with the higher generation.
// NotOurs when neither copy has the magic, Corruption when none is valid.
// copy_ok[i] tells which copies were valid; why[i] the reason when not.
Status ReadSuperblock(File *f, const std::string &path, Superblock *out, bool copy_ok[2] = nullptr,
                      std::string why[2] = nullptr);

// Writes sb into the copy its generation names (generation % 2).
Status WriteSuperblock(File *f, const Superblock &sb);

// OK when f is exactly the file size sb names, else Corruption naming both
// sizes (FORMAT.md, "Superblock"). The writer's open refuses such a file.
Status CheckFileSize(File *f, const std::string &path, const Superblock &sb);

// A reader's view of the same check: false when f has the size sb names;
// else true with the offset where the two part (the smaller size) and the
// problem in words, for Reporter::Corruption. The reader reads on: what a
// file cut short still holds is read up to its end, and the bytes past the
// size of a grown file are not read.
bool FileSizeProblem(File *f, const Superblock &sb, uint64_t *off, std::string *why);

}  // namespace logsink::storage::internal
