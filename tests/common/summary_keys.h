// summary_keys.h: a block summary's filter keys as proto/FORMAT.md ("Block
// summaries") spells them, computed from the document alone (not with
// storage's code), so that tests hold the writer to the text: FNV-1a 64
// over the type byte and the value; bits (lo + i * hi) mod 512, hi odd.
#pragma once

#include <cstdint>
#include <string_view>

namespace logsink::test {

inline uint64_t SummaryKey(char type, std::string_view value) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = (h ^ uint8_t(type)) * 0x100000001b3ull;
  for (char c : value) h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  return h;
}

// Whether the 512-bit filter has all three bits of key.
inline bool FilterHas(const uint8_t *filter, uint64_t key) {
  const uint32_t lo = uint32_t(key), hi = uint32_t(key >> 32) | 1u;
  for (uint32_t i = 0; i < 3; i++) {
    const uint32_t bit = (lo + i * hi) % 512;
    if (!(filter[bit / 8] >> (bit % 8) & 1)) return false;
  }
  return true;
}

}  // namespace logsink::test
