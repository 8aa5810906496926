// levels_test.cc: the run-time level rules (daemon/src/levels.h) without a
// daemon: who may set and remove which rule, the bounds, the rules text a
// client is sent (order, the newest default, the newest 32 site rules, the
// selectors that must all match), and [levels] rules of the configuration
// (its grammar, its errors, a rule set at run time replacing one of it
// while it lasts).
#include "levels.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "logsink/proto/frame.h"
#include "logsink/proto/level_rules.h"

namespace logsink::daemon {
namespace {

LevelRule Rule(int level, uint8_t which = 0, std::string app = "", std::string file = "",
               uint32_t line = 0) {
  LevelRule r;
  r.level = level;
  r.which = which;
  r.app = std::move(app);
  r.file = std::move(file);
  r.line = line;
  return r;
}

const LevelClient kWeb{100, 1000, "web", "web.service"};
const LevelClient kRootDb{200, 0, "db", "db.service"};

TEST(LevelRules, RootsRuleReachesEveryMatchingClientAndTheNewestDefaultWins) {
  LevelRules rules;
  std::string msg;
  ASSERT_EQ(rules.Set(Rule(6), 0, 1, &msg), 0) << msg;  // every client: info
  EXPECT_EQ(msg, "level rule set: info");
  ASSERT_EQ(rules.Set(Rule(7, LS_LSEL_APP, "web"), 0, 2, &msg), 0) << msg;
  ASSERT_EQ(rules.Set(Rule(-1, LS_LSEL_SITE, "", "net.c", 12), 0, 3, &msg), 0) << msg;
  EXPECT_EQ(rules.TextFor(kWeb), "debug,net.c:12=off");
  EXPECT_EQ(rules.TextFor(kRootDb), "info,net.c:12=off");
  // Set again: it becomes the newest, so it wins over web's.
  ASSERT_EQ(rules.Set(Rule(6), 0, 4, &msg), 0) << msg;
  EXPECT_EQ(rules.TextFor(kWeb), "info,net.c:12=off");
  EXPECT_EQ(rules.rules().size(), 3u);
  EXPECT_EQ(rules.rules().back().at_ns, 4u);
}

TEST(LevelRules, AUsersRuleIsForTheirOwnUidOnly) {
  LevelRules rules;
  std::string msg;
  ASSERT_EQ(rules.Set(Rule(7, LS_LSEL_APP, "db"), 1000, 1, &msg), 0) << msg;
  EXPECT_EQ(msg, "level rule set: --app 'db' --uid 1000 debug");
  EXPECT_EQ(rules.TextFor(kRootDb), "");  // root's db: untouched
  EXPECT_EQ(rules.TextFor(LevelClient{300, 1000, "db", ""}), "debug");
  LevelRule other = Rule(7, LS_LSEL_UID);
  other.uid = 0;
  EXPECT_EQ(rules.Set(other, 1000, 2, &msg), EPERM);
  EXPECT_NE(msg.find("own programs only"), std::string::npos) << msg;
  // Its own rule (named without --uid) it removes; root's every-uid rule
  // for db is another rule, and stays.
  ASSERT_EQ(rules.Set(Rule(6, LS_LSEL_APP, "db"), 0, 3, &msg), 0);
  EXPECT_EQ(rules.Reset(Rule(0, LS_LSEL_APP, "db"), 1000, &msg), 0) << msg;
  EXPECT_EQ(rules.Reset(Rule(0, LS_LSEL_APP, "db"), 1000, &msg), ENOENT) << msg;
  EXPECT_EQ(rules.TextFor(kRootDb), "info");
  EXPECT_EQ(rules.Reset(Rule(0, LS_LSEL_APP, "db"), 0, &msg), 0) << msg;
  EXPECT_TRUE(rules.rules().empty());
  // A rule root set for uid 1000's programs is root's: the user can neither
  // replace nor remove it.
  LevelRule roots = Rule(3, LS_LSEL_APP | LS_LSEL_UID, "web");
  roots.uid = 1000;
  ASSERT_EQ(rules.Set(roots, 0, 4, &msg), 0) << msg;
  EXPECT_EQ(rules.Set(Rule(7, LS_LSEL_APP, "web"), 1000, 5, &msg), EPERM);
  EXPECT_NE(msg.find("set by root"), std::string::npos) << msg;
  EXPECT_EQ(rules.Reset(Rule(0, LS_LSEL_APP, "web"), 1000, &msg), EPERM);
  EXPECT_EQ(rules.TextFor(kWeb), "err");
}

TEST(LevelRules, QuotesInANameCannotEndTheQuoteEarly) {
  LevelRules rules;
  std::string msg;
  ASSERT_EQ(rules.Set(Rule(7, LS_LSEL_APP, "x' debug (by uid 0"), 0, 1, &msg), 0) << msg;
  EXPECT_EQ(msg, "level rule set: --app 'x\\x27 debug (by uid 0' debug");
}

TEST(LevelRules, SelectorsAllMatch) {
  LevelRules rules;
  std::string msg;
  LevelRule r = Rule(7, LS_LSEL_APP | LS_LSEL_PID | LS_LSEL_UNIT, "web");
  r.pid = 100;
  r.unit = "web.service";
  ASSERT_EQ(rules.Set(r, 0, 1, &msg), 0) << msg;
  EXPECT_EQ(rules.TextFor(kWeb), "debug");
  EXPECT_EQ(rules.TextFor(LevelClient{101, 1000, "web", "web.service"}), "");
  EXPECT_EQ(rules.TextFor(LevelClient{100, 1000, "web", "other.service"}), "");
  EXPECT_EQ(rules.TextFor(LevelClient{100, 1000, "web2", "web.service"}), "");
}

TEST(LevelRules, SiteRulesAreCheckedAndOnlyTheNewest32Go) {
  LevelRules rules;
  std::string msg;
  EXPECT_EQ(rules.Set(Rule(7, LS_LSEL_SITE, "", "a,b.c"), 0, 1, &msg), EINVAL);
  EXPECT_EQ(rules.Set(Rule(7, LS_LSEL_SITE, "", "a=b.c"), 0, 1, &msg), EINVAL);
  EXPECT_EQ(rules.Set(Rule(7, LS_LSEL_SITE, "", "a.c:12"), 0, 1, &msg), EINVAL)
      << "reads as a line";
  for (int i = 0; i < 40; i++)
    ASSERT_EQ(rules.Set(Rule(7, LS_LSEL_SITE, "", "f" + std::to_string(i) + ".c"), 0, 1, &msg), 0);
  const std::string text = rules.TextFor(kWeb);
  ls_level_rules parsed;
  char why[192];
  ASSERT_EQ(ls_level_rules_parse(text.c_str(), LS_LEVEL_UNSET, &parsed, why, sizeof why), 0) << why;
  EXPECT_EQ(parsed.level, LS_LEVEL_UNSET);  // no default among them
  ASSERT_EQ(parsed.n, LS_LEVEL_RULES_MAX);
  EXPECT_STREQ(parsed.rule[0].file, "f8.c");
  EXPECT_STREQ(parsed.rule[31].file, "f39.c");
}

TEST(LevelRules, RulesAreBoundedInAllPerUserAndForUsersTogether) {
  LevelRules rules;
  std::string msg;
  for (size_t i = 0; i < LevelRules::kMaxPerUser; i++)
    ASSERT_EQ(rules.Set(Rule(7, LS_LSEL_APP, "u" + std::to_string(i)), 1000, 1, &msg), 0);
  EXPECT_EQ(rules.Set(Rule(7, LS_LSEL_APP, "one-more"), 1000, 1, &msg), ENOSPC);
  EXPECT_EQ(rules.Set(Rule(6, LS_LSEL_APP, "u0"), 1000, 1, &msg), 0) << "a replacement is fine";
  // Root's rules for uid 1000 are not the user's to count.
  LevelRule roots = Rule(7, LS_LSEL_APP | LS_LSEL_UID, "by-root");
  roots.uid = 1000;
  EXPECT_EQ(rules.Set(roots, 0, 1, &msg), 0);
  // Users together stop at kMaxUserRules: root keeps the rest.
  uint32_t uid = 1001;
  for (size_t n = LevelRules::kMaxPerUser; n < LevelRules::kMaxUserRules; n++, uid++)
    ASSERT_EQ(rules.Set(Rule(7, LS_LSEL_APP, "x"), uid, 1, &msg), 0) << msg;
  EXPECT_EQ(rules.Set(Rule(7, LS_LSEL_APP, "x"), uid, 1, &msg), ENOSPC);
  EXPECT_NE(msg.find("users other than root"), std::string::npos) << msg;
  for (size_t i = rules.rules().size(); i < LevelRules::kMaxRules; i++)
    ASSERT_EQ(rules.Set(Rule(7, LS_LSEL_APP, "r" + std::to_string(i)), 0, 1, &msg), 0) << msg;
  EXPECT_EQ(rules.Set(Rule(7, LS_LSEL_APP, "full"), 0, 1, &msg), ENOSPC);
  EXPECT_NE(msg.find("256 rules"), std::string::npos) << msg;
}

TEST(LevelRules, TheConfigurationsRulesParseAndComeFirst) {
  std::vector<LevelRule> cfg;
  std::string err;
  ASSERT_TRUE(LevelRules::ParseConfig(
      " app=web debug ;unit=db.service site=query.c:77 off;; uid=1000\twarning; 6", &cfg, &err))
      << err;
  ASSERT_EQ(cfg.size(), 4u);
  EXPECT_EQ(cfg[1].Describe(), "--unit 'db.service' --site 'query.c:77' off");
  EXPECT_EQ(cfg[2].Describe(), "--uid 1000 warning");
  LevelRules rules;
  rules.SetConfig(cfg);
  EXPECT_EQ(rules.TextFor(kWeb), "info");  // the newest default: the bare 6
  std::string msg;
  // A run-time rule for web replaces the configuration's while it lasts.
  ASSERT_EQ(rules.Set(Rule(3, LS_LSEL_APP, "web"), 0, 1, &msg), 0);
  EXPECT_EQ(rules.rules().size(), 4u);
  EXPECT_EQ(rules.TextFor(kWeb), "err");
  ASSERT_EQ(rules.Reset(Rule(0, LS_LSEL_APP, "web"), 0, &msg), 0);
  EXPECT_EQ(rules.rules().front().Describe(), "--app 'web' debug");
  EXPECT_EQ(rules.Reset(Rule(0, LS_LSEL_APP, "web"), 0, &msg), ENOENT);
  EXPECT_NE(msg.find("[levels] rules"), std::string::npos) << msg;
}

TEST(LevelRules, BadConfigurationRulesSayWhichAndWhy) {
  std::vector<LevelRule> cfg;
  std::string err;
  EXPECT_FALSE(LevelRules::ParseConfig("debug; app=web", &cfg, &err));
  EXPECT_EQ(err, "[levels] rules: rule 2 ('app=web'): no level (emerg .. debug, 0..7 or off)");
  EXPECT_FALSE(LevelRules::ParseConfig("app=a app=b debug", &cfg, &err));
  EXPECT_NE(err.find("'app' given twice"), std::string::npos) << err;
  EXPECT_FALSE(LevelRules::ParseConfig("debug info", &cfg, &err));
  EXPECT_NE(err.find("a second level"), std::string::npos) << err;
  EXPECT_FALSE(LevelRules::ParseConfig("pid=4 debug", &cfg, &err));
  EXPECT_NE(err.find("'pid=4' is not app="), std::string::npos) << err;
  EXPECT_FALSE(LevelRules::ParseConfig("site=a.c:0 debug", &cfg, &err));
  EXPECT_NE(err.find("the line must be"), std::string::npos) << err;
  EXPECT_FALSE(LevelRules::ParseConfig("site=a,b debug", &cfg, &err));
  EXPECT_NE(err.find("not a FILE"), std::string::npos) << err;
  EXPECT_FALSE(LevelRules::ParseConfig("uid=-1 debug", &cfg, &err));
  EXPECT_TRUE(LevelRules::ParseConfig("", &cfg, &err));
  EXPECT_TRUE(cfg.empty());
}

}  // namespace
}  // namespace logsink::daemon
