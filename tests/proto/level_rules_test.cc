// level_rules_test.cc: the rules of $LOGSINK_LEVEL (proto/level_rules.h):
// what each text parses to, which level applies to a call site of a file
// and line, and the clear error of each malformed text.
#include "logsink/proto/level_rules.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "logsink/proto/wire.h"

namespace {

struct Rules {
  explicit Rules(const char *text, int level = LS_LEVEL_MAX) {
    ok = ls_level_rules_parse(text, level, &r, err, sizeof err) == 0;
  }
  int For(const char *file, uint32_t line = 1) const { return ls_level_rules_for(&r, file, line); }
  ls_level_rules r;
  char err[256] = "";
  bool ok = false;
};

TEST(LevelRules, ABareLevelIsTheDefault) {
  for (auto [text, want] :
       std::initializer_list<std::pair<const char *, int>>{{"info", 6},
                                                           {"debug", 7},
                                                           {"emerg", 0},
                                                           {"err", 3},
                                                           {"error", 3},
                                                           {"warn", 4},
                                                           {"warning", 4},
                                                           {"notice", 5},
                                                           {"5", 5},
                                                           {"0", 0},
                                                           {"off", LS_LEVEL_OFF},
                                                           {" info ", 6},
                                                           {"debug,info", 6},
                                                           {"INFO", 6},
                                                           {"Critical", 2},
                                                           {"OFF", LS_LEVEL_OFF}}) {
    Rules r(text);
    ASSERT_TRUE(r.ok) << text << ": " << r.err;
    EXPECT_EQ(r.For("src/a.c"), want) << text;
    EXPECT_EQ(r.For(""), want) << text;
    EXPECT_EQ(r.r.n, 0) << text;
  }
}

TEST(LevelRules, FileRulesOverrideTheDefaultAndTheLastMatchWins) {
  Rules r("warning, net.c = debug, src/db/*.c=err, *.c:120=off, net.c=info, 7");
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.r.level, 7);  // the last bare level, wherever it stands
  EXPECT_EQ(r.r.n, 4);
  EXPECT_EQ(r.For("src/net.c"), 6);            // net.c=info comes after net.c=debug
  EXPECT_EQ(r.For("/abs/src/net.c", 120), 6);  // ... and after *.c:120=off
  EXPECT_EQ(r.For("net.c", 120), 6);
  EXPECT_EQ(r.For("../../src/db/query.c"), 3);  // a tail after a '/'
  EXPECT_EQ(r.For("src/db/query.c", 120), LS_LEVEL_OFF);
  EXPECT_EQ(r.For("src/db/sub/query.c"), 7);  // '*' does not cross a '/' in a path pattern
  EXPECT_EQ(r.For("xsrc/db/query.c"), 7);     // tails start after a '/'
  EXPECT_EQ(r.For("main.cc", 120), 7);        // *.c is not *.cc
  EXPECT_EQ(r.For("main.c", 120), LS_LEVEL_OFF);
  EXPECT_EQ(r.For("main.c", 121), 7);
  EXPECT_EQ(r.For(""), 7);  // no file: the default only
  EXPECT_EQ(r.For(nullptr), 7);
}

TEST(LevelRules, TheOptionsLevelIsTheDefaultUntilABareLevel) {
  Rules a("net.c=debug", 3);
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.For("x.c"), 3);
  EXPECT_EQ(a.For("net.c"), 7);
  EXPECT_EQ(ls_level_rules_most(&a.r), 7);
  EXPECT_EQ(ls_level_rules_least(&a.r), 3);
  Rules b("net.c=off,info", 3);
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.For("x.c"), 6);
  EXPECT_EQ(ls_level_rules_most(&b.r), 6);
  EXPECT_EQ(ls_level_rules_least(&b.r), LS_LEVEL_OFF);
}

