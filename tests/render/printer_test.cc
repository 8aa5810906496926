// printer_test.cc: render::Printer, one test per rule of render/RENDERING.md
// that a reader written from the documents must follow and that the
// message renderer's tests do not reach: what a line shows of a record (its
// time, the prefix without a process name), the JSON object (key order,
// argument types, unknown and inline sites, DROPPED reports) and the cuts
// of fractions of a second. Records are built by hand, or written with
// RingWriter and read back where the reader decides a field.
#include "logsink/render/printer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/records.h"
#include "common/temp_dir.h"
#include "logsink/proto/format.h"
#include "logsink/storage/ring.h"
#include "storage/ring_test_util.h"

namespace logsink::test {
namespace {

using render::OutputMode;
using render::Printer;
using storage::Record;

constexpr uint64_t kSec = 1000000000ull;
// 2023-11-14T22:13:20Z.
constexpr uint64_t kT0 = 1700000000ull * kSec;

// Keeps s for the rest of the test program (a Record holds views).
std::string_view Keep(std::string s) {
  static std::deque<std::string> kept;
  return kept.emplace_back(std::move(s));
}

// A record of site 7 ("%d", info) from app "app", comm "app", pid 10.
Record Rec(const std::string &fmt, const std::string &args) {
  return Record{.kind = Record::Kind::kRecord,
                .seq = 5,
                .block_seq = 0,
                .ts_ns = kT0,
                .tid = 11,
                .source_id = 1,
                .pid = 10,
                .uid = 1000,
                .gid = 1000,
                .app = "app",
                .comm = "app",
                .unit = "",
                .site_id = 7,
                .site_known = true,
                .site = {6, 3, Keep(fmt), "a.c"},
                .args = Keep(args)};
}

std::string Line(OutputMode mode, const Record &r) {
  Printer p(mode, false, true);
  std::string out;
  p.Print(r, &out);
  return out;
}

// The top-level keys of one compact JSON object, in order.
std::vector<std::string> Keys(const std::string &j) {
  std::vector<std::string> keys;
  int depth = 0;
  bool in_str = false, key = false;
  std::string cur;
  for (size_t i = 0; i < j.size(); i++) {
    const char c = j[i];
    if (in_str) {
      if (c == '\\') {
        cur += j[++i];
      } else if (c == '"') {
        in_str = false;
        if (key) keys.push_back(cur);
      } else {
        cur += c;
      }
      continue;
    }
    if (c == '"') {
      in_str = true;
      cur.clear();
      key = depth == 1 && (j[i - 1] == '{' || j[i - 1] == ',');
    } else if (c == '{' || c == '[') {
      depth++;
    } else if (c == '}' || c == ']') {
      depth--;
    }
  }
  return keys;
}

// RENDERING.md, "Time": the time shown is the record's own timestamp, even
// one the filters do not trust (more than 60 s before its block opened);
// only filters use the block's open time instead.
TEST(Printer, ShowsTheRecordsOwnTimestampEvenWhenFiltersDoNot) {
  Record r = Rec("%d", Args().Int(1).str());
  r.ts_ns = kT0;
  r.block_opened_ns = kT0 + 3600 * kSec;  // a clock an hour behind
  ASSERT_EQ(storage::FilterTime(r), r.block_opened_ns);
  EXPECT_EQ(Line(OutputMode::kShort, r).substr(0, 31), "2023-11-14T22:13:20.000000+0000");
  const std::string j = Line(OutputMode::kJson, r);
  EXPECT_NE(j.find("\"ts_ns\":1700000000000000000,"), std::string::npos) << j;
  EXPECT_NE(j.find("\"ts\":\"2023-11-14T22:13:20.000000000Z\""), std::string::npos) << j;
}

// RENDERING.md, "Escaping": the prefix names the app label, else comm, else
// "?"; a label with an empty comm (the process was gone before the daemon
// read /proc) shows alone, without "()".
TEST(Printer, PrefixWithoutAProcessName) {
  Record r = Rec("%d", Args().Int(1).str());
  r.uid = 0;
  r.pid = 4287;
  r.app = "gone";
  r.comm = "";
  EXPECT_NE(Line(OutputMode::kShort, r).find(" gone[4287]: <info> 1\n"), std::string::npos);
  r.pid = 4246;
  r.app = "";
  EXPECT_NE(Line(OutputMode::kShort, r).find(" ?[4246]: <info> 1\n"), std::string::npos);
  r.comm = "sshd";
  EXPECT_NE(Line(OutputMode::kShort, r).find(" sshd[4246]: <info> 1\n"), std::string::npos);
}

// RENDERING.md, "JSON": the order of the keys, for a record and for a
// DROPPED report.
TEST(Printer, JsonKeyOrder) {
  const std::vector<std::string> head = {"seq",   "seq_str",  "ts_ns", "ts_ns_str", "ts",
                                         "level", "priority", "pid",   "uid",       "gid",
                                         "app",   "comm",     "tid",   "msg"};
  const std::vector<std::string> tail = {"boot_id", "monotonic_ns", "monotonic_ns_str", "unit"};
  auto keys = [&](std::vector<std::string> middle) {
    std::vector<std::string> k = head;
    k.insert(k.end(), middle.begin(), middle.end());
    k.insert(k.end(), tail.begin(), tail.end());
    return k;
  };
  Record r = Rec("%d", Args().Int(1).str());
  r.truncated = 3;
  EXPECT_EQ(Keys(Line(OutputMode::kJson, r)),
            keys({"site", "fmt", "file", "line", "args", "truncated"}));
  // A mismatch: the undecoded bytes, exact copies and the mark after args.
  Record m = Rec("%d", Args().Int(int64_t(1) << 60).str() + "\xff");
  EXPECT_EQ(Keys(Line(OutputMode::kJson, m)),
            keys({"site", "fmt", "file", "line", "args", "args_raw", "args_str", "mismatch"}));
  Record d;
  d.kind = Record::Kind::kDropped;
  d.dropped_count = 4;
  d.dropped_since_ns = kT0;
  EXPECT_EQ(Keys(Line(OutputMode::kJson, d)),
            keys({"dropped", "dropped_since_ns", "dropped_since_ns_str"}));
}

// RENDERING.md, "Arguments and narrowing": in JSON args a %c is a string of
// the character, a %p a string "0x..", a non-finite double the string the
// message shows for it.
TEST(Printer, JsonTypesOfCharPointerAndNonFiniteDoubles) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Record r = Rec("%c %p %p %f %f %f %f %f", Args()
                                                .Char('A')
                                                .Ptr(0x12)
                                                .Ptr(0)
                                                .Double(nan)
                                                .Double(-nan)
                                                .Double(inf)
                                                .Double(-inf)
                                                .Double(0.5)
                                                .str());
  const std::string j = Line(OutputMode::kJson, r);
  EXPECT_NE(j.find("\"msg\":\"A 0x12 (nil) nan -nan inf -inf 0.500000\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"args\":[\"A\",\"0x12\",\"0x0\",\"nan\",\"-nan\",\"inf\",\"-inf\",0.5]"),
            std::string::npos)
      << j;
}

// RENDERING.md, "Records that do not render": an unknown site is a
// mismatch in JSON too, at level info, with its id and no fmt.
TEST(Printer, UnknownSiteIsAMismatch) {
  Record r = Rec("", "\x01\x02");
  r.site_id = 42;
  r.site_known = false;
  r.site = storage::Site();
  const std::string j = Line(OutputMode::kJson, r);
  EXPECT_NE(j.find("\"level\":\"info\",\"priority\":6,"), std::string::npos) << j;
  EXPECT_NE(j.find(",\"site\":42,\"unknown_site\":true,\"args\":[],\"args_raw\":\"0102\","
                   "\"mismatch\":true,"),
            std::string::npos)
      << j;
  EXPECT_EQ(j.find("\"fmt\""), std::string::npos) << j;
  EXPECT_NE(Line(OutputMode::kShort, r).find(": <info> [unknown format #42] args=[hex:0102]\n"),
            std::string::npos);
}

// RENDERING.md, "Records that do not render": the raw argument list
// separates its elements with ", " (comma and space), JSON's with ",".
TEST(Printer, ArgumentListSeparators) {
  Record r = Rec("%d %s", Args().Int(-5).Str("x").str());
  EXPECT_NE(Line(OutputMode::kRaw, r).find(" args=[i:-5, s:\"x\"]\n"), std::string::npos);
  EXPECT_NE(Line(OutputMode::kJson, r).find("\"args\":[-5,\"x\"]"), std::string::npos);
  Record m = Rec("%d %d", Args().Int(-5).str() + "\xff");
  EXPECT_NE(Line(OutputMode::kShort, m)
                .find("[logsink: format/argument mismatch] fmt=\"%d %d\" args=[i:-5, hex:ff]\n"),
            std::string::npos)
      << Line(OutputMode::kShort, m);
}

// RENDERING.md, "Time": fractions of a second are cut, never rounded: the
// short time's microseconds, short-monotonic's microseconds and a DROPPED
// report's milliseconds.
TEST(Printer, FractionsOfASecondAreCut) {
  Record r = Rec("%d", Args().Int(1).str());
  r.ts_ns = kT0 + kSec - 1;  // 22:13:20.999999999
  EXPECT_EQ(Line(OutputMode::kShort, r).substr(0, 31), "2023-11-14T22:13:20.999999+0000");
  r.block_open_real_ns = kT0;
  r.block_open_mono_ns = kSec;  // the record: 1.999999999 s after boot
  EXPECT_EQ(Line(OutputMode::kShortMonotonic, r).substr(0, 15), "[    1.999999] ");
  Record d;
  d.kind = Record::Kind::kDropped;
  d.dropped_count = 2;
  d.dropped_since_ns = kT0 + kSec - 1;
  EXPECT_NE(Line(OutputMode::kShort, d)
                .find("-- 2 records dropped by the client since 2023-11-14 22:13:20.999 +0000 --"),
            std::string::npos);
}

// RENDERING.md, "JSON": a record of an inline site (the string table was
// full) has "site":0 and its format, file and line; a DROPPED report has
// "tid":0 whatever thread the source's records came from. Both as the ring
// reader gives them.
TEST(Printer, InlineSitesAndDroppedReportsAsReadBack) {
  TempDir dir;
  const std::string path = dir.path() + "/ring";
  storage::WriterOptions o;
  o.file_size = 4 << 20;
  std::unique_ptr<storage::RingWriter> w;
  ASSERT_TRUE(storage::RingWriter::Open(storage::Env::Default(), path, o, &w).ok());
  storage::Source src{1, 10, 1000, 1000, "app", "app"};
  const storage::Site site{6, 12, "n=%d", "b.c"};
  const std::string args = Args().Int(3).str();
  storage::RecordIn in;
  in.source = &src;
  in.tid = 77;
  in.site_id = 0;
  in.inline_site = &site;
  in.signature = "i";
  in.ts_ns = kT0;
  in.args = reinterpret_cast<const uint8_t *>(args.data());
  in.args_len = args.size();
  ASSERT_TRUE(w->Append(in).ok());
  ASSERT_TRUE(w->AppendDropped(src, kT0 + 1, 9, kT0).ok());
  ASSERT_TRUE(w->Flush().ok());
  w.reset();

  std::unique_ptr<storage::RingReader> r;
  ASSERT_TRUE(storage::RingReader::Open(storage::Env::Default(), path, nullptr, &r).ok());
  ASSERT_TRUE(r->SeekOldest().ok());
  Printer p(OutputMode::kJson, false, true);
  std::vector<std::string> lines;
  Record rec;
  while (r->Next(&rec).ok()) {
    std::string line;
    p.Print(rec, &line);
    lines.push_back(line);
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("\"tid\":77,\"msg\":\"n=3\",\"site\":0,\"fmt\":\"n=%d\",\"file\":\"b.c\","
                          "\"line\":12,"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("\"tid\":0,\"msg\":\"-- 9 records dropped"), std::string::npos)
      << lines[1];
}

// RENDERING.md, "Named fields": SetOutputFields (--output-fields) keeps
// only the fields it names, in the record's order, in json's "fields" (left
// out when none remains), json-pretty's and verbose's name=value lines; the
// record's own keys, args with every argument among them, stay. Empty: all.
// A copy of the printer (the render pool's) keeps the list.
TEST(Printer, OutputFieldsKeepsOnlyTheNamedFields) {
  Record r = Rec("disk %s\x1fuser=%s n=%lld ok:bool=%d",
                 Args().Str("sda").Str("alice").Int(-5).Int(1).str());
  r.site.flags = LS_ST_F_FIELDS;
  auto print = [&](OutputMode mode, std::vector<std::string> names, const Record &rec) {
    Printer p(mode, false, true);
    p.SetOutputFields(std::move(names));
    Printer copy(p);
    std::string out, out2;
    p.Print(rec, &out);
    copy.Print(rec, &out2);
    EXPECT_EQ(out, out2) << "a copy prints the same";
    return out;
  };
  const std::string args = ",\"args\":[\"sda\",\"alice\",-5,1]";
  std::string j = print(OutputMode::kJson, {}, r);
  EXPECT_NE(j.find(",\"fields\":{\"user\":\"alice\",\"n\":-5,\"ok\":true}" + args),
            std::string::npos)
      << j;
  // The record's order, not the list's; a name no field has adds nothing.
  j = print(OutputMode::kJson, {"ok", "nope", "user"}, r);
  EXPECT_NE(j.find(",\"fields\":{\"user\":\"alice\",\"ok\":true}" + args), std::string::npos) << j;
  EXPECT_NE(j.find("\"msg\":\"disk sda\","), std::string::npos) << j;
  EXPECT_NE(j.find("\"fmt\":\"disk %s\","), std::string::npos) << j;
  // Byte for byte: no case folding, no prefix.
  j = print(OutputMode::kJson, {"User", "o", "_PID"}, r);
  EXPECT_EQ(j.find("\"fields\""), std::string::npos) << j;
  EXPECT_EQ(Keys(j), Keys(print(OutputMode::kJson, {}, Rec("disk %s", Args().Str("sda").str()))))
      << j;
  EXPECT_NE(j.find(args), std::string::npos) << j;
  EXPECT_NE(j.find("\"pid\":10,"), std::string::npos) << j;

  std::string v = print(OutputMode::kVerbose, {"n"}, r);
  EXPECT_NE(v.find("    LINE=3\n    FIELDS:\n        n=-5\n"), std::string::npos) << v;
  EXPECT_EQ(v.find("user="), std::string::npos) << v;
  EXPECT_EQ(v.find("ok="), std::string::npos) << v;
  EXPECT_NE(v.find("    FMT=disk %s\n"), std::string::npos) << v;
  EXPECT_NE(v.find("    PID=10\n"), std::string::npos) << v;
  EXPECT_NE(v.find("    MESSAGE=disk sda\n"), std::string::npos) << v;
  v = print(OutputMode::kVerbose, {}, r);
  EXPECT_NE(v.find("    LINE=3\n    FIELDS:\n        user=alice\n        n=-5\n        ok=true\n"),
            std::string::npos)
      << v;

  std::string pretty = print(OutputMode::kJsonPretty, {"user"}, r);
  EXPECT_NE(pretty.find("  \"fields\": {\n    \"user\": \"alice\"\n  },\n"), std::string::npos)
      << pretty;
  EXPECT_EQ(pretty.find("\"n\":"), std::string::npos) << pretty;

  // The other modes show no fields: nothing changes.
  for (OutputMode m : {OutputMode::kShort, OutputMode::kCat, OutputMode::kRaw})
    EXPECT_EQ(print(m, {"user"}, r), print(m, {}, r));

  // A format-5 record's "%.0s" NAME=VALUE strings are fields too.
  Record legacy = Rec("x %d%.0s%.0s", Args().Int(9).Str("user=carol").Str("team=ops").str());
  j = print(OutputMode::kJson, {"team"}, legacy);
  EXPECT_NE(j.find(",\"fields\":{\"team\":\"ops\"},\"args\":[9,\"user=carol\",\"team=ops\"]"),
            std::string::npos)
      << j;
  // A stored field whose name starts with '_' (only a typed site may have
  // one: the daemon's own) is never kept with a list, even one naming it:
  // in the list such a name is a trusted field's.
  Record own = Rec("m\x1f_PID=%d a=%s", Args().Int(1).Str("b").str());
  own.site.flags = LS_ST_F_FIELDS;
  j = print(OutputMode::kJson, {}, own);
  EXPECT_NE(j.find(",\"fields\":{\"_PID\":1,\"a\":\"b\"}"), std::string::npos) << j;
  j = print(OutputMode::kJson, {"_PID", "a"}, own);
  EXPECT_NE(j.find(",\"fields\":{\"a\":\"b\"},"), std::string::npos) << j;
  j = print(OutputMode::kJson, {"_PID"}, own);
  EXPECT_EQ(j.find("\"fields\""), std::string::npos) << j;
}

}  // namespace
}  // namespace logsink::test
