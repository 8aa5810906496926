// text_fields_test.cc: the named fields of free text (daemon/src/
// text_fields.h, text_record.h): RFC 5424 SD-PARAMs (escapes, several
// elements, repeated parameters, names that are no field names, the nil
// "-", cut or broken SD), the kernel's dictionary, and TextSites' sites
// with FIELDS on a real ring: the format and arguments they are stored
// with, the cache's bounds (per uid, global) and the fallbacks to the plain
// kind site (too many fields, string table full), each counted.
#include "text_fields.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/seed.h"
#include "daemon/context_fixture.h"
#include "logsink/proto/args.h"
#include "logsink/proto/fields.h"
#include "logsink/proto/format.h"
#include "syslog_parse.h"
#include "text_record.h"

namespace logsink::test {
namespace {

using namespace logsink::daemon;

std::vector<std::pair<std::string, std::string>> Pairs(TextFieldList &l) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const TextField &f : l.fields()) out.emplace_back(f.name, f.value);
  return out;
}

using P = std::vector<std::pair<std::string, std::string>>;

TEST(SdParams, ElementsEscapesRepeatsAndBadNames) {
  const std::string sd =
      "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\"]"
      "[b@1 v=\"q\\\"uote \\\\ back \\] close \\n other\" iut= \"4\" iut=\"5\" a:b=\"x\" "
      "_t=\"y\" e=\"\"][empty]";
  SdParams it(sd);
  SdParam p;
  std::vector<std::string> raw;
  while (it.Next(&p))
    raw.push_back(std::string(p.id) + "|" + std::string(p.name) + "|" + std::string(p.value));
  EXPECT_TRUE(it.done());
  EXPECT_EQ(raw, (std::vector<std::string>{
                     "exampleSDID@32473|iut|3", "exampleSDID@32473|eventSource|Application",
                     "b@1|v|q\\\"uote \\\\ back \\] close \\n other", "b@1|iut|4", "b@1|iut|5",
                     "b@1|a:b|x", "b@1|_t|y", "b@1|e|"}));
  TextFieldList l;
  SdFields(sd, &l);
  EXPECT_EQ(Pairs(l), (P{{"exampleSDID@32473.iut", "3"},
                         {"exampleSDID@32473.eventSource", "Application"},
                         {"b@1.v", "q\"uote \\ back ] close \\n other"},
                         {"b@1.iut", "4"},  // the first of a repeated name
                         {"b@1._t", "y"},   // '_' inside a name is no trusted field
                         {"b@1.e", ""}}));
  EXPECT_EQ(l.bad_names(), 1u);  // a:b
  EXPECT_FALSE(l.too_many());
}

TEST(SdParams, NilCutAndBrokenStructuredData) {
  TextFieldList l;
  SdFields("", &l);  // the nil "-" is stored as empty
  EXPECT_EQ(l.size(), 0u);
  SdParams nil("");
  SdParam p;
  EXPECT_FALSE(nil.Next(&p));
  EXPECT_TRUE(nil.done());
  // Broken: every parameter before the break, and done() is false.
  for (const std::string bad :
       {"[a x=\"1\" y=\"2", "[a x=\"1\"] ", "[a x=1]", "[a x=\"1\"][", "[a x=\"1\" =\"2\"]", "x"}) {
    SdParams it(bad);
    size_t n = 0;
    while (it.Next(&p)) n++;
    EXPECT_FALSE(it.done()) << bad;
    EXPECT_LE(n, 1u) << bad;
  }
  // What ParseSyslog accepts is read to its end.
  SyslogMessage m = ParseSyslog("<13>1 - h a - - [x@1 k=\"v\\]\"][y@2] msg");
  ASSERT_EQ(m.form, SyslogForm::kRfc5424);
  SdParams it(m.sd);
  ASSERT_TRUE(it.Next(&p));
  EXPECT_EQ(p.value, "v\\]");
  EXPECT_FALSE(it.Next(&p));
  EXPECT_TRUE(it.done());
}

