// fields_test.cc: proto/fields.h, the field list of a site (FORMAT.md,
// "Fields"): what a client may send, the daemon stores and a reader splits.
#include "logsink/proto/fields.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

std::string F(const std::string &msg, const std::string &list) { return msg + '\x1f' + list; }

int Check(const std::string &fmt, int trusted = 0) {
  return ls_fields_check(fmt.data(), fmt.size(), trusted);
}

struct Parsed {
  std::string name;
  char type;
  char arg_type;
};

std::vector<Parsed> Fields(const std::string &fmt) {
  std::vector<Parsed> out;
  const size_t msg = ls_fields_message_len(fmt.data(), fmt.size());
  size_t pos = msg;
  ls_field f;
  while (ls_field_next(fmt.data(), fmt.size(), msg, &pos, &f) > 0)
    out.push_back({std::string(f.name, f.name_len), f.type, f.arg_type});
  return out;
}

TEST(Fields, ATypedListSplitsFromItsMessage) {
  const std::string fmt = F("disk %s at %d%%", "user=%s req=%llu ok:bool=%d r=%f c=%c p=%p e=%m");
  EXPECT_EQ(ls_fields_message_len(fmt.data(), fmt.size()), 15u);
  EXPECT_EQ(Check(fmt), 7);
  const std::vector<Parsed> f = Fields(fmt);
  ASSERT_EQ(f.size(), 7u);
  EXPECT_EQ(f[0].name, "user");
  EXPECT_EQ(f[0].type, LS_FIELD_STR);
  EXPECT_EQ(f[1].type, LS_FIELD_UINT);
  EXPECT_EQ(f[2].name, "ok");
  EXPECT_EQ(f[2].type, LS_FIELD_BOOL);
  EXPECT_EQ(f[2].arg_type, LS_ARG_INT);
  EXPECT_EQ(f[3].type, LS_FIELD_DOUBLE);
  EXPECT_EQ(f[4].type, LS_FIELD_CHAR);
  EXPECT_EQ(f[5].type, LS_FIELD_PTR);
  EXPECT_EQ(f[6].type, LS_FIELD_STR);
  // The record's signature is the whole format's: the message's, then one
  // argument per field (%m takes none from the caller but one on the wire).
  char sig[LS_FMT_MAX_ARGS + 1];
  EXPECT_EQ(ls_fmt_signature(fmt.data(), fmt.size(), sig, sizeof sig), 9);
  EXPECT_STREQ(sig, "sisuifcps");
}

TEST(Fields, NamesFollowTheRule) {
  EXPECT_EQ(Check(F("m", "a.b@c-d_e9=%d")), 1);
  EXPECT_EQ(Check(F("m", "9lives=%d")), 1);
  EXPECT_EQ(Check(F("m", std::string(64, 'n') + "=%d")), 1);
  EXPECT_LT(Check(F("m", std::string(65, 'n') + "=%d")), 0);
  EXPECT_LT(Check(F("m", "=%d")), 0);
  EXPECT_LT(Check(F("m", ".a=%d")), 0);
  EXPECT_LT(Check(F("m", "-a=%d")), 0);
  EXPECT_LT(Check(F("m", "@a=%d")), 0);
  EXPECT_LT(Check(F("m", "a b=%d")), 0);
  EXPECT_LT(Check(F("m", "a/b=%d")), 0);
  EXPECT_LT(Check(F("m", "caf\xc3\xa9=%d")), 0);
  // Trusted names are the daemon's: refused to clients, read by readers.
  EXPECT_LT(Check(F("m", "_PID=%d")), 0);
  EXPECT_EQ(Check(F("m", "_PID=%d"), 1), 1);
  // Each name once.
  EXPECT_LT(Check(F("m", "a=%d b=%d a=%s")), 0);
  EXPECT_EQ(Check(F("m", "a=%d A=%d")), 2);
}

TEST(Fields, AFieldIsOneBareConversion) {
  EXPECT_EQ(Check(F("m", "a=%hhd b=%lu c=%zx d=%Lf e=%jd f=%ls")), 6);
  for (const char *bad :
       {"a=%5d", "a=%-d",    "a=%.3s",    "a=%*d",      "a=%%",      "a=%n",  "a=%1$d",
        "a=%",   "a=%d ",    " a=%d",     "a=%d  b=%d", "a=%d,b=%d", "a=x%d", "a=%dx",
        "a",     "a:int=%d", "a:bool=%s", "a:bool=%f",  "a:boo=%d",  ""}) {
    EXPECT_LT(Check(F("m", bad)), 0) << bad;
  }
  EXPECT_EQ(Check(F("m", "a:bool=%u")), 1);
}

TEST(Fields, TheMessageMustParseAndTheListMustExist) {
  EXPECT_LT(Check("no separator %d"), 0);
  EXPECT_LT(Check(F("bad %n", "a=%d")), 0);
  EXPECT_LT(Check(F("100%", "a=%d")), 0);  // the message's '%' eats the separator
  EXPECT_LT(Check(F("m", "a=%d") + '\x1f' + "b=%d"), 0);
  EXPECT_EQ(Check(F("", "a=%d")), 1);  // an empty message is a message
  // The whole signature stays within LS_FMT_MAX_ARGS.
  std::string list;
  for (int i = 0; i < LS_FMT_MAX_ARGS; i++) list += (i ? " f" : "f") + std::to_string(i) + "=%d";
  EXPECT_EQ(Check(F("m", list)), LS_FMT_MAX_ARGS);
  EXPECT_LT(Check(F("m %d", list)), 0);
}

}  // namespace
