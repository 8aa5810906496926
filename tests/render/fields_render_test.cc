// fields_render_test.cc: a record's named fields as readers show them
// (render/RENDERING.md, "Named fields"): a site with fields renders its
// message alone, its fields typed in JSON and verbose, each name once; a
// malformed list renders as a plain format; the format-5 "%.0s" strings;
// the trusted fields; -o short-fields (the short line, then " name=value"
// per field, quoted logfmt's way when needed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "logsink/proto/fields.h"
#include "logsink/proto/format.h"
#include "logsink/render/fields.h"
#include "logsink/render/printer.h"
#include "storage/ring_test_util.h"

namespace logsink::test {
namespace {

using render::OutputMode;
using render::Printer;
using storage::Record;

std::string_view Keep(std::string s) {
  static std::deque<std::string> kept;
  return kept.emplace_back(std::move(s));
}

Record Rec(const std::string &fmt, uint8_t flags, const std::string &args) {
  Record r;
  r.ts_ns = 1700000000ull * 1000000000ull;
  r.pid = 10;
  r.uid = 1000;
  r.gid = 1001;
  r.tid = 11;
  r.app = r.comm = "app";
  r.site_id = 7;
  r.site_known = true;
  r.site = {6, 3, Keep(fmt), "a.c", flags};
  r.args = Keep(args);
  return r;
}

std::string Line(OutputMode mode, const Record &r) {
  Printer p(mode, false, true);
  std::string out;
  p.Print(r, &out);
  return out;
}

const std::string kFmt =
    std::string("disk %s full\x1f") + "user=%s req=%llu ok:bool=%d r=%f n=%d c=%c";
std::string Values() {
  return Args().Str("sda").Str("alice").Uint(7).Int(1).Double(0.5).Int(-3).Char(0xe9).str();
}

TEST(FieldsRender, TheMessageAloneAndTheFieldsTypedInJson) {
  const Record r = Rec(kFmt, LS_ST_F_FIELDS, Values());
  EXPECT_EQ(Line(OutputMode::kCat, r), "disk sda full\n");
  const std::string j = Line(OutputMode::kJson, r);
  EXPECT_NE(j.find("\"msg\":\"disk sda full\",\"site\":7,\"fmt\":\"disk %s full\",\"file\":\"a.c\","
                   "\"line\":3,\"fields\":{\"user\":\"alice\",\"req\":7,\"ok\":true,\"r\":0.5,"
                   "\"n\":-3,\"c\":\"\xc3\xa9\"},\"args\":[\"sda\",\"alice\",7,1,0.5,-3,"
                   "\"\xc3\xa9\"]"),
            std::string::npos)
      << j;
  EXPECT_EQ(j.find("mismatch"), std::string::npos) << j;
}

TEST(FieldsRender, VerboseShowsEachFieldAsNamed) {
  const std::string v = Line(OutputMode::kVerbose, Rec(kFmt, LS_ST_F_FIELDS, Values()));
  EXPECT_NE(
      v.find("    FMT=disk %s full\n    FILE=a.c\n    LINE=3\n    FIELDS:\n        user=alice\n"
             "        req=7\n        ok=true\n        r=0.5\n        n=-3\n        c=\xc3\xa9\n"),
      std::string::npos)
      << v;
  EXPECT_NE(v.find("    MESSAGE=disk sda full\n"), std::string::npos) << v;
}

TEST(FieldsRender, WithoutTheFlagTheListIsText) {
  // The same bytes from a site without FIELDS (a 0x1F any client may have
  // written): one format, rendered whole, no fields.
  const Record r = Rec(kFmt, 0, Values());
  const std::string j = Line(OutputMode::kJson, r);
  EXPECT_NE(j.find("\"msg\":\"disk sda full\\u001fuser=alice req=7 ok:bool=1 r=0.500000 n=-3 "
                   "c=\xc3\xa9\""),
            std::string::npos)
      << j;
  EXPECT_EQ(j.find("\"fields\""), std::string::npos) << j;
}

TEST(FieldsRender, AMalformedListRendersAsAPlainFormat) {
  // The flag with a list that does not parse (a repeated name): plain.
  const std::string fmt = std::string("m %d\x1f") + "a=%d a=%d";
  const Record r = Rec(fmt, LS_ST_F_FIELDS, Args().Int(1).Int(2).Int(3).str());
  const std::string j = Line(OutputMode::kJson, r);
  EXPECT_NE(j.find("\"msg\":\"m 1\\u001fa=2 a=3\""), std::string::npos) << j;
  EXPECT_EQ(j.find("\"fields\""), std::string::npos) << j;
}

TEST(FieldsRender, ArgumentsThatDoNotDecodeShowNoFields) {
  // One field's argument missing: a mismatch, and no fields.
  const Record r = Rec(std::string("m %d\x1f") + "a=%d", LS_ST_F_FIELDS, Args().Int(1).str());
  const std::string j = Line(OutputMode::kJson, r);
  EXPECT_NE(j.find("\"mismatch\":true"), std::string::npos) << j;
  EXPECT_EQ(j.find("\"fields\""), std::string::npos) << j;
}

TEST(FieldsRender, FormatFiveStringsRepeatedNamesKeepTheLast) {
  // The Python client's "%.0s" NAME=VALUE strings: each name once, at its
  // first place, with its last value; args keep every one.
  const Record r = Rec("x %d%.0s%.0s%.0s", 0, Args().Int(1).Str("k=1").Str("j=2").Str("k=3").str());
  const std::string j = Line(OutputMode::kJson, r);
  EXPECT_NE(j.find("\"fields\":{\"k\":\"3\",\"j\":\"2\"},\"args\":[1,\"k=1\",\"j=2\",\"k=3\"]"),
            std::string::npos)
      << j;
}

TEST(FieldsRender, AFormatFiveStringNeverPassesForATrustedField) {
  // "_PID=1" has the form of a trusted field: an ordinary argument, not a
  // field; "_private=2" and "_1x=3" (the old Python client's names) are.
  const Record r =
      Rec("x%.0s%.0s%.0s", 0, Args().Str("_PID=1").Str("_private=2").Str("_1x=3").str());
  const std::string j = Line(OutputMode::kJson, r);
  EXPECT_NE(j.find("\"fields\":{\"_private\":\"2\",\"_1x\":\"3\"},"), std::string::npos) << j;
}

TEST(FieldsRender, RecordFieldsAndTheirText) {
  render::Format f;
  render::Compile(kFmt, &f, LS_ST_F_FIELDS);
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.fmt, "disk %s full");
  EXPECT_EQ(f.sig, "ssuific");
  const Record r = Rec(kFmt, LS_ST_F_FIELDS, Values());
  std::vector<render::FieldValue> v;
  render::RecordFields(r, f, &v);
  ASSERT_EQ(v.size(), 6u);
  std::vector<std::string> text;
  for (const auto &x : v) {
    std::string t(x.name);
    t += '=';
    render::AppendFieldText(x, &t);
    text.push_back(t);
  }
  EXPECT_EQ(text, (std::vector<std::string>{"user=alice", "req=7", "ok=true", "r=0.5", "n=-3",
                                            "c=\xc3\xa9"}));
  // A free-text kind's own arguments are never fields; the ones of its
  // list (a daemon-made site with FIELDS: RENDERING.md) are.
  Record t = Rec(std::string("%s\x1f") + "a=%s", LS_ST_F_FIELDS, Args().Str("x").Str("y").str());
  t.site.file = "text";
  render::Format tf;
  render::Compile(t.site.fmt, &tf, t.site.flags);
  render::RecordFields(t, tf, &v);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].name, "a");
  t.site.fmt = "%s%.0s";  // the kind's own hidden argument, no list
  t.site.flags = 0;
  t.args = Args().Str("x").Str("a=y").str();
  render::Compile(t.site.fmt, &tf, t.site.flags);
  render::RecordFields(t, tf, &v);
  EXPECT_TRUE(v.empty());
}