TEST(LevelRules, MalformedTextIsRefusedWithItsFault) {
  for (auto [text, why] : std::initializer_list<std::pair<const char *, const char *>>{
           {"info,", "an empty rule"},
           {",info", "an empty rule"},
           {"inof", "\"inof\" is not a level"},
           {"of", "\"of\" is not a level"},
           {"8", "\"8\" is not a level"},
           {"net.c=loud", "\"net.c=loud\": \"loud\" is not a level"},
           {"net.c=", "\"\" is not a level"},
           {"=debug", "no file before '='"},
           {":12=debug", "no file before '='"},
           {"net.c:0=debug", "the line must be 1..2147483647"},
           {"net.c:2147483648=debug", "the line must be 1..2147483647"}}) {
    Rules r(text, 5);
    EXPECT_FALSE(r.ok) << text;
    EXPECT_NE(std::string(r.err).find(why), std::string::npos) << text << ": " << r.err;
    EXPECT_EQ(r.r.level, LS_LEVEL_MAX) << text;  // left as the default
    EXPECT_EQ(r.r.n, 0) << text;
  }
}

TEST(LevelRules, LimitsAreErrors) {
  std::string many = "info";
  for (int i = 0; i < LS_LEVEL_RULES_MAX; i++) many += ",f" + std::to_string(i) + ".c=debug";
  Rules full(many.c_str());
  ASSERT_TRUE(full.ok) << full.err;
  EXPECT_EQ(full.r.n, LS_LEVEL_RULES_MAX);
  EXPECT_EQ(full.For("f31.c"), 7);
  Rules over((many + ",g.c=debug").c_str());
  EXPECT_FALSE(over.ok);
  EXPECT_NE(std::string(over.err).find("more than 32 file rules"), std::string::npos) << over.err;

  std::string longest(LS_LEVEL_FILE_MAX, 'a');
  Rules fits((longest + "=debug").c_str());
  ASSERT_TRUE(fits.ok) << fits.err;
  EXPECT_EQ(fits.For(longest.c_str()), 7);
  Rules too_long((longest + "a=debug").c_str(), 6);
  EXPECT_FALSE(too_long.ok);
  EXPECT_NE(std::string(too_long.err).find("a file of more than 255 bytes"), std::string::npos)
      << too_long.err;
}

// The shared vectors (tests/golden/level_rules.txt), which the Python
// package's tests read too: the same text gives the same answers.
std::string Unescape(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
    } else if (s[i + 1] == 't') {
      out += '\t', i++;
    } else if (s[i + 1] == '\\') {
      out += '\\', i++;
    } else if (s[i + 1] == 'x' && i + 3 < s.size()) {
      out += char(std::stoi(s.substr(i + 2, 2), nullptr, 16)), i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

TEST(LevelRules, SharedVectorsWithThePythonPackage) {
  std::ifstream in(std::string(LOGSINK_SOURCE_DIR) + "/tests/golden/level_rules.txt");
  ASSERT_TRUE(in) << "tests/golden/level_rules.txt";
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    for (size_t at = 0;;) {
      const size_t tab = line.find('\t', at);
      f.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
      if (tab == std::string::npos) break;
      at = tab + 1;
    }
    ASSERT_GE(f.size(), 3u) << line;
    const std::string text = Unescape(f[0]);
    Rules r(text.c_str());
    if (f[1] == "!") {
      EXPECT_FALSE(r.ok) << line;
      EXPECT_NE(std::string(r.err).find(Unescape(f[2])), std::string::npos)
          << line << ": " << r.err;
    } else {
      ASSERT_EQ(f.size(), 4u) << line;
      ASSERT_TRUE(r.ok) << line << ": " << r.err;
      EXPECT_EQ(r.For(Unescape(f[1]).c_str(), uint32_t(std::stoul(f[2]))), std::stoi(f[3])) << line;
    }
    n++;
  }
  EXPECT_GE(n, 60);
}

