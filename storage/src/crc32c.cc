// crc32c.cc: CRC32C (Castagnoli) with the SSE4.2 crc32 instruction when the CPU
// has it (chosen once at run time) and a table-driven fallback otherwise.
#include <cstring>

#include "logsink/storage/ring.h"

namespace logsink::storage {
namespace {

// Reflected polynomial 0x1EDC6F41 -> 0x82F63B78.
constexpr uint32_t kPoly = 0x82f63b78u;

struct Table {
  uint32_t t[8][256];
  constexpr Table() : t() {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
      for (int s = 1; s < 8; s++) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    }
  }
};
constexpr Table kTable;

// Slicing-by-8 over the raw (non-inverted) CRC state.
uint32_t CrcTable(uint32_t c, const uint8_t *p, size_t n) {
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    w ^= c;
    c = kTable.t[7][w & 0xff] ^ kTable.t[6][(w >> 8) & 0xff] ^ kTable.t[5][(w >> 16) & 0xff] ^
        kTable.t[4][(w >> 24) & 0xff] ^ kTable.t[3][(w >> 32) & 0xff] ^
        kTable.t[2][(w >> 40) & 0xff] ^ kTable.t[1][(w >> 48) & 0xff] ^ kTable.t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ kTable.t[0][(c ^ *p++) & 0xff];
  return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t CrcSse42(uint32_t c, const uint8_t *p, size_t n) {
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c64 = __builtin_ia32_crc32di(c64, w);
    p += 8;
    n -= 8;
  }
  c = static_cast<uint32_t>(c64);
  while (n--) c = __builtin_ia32_crc32qi(c, *p++);
  return c;
}
#endif

using CrcFn = uint32_t (*)(uint32_t, const uint8_t *, size_t);

CrcFn Choose() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) return CrcSse42;
#endif
  return CrcTable;
}

const CrcFn kCrc = Choose();

}  // namespace

uint32_t Crc32c(const void *data, size_t n, uint32_t crc) {
  return ~kCrc(~crc, static_cast<const uint8_t *>(data), n);
}

namespace internal {
// For tests: the portable path, whatever the CPU.
uint32_t Crc32cPortable(const void *data, size_t n, uint32_t crc) {
  return ~CrcTable(~crc, static_cast<const uint8_t *>(data), n);
}
}  // namespace internal

}  // namespace logsink::storage