TEST(FieldsRender, TrustedFieldsComeFromTheSource) {
  Record r = Rec("m", 0, "");
  r.unit = "web.service";
  r.boot_id[0] = 0xab;
  std::string v;
  ASSERT_TRUE(render::TrustedField(r, "_PID", &v));
  EXPECT_EQ(v, "10");
  ASSERT_TRUE(render::TrustedField(r, "_UID", &v));
  EXPECT_EQ(v, "1000");
  ASSERT_TRUE(render::TrustedField(r, "_GID", &v));
  EXPECT_EQ(v, "1001");
  ASSERT_TRUE(render::TrustedField(r, "_COMM", &v));
  EXPECT_EQ(v, "app");
  ASSERT_TRUE(render::TrustedField(r, "_SYSTEMD_UNIT", &v));
  EXPECT_EQ(v, "web.service");
  ASSERT_TRUE(render::TrustedField(r, "_BOOT_ID", &v));
  EXPECT_EQ(v, "ab000000000000000000000000000000");
  ASSERT_TRUE(render::TrustedField(r, "_TID", &v));
  EXPECT_EQ(v, "11");
  EXPECT_FALSE(render::TrustedField(r, "_HOSTNAME", &v));
  EXPECT_FALSE(render::TrustedField(r, "PID", &v));
  r.unit = "";
  EXPECT_FALSE(render::TrustedField(r, "_SYSTEMD_UNIT", &v));
  r.boot_id = {};  // a block without a boot: none (JSON's boot_id is "")
  EXPECT_FALSE(render::TrustedField(r, "_BOOT_ID", &v));
}

