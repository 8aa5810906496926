// timeparse_test.cc: unit tests of logctl's --since/--until parser.
#include "logctl/timeparse.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include "logsink/config/duration.h"

namespace logsink::test {
namespace {

using logsink::logctl::ParseTime;

constexpr uint64_t kS = 1000000000ull;
constexpr uint64_t kNow = 1763892000ull * kS + 500;  // 2025-11-23T10:00:00Z + 500 ns

class TimeParseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
  uint64_t P(const char *s) {
    uint64_t v = 0;
    std::string why;
    EXPECT_TRUE(ParseTime(s, kNow, &v, &why)) << s;
    return v;
  }
  bool Bad(const char *s) {
    uint64_t v;
    std::string why;
    return !ParseTime(s, kNow, &v, &why) && !why.empty();
  }
};

TEST_F(TimeParseTest, Absolute) {
  EXPECT_EQ(P("2025-11-23 10:00:00"), 1763892000ull * kS);
  EXPECT_EQ(P("2025-11-23T10:00:00Z"), 1763892000ull * kS);
  EXPECT_EQ(P("2025-11-23T10:00:00.25Z"), 1763892000ull * kS + kS / 4);
  EXPECT_EQ(P("2025-11-23T12:00:00+02:00"), 1763892000ull * kS);
  EXPECT_EQ(P("2025-11-23T09:30:00-0030"), 1763892000ull * kS);
  EXPECT_EQ(P("2025-11-23 10:00"), 1763892000ull * kS);
  EXPECT_EQ(P("2025-11-23"), 1763856000ull * kS);
  EXPECT_EQ(P("09:00"), 1763888400ull * kS);  // today
  EXPECT_EQ(P("@1763892000"), 1763892000ull * kS);
  EXPECT_EQ(P("@1763892000.5"), 1763892000ull * kS + kS / 2);
}

TEST_F(TimeParseTest, RelativeAndWords) {
  EXPECT_EQ(P("now"), kNow);
  EXPECT_EQ(P("10min ago"), kNow - 600 * kS);
  EXPECT_EQ(P("2h ago"), kNow - 7200 * kS);
  EXPECT_EQ(P("1h 30min ago"), kNow - 5400 * kS);
  EXPECT_EQ(P("1.5s ago"), kNow - kS - kS / 2);
  EXPECT_EQ(P("-3d"), kNow - 3 * 86400 * kS);
  EXPECT_EQ(P("+1w"), kNow + 7 * 86400 * kS);
  EXPECT_EQ(P("today"), 1763856000ull * kS);
  EXPECT_EQ(P("yesterday"), 1763856000ull * kS - 86400 * kS);
  EXPECT_EQ(P("tomorrow"), 1763856000ull * kS + 86400 * kS);
  uint64_t d;
  EXPECT_TRUE(logsink::config::ParseDurationNs("250ms", &d));
  EXPECT_EQ(d, 250000000u);
}

TEST_F(TimeParseTest, Rejects) {
  for (const char *s : {"", "soon", "2025-13-01", "2025-11-23 25:00", "2025-11-23X10:00",
                        "10 parsecs ago", "@", "@12x", "2025-11-23T10:00:00+99:00", "ago"})
    EXPECT_TRUE(Bad(s)) << s;
}

}  // namespace
}  // namespace logsink::test
