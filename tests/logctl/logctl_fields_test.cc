// logctl_fields_test.cc: reading by named field, as journalctl does:
// FIELD=VALUE matches (one field's values OR, different fields AND, '+'
// between groups), the trusted fields (_PID, ...), -F FIELD's distinct
// values, the usage errors of bad names, against rings written with
// RingWriter (sites with typed fields, and format-5 "%.0s" NAME=VALUE
// strings), on the one-thread and the pooled read paths, with -f, and
// through the daemon (a user who may not read the ring file); and
// --output-fields, which limits the named fields json and verbose show;
// -o short-fields, the short line with the fields after the message.
#include <grp.h>

#include <deque>
#include <set>

#include "cli_fixture.h"
#include "common/daemon_process.h"
#include "common/ring_check.h"
#include "daemon/harness.h"
#include "logsink/proto/fields.h"
#include "logsink/proto/format.h"

namespace logsink::test {
namespace {

constexpr uint32_t kOtherPid = 777;
// The typed site: a message of one argument, then the fields.
const char kTyped[] = "msg %s\x1fuser=%s n=%lld ok:bool=%d";

class LogctlFieldsTest : public LogctlTest {
 protected:
  // Interns a site with flags (TestRing::Intern has none) at level (info
  // unless given); the strings live as long as the fixture.
  uint32_t Intern(TestRing *ring, const std::string &fmt, uint8_t flags, uint8_t level = 6) {
    keep_.push_back(fmt);
    keep_.push_back("f.c");
    Site s;
    s.level = level;
    s.line = 7;
    s.fmt = keep_[keep_.size() - 2];
    s.file = keep_.back();
    s.flags = flags;
    const uint32_t id = ring->writer()->Intern(s);
    EXPECT_GT(id, 0u);
    return id;
  }
  // One typed record: "msg <m>" with user, n and ok.
  void Typed(TestRing *ring, uint32_t site, const std::string &m, const std::string &user,
             int64_t n, bool ok, uint64_t ts, const Source *src = nullptr) {
    ring->Add(site, "ssii", Args().s(m).s(user).i(n).i(ok ? 1 : 0).bytes(), ts, src);
  }

  // The ring most tests read (messages with -o cat):
  //   msg a0  user=alice n=5 ok=true    pid 4242
  //   msg a1  user=bob   n=5 ok=false   pid 4242
  //   msg a2  user=alice n=7 ok=true    pid 4242
  //   msg a3  user=<ESC>]0;x<BEL>eve n=-1 ok=false  pid 4242
  //   x 9     user=carol (format 5: "x %d%.0s")     pid 4242
  //   plain 1 (no fields)                            pid 777
  //   y       "_PID=4242" claimed as a "%.0s" field  pid 777
  std::string Ring() {
    const std::string f = dir_.File("f.ring");
    TestRing ring(f);
    const uint32_t typed = Intern(&ring, kTyped, LS_ST_F_FIELDS);
    const uint32_t legacy = Intern(&ring, "x %d%.0s", 0);
    const uint32_t plain = Intern(&ring, "plain %d", 0);
    const uint32_t spoof = Intern(&ring, "y%.0s", 0);
    Typed(&ring, typed, "a0", "alice", 5, true, kT0);
    Typed(&ring, typed, "a1", "bob", 5, false, kT0 + kMs);
    Typed(&ring, typed, "a2", "alice", 7, true, kT0 + 2 * kMs);
    Typed(&ring, typed, "a3",
          "\x1b]0;x\x07"
          "eve",
          -1, false, kT0 + 3 * kMs);
    ring.Add(legacy, "is", Args().i(9).s("user=carol").bytes(), kT0 + 4 * kMs);
    Source other = ring.source();
    other.id = 2;
    other.pid = kOtherPid;
    ring.Add(plain, "i", Args().i(1).bytes(), kT0 + 5 * kMs, &other);
    ring.Add(spoof, "s", Args().s("_PID=4242").bytes(), kT0 + 6 * kMs, &other);
    ring.Close();
    return f;
  }

