// logctl_output_test.cc: the real logctl binary against rings written with
// storage's RingWriter (cli_fixture.h): what a record looks like: the short prefix, --json, -o
// modes, raw output, escapes and marks.
#include <algorithm>
#include <initializer_list>

#include "cli_fixture.h"

namespace logsink::test {
namespace {

// logctl cat of a ring at path with one record of a site (level, fmt) from
// each source, at kT0 + i ns.
Result CatOnePerSource(const std::string &path, uint8_t level, const std::string &fmt,
                       std::initializer_list<const Source *> sources) {
  TestRing ring(path);
  uint32_t site = ring.Intern(level, fmt);
  uint64_t ts = kT0;
  for (const Source *s : sources) ring.Add(site, "", "", ts++, s);
  ring.Close();
  return RunLogctl({"cat", "--file", path});
}

// A label cannot imitate another line's prefix, and a label
// that is not the process's name shows the name beside it.
TEST_F(LogctlTest, ShortPrefixShowsLabelAndCommAndEscapesStructure) {
  Source fake{2, 77, 1000, 100, "sshd[1]: <crit> fake", "python3"};
  Source same{3, 78, 0, 0, "sshd", "sshd"};
  Source none{4, 79, 0, 0, "", "cron"};
  Result r = CatOnePerSource(dir_.File("r.ring"), 6, "hello", {&fake, &same, &none});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.err;
  EXPECT_EQ(lines[0],
            Line(0, "sshd\\x5b1\\x5d\\x3a\\x20\\x3ccrit\\x3e\\x20fake(python3)[77]: <info> hello"));
  EXPECT_NE(lines[1].find(" sshd[78]: <info> hello"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(" cron[79]: <info> hello"), std::string::npos) << lines[2];
}

// A record labelled or named "kernel" from a uid other than 0
// shows that uid (it could pass for the kernel's); root's does not, nor
// does an ordinary label of another uid (only its own claim, shown beside
// its process name as above).
TEST_F(LogctlTest, ShortPrefixShowsTheUidOfAKernelNameNotRoots) {
  Source label{2, 77, 1000, 100, "kernel", "python3"};
  Source comm{3, 78, 1000, 100, "", "kernel"};
  Source root{4, 79, 0, 0, "kernel", "kernel"};
  Source other{5, 80, 1000, 100, "myapp", "myapp"};
  Result r =
      CatOnePerSource(dir_.File("r.ring"), 0, "BUG: soft lockup", {&label, &comm, &root, &other});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.err;
  EXPECT_EQ(lines[0], Line(0, "kernel(python3)[77] (uid 1000): <emerg> BUG: soft lockup"));
  EXPECT_NE(lines[1].find(" kernel[78] (uid 1000): <emerg> BUG"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(" kernel[79]: <emerg> BUG"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(" myapp[80]: <emerg> BUG"), std::string::npos) << lines[3];
}

TEST_F(LogctlTest, JsonLinesAreValidAndCarryTheFields) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(4, "user %s port %d ratio %.2f", 42);
  ring.Add(site, "sif",
           Args().s("b\"o\\b\n\x01").i(-22).raw(std::string("\0\0\0\0\0\0\xf8\x3f", 8)).bytes(),
           kT0 + 123456789, nullptr, 99);
  ring.writer()->AppendDropped(ring.source(), kT0 + 200 * kMs, 17, kT0 - 1000 * kMs);
  ring.Close();
  Result r = RunLogctl({"cat", "--json", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  json v = ParseJson(lines[0]);
  ASSERT_FALSE(v.is_discarded()) << lines[0];
  EXPECT_EQ(v["seq"].get<uint64_t>(), 0u);
  EXPECT_EQ(v["ts_ns"].get<uint64_t>(), kT0 + 123456789);
  EXPECT_EQ(v["ts"].get<std::string>(), "2025-11-23T10:00:00.123456789Z");
  EXPECT_EQ(v["level"].get<std::string>(), "warning");
  EXPECT_EQ(v["priority"].get<int64_t>(), 4);
  EXPECT_EQ(v["pid"].get<int64_t>(), 4242);
  EXPECT_EQ(v["uid"].get<int64_t>(), 1000);
  EXPECT_EQ(v["gid"].get<int64_t>(), 100);
  EXPECT_EQ(v["app"].get<std::string>(), "testapp");
  EXPECT_EQ(v["comm"].get<std::string>(), "testcomm");
  EXPECT_EQ(v["tid"].get<int64_t>(), 99);
  EXPECT_EQ(v["msg"].get<std::string>(), "user b\"o\\b\n\x01 port -22 ratio 1.50");
  EXPECT_EQ(v["fmt"].get<std::string>(), "user %s port %d ratio %.2f");
  EXPECT_EQ(v["file"].get<std::string>(), "test.c");
  EXPECT_EQ(v["line"].get<int64_t>(), 42);
  ASSERT_EQ(v["args"].size(), 3u);
  EXPECT_EQ(v["args"][0].get<std::string>(), "b\"o\\b\n\x01");
  EXPECT_EQ(v["args"][1].get<int64_t>(), -22);
  EXPECT_EQ(v["args"][2].dump(), "1.5");
  EXPECT_FALSE(v.contains("truncated"));
  json d = ParseJson(lines[1]);
  ASSERT_FALSE(d.is_discarded()) << lines[1];
  EXPECT_EQ(d["dropped"].get<uint64_t>(), 17u);
  EXPECT_EQ(d["seq"].get<uint64_t>(), 1u);
  EXPECT_EQ(d["msg"].get<std::string>(),
            "-- 17 records dropped by the client since 2025-11-23 09:59:59.000 +0000 --");
  // --output json is the same as --json.
  Result r2 = RunLogctl({"cat", "-o", "json", "--file", dir_.File("r.ring")});
  EXPECT_EQ(r2.out, r.out);
}

// render/RENDERING.md, "Named fields": trailing %.0s arguments that read NAME=VALUE
// are shown by name in --json; anything else stays an argument only.
TEST_F(LogctlTest, NamedFieldsInJson) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  uint32_t two = ring.Intern(6, "a %d%.0s%.0s%.0s");
  uint32_t literal = ring.Intern(6, "100%%.0s");
  uint32_t badname = ring.Intern(6, "x%.0s");
  uint32_t middle = ring.Intern(6, "%.0s y %d");
  ring.Add(two, "isss", Args().i(1).s("k=v").s("not a field").s("req.id=a=b").bytes(), kT0);
  ring.Add(literal, "", "", kT0 + 1);
  ring.Add(badname, "s", Args().s("1bad=v").bytes(), kT0 + 2);
  ring.Add(middle, "si", Args().s("k=v").i(2).bytes(), kT0 + 3);
  ring.Close();
  Result r = RunLogctl({"cat", "--json", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u);
  json v = ParseJson(lines[0]);
  EXPECT_EQ(v["msg"], "a 1");
  EXPECT_EQ(v["fields"], json::parse(R"({"k":"v","req.id":"a=b"})")) << lines[0];
  EXPECT_EQ(v["args"].size(), 4u);  // the arguments stay as they are
  for (size_t i = 1; i < 4; i++) EXPECT_FALSE(ParseJson(lines[i]).contains("fields")) << lines[i];
  EXPECT_EQ(ParseJson(lines[1])["msg"], "100%.0s");
  // Text output is unchanged: %.0s prints nothing.
  EXPECT_EQ(Lines(RunLogctl({"cat", "-o", "cat", "--file", f}).out),
            (std::vector<std::string>{"a 1", "100%.0s", "x", " y 2"}));
}

TEST_F(LogctlTest, DroppedEntryInShortOutput) {
  TestRing ring(dir_.File("r.ring"));
  ring.writer()->AppendDropped(ring.source(), kT0 + 5 * kMs, 3, kT0);
  ring.Close();
  Result r = RunLogctl({"tail", "--file", dir_.File("r.ring")});
  EXPECT_EQ(r.out,
            Line(5,
                 "testapp(testcomm)[4242]: <warning> -- 3 records dropped by the client since "
                 "2025-11-23 10:00:00.000 +0000 --\n"));
}

TEST_F(LogctlTest, FormatArgumentMismatchShowsTheRawParts) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "a %d and %s");
  // The writer trusts its caller (the daemon validates); store bad arguments.
  ring.Add(site, "i", Args().i(5).bytes(), kT0);
  ring.Close();
  Result r = RunLogctl({"cat", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, Line(0,
                        "testapp(testcomm)[4242]: <info> [logsink: format/argument mismatch] "
                        "fmt=\"a %d and %s\" args=[i:5]\n"));
  r = RunLogctl({"cat", "--json", "--file", dir_.File("r.ring")});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_TRUE(v["mismatch"].get<bool>());
}

TEST_F(LogctlTest, ControlCharactersAreEscaped) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "evil %s");
  ring.Add(site, "s", Args().s("\x1b[2J\x1b]0;owned\x07 \xff\xc2\x9b end").bytes(), kT0);
  ring.Close();
  for (const char *mode : {"short", "raw"}) {
    Result r = RunLogctl({"cat", "-o", mode, "--file", dir_.File("r.ring")});
    ASSERT_EQ(r.status, 0);
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << mode;
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << mode;
    EXPECT_NE(r.out.find("\\x1b[2J\\x1b]0;owned\\x07 \\xff\\xc2\\x9b end"), std::string::npos)
        << r.out;
  }
  Result r = RunLogctl({"cat", "--json", "--file", dir_.File("r.ring")});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["msg"].get<std::string>(), "evil \x1b[2J\x1b]0;owned\x07 \xef\xbf\xbd\xc2\x9b end");
}

TEST_F(LogctlTest, RawOutputShowsFormatAndArguments) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "user %s port %d");
  ring.Add(site, "si", Args().s("bob").i(22).bytes(), kT0);
  ring.Close();
  Result r = RunLogctl({"cat", "--output", "raw", "--file", dir_.File("r.ring")});
  EXPECT_EQ(r.out, Line(0, "testapp(testcomm)[4242]: <info> site=" + std::to_string(site) +
                               " fmt=\"user %s port %d\" args=[s:\"bob\", i:22]\n"));
}