TEST(SdParams, RandomParametersRoundTrip) {
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  const std::string chars = "ab\"\\]= x\x01\xc3\xa9";
  for (int round = 0; round < 200; round++) {
    std::string sd = "[id@1";
    P want;
    const int n = int(rng() % 5) + 1;
    for (int i = 0; i < n; i++) {
      std::string value, escaped;
      for (int k = int(rng() % 12); k > 0; k--) {
        const char c = chars[rng() % chars.size()];
        value.push_back(c);
        if (c == '"' || c == '\\' || c == ']') escaped.push_back('\\');
        escaped.push_back(c);
      }
      const std::string name = "p" + std::to_string(i);
      sd += " " + name + "=\"" + escaped + "\"";
      want.emplace_back("id@1." + name, value);
    }
    sd += "]";
    TextFieldList l;
    SdFields(sd, &l);
    EXPECT_EQ(Pairs(l), want) << "seed " << seed << " sd " << sd;
  }
}

TEST(KmsgDict, KeysAndUnescapedValues) {
  TextFieldList l;
  KmsgDictFields(
      "SUBSYSTEM=usb\nDEVICE=c189:1\nNAME=a\\x20b\\x5c\\xzz\nnoequals\n_X=1\n"
      "SUBSYSTEM=again\nEMPTY=",
      &l);
  EXPECT_EQ(Pairs(l),
            (P{{"SUBSYSTEM", "usb"}, {"DEVICE", "c189:1"}, {"NAME", "a b\\\\xzz"}, {"EMPTY", ""}}));
  EXPECT_EQ(l.bad_names(), 1u);  // _X
}

TEST(TextFieldList, AtMost32) {
  TextFieldList l;
  for (int i = 0; i < 33; i++) l.Add({}, "k" + std::to_string(i), "v", Unescape::kNone);
  EXPECT_EQ(l.size(), kMaxTextFields);
  EXPECT_TRUE(l.too_many());
  l.Clear();
  EXPECT_EQ(l.size(), 0u);
  EXPECT_FALSE(l.too_many());
}

class TextSitesTest : public ContextTest {
 protected:
  TextSitesTest() : ContextTest(16u << 20) {}
  storage::Source Src(uint32_t uid) {
    storage::Source s;
    s.id = uid + 1;
    s.pid = 100;
    s.uid = uid;
    s.app = "t";
    s.comm = "t";
    return s;
  }
  // A text-stream line with the fields.
  void Line(uint32_t uid, const std::string &msg, const P &fields) {
    std::vector<TextField> v;
    for (const auto &[k, x] : fields) v.push_back({k, x});
    TextFields f;
    f.msg = msg;
    f.fields = &v;
    const storage::Source s = Src(uid);
    ASSERT_TRUE(text_->Append(s, TextKind::kText, 1, 6, 1, f, 0).ok());
  }
};

TEST_F(TextSitesTest, FieldSitesAndTheirArguments) {
  TextFields f;
  f.msg = "event";
  f.timestamp = "2003-10-11T22:14:15.003Z";
  f.sd = "[a@1 x=\"1\" y=\"t\\\"\"][b c=\"\"]";
  const storage::Source s = Src(1000);
  ASSERT_TRUE(text_->Append(s, TextKind::kRfc5424, 3, 4, 1, f, 0).ok());
  EXPECT_FALSE(text_->last_fields_fallback());
  f.kdict = "SUBSYSTEM=usb";
  ASSERT_TRUE(text_->Append(Src(0), TextKind::kKernel, 0, 6, 2, f, 0).ok());
  auto got = Flushed();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].file, "syslog:rfc5424");
  EXPECT_EQ(got[0].fmt,
            "%s%.0s%.0s%.0s%.0s\x1f"
            "a@1.x=%s a@1.y=%s b.c=%s");
  EXPECT_EQ(got[0].site_flags, LS_ST_F_FIELDS);
  EXPECT_EQ(got[0].line, 3u);
  EXPECT_EQ(ls_fields_check(got[0].fmt.data(), got[0].fmt.size(), 0), 3);
  // The kind's arguments as before, then the values.
  const std::string want[] = {
      "event", "2003-10-11T22:14:15.003Z", "", "", std::string(f.sd), "1", "t\"", ""};
  const auto *p = reinterpret_cast<const uint8_t *>(got[0].args.data());
  const uint8_t *end = p + got[0].args.size();
  for (const std::string &w : want) {
    ls_arg a{};
    const size_t n = ls_arg_get(LS_ARG_STR, p, end, &a);
    ASSERT_GT(n, 0u);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(a.s), a.len), w);
    p += n;
  }
  EXPECT_EQ(p, end);
  EXPECT_EQ(got[1].fmt, "%s%.0s%.0s%.0s\x1fSUBSYSTEM=%s");
  EXPECT_EQ(counters_.text_field_sites, 2u);
  EXPECT_EQ(counters_.text_fields_fallback, 0u);
}

