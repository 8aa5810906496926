// client_level_test.cc: levels at the source against the real logsinkd: a
// call below its site's level produces nothing (no record, no count, no
// INTERN); ls_options.level and .levels, $LOGSINK_LEVEL replacing them, rules
// per file and line, two clients with their own levels sharing call sites,
// a $LOGSINK_LEVEL that does not parse (ignored, said in a warning record),
// and options that do not parse (ls_open fails).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "client_harness.h"
#include "client_stats.h"
#include "logsink/logsink.h"
#include "render_ref.h"

namespace logsink::test {
namespace {

// The call sites of these tests, one per level, all in this file; the
// debug one's line is kDebugLine.
// clang-format off
void DebugSite(ls_client *c, int i) { LS_LOG(c, LS_DEBUG, "debug %d", i); } constexpr int kDebugLine = __LINE__;
// clang-format on
void Sites(ls_client *c, int i) {
  LS_LOG(c, LS_ERR, "err %d", i);
  LS_LOG(c, LS_WARNING, "warning %d", i);
  LS_LOG(c, LS_INFO, "info %d", i);
  DebugSite(c, i);
}

// Sets $LOGSINK_LEVEL (nullptr: unset) for the scope of a test.
class LevelEnv {
 public:
  explicit LevelEnv(const char *v) {
    if (v)
      setenv("LOGSINK_LEVEL", v, 1);
    else
      unsetenv("LOGSINK_LEVEL");
  }
  ~LevelEnv() { unsetenv("LOGSINK_LEVEL"); }
};

class LevelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("LOGSINK_LEVEL");
    ASSERT_TRUE(daemon_.Start());
  }
  ls_client *Open(int level, const char *levels = nullptr, const char *app = "levels") {
    ls_options o;
    ls_options_init(&o);
    o.level = level;
    o.levels = levels;
    return ls_open(daemon_.socket.c_str(), app, &o);
  }
  // Every record of the ring once the client's "end" record is in it: the
  // records a client sent come in order, so whatever it produced is there.
  std::vector<OwnedRecord> ReadAfterEnd(ls_client *c) {
    LS_LOG(c, LS_EMERG, "end");  // on at every level but off
    EXPECT_EQ(ls_flush(c), 0);
    return WaitRing(daemon_.ring, [](const auto &v) { return CountFmt(v, "end") >= 1; });
  }
  TempDir dir_;
  ClientDaemon daemon_{dir_};
};

TEST_F(LevelTest, InfoLeavesNoDebugRecordAndTheCallsCountNowhere) {
  LevelEnv env("info");  // the default client, not open, would say info too
  ls_client *c = Open(LS_INFO);
  ASSERT_NE(c, nullptr);
  for (int i = 0; i < 100; i++) Sites(c, i);
  EXPECT_EQ(ls_log_text(c, LS_DEBUG, "text", 4), 0);  // below the level: nothing, no error
  EXPECT_EQ(ls_log_text(c, LS_INFO, "text", 4), 0);
  auto v = ReadAfterEnd(c);
  EXPECT_EQ(CountFmt(v, "err %d"), 100u);
  EXPECT_EQ(CountFmt(v, "warning %d"), 100u);
  EXPECT_EQ(CountFmt(v, "info %d"), 100u);
  EXPECT_EQ(CountFmt(v, "debug %d"), 0u);
  EXPECT_EQ(CountFmt(v, "%s"), 1u);
  ls_stats s = Stats(c);
  EXPECT_EQ(s.logged, 302u);  // 300 + one text + "end"
  EXPECT_EQ(s.sent, 302u);
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_EQ(s.interned, 5u);  // the debug site was never made known
  // No client says more than info (the default one, not open, would
  // follow $LOGSINK_LEVEL): LS_LOG skips debug calls before calling into
  // the library.
  EXPECT_EQ(ls__level_max, LS_INFO);
  ls_close(c);
  EXPECT_EQ(ls__level_max, LS_INFO);  // no client open: the default one would say info
}

// Without $LOGSINK_LEVEL the default client, not open yet, would log
// debug: a debug call must reach the library, whatever other clients say.
TEST_F(LevelTest, TheDefaultClientCountsBeforeItIsOpen) {
  ls_client *c = Open(LS_INFO);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(ls__level_max, LS_DEBUG);
  ls_close(c);
}