// -o short-fields: the short line (timestamp, prefix, message as short
// writes them), then " name=value" per field in the record's order.
std::string WithoutNewline(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

TEST(FieldsRender, ShortFieldsIsTheShortLineThenTheFieldsTyped) {
  const Record r = Rec(kFmt, LS_ST_F_FIELDS, Values());
  EXPECT_EQ(Line(OutputMode::kShortFields, r),
            WithoutNewline(Line(OutputMode::kShort, r)) +
                " user=alice req=7 ok=true r=0.5 n=-3 c=\xc3\xa9\n");
  EXPECT_EQ(Line(OutputMode::kShortFields, r),
            "2023-11-14T22:13:20.000000+0000 app[10]: <info> disk sda full user=alice req=7 "
            "ok=true r=0.5 n=-3 c=\xc3\xa9\n");
  // Each type's text: the largest u64 and a negative i64 in decimal (as
  // narrowed by their length), a false bool, doubles in their shortest
  // round-trip form whatever the conversion, a pointer in hex.
  const std::string fmt =
      std::string("t\x1f") + "u=%llu i=%lld h=%hhd b:bool=%d g=%g e=%e inf=%f p=%p";
  const Record t = Rec(fmt, LS_ST_F_FIELDS,
                       Args()
                           .Uint(UINT64_MAX)
                           .Int(INT64_MIN)
                           .Int(257)
                           .Int(0)
                           .Double(1e20)
                           .Double(0.1)
                           .Double(-HUGE_VAL)
                           .Ptr(0xbeef)
                           .str());
  const std::string line = Line(OutputMode::kShortFields, t);
  EXPECT_EQ(line.substr(line.find("> t ") + 2),
            "t u=18446744073709551615 i=-9223372036854775808 h=1 b=false g=1e+20 e=0.1 "
            "inf=-inf p=0xbeef\n");
}

TEST(FieldsRender, ShortFieldsAsRenderingMdShowsIt) {
  const Record r =
      Rec(std::string("disk %s full\x1f") + "user=%s req=%llu ok:bool=%d note=%s esc=%s",
          LS_ST_F_FIELDS,
          Args().Str("sda").Str("alice").Uint(7).Int(1).Str("two words").Str("\x1b[2J").str());
  EXPECT_EQ(Line(OutputMode::kShortFields, r),
            "2023-11-14T22:13:20.000000+0000 app[10]: <info> disk sda full user=alice req=7 "
            "ok=true note=\"two words\" esc=\"\\x1b[2J\"\n");
}

TEST(FieldsRender, ShortFieldsQuotesValuesLogfmtsWay) {
  // One string field per case; what follows "q " on the line.
  struct Case {
    std::string value, shown;
  } cases[] = {
      {"alice", "v=alice"},
      {"two words", "v=\"two words\""},
      {"k=v", "v=\"k=v\""},
      {"say \"hi\"", "v=\"say \\\"hi\\\"\""},
      {"q\"", "v=\"q\\\"\""},
      // A backslash alone needs no quotes (a bare value holds no escape);
      // quoted, it is doubled.
      {"C:\\dir", "v=C:\\dir"},
      {"a b\\c", "v=\"a b\\\\c\""},
      {"", "v=\"\""},
      // Control bytes: quoted and escaped as the terminal escaping does
      // (\xNN, \n), so a raw ESC never reaches the terminal and cannot be
      // told from the same text written out.
      {"\x1b[31mred", "v=\"\\x1b[31mred\""},
      {"\\x1b[31mred", "v=\\x1b[31mred"},
      {"line\nnext", "v=\"line\\nnext\""},
      {"tab\there", "v=\"tab\there\""},
      {"del\x7f", "v=\"del\\x7f\""},
      // UTF-8: printable is copied bare; invalid bytes, C1 controls and
      // invisible characters are quoted and escaped as in the message.
      {"na\xc3\xafve", "v=na\xc3\xafve"},
      {"\xe2\x82\xac 5", "v=\"\xe2\x82\xac 5\""},
      {"bad\xff", "v=\"bad\\xff\""},
      {"c1\xc2\x9b", "v=\"c1\\xc2\\x9b\""},
      {"exe\xe2\x80\xaetxt", "v=\"exe\\u202etxt\""},
  };
  const std::string fmt = std::string("q\x1f") + "v=%s";
  for (const Case &c : cases) {
    const Record r = Rec(fmt, LS_ST_F_FIELDS, Args().Str(c.value).str());
    const std::string line = Line(OutputMode::kShortFields, r);
    EXPECT_EQ(line.substr(line.find("> q ") + 4), c.shown + "\n") << c.value;
  }
}

TEST(FieldsRender, ShortFieldsShowsEachNameOnceAndFormatFiveStrings) {
  // Each name once, at its first place with its last value (as JSON).
  const Record r = Rec("x %d%.0s%.0s%.0s%.0s", 0,
                       Args().Int(1).Str("k=1").Str("j=2 3").Str("k=3").Str("_private=4").str());
  EXPECT_EQ(Line(OutputMode::kShortFields, r),
            WithoutNewline(Line(OutputMode::kShort, r)) + " k=3 j=\"2 3\" _private=4\n");
}

TEST(FieldsRender, ShortFieldsTakesOutputFields) {
  const Record r = Rec(kFmt, LS_ST_F_FIELDS, Values());
  auto line = [](const Record &rec, std::vector<std::string> names) {
    Printer p(OutputMode::kShortFields, false, true);
    p.SetOutputFields(std::move(names));
    std::string out;
    p.Print(rec, &out);
    return out;
  };
  const std::string short_line = WithoutNewline(Line(OutputMode::kShort, r));
  // In the record's order, not the list's.
  EXPECT_EQ(line(r, {"ok", "user"}), short_line + " user=alice ok=true\n");
  EXPECT_EQ(line(r, {"r"}), short_line + " r=0.5\n");
  // None left: the short line exactly; a trusted field's name keeps no
  // stored field (as in JSON), not even one a format-5 string names so.
  EXPECT_EQ(line(r, {"nope"}), short_line + "\n");
  EXPECT_EQ(line(r, {"_PID"}), short_line + "\n");
  const Record old = Rec("x%.0s%.0s", 0, Args().Str("_private=2").Str("a=1").str());
  EXPECT_EQ(line(old, {"_private", "a"}), WithoutNewline(Line(OutputMode::kShort, old)) + " a=1\n");
}

TEST(FieldsRender, ShortFieldsWithoutFieldsIsTheShortLine) {
  std::vector<Record> recs = {
      Rec("plain %d", 0, Args().Int(1).str()),
      // The list without the flag is text; arguments that do not match the
      // signature have no fields.
      Rec(kFmt, 0, Values()),
      Rec(std::string("m %d\x1f") + "a=%d", LS_ST_F_FIELDS, Args().Int(1).str()),
  };
  Record unknown = Rec("m", 0, "");
  unknown.site_known = false;
  recs.push_back(unknown);
  Record dropped = Rec("m", 0, "");
  dropped.kind = Record::Kind::kDropped;
  dropped.dropped_count = 3;
  recs.push_back(dropped);
  for (const Record &r : recs) {
    EXPECT_EQ(Line(OutputMode::kShortFields, r), Line(OutputMode::kShort, r)) << r.site.fmt;
  }
}

TEST(FieldsRender, ShortFieldsColoursTheMessageAsShortDoes) {
  Record r = Rec(kFmt, LS_ST_F_FIELDS, Values());
  r.site.level = 3;  // err: red
  Printer coloured(OutputMode::kShortFields, true, true), plain(OutputMode::kShort, true, true);
  std::string line, short_line;
  coloured.Print(r, &line);
  plain.Print(r, &short_line);
  EXPECT_EQ(line, WithoutNewline(short_line) + " user=alice req=7 ok=true r=0.5 n=-3 c=\xc3\xa9\n");
  EXPECT_NE(short_line.find("\x1b[31mdisk sda full\x1b[0m\n"), std::string::npos) << short_line;
}

TEST(FieldsRender, ShortFieldsIsAShortModeByName) {
  OutputMode m = OutputMode::kJson;
  ASSERT_TRUE(render::ParseOutputMode("short-fields", &m));
  EXPECT_EQ(m, OutputMode::kShortFields);
  EXPECT_TRUE(render::IsShortMode(m));
  EXPECT_NE(std::string(render::kOutputModeNames).find("short-fields"), std::string::npos);
  for (const char *name :
       {"short", "short-iso", "short-precise", "short-unix", "short-monotonic"}) {
    ASSERT_TRUE(render::ParseOutputMode(name, &m)) << name;
    EXPECT_TRUE(render::IsShortMode(m)) << name;
  }
  for (const char *name : {"cat", "verbose", "json", "json-pretty", "raw"}) {
    ASSERT_TRUE(render::ParseOutputMode(name, &m)) << name;
    EXPECT_FALSE(render::IsShortMode(m)) << name;
  }
}

}  // namespace
}  // namespace logsink::test