TEST_F(TextSitesTest, NameSetsPerUidAreBounded) {
  // uid 1000 brings kMaxTextFieldSitesPerUid name sets; its next is stored
  // plain; a set already cached stays usable; another uid still gets its own.
  for (size_t i = 0; i < kMaxTextFieldSitesPerUid; i++) {
    Line(1000, "m", {{"k" + std::to_string(i), "v"}});
    ASSERT_FALSE(text_->last_fields_fallback()) << i;
  }
  Line(1000, "over", {{"new", "v"}});
  EXPECT_TRUE(text_->last_fields_fallback());
  Line(1000, "cached", {{"k0", "v"}});
  EXPECT_FALSE(text_->last_fields_fallback());
  Line(1001, "other uid", {{"new", "v"}});
  EXPECT_FALSE(text_->last_fields_fallback());
  EXPECT_EQ(counters_.text_field_sites, kMaxTextFieldSitesPerUid + 1);
  EXPECT_EQ(counters_.text_fields_fallback, 1u);
  auto got = Flushed();
  const OwnedRecord &over = got[kMaxTextFieldSitesPerUid];
  EXPECT_EQ(over.fmt, "%s");  // whole, as the plain kind
  EXPECT_EQ(over.site_flags, 0);
  EXPECT_EQ(over.args, std::string("\x04over"));
}

TEST_F(TextSitesTest, NameSetsAreBoundedInAll) {
  // Root (no per-uid bound) fills the global one.
  for (size_t i = 0; i < kMaxTextFieldSites; i++) {
    Line(0, "m", {{"k" + std::to_string(i), "v"}});
    ASSERT_FALSE(text_->last_fields_fallback()) << i;
  }
  EXPECT_EQ(text_->field_sites(), kMaxTextFieldSites);
  Line(0, "over", {{"new", "v"}});
  EXPECT_TRUE(text_->last_fields_fallback());
  Line(5, "over too", {{"new2", "v"}});
  EXPECT_TRUE(text_->last_fields_fallback());
  Line(0, "cached", {{"k1", "v"}});
  EXPECT_FALSE(text_->last_fields_fallback());
  EXPECT_EQ(counters_.text_fields_fallback, 2u);
}

TEST_F(TextSitesTest, TooManyFieldsIsStoredPlain) {
  TextFields f;
  f.msg = "many";
  std::string dict;
  for (size_t i = 0; i <= kMaxTextFields; i++) dict += "K" + std::to_string(i) + "=v\n";
  f.kdict = dict;
  ASSERT_TRUE(text_->Append(Src(0), TextKind::kKernel, 0, 6, 1, f, 0).ok());
  EXPECT_TRUE(text_->last_fields_fallback());
  auto got = Flushed();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].fmt, "%s%.0s%.0s%.0s");  // the dictionary stays in its argument
  EXPECT_NE(got[0].args.find("K32=v"), std::string::npos);
  EXPECT_EQ(counters_.text_fields_fallback, 1u);
  EXPECT_EQ(counters_.text_field_sites, 0u);
}

class TextSitesFullTableTest : public TextSitesTest {
 protected:
  TextSitesFullTableTest() { file_size_ = 1u << 20; }  // a 16 KiB string table
};

TEST_F(TextSitesFullTableTest, AFullStringTableStoresPlain) {
  const std::string name(60, 'n');
  size_t i = 0;
  for (; i < 2000; i++) {
    Line(0, "m", {{name + std::to_string(i), "v"}});
    if (text_->last_fields_fallback()) break;
  }
  ASSERT_LT(i, 2000u) << "the string table never filled";
  EXPECT_GT(i, 0u);
  EXPECT_EQ(counters_.text_fields_fallback, 1u);
  auto got = Flushed();
  EXPECT_EQ(got.back().fmt, "%s");
  EXPECT_EQ(got.back().site_flags, 0);
}

}  // namespace
}  // namespace logsink::test