// A program (a child of this test: its default client is its own) whose
// explicit client is at info logs debug through the default client, which
// opens on that call; with a $LOGSINK_LEVEL that does not parse, the
// warning of the default client opened by a call lands too.
TEST_F(LevelTest, TheDefaultClientOpenedByACallLogsAndWarns) {
  for (const char *level : {"", "inof"}) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      setenv("LOGSINK_SOCKET", daemon_.socket.c_str(), 1);
      setenv("LOGSINK_LEVEL", level, 1);
      ls_client *c = Open(LS_INFO, nullptr, "child");
      LS_DEBUG("default debug %s", level);
      ls_stats s = Stats(ls_default());
      const bool ok =
          c && s.logged == (*level ? 2u : 1u) && s.dropped == 0 && ls_flush(ls_default()) == 0;
      ls_close(c);
      _exit(ok ? 0 : 1);
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << level << ": status " << st;
  }
  auto v =
      WaitRing(daemon_.ring, [](const auto &v) { return CountFmt(v, "default debug %s") >= 2; });
  EXPECT_EQ(CountFmt(v, "default debug %s"), 2u);
  // The warning, for "inof": one from each client of that child.
  EXPECT_EQ(CountFmt(v, "%s"), 2u);
}

// A level outside 0..7 is refused and counted, as before levels at the
// source; a disabled run-time format takes no slot of the table of them.
TEST_F(LevelTest, BadLevelsAreCountedAndDisabledFormatsTakeNoSlot) {
  ls_client *c = Open(LS_INFO);
  ASSERT_NE(c, nullptr);
  LS_LOG(c, 8, "no such level");
  EXPECT_EQ(Stats(c).errors, 1u);
  char fmt[32];
  for (int i = 0; i < 5000; i++) {  // more than the table's 4096
    snprintf(fmt, sizeof fmt, "disabled %d %%d", i);
    EXPECT_EQ(ls_log(c, LS_DEBUG, fmt, i), 0);
  }
  EXPECT_EQ(ls_log(c, LS_INFO, "enabled %d", 1), 0);
  auto v = ReadAfterEnd(c);
  EXPECT_EQ(CountFmt(v, "enabled %d"), 1u);  // a format, not text
  ls_stats s = Stats(c);
  EXPECT_EQ(s.formatted, 0u);
  EXPECT_EQ(s.logged, 2u);  // "enabled" and "end"
  ls_close(c);
}

// An empty $LOGSINK_LEVEL is as if unset: the options apply, nothing said.
TEST_F(LevelTest, AnEmptyEnvironmentIsUnset) {
  LevelEnv env("");
  ls_client *c = Open(LS_INFO);
  ASSERT_NE(c, nullptr);
  Sites(c, 1);
  auto v = ReadAfterEnd(c);
  EXPECT_EQ(CountFmt(v, "info %d"), 1u);
  EXPECT_EQ(CountFmt(v, "debug %d"), 0u);
  EXPECT_EQ(CountFmt(v, "%s"), 0u);
  ls_close(c);
}

TEST_F(LevelTest, OffProducesNothingAndErrIsTheDefaultOfItsRules) {
  ls_client *c = Open(LS_OFF);
  ASSERT_NE(c, nullptr);
  Sites(c, 1);
  EXPECT_EQ(ls_log_text(c, LS_EMERG, "x", 1), 0);
  LS_LOG(c, LS_EMERG, "end");
  ASSERT_EQ(ls_flush(c), 0);
  EXPECT_EQ(Stats(c).logged, 0u);
  ls_close(c);
  // Rules with a file rule and a bare level replacing the options' level.
  c = Open(LS_OFF, "client_level_test.cc=warning,err");
  ASSERT_NE(c, nullptr);
  Sites(c, 2);
  EXPECT_EQ(ls_log_text(c, LS_WARNING, "no file", 7), 0);  // the default (err) applies
  auto v = ReadAfterEnd(c);
  EXPECT_EQ(CountFmt(v, "err %d"), 1u);
  EXPECT_EQ(CountFmt(v, "warning %d"), 1u);
  EXPECT_EQ(CountFmt(v, "info %d"), 0u);
  EXPECT_EQ(CountFmt(v, "%s"), 0u);
  ls_close(c);
}

