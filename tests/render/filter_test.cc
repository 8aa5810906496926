// filter_test.cc: unit tests of the reader's filter parts that are about
// text (logsink/render/filter.h): level names and ranges as logctl and
// logsink-forward take them, against the one table in proto/facility.h;
// --grep's matcher copied for another thread.
#include "logsink/render/filter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>

#include "logsink/proto/facility.h"

namespace logsink::test {
namespace {

using namespace logsink::render;

TEST(LevelNames, ComeFromProtoAndRoundTrip) {
  const char *const expected[] = {"emerg",   "alert",  "crit", "err",
                                  "warning", "notice", "info", "debug"};
  for (int l = 0; l <= LS_LEVEL_MAX; l++) {
    EXPECT_STREQ(ls_level_name(unsigned(l)), expected[l]);
    EXPECT_STREQ(LevelName(l), expected[l]);
    EXPECT_EQ(ls_level_parse(expected[l], std::strlen(expected[l])), l);
    EXPECT_EQ(ParseLevel(expected[l]), l);
    EXPECT_EQ(ParseLevel(std::to_string(l)), l);
    std::string upper = expected[l];
    for (char &c : upper) c = char(c - 'a' + 'A');
    EXPECT_EQ(ParseLevel(upper), l) << upper;
    EXPECT_EQ(ls_level_parse(upper.data(), upper.size()), -1) << "proto's names are exact";
  }
  EXPECT_EQ(ls_level_name(8), nullptr);
  EXPECT_STREQ(LevelName(-1), "?");
  EXPECT_STREQ(LevelName(8), "?");
}

TEST(LevelNames, OtherSpellingsAndRefusals) {
  EXPECT_EQ(ParseLevel("error"), 3);
  EXPECT_EQ(ParseLevel("Warn"), 4);
  EXPECT_EQ(ParseLevel("emergency"), 0);
  EXPECT_EQ(ParseLevel("CRITICAL"), 2);
  for (const char *bad :
       {"", "8", "-1", "10", "errr", "infos", "warning ", "a-very-long-level-name"})
    EXPECT_EQ(ParseLevel(bad), -1) << bad;
  EXPECT_EQ(ls_level_parse("error", 5), -1);  // logsinkd's settings take the names only
}

TEST(LevelNames, RangesAsJournalctlTakesThem) {
  int lo = -1, hi = -1;
  ASSERT_TRUE(ParseLevelRange("err", &lo, &hi));
  EXPECT_EQ(std::make_pair(lo, hi), std::make_pair(0, 3));
  ASSERT_TRUE(ParseLevelRange("err..warning", &lo, &hi));
  EXPECT_EQ(std::make_pair(lo, hi), std::make_pair(3, 4));
  ASSERT_TRUE(ParseLevelRange("warning..err", &lo, &hi));  // either order
  EXPECT_EQ(std::make_pair(lo, hi), std::make_pair(3, 4));
  ASSERT_TRUE(ParseLevelRange("..notice", &lo, &hi));
  EXPECT_EQ(std::make_pair(lo, hi), std::make_pair(0, 5));
  ASSERT_TRUE(ParseLevelRange("6..", &lo, &hi));
  EXPECT_EQ(std::make_pair(lo, hi), std::make_pair(6, 7));
  for (const char *bad : {"", "x..err", "err..x", "err.warning"})
    EXPECT_FALSE(ParseLevelRange(bad, &lo, &hi)) << bad;
}

TEST(Grep, ACopyForAnotherThreadMatchesTheSame) {
  MessageMatcher m;
  std::string why;
  ASSERT_TRUE(m.Add("disk full", false, true, &why));  // a literal
  ASSERT_TRUE(m.Add("ERR(OR)?", true, true, &why));    // a regex, any case
  EXPECT_FALSE(m.Add("(", false, true, &why));         // refused, not kept
  EXPECT_FALSE(why.empty());
  MessageMatcher copy;
  m.CopyInto(&copy);
  for (const char *msg : {"disk full on /", "Disk Full", "an error", "Err 3", "fine", ""})
    EXPECT_EQ(copy.Match(msg), m.Match(msg)) << msg;
  EXPECT_TRUE(copy.Match("an error"));
  EXPECT_FALSE(copy.Match("fine"));
  MessageMatcher none, none_copy;
  none.CopyInto(&none_copy);
  EXPECT_TRUE(none_copy.empty());
  EXPECT_TRUE(none_copy.Match("anything"));
}

}  // namespace
}  // namespace logsink::test