TEST_F(LogctlTest, TruncatedRecordIsMarked) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "big %s");
  ring.Add(site, "s", Args().s(std::string(10000, 'x')).bytes(), kT0);
  ring.Close();
  Result r = RunLogctl({"cat", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  size_t pos = r.out.find("\xe2\x80\xa6[truncated ");
  ASSERT_NE(pos, std::string::npos) << r.out.substr(0, 200);
  uint64_t cut = std::stoull(r.out.substr(pos + 14));
  size_t xs = std::count(r.out.begin(), r.out.end(), 'x');
  EXPECT_EQ(xs + cut, 10000u);
  r = RunLogctl({"cat", "--json", "--file", dir_.File("r.ring")});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded());
  EXPECT_EQ(v["truncated"].get<uint64_t>(), cut);
}

// The journalctl-like -o modes.
TEST_F(LogctlTest, OutputModes) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  uint32_t site = ring.Intern(3, "disk %s full");
  const uint64_t ts = kT0 + 123456789;
  ring.Add(site, "s", Args().s("sda1").bytes(), ts);
  ring.Close();
  auto run = [&](const char *mode) {
    Result r = RunLogctl({"cat", "--utc", "-o", mode, "--file", f});
    EXPECT_EQ(r.status, 0) << mode << ": " << r.err;
    return r.out;
  };
  const std::string ident = " testapp(testcomm)[4242]: <err> disk sda1 full\n";
  EXPECT_EQ(run("short"), "2025-11-23T10:00:00.123456+0000" + ident);
  EXPECT_EQ(run("short-iso"), "2025-11-23T10:00:00+0000" + ident);
  EXPECT_EQ(run("short-precise"), "2025-11-23T10:00:00.123456789+0000" + ident);
  EXPECT_EQ(run("short-unix"), "1763892000.123456789" + ident);
  EXPECT_EQ(run("cat"), "disk sda1 full\n");
  // short-monotonic: the record's CLOCK_MONOTONIC time, from its block's
  // clock pair: the writer read the real monotonic clock a moment ago, when
  // its clock said ts (logctl_boot_test.cc has fake boots and clocks).
  struct timespec mt;
  clock_gettime(CLOCK_MONOTONIC, &mt);
  double now = double(mt.tv_sec) + double(mt.tv_nsec) / 1e9;
  std::string mono = run("short-monotonic");
  ASSERT_EQ(mono.front(), '[') << mono;
  size_t close = mono.find(']');
  ASSERT_NE(close, std::string::npos) << mono;
  double secs = std::stod(mono.substr(1, close - 1));
  EXPECT_LE(secs, now) << mono;
  EXPECT_GT(secs, now - 30) << mono;
  EXPECT_EQ(mono.substr(close + 1), ident) << mono;
  EXPECT_EQ(mono.substr(close - 7, 1), ".") << "microseconds: " << mono;
  std::string v = run("verbose");
  EXPECT_EQ(v.rfind("2025-11-23T10:00:00.123456789+0000 [seq 0]\n", 0), 0u) << v;
  for (const char *field :
       {"    SEQ=0\n", "    TS_NS=1763892000123456789\n", "    PRIORITY=3\n", "    LEVEL=err\n",
        "    PID=4242\n", "    APP=testapp\n", "    COMM=testcomm\n", "    FMT=disk %s full\n",
        "    FILE=test.c\n", "    MESSAGE=disk sda1 full\n"})
    EXPECT_NE(v.find(field), std::string::npos) << field << " in " << v;
  std::string pretty = run("json-pretty");
  EXPECT_GT(std::count(pretty.begin(), pretty.end(), '\n'), 10) << pretty;
  json a = json::parse(pretty, nullptr, false), b = ParseJson(Lines(run("json"))[0]);
  ASSERT_FALSE(a.is_discarded()) << pretty;
  EXPECT_EQ(a, b);
  EXPECT_NE(pretty.find("\n  \"msg\": \"disk sda1 full\",\n"), std::string::npos) << pretty;
}