TEST_F(LevelTest, TheEnvironmentReplacesTheOptionsAndRulesPickALine) {
  const std::string rules = "warning,client_level_test.cc:" + std::to_string(kDebugLine) + "=debug";
  LevelEnv env(rules.c_str());
  ls_client *c = Open(LS_OFF, "info");  // both replaced by the environment
  ASSERT_NE(c, nullptr);
  for (int i = 0; i < 10; i++) Sites(c, i);
  auto v = ReadAfterEnd(c);
  EXPECT_EQ(CountFmt(v, "err %d"), 10u);
  EXPECT_EQ(CountFmt(v, "warning %d"), 10u);
  EXPECT_EQ(CountFmt(v, "info %d"), 0u);
  EXPECT_EQ(CountFmt(v, "debug %d"), 10u);  // its line is named
  for (const auto &r : v) {
    if (r.fmt == "debug %d") {
      EXPECT_EQ(r.line, uint32_t(kDebugLine));
    }
  }
  ls_close(c);
}

// Two clients share the call sites, each with its own level: the cache in
// a site serves one client's rules at a time and is checked on every call.
TEST_F(LevelTest, TwoClientsKeepTheirOwnLevelsAtTheSameSites) {
  ls_client *quiet = Open(LS_WARNING, nullptr, "quiet"), *loud = Open(LS_DEBUG, nullptr, "loud");
  ASSERT_NE(quiet, nullptr);
  ASSERT_NE(loud, nullptr);
  EXPECT_EQ(ls__level_max, LS_DEBUG);
  for (int i = 0; i < 50; i++) {
    Sites(quiet, i);
    Sites(loud, i);
  }
  LS_LOG(quiet, LS_EMERG, "end");
  ASSERT_EQ(ls_flush(quiet), 0);
  ASSERT_EQ(ls_flush(loud), 0);
  LS_LOG(loud, LS_EMERG, "end");
  ASSERT_EQ(ls_flush(loud), 0);
  // Each connection's records come in order: both "end"s, all before them.
  auto v = WaitRing(daemon_.ring, [](const auto &v) { return CountFmt(v, "end") >= 2; });
  size_t quiet_n[8] = {}, loud_n[8] = {};
  for (const auto &r : v) {
    if (r.fmt == "end") continue;
    (r.app == "quiet" ? quiet_n : loud_n)[r.level]++;
  }
  EXPECT_EQ(quiet_n[LS_ERR] + quiet_n[LS_WARNING], 100u);
  EXPECT_EQ(quiet_n[LS_INFO] + quiet_n[LS_DEBUG], 0u);
  for (int l : {LS_ERR, LS_WARNING, LS_INFO, LS_DEBUG}) EXPECT_EQ(loud_n[l], 50u) << l;
  ls_close(loud);
  EXPECT_EQ(ls__level_max, LS_DEBUG);  // the default client, not open, would log debug
  ls_close(quiet);
}

TEST_F(LevelTest, AnEnvironmentThatDoesNotParseIsIgnoredAndSaid) {
  LevelEnv env("inof,net.c=debug");
  ls_client *c = Open(LS_INFO);  // the options apply
  ASSERT_NE(c, nullptr);
  Sites(c, 1);
  auto v = ReadAfterEnd(c);
  EXPECT_EQ(CountFmt(v, "info %d"), 1u);
  EXPECT_EQ(CountFmt(v, "debug %d"), 0u);
  ASSERT_EQ(CountFmt(v, "%s"), 1u);
  for (const auto &r : v) {
    if (r.fmt != "%s") continue;
    EXPECT_EQ(r.level, LS_WARNING);
    auto a = DecodeArgs(r.fmt, r.args);
    ASSERT_TRUE(a && a->size() == 1);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>((*a)[0].s), (*a)[0].len),
              "liblogsink: LOGSINK_LEVEL=\"inof,net.c=debug\" ignored: \"inof\" is not a level "
              "(emerg .. debug, 0..7 or off)");
  }
  ls_close(c);
}

TEST_F(LevelTest, OptionsThatDoNotParseFailTheOpen) {
  errno = 0;
  EXPECT_EQ(Open(LS_INFO, "net.c="), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(Open(8), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(Open(-2), nullptr);
  EXPECT_EQ(errno, EINVAL);
  // The environment cannot make options valid.
  LevelEnv env("debug");
  EXPECT_EQ(Open(LS_INFO, ","), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

}  // namespace
}  // namespace logsink::test
