// client_wrap_test.cc: ls_log / ls_vlog (wrappers) against the real
// logsinkd: a wrapper with a run-time level and format stores the format,
// the level and typed arguments exactly as LS_LOG does; a format is interned
// once per connection however often it is used; past the table of run-time
// formats, records are rendered in the process, sent as text and counted.
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <string>

#include "client_harness.h"
#include "client_stats.h"
#include "logsink/logsink.h"
#include "render_ref.h"

namespace logsink::test {
namespace {

ls_client *g_client = nullptr;

void MyLog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void MyLog(int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  EXPECT_EQ(ls_vlog(g_client, level, fmt, ap), 0);
  va_end(ap);
}

class WrapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start());
    g_client = ls_open(daemon_.socket.c_str(), "wrap", nullptr);
    ASSERT_NE(g_client, nullptr);
  }
  void TearDown() override {
    if (g_client) ls_close(g_client);
    g_client = nullptr;
  }
  TempDir dir_;
  ClientDaemon daemon_{dir_};
};

TEST_F(WrapTest, RuntimeLevelAndFormatTravelLikeLsLog) {
  const char *fmts[] = {"disk %s at %d%%", "took %.3f s"};
  for (int level : {LS_ERR, LS_WARNING, LS_INFO}) MyLog(level, fmts[0], "sda", 91);
  MyLog(LS_DEBUG, fmts[1], 1.5);
  ASSERT_EQ(ls_flush(g_client), 0);
  ls_stats s = Stats(g_client);
  EXPECT_EQ(s.sent, 4u);
  EXPECT_EQ(s.formatted, 0u);
  auto v = WaitRing(daemon_.ring, [](const std::vector<OwnedRecord> &r) { return r.size() >= 4; });
  ASSERT_EQ(v.size(), 4u);
  int levels[] = {LS_ERR, LS_WARNING, LS_INFO};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(v[size_t(i)].fmt, "disk %s at %d%%");
    EXPECT_EQ(v[size_t(i)].level, levels[i]);
    auto a = DecodeArgs(v[size_t(i)].fmt, v[size_t(i)].args);
    ASSERT_TRUE(a && a->size() == 2);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>((*a)[0].s), (*a)[0].len), "sda");
    EXPECT_EQ(int64_t((*a)[1].u), 91);
  }
  EXPECT_EQ(v[3].fmt, "took %.3f s");
  EXPECT_EQ(v[3].level, LS_DEBUG);
}

TEST_F(WrapTest, AFormatIsInternedOncePerConnection) {
  for (int i = 0; i < 1000; ++i) MyLog(LS_INFO, "repeated %d", i);
  ASSERT_EQ(ls_flush(g_client), 0);
  ls_stats s = Stats(g_client);
  EXPECT_EQ(s.sent, 1000u);
  EXPECT_EQ(s.interned, 1u);
}

TEST_F(WrapTest, BadLevelOrFormatIsRefused) {
  EXPECT_EQ(ls_log(g_client, 8, "x"), -EINVAL);
  EXPECT_EQ(ls_log(g_client, -1, "x"), -EINVAL);
  EXPECT_EQ(ls_log(g_client, LS_INFO, nullptr), -EINVAL);
  int n = 0;
  EXPECT_EQ(ls_log(g_client, LS_INFO, "count%n", &n), -EINVAL);  // %n: refused, counted
  EXPECT_EQ(Stats(g_client).errors, 1u);
}

// Runs last in this process (the table is process-wide): fills it.
TEST_F(WrapTest, ZzPastTheTableFormatsAreRenderedHereAndCounted) {
  const int kFormats = 4096 + 200;
  char fmt[64];
  for (int i = 0; i < kFormats; ++i) {
    std::snprintf(fmt, sizeof fmt, "distinct format %d value %%d", i);
    EXPECT_EQ(ls_log(g_client, LS_NOTICE, fmt, i * 7), 0);
  }
  ASSERT_EQ(ls_flush(g_client), 0);
  ls_stats s = Stats(g_client);
  EXPECT_EQ(s.sent, uint64_t(kFormats));
  EXPECT_GE(s.formatted, 200u);
  EXPECT_LT(s.formatted, uint64_t(kFormats));
  auto v = WaitRing(daemon_.ring, [&](const std::vector<OwnedRecord> &r) {
    return r.size() >= size_t(kFormats);
  });
  ASSERT_EQ(v.size(), size_t(kFormats));
  uint64_t as_text = 0;
  for (int i = 0; i < kFormats; ++i) {
    const OwnedRecord &r = v[size_t(i)];
    EXPECT_EQ(r.level, LS_NOTICE);
    std::snprintf(fmt, sizeof fmt, "distinct format %d value %%d", i);
    if (r.fmt == fmt) continue;
    ++as_text;
    ASSERT_EQ(r.fmt, "%s") << i;
    auto a = DecodeArgs(r.fmt, r.args);
    ASSERT_TRUE(a && a->size() == 1);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>((*a)[0].s), (*a)[0].len),
              "distinct format " + std::to_string(i) + " value " + std::to_string(i * 7));
  }
  EXPECT_EQ(as_text, s.formatted);
}

}  // namespace
}  // namespace logsink::test
