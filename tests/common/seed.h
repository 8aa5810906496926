// seed.h: the seed of a randomized test, printed so a failure can be
// reproduced and taken from LOGSINK_TEST_SEED when that is set.
#pragma once

#include <cstdint>
#include <optional>

namespace logsink::test {

// LOGSINK_TEST_SEED when set, else fixed, else a fresh random seed. Prints
// "[seed] <suite.test>: LOGSINK_TEST_SEED=<n>" and records it as the test
// property "seed".
uint64_t TestSeed(std::optional<uint64_t> fixed = std::nullopt);

}  // namespace logsink::test