  // `logctl cat -o cat --file f ARGS...`: the messages, or a failure.
  std::vector<std::string> Messages(const std::string &f, std::vector<std::string> args) {
    args.insert(args.begin(), {"cat", "-o", "cat", "--file", f});
    Result r = RunLogctl(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return Lines(r.out);
  }
  using V = std::vector<std::string>;
  std::deque<std::string> keep_;
};

TEST_F(LogctlFieldsTest, OneValueMatchesOnlyThoseRecords) {
  const std::string f = Ring();
  EXPECT_EQ(Messages(f, {"user=alice"}), V({"msg a0", "msg a2"}));
  EXPECT_EQ(Messages(f, {"user=bob"}), V({"msg a1"}));
  EXPECT_EQ(Messages(f, {"user=nobody"}), V());
  // Byte for byte: no prefix, no case folding.
  EXPECT_EQ(Messages(f, {"user=alic"}), V());
  EXPECT_EQ(Messages(f, {"user=Alice"}), V());
  // Numbers and bools by their text.
  EXPECT_EQ(Messages(f, {"n=-1"}), V({"msg a3"}));
  EXPECT_EQ(Messages(f, {"user=\x1b]0;x\x07"
                         "eve"}),
            V({"msg a3"}));  // the raw bytes
  EXPECT_EQ(Messages(f, {"ok=false"}), V({"msg a1", "msg a3"}));
  EXPECT_EQ(Messages(f, {"ok=1"}), V());
  // A field no record has, and a message's text, match nothing.
  EXPECT_EQ(Messages(f, {"nope=5"}), V());
  EXPECT_EQ(Messages(f, {"msg=a0"}), V());
}

TEST_F(LogctlFieldsTest, ValuesOfOneFieldOrDifferentFieldsAndPlusOrsGroups) {
  const std::string f = Ring();
  EXPECT_EQ(Messages(f, {"user=alice", "user=bob"}), V({"msg a0", "msg a1", "msg a2"}));
  EXPECT_EQ(Messages(f, {"user=alice", "n=5"}), V({"msg a0"}));
  EXPECT_EQ(Messages(f, {"n=5", "user=alice"}), V({"msg a0"}));
  EXPECT_EQ(Messages(f, {"user=alice", "user=bob", "n=5"}), V({"msg a0", "msg a1"}));
  EXPECT_EQ(Messages(f, {"user=alice", "ok=false"}), V());
  EXPECT_EQ(Messages(f, {"user=bob", "+", "n=7"}), V({"msg a1", "msg a2"}));
  EXPECT_EQ(Messages(f, {"user=alice", "n=5", "+", "user=carol"}), V({"msg a0", "x 9"}));
  // Matches and the other filters all apply.
  EXPECT_EQ(Messages(f, {"user=alice", "--until", "@1763892000.001"}), V({"msg a0"}));
  EXPECT_EQ(Messages(f, {"user=alice", "--grep", "a2"}), V({"msg a2"}));
  EXPECT_EQ(Messages(f, {"user=alice", "-p", "err"}), V());
}

TEST_F(LogctlFieldsTest, FormatFiveStringsMatchAsFields) {
  const std::string f = Ring();
  EXPECT_EQ(Messages(f, {"user=carol"}), V({"x 9"}));
  EXPECT_EQ(Messages(f, {"user=carol", "+", "user=bob"}), V({"msg a1", "x 9"}));
}

TEST_F(LogctlFieldsTest, TrustedFieldsComeFromTheSourceOnly) {
  const std::string f = Ring();
  // The "%.0s" "_PID=4242" of pid 777 is not a _PID of 4242.
  EXPECT_EQ(Messages(f, {"_PID=4242"}), V({"msg a0", "msg a1", "msg a2", "msg a3", "x 9"}));
  EXPECT_EQ(Messages(f, {"_PID=777"}), V({"plain 1", "y"}));
  EXPECT_EQ(Messages(f, {"_PID=4242", "user=bob"}), V({"msg a1"}));
  EXPECT_EQ(Messages(f, {"_UID=1000", "_COMM=testcomm", "n=7"}), V({"msg a2"}));
  EXPECT_EQ(Messages(f, {"_UID=0"}), V());
  // No unit: no _SYSTEMD_UNIT, not even an empty one.
  EXPECT_EQ(Messages(f, {"_SYSTEMD_UNIT="}), V());
}

TEST_F(LogctlFieldsTest, EveryReadingCommandAndNoCommandTakeMatches) {
  const std::string f = Ring();
  // No command, the match first or after the options (journalctl's forms).
  Result r = RunLogctl({"user=alice", "-o", "cat", "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out), V({"msg a0", "msg a2"}));
  r = RunLogctl({"-o", "cat", "--file", f, "user=bob"});
  EXPECT_EQ(Lines(r.out), V({"msg a1"}));
  r = RunLogctl({"-n", "1", "-o", "cat", "--file", f, "user=alice"});
  EXPECT_EQ(Lines(r.out), V({"msg a2"}));
  // tail counts matching records.
  r = RunLogctl({"tail", "-n", "1", "-o", "cat", "--file", f, "user=alice"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out), V({"msg a2"}));
  r = RunLogctl({"tail", "-n", "5", "-r", "-o", "cat", "--file", f, "_PID=777"});
  EXPECT_EQ(Lines(r.out), V({"y", "plain 1"}));
  r = RunLogctl({"export", "--format", "json", "--file", f, "n=5"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  json j = ParseJson(lines[1]);
  EXPECT_EQ(j["msg"], "msg a1");
  EXPECT_EQ(j["fields"]["user"], "bob");
  r = RunLogctl({"sites", "--json", "--file", f, "user=alice", "+", "user=carol"});
  ASSERT_EQ(r.status, 0) << r.err;
  lines = Lines(r.out);
  std::set<std::pair<std::string, int64_t>> sites;  // (fmt, records)
  for (const std::string &l : lines) {
    json s = ParseJson(l);
    if (s.contains("fmt")) sites.emplace(s["fmt"].get<std::string>(), s["records"].get<int64_t>());
  }
  EXPECT_EQ(sites.size(), 2u) << r.out;
  EXPECT_EQ(sites.count({"x %d%.0s", 1}), 1u) << r.out;
}

TEST_F(LogctlFieldsTest, FieldListsDistinctValuesInFirstSeenOrder) {
  const std::string f = Ring();
  Result r = RunLogctl({"cat", "-F", "user", "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Escaped as messages are.
  EXPECT_EQ(r.out, "alice\nbob\n\\x1b]0;x\\x07eve\ncarol\n");
  r = RunLogctl({"-F", "n", "--file", f});
  EXPECT_EQ(r.out, "5\n7\n-1\n");
  r = RunLogctl({"--field", "ok", "--file", f});
  EXPECT_EQ(r.out, "true\nfalse\n");
  r = RunLogctl({"--field=_PID", "--file", f});
  EXPECT_EQ(r.out, "4242\n777\n");
  // With filters and matches: the selection's values only.
  r = RunLogctl({"-F", "n", "--file", f, "user=alice"});
  EXPECT_EQ(r.out, "5\n7\n");
  r = RunLogctl({"-F", "user", "-S", "@1763892000.002", "--file", f});
  EXPECT_EQ(r.out, "alice\n\\x1b]0;x\\x07eve\ncarol\n");
  r = RunLogctl({"-F", "nope", "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  // JSON: one value per line, typed.
  r = RunLogctl({"-F", "n", "--json", "--file", f});
  EXPECT_EQ(r.out, "5\n7\n-1\n");
  r = RunLogctl({"-F", "ok", "-o", "json", "--file", f});
  EXPECT_EQ(r.out, "true\nfalse\n");
  r = RunLogctl({"-F", "user", "--json", "--file", f});
  EXPECT_EQ(r.out, "\"alice\"\n\"bob\"\n\"\\u001b]0;x\\u0007eve\"\n\"carol\"\n");
  r = RunLogctl({"-F", "_PID", "--json", "--file", f});
  EXPECT_EQ(r.out, "4242\n777\n");
  r = RunLogctl({"-F", "_COMM", "--json", "--file", f});
  EXPECT_EQ(r.out, "\"testcomm\"\n");
}

// --output-fields=LIST: json, json-pretty and verbose show the named fields
// it names only (in the record's order; "fields" left out when none
// remains); the record's own keys and args stay; a repeated option adds
// names; the other modes and the matches are unchanged; export --format
// json takes it too.
TEST_F(LogctlFieldsTest, OutputFieldsLimitsTheNamedFieldsShown) {
  const std::string f = Ring();
  auto json_lines = [&](std::vector<std::string> args) {
    args.push_back("--file");
    args.push_back(f);
    Result r = RunLogctl(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    std::vector<json> v;
    for (const std::string &l : Lines(r.out)) {
      v.push_back(ParseJson(l));
      EXPECT_FALSE(v.back().is_discarded()) << l;
    }
    return v;
  };
  std::vector<json> v = json_lines({"cat", "-o", "json", "--output-fields=ok,user", "n=5"});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0]["fields"], json::parse(R"({"user":"alice","ok":true})"));
  EXPECT_EQ(v[1]["fields"], json::parse(R"({"user":"bob","ok":false})"));
  EXPECT_EQ(v[0]["args"], json::parse(R"(["a0","alice",5,1])"));
  EXPECT_EQ(v[0]["msg"], "msg a0");
  EXPECT_EQ(v[0]["fmt"], "msg %s");
  EXPECT_EQ(v[0]["pid"], 4242);
  // Every record: a format-5 one's fields are limited too, and a record
  // left without any has no "fields"; the list's own names select nothing
  // else (_PID is the record's pid key, always there).
  v = json_lines({"--json", "--output-fields", "n", "--output-fields=_PID,n"});
  ASSERT_EQ(v.size(), 7u);
  for (size_t i = 0; i < 4; i++) {
    EXPECT_EQ(v[i]["fields"].size(), 1u) << v[i];
    EXPECT_TRUE(v[i]["fields"].contains("n")) << v[i];
  }
  EXPECT_EQ(v[3]["fields"]["n"], -1);
  for (size_t i = 4; i < 7; i++) EXPECT_FALSE(v[i].contains("fields")) << v[i];
  EXPECT_EQ(v[4]["args"], json::parse(R"([9,"user=carol"])"));
  EXPECT_EQ(v[5]["pid"], kOtherPid);
  v = json_lines({"-o", "json", "--output-fields=user", "user=carol"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]["fields"], json::parse(R"({"user":"carol"})"));
  // Without it: every field.
  v = json_lines({"-o", "json", "user=bob"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]["fields"], json::parse(R"({"user":"bob","n":5,"ok":false})"));

  // verbose: the name=value lines it names; the record's own lines stay.
  Result r = RunLogctl({"-o", "verbose", "--output-fields=ok", "--file", f, "user=bob"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("    LINE=7\n    FIELDS:\n        ok=false\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("user="), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("    n="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    MESSAGE=msg a1\n"), std::string::npos) << r.out;
  // json-pretty.
  r = RunLogctl({"-o", "json-pretty", "--output-fields=n", "--file", f, "user=bob"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  \"fields\": {\n    \"n\": 5\n  },\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"ok\":"), std::string::npos) << r.out;
  // Matches still read every field; short and cat show no fields anyway.
  EXPECT_EQ(Messages(f, {"--output-fields=n", "user=alice", "ok=true"}), V({"msg a0", "msg a2"}));
  r = RunLogctl({"tail", "-n", "2", "--utc", "--output-fields=n", "--file", f});
  Result plain = RunLogctl({"tail", "-n", "2", "--utc", "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  // -F lists its field whatever the list says.
  r = RunLogctl({"-F", "user", "--output-fields=n", "--file", f, "n=5"});
  EXPECT_EQ(r.out, "alice\nbob\n") << r.err;
  // export --format json.
  r = RunLogctl({"export", "--format", "json", "--output-fields=user", "--file", f, "n=7"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_EQ(ParseJson(lines[0])["fields"], json::parse(R"({"user":"alice"})")) << lines[0];
}

// -o short-fields: each line is the short one, then the record's named
// fields as name=value, quoted and escaped where logfmt needs it; a record
// without fields is its short line alone; --output-fields limits the
// fields; on a terminal it is coloured as short is (the message only).
TEST_F(LogctlFieldsTest, ShortFieldsShowsTheFieldsAfterTheShortLine) {
  const std::string f = Ring();
  Result r = RunLogctl({"cat", "-o", "short-fields", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const V lines = Lines(r.out);
  const V short_lines = Lines(RunLogctl({"cat", "--file", f}).out);
  ASSERT_EQ(lines.size(), 7u) << r.out;
  ASSERT_EQ(short_lines.size(), 7u);
  EXPECT_EQ(lines[0], Line(0, "testapp(testcomm)[4242]: <info> msg a0 user=alice n=5 ok=true"));
  EXPECT_EQ(lines[1], short_lines[1] + " user=bob n=5 ok=false");
  EXPECT_EQ(lines[2], short_lines[2] + " user=alice n=7 ok=true");
  // The escape sequence is quoted and escaped, never sent raw.
  EXPECT_EQ(lines[3], short_lines[3] + " user=\"\\x1b]0;x\\x07eve\" n=-1 ok=false");
  EXPECT_EQ(lines[4], short_lines[4] + " user=carol");  // format 5's "%.0s"
  // No fields (a plain site; "_PID=4242" is no field): the short line.
  EXPECT_EQ(lines[5], short_lines[5]);
  EXPECT_EQ(lines[6], short_lines[6]);

  r = RunLogctl({"cat", "-o", "short-fields", "--output-fields=ok,n", "--file", f, "user=alice"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out), V({short_lines[0] + " n=5 ok=true", short_lines[2] + " n=7 ok=true"}));

  // On a terminal: colours as short's, the fields after them.
  const std::string g = dir_.File("err.ring");
  {
    TestRing ring(g);
    Typed(&ring, Intern(&ring, kTyped, LS_ST_F_FIELDS, 3), "e", "dan", 2, true, kT0);
    ring.Close();
  }
  const std::string screen =
      RunOnTerminal({"cat", "--no-pager", "-o", "short-fields", "--file", g}, false);
  EXPECT_NE(screen.find("<err> \x1b[31mmsg e\x1b[0m user=dan n=2 ok=true\r\n"), std::string::npos)
      << screen;
}

TEST_F(LogctlFieldsTest, BadNamesAndWordsAreUsageErrors) {
  const std::string f = Ring();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"cat", "--file", f, ".user=alice"}, "'.user' is not a field name"},
      {{"cat", "--file", f, "us er=alice"}, "'us er' is not a field name"},
      {{"cat", "--file", f, "=alice"}, "'' is not a field name"},
      {{"cat", "--file", f, std::string(65, 'a') + "=x"}, "is not a field name"},
      {{"--file", f, "_FOO=1"}, "'_FOO' is not a trusted field"},
      {{"tail", "--file", f, "alice"}, "logctl: tail: unexpected argument 'alice'\n"},
      {{"cat", "--file", f, "+", "user=a"}, "'+' stands between two groups"},
      {{"cat", "--file", f, "user=a", "+"}, "'+' stands between two groups"},
      {{"cat", "--file", f, "user=a", "+", "+", "n=1"}, "'+' stands between two groups"},
      {{"export", "--file", f, "x y=1"}, "is not a field name"},
      {{"sites", "--file", f, "-x=1"}, "unknown option"},
      {{"cat", "-F", "bad name", "--file", f}, "'bad name' is not a field name"},
      {{"cat", "-F", "_NOPE", "--file", f}, "is not a trusted field"},
      {{"tail", "-F", "user", "--file", f}, "does not apply here"},
      {{"-F", "user", "-f", "--file", f}, "-F lists the values of the whole selection"},
      {{"-F", "user", "-n", "3", "--file", f}, "-F lists the values of the whole selection"},
      {{"-F", "user", "-r", "--file", f}, "no -r"},
      {{"stats", "--file", f, "user=alice"}, "unexpected argument"},
      {{"cat", "--file", f, "--output-fields="}, "'' is not a field name"},
      {{"cat", "--file", f, "--output-fields=user,,n"}, "'' is not a field name"},
      {{"cat", "--file", f, "--output-fields=user,"}, "'' is not a field name"},
      {{"--file", f, "--output-fields", "user,.x"},
       "bad field list 'user,.x' for --output-fields: '.x' is not a field name"},
      {{"--file", f, "--output-fields=_FOO"}, "'_FOO' is not a trusted field"},
      {{"sites", "--file", f, "--output-fields=user"}, "does not apply here"},
      {{"stats", "--file", f, "--output-fields=user"}, "does not apply here"},
  };
  for (const Case &c : cases) {
    Result r = RunLogctl(c.args);
    EXPECT_EQ(r.status, 2) << c.args.back() << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args.back() << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.args.back();
  }
}

// Enough records for several blocks: the pooled read (a second thread,
// whole blocks) and the plain one (LOGSINK_PLAIN_READ=1) match the same.
TEST_F(LogctlFieldsTest, PooledAndPlainReadsMatchTheSame) {
  const std::string f = dir_.File("big.ring");
  const int kN = 6000;
  {
    TestRing ring(f, 12288 + 256 * 4096);
    const uint32_t typed = Intern(&ring, kTyped, LS_ST_F_FIELDS);
    const char *const users[] = {"alice", "bob", "carol"};
    for (int i = 0; i < kN; i++)
      Typed(&ring, typed, std::to_string(i), users[i % 3], i % 7, i % 2, kT0 + i * kMs);
    ring.Close();
  }
  std::vector<std::string> want;
  for (int i = 0; i < kN; i++)
    if (i % 3 == 0 && i % 7 == 2) want.push_back("msg " + std::to_string(i));
  for (bool plain : {false, true}) {
    SpawnOptions o;
    if (plain) o.env = {{"LOGSINK_PLAIN_READ", "1"}};
    Result r = RunLogctl({"cat", "-o", "cat", "--file", f, "user=alice", "n=2"}, o);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(Lines(r.out), want) << "plain " << plain;
    r = RunLogctl({"-F", "user", "--file", f, "n=2", "+", "n=3"}, o);
    // First n=2 or n=3: i=2 (carol), i=3 (alice), i=10 (bob).
    EXPECT_EQ(r.out, "carol\nalice\nbob\n") << "plain " << plain;
    // --output-fields on both paths (the pool renders with a copy of the
    // printer): every record's fields are its n alone.
    r = RunLogctl({"cat", "--json", "--output-fields=n", "--file", f}, o);
    EXPECT_EQ(r.status, 0) << r.err;
    const auto lines = Lines(r.out);
    ASSERT_EQ(lines.size(), size_t(kN)) << "plain " << plain;
    size_t bad = 0;
    for (int i = 0; i < kN; i++) {
      const json j = ParseJson(lines[size_t(i)]);
      if (j.is_discarded() || j["fields"] != json{{"n", i % 7}}) {
        if (bad++ < 3) ADD_FAILURE() << "plain " << plain << ": " << lines[size_t(i)];
      }
    }
    EXPECT_EQ(bad, 0u) << "plain " << plain;
  }
}

// -F keeps at most 100000 distinct values: past them it stops, warns and
// exits 0 with those listed.
TEST_F(LogctlFieldsTest, FieldListIsBounded) {
  const std::string f = dir_.File("many.ring");
  const int kN = 100000 + 50;
  {
    TestRing ring(f, 12288 + 2048 * 4096);
    const uint32_t site = Intern(&ring, "tick\x1fn=%d", LS_ST_F_FIELDS);
    for (int i = 0; i < kN; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i);
    ring.Add(site, "i", Args().i(0).bytes(), kT0 + kN);  // seen already
    ring.Close();
  }
  Result r = RunLogctl({"-o", "cat", "--file", f});
  ASSERT_EQ(Lines(r.out).size(), size_t(kN) + 1) << "the ring must hold every record";
  r = RunLogctl({"-F", "n", "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 100000u);
  EXPECT_EQ(lines.front(), "0");
  EXPECT_EQ(lines.back(), "99999");
  EXPECT_EQ(r.err,
            "logctl: warning: -F n: stopped after 100000 distinct values; the rest of the "
            "selection was not read\n");
  // Below the bound: no warning.
  r = RunLogctl({"-F", "n", "--file", f, "n=5", "n=0"});
  EXPECT_EQ(r.out, "0\n5\n");
  EXPECT_EQ(r.err, "");
}

// -f: new records pass the matches too.
TEST_F(LogctlFieldsTest, FollowShowsNewMatchingRecordsOnly) {
  const std::string f = dir_.File("live.ring");
  TestRing ring(f);
  const uint32_t typed = Intern(&ring, kTyped, LS_ST_F_FIELDS);
  Typed(&ring, typed, "old-alice", "alice", 1, true, kT0);
  Typed(&ring, typed, "old-bob", "bob", 1, true, kT0 + kMs);
  ring.Flush();
  Proc p({"-f", "-o", "cat", "--file", f, "user=alice"});
  std::string line;
  ASSERT_TRUE(p.ReadLine(&line, 10000));
  EXPECT_EQ(line, "msg old-alice");
  Typed(&ring, typed, "new-bob", "bob", 2, true, kT0 + 2 * kMs);
  Typed(&ring, typed, "new-alice", "alice", 2, true, kT0 + 3 * kMs);
  ring.Flush();
  ASSERT_TRUE(p.ReadLine(&line, 10000));
  EXPECT_EQ(line, "msg new-alice");  // not new-bob
  p.Signal(SIGTERM);
  Result r = p.Finish(10000);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

// Through the daemon (a user outside the logsink group reads their own
// records): the matches apply the same; `logctl send a=b` still sends a=b.
TEST(LogctlFieldsDaemonTest, MatchesApplyThroughTheDaemonAndSendKeepsWords) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root, to act as another user";
  TempDir dir;
  Daemon d(dir);
  ASSERT_EQ(chmod(dir.path().c_str(), 0711), 0);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  SpawnOptions as;
  as.as_uid = 65534;
  as.env = {{"LOGSINK_SOCKET", d.socket}};
  // Two processes, two pids; a=b is a message, not a match.
  ASSERT_EQ(RunLogctl({"send", "a=b"}, as).status, 0);
  ASSERT_EQ(RunLogctl({"send", "user=alice"}, as).status, 0);
  std::vector<OwnedRecord> recs;
  ASSERT_TRUE(WaitUntil(
      [&] {
        recs = ReadRing(d.ring);
        return recs.size() >= 2;
      },
      kHang, Ms(10)));
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_NE(recs[0].pid, recs[1].pid);
  // Read as root from the file: the messages are the words sent.
  Result r = RunLogctl({"cat", "-o", "cat", "--file", d.ring});
  EXPECT_EQ(Lines(r.out), std::vector<std::string>({"a=b", "user=alice"}));
  // As the user, through the daemon (the ring is not theirs to read).
  r = RunLogctl({"cat", "-o", "cat"}, as);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(Lines(r.out), std::vector<std::string>({"a=b", "user=alice"})) << r.err;
  const std::string second = std::to_string(recs[1].pid);
  r = RunLogctl({"-o", "cat", "_PID=" + second}, as);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out), std::vector<std::string>({"user=alice"}));
  r = RunLogctl({"tail", "-n", "5", "-o", "cat", "_PID=" + std::to_string(recs[0].pid)}, as);
  EXPECT_EQ(Lines(r.out), std::vector<std::string>({"a=b"}));
  // A message is not a field.
  r = RunLogctl({"-o", "cat", "user=alice"}, as);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  r = RunLogctl({"-F", "_PID"}, as);
  EXPECT_EQ(r.out, std::to_string(recs[0].pid) + "\n" + second + "\n") << r.err;
  r = RunLogctl({"-F", "_UID", "_PID=" + second}, as);
  EXPECT_EQ(r.out, "65534\n") << r.err;
}

// Logs frames through the daemon on socket as uid (and gid) uid: a child
// process of that user speaks the protocol as liblogsink does (its HELLO,
// INTERN and RECORDS frames in frames), then closes its end and waits for
// the daemon to close the connection, having read all of it (STATS_REQ
// would be refused: the user may not read the ring). True when it did.
bool LogAs(uint32_t uid, const std::string &socket, const std::string &frames) {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(3);
    Client c(socket);
    if (!c.ok() || !c.Send(frames)) _exit(4);
    shutdown(c.fd(), SHUT_WR);
    _exit(c.WaitClosed() ? 0 : 5);
  }
  return WaitExit(pid) == 0;
}

// Typed fields through the daemon: a program of uid 65534 logs records of a
// site with FIELDS; read back by that user through the daemon (READ_REQ
// with FIELDS: the records carry their site's flag), they match by field,
// -F lists a field, and -o json shows the typed "fields" (limited by
// --output-fields), as a reader of the file sees them.
TEST(LogctlFieldsDaemonTest, TypedFieldsThroughTheDaemon) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root, to act as another user";
  TempDir dir;
  Daemon d(dir);
  ASSERT_EQ(chmod(dir.path().c_str(), 0711), 0);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  SpawnOptions as;
  as.as_uid = 65534;
  as.env = {{"LOGSINK_SOCKET", d.socket}};
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  const uint64_t now = uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
  const std::string fmt = std::string("disk %s") + LS_FIELDS_SEP + "user=%s n=%lld ok:bool=%d";
  ASSERT_TRUE(
      LogAs(65534, d.socket,
            Hello2("fielder", LS_CAP_FIELDS, "") + Intern(1, LS_SITE_FIELDS | 6, 9, fmt, "f.c") +
                Records(1, {{1, now, {Arg::S("sda"), Arg::S("alice"), Arg::I(5), Arg::I(1)}},
                            {1, now + 1, {Arg::S("sdb"), Arg::S("bob"), Arg::I(-2), Arg::I(0)}}})));
  // A message that reads like a match is not a field.
  ASSERT_EQ(RunLogctl({"send", "user=alice"}, as).status, 0);
  std::vector<OwnedRecord> recs;
  ASSERT_TRUE(WaitUntil(
      [&] {
        recs = ReadRing(d.ring);
        return recs.size() >= 3;
      },
      kHang, Ms(10)));
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].uid, 65534u);
  EXPECT_EQ(recs[0].site_flags, LS_ST_F_FIELDS);
  // Read from the file (as root), the fields are there.
  Result r = RunLogctl({"cat", "-o", "cat", "--file", d.ring, "user=alice"});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(Lines(r.out), std::vector<std::string>({"disk sda"}));

  // As the user, through the daemon: the same.
  r = RunLogctl({"cat", "-o", "cat"}, as);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out), std::vector<std::string>({"disk sda", "disk sdb", "user=alice"}))
      << r.err;
  r = RunLogctl({"-o", "cat", "user=alice"}, as);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out), std::vector<std::string>({"disk sda"})) << r.err;
  r = RunLogctl({"tail", "-n", "5", "-o", "cat", "ok=false", "+", "n=5"}, as);
  EXPECT_EQ(Lines(r.out), std::vector<std::string>({"disk sda", "disk sdb"})) << r.err;
  r = RunLogctl({"-F", "user"}, as);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "alice\nbob\n") << r.err;
  r = RunLogctl({"-F", "n", "--json"}, as);
  EXPECT_EQ(r.out, "5\n-2\n") << r.err;
  r = RunLogctl({"-o", "json"}, as);
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  json a = ParseJson(lines[0]), b = ParseJson(lines[1]), c = ParseJson(lines[2]);
  EXPECT_EQ(a["msg"], "disk sda");
  EXPECT_EQ(a["fmt"], "disk %s");
  EXPECT_EQ(a["fields"], json::parse(R"({"user":"alice","n":5,"ok":true})")) << lines[0];
  EXPECT_EQ(a["args"], json::parse(R"(["sda","alice",5,1])")) << lines[0];
  EXPECT_EQ(b["fields"], json::parse(R"({"user":"bob","n":-2,"ok":false})")) << lines[1];
  EXPECT_FALSE(c.contains("fields")) << lines[2];
  // What root reads from the file, but the site id (always 0 through the
  // daemon: PROTOCOL.md, "Reading through the daemon").
  Result file = RunLogctl({"-o", "json", "--file", d.ring});
  json from_file = ParseJson(Lines(file.out).at(0));
  EXPECT_EQ(from_file["site"], 1);
  EXPECT_EQ(a["site"], 0);
  from_file.erase("site");
  a.erase("site");
  EXPECT_EQ(from_file, a);
  r = RunLogctl({"-o", "json", "--output-fields=ok", "user=bob"}, as);
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out << r.err;
  EXPECT_EQ(ParseJson(lines[0])["fields"], json::parse(R"({"ok":false})")) << lines[0];
}
}  // namespace
}  // namespace logsink::test