// Only spaces and tabs are blanks: anything else is part of a rule (the
// other blanks and the globs are in the shared vectors above).
TEST(LevelRules, OnlySpacesAndTabsAreBlanks) {
  for (const char *empty : {"", " ", " \t "}) {
    Rules r(empty, 5);
    ASSERT_TRUE(r.ok) << r.err;
    EXPECT_EQ(r.For("x.c"), 5);
  }
  Rules cr("info\r");
  EXPECT_FALSE(cr.ok);
}

// A colon that is not followed by digits only belongs to the file.
TEST(LevelRules, OnlyTrailingDigitsAreALine) {
  Rules r("c:/x.c=err,a:b=err,n.c:12=err");
  ASSERT_TRUE(r.ok) << r.err;
  ASSERT_EQ(r.r.n, 3);
  EXPECT_STREQ(r.r.rule[0].file, "c:/x.c");
  EXPECT_EQ(r.r.rule[0].line, 0u);
  EXPECT_STREQ(r.r.rule[1].file, "a:b");
  EXPECT_STREQ(r.r.rule[2].file, "n.c");
  EXPECT_EQ(r.r.rule[2].line, 12u);
}

// Rules as text read back as the same rules (HELLO v2 carries a client's).
TEST(LevelRules, TextReadsBackAsTheSameRules) {
  Rules r("warning,net.c=debug,src/db/*.c:120=off");
  ASSERT_TRUE(r.ok) << r.err;
  char text[LS_LEVELS_TEXT_MAX + 1];
  ASSERT_GT(ls_level_rules_text(&r.r, text, sizeof text), 0);
  EXPECT_STREQ(text, "warning,net.c=debug,src/db/*.c:120=off");
  Rules back(text);
  ASSERT_TRUE(back.ok) << back.err;
  EXPECT_EQ(back.r.n, 2);
  EXPECT_EQ(back.For("net.c"), 7);
  char small[8];
  EXPECT_EQ(ls_level_rules_text(&r.r, small, sizeof small), -1);
  EXPECT_STREQ(small, "");
}

// Pushed rules go on top of a client's own: a bare level replaces the
// default, FILE rules come after (and win), the oldest own ones give way
// past the limit; an empty push leaves the own rules.
TEST(LevelRules, PushedRulesGoOnTopOfTheOwn) {
  Rules own("info,net.c=err,db.c=debug");
  ASSERT_TRUE(own.ok) << own.err;
  Rules pushed("net.c=debug", LS_LEVEL_UNSET);
  ASSERT_TRUE(pushed.ok);
  ls_level_rules m = own.r;
  ls_level_rules_merge(&m, &pushed.r);
  EXPECT_EQ(m.level, 6);  // no bare level pushed
  EXPECT_EQ(ls_level_rules_for(&m, "net.c", 1), 7);
  EXPECT_EQ(ls_level_rules_for(&m, "db.c", 1), 7);
  Rules bare("off", LS_LEVEL_UNSET);
  m = own.r;
  ls_level_rules_merge(&m, &bare.r);
  EXPECT_EQ(m.level, LS_LEVEL_OFF);
  EXPECT_EQ(m.n, 2);
  Rules none("", LS_LEVEL_UNSET);
  m = own.r;
  ls_level_rules_merge(&m, &none.r);
  EXPECT_EQ(m.level, 6);
  EXPECT_EQ(m.n, 2);
  std::string many;
  for (int i = 0; i < LS_LEVEL_RULES_MAX; i++) many += "f" + std::to_string(i) + ".c=debug,";
  many.pop_back();
  Rules full(many.c_str(), LS_LEVEL_UNSET);
  ASSERT_TRUE(full.ok) << full.err;
  m = own.r;
  ls_level_rules_merge(&m, &full.r);
  EXPECT_EQ(m.n, LS_LEVEL_RULES_MAX);  // both own rules gave way
  EXPECT_STREQ(m.rule[0].file, "f0.c");
  EXPECT_EQ(ls_level_rules_for(&m, "net.c", 1), 6);
}

}  // namespace
