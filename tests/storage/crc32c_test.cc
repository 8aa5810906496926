// crc32c_test.cc: CRC32C known vectors (RFC 3720 / iSCSI), extension, and the
// SSE4.2 path against the portable table path.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/seed.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::internal {
uint32_t Crc32cPortable(const void *data, size_t n, uint32_t crc);
}

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xff), inc(32), dec(32);
  for (int i = 0; i < 32; i++) inc[i] = uint8_t(i), dec[i] = uint8_t(31 - i);
  // RFC 3720, B.4.
  EXPECT_EQ(Crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(inc.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(dec.data(), 32), 0x113FDB5Cu);
}

TEST(Crc32c, ExtendEqualsWhole) {
  const std::string s = "hello, ring file: extend me in pieces";
  for (size_t cut = 0; cut <= s.size(); cut++) {
    uint32_t a = Crc32c(s.data(), cut);
    EXPECT_EQ(Crc32c(s.data() + cut, s.size() - cut, a), Crc32c(s.data(), s.size())) << cut;
  }
}

TEST(Crc32c, DispatchedMatchesPortable) {
  std::mt19937 rng(TestSeed(7));
  std::vector<uint8_t> buf(10000);
  for (auto &b : buf) b = uint8_t(rng());
  for (size_t off = 0; off < 9; off++) {
    for (size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 4096u, 9000u}) {
      EXPECT_EQ(Crc32c(buf.data() + off, n), internal::Crc32cPortable(buf.data() + off, n, 0))
          << off << " " << n;
    }
  }
  EXPECT_EQ(internal::Crc32cPortable("123456789", 9, 0), 0xE3069283u);
}

}  // namespace
}  // namespace logsink::test