TEST_F(LogctlTest, JsonHasExactStringCopiesOfLargeIntegers) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  uint32_t big = ring.Intern(6, "%lu %lld %d %s %.1f");
  uint32_t small = ring.Intern(6, "%d");
  const uint64_t ts = kT0 + 123456789;  // 1763892000123456789 > 2^53
  const uint64_t u = 18446744073709551611ull;
  const int64_t i = -(int64_t(1) << 60) - 3;
  std::string dbl(8, '\0');
  double half = 0.5;
  std::memcpy(dbl.data(), &half, 8);
  ring.Add(big, "uiisf", Args().u(u).i(i).i(7).s("x").raw(dbl).bytes(), ts);
  ring.Add(small, "i", Args().i(int64_t(1) << 53).bytes(), ts + 1);
  ring.writer()->AppendDropped(ring.source(), ts + 2, 4, ts - 1000);
  ring.Close();
  Result r = RunLogctl({"cat", "--json", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  // Parsed as text, not as doubles: the copies must be the exact decimals.
  EXPECT_NE(lines[0].find("\"seq\":0,\"seq_str\":\"0\",\"ts_ns\":1763892000123456789,"
                          "\"ts_ns_str\":\"1763892000123456789\""),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("\"args\":[18446744073709551611,-1152921504606846979,7,\"x\",0.5]"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("\"args_str\":[\"18446744073709551611\",\"-1152921504606846979\","
                          "\"7\",\"x\",0.5]"),
            std::string::npos)
      << lines[0];
  json v = ParseJson(lines[0]);
  ASSERT_FALSE(v.is_discarded());
  EXPECT_EQ(v["ts_ns_str"].get<std::string>(), std::to_string(ts));
  EXPECT_EQ(v["ts_ns"].get<uint64_t>(), ts);
  // 2^53 itself is exact as a double: no args_str.
  json w = ParseJson(lines[1]);
  EXPECT_EQ(w["seq_str"].get<std::string>(), "1");
  EXPECT_FALSE(w.contains("args_str")) << lines[1];
  json d = ParseJson(lines[2]);
  EXPECT_EQ(d["dropped_since_ns_str"].get<std::string>(), std::to_string(ts - 1000)) << lines[2];
  // stats --json: the timestamps too.
  r = RunLogctl({"stats", "--json", "--file", f, "--socket", dir_.File("none.sock")});
  json s = ParseJson(Lines(r.out)[0]);
  EXPECT_EQ(s["oldest_ts_ns_str"].get<std::string>(), std::to_string(ts)) << r.out;
  EXPECT_EQ(s["newest_ts_ns_str"].get<std::string>(), std::to_string(ts + 2)) << r.out;
}

}  // namespace
}  // namespace logsink::test
