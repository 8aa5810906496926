// logctl_sites_test.cc: `logctl sites`, the census of call sites, against
// rings written with storage's RingWriter (cli_fixture.h): its counts equal
// the records of each site in the ring, read back whole, on a random
// workload through tiers and laps, with and without filters; the table
// and the JSON lines; the last minute; free text by its kind.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <tuple>

#include "cli_fixture.h"
#include "common/ring_check.h"
#include "common/seed.h"
#include "logsink/proto/facility.h"

namespace logsink::test {
namespace {

using Key =
    std::tuple<std::string, std::string, uint32_t, int, std::string>;  // app file line level fmt

std::map<Key, uint64_t> FromJson(const std::string &out) {
  std::map<Key, uint64_t> m;
  for (const std::string &line : Lines(out)) {
    json j = ParseJson(line);
    EXPECT_FALSE(j.is_discarded()) << line;
    if (j.is_discarded()) continue;
    int level = -1;
    for (int l = 0; l < 8; l++)
      if (j["level"] == ls_level_name(unsigned(l))) level = l;
    m[{j["app"], j["file"], j.value("line", 0u), level, j.value("fmt", std::string())}] +=
        j["records"].get<uint64_t>();
  }
  return m;
}

std::map<Key, uint64_t> FromRing(const std::string &path, int max_level = 7,
                                 const std::string &app = "") {
  std::map<Key, uint64_t> m;
  for (const OwnedRecord &r : ReadRing(path)) {
    if (r.dropped() || r.level > max_level || (!app.empty() && r.app != app)) continue;
    m[{r.app, r.file, r.line, r.level, r.fmt}]++;
  }
  return m;
}

// Random sites, sources (two of one app) and levels through a ring with
// tiers that laps several times: every count is the ring's own.
TEST_F(LogctlTest, SitesCountEveryRecordOfEachSite) {
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  std::string f = dir_.File("r.ring");
  WriterOptions opts = TestRing::Options(12288 + 24 * 4096);
  opts.kept_share = 0.25;
  opts.error_share = 0.25;
  TestRing ring(f, opts);
  std::vector<uint32_t> sites;
  for (int i = 0; i < 12; i++)
    sites.push_back(ring.Intern(uint8_t(i % 8), "site " + std::to_string(i) + " v=%d",
                                uint32_t(10 + i), i % 3 ? "src/a.c" : "lib/b.c"));
  // Two sources of app-a (one program's two connections), one each of app-2 and app-3.
  const char *apps[] = {"app-a", "app-a", "app-2", "app-3"};
  std::vector<Source> sources;
  for (uint64_t i = 0; i < 4; i++)
    sources.push_back(Source{i + 1, uint32_t(100 + i), 1000, 100, apps[i], "comm"});
  for (int i = 0; i < 20000; i++) {
    const uint32_t site = sites[rng() % sites.size()];
    ring.Add(site, "i", Args().i(i).bytes(), kT0 + uint64_t(i) * kMs, &sources[rng() % 4]);
  }
  ring.Close();
  const auto all = FromRing(f);
  ASSERT_GT(all.size(), 20u);  // both app-a sources merged, 12 sites x 3 apps at most
  Result r = RunLogctl({"sites", "--json", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(FromJson(r.out), all);
  r = RunLogctl({"sites", "--json", "--file", f, "-p", "warning", "--app", "app-a"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(FromJson(r.out), FromRing(f, 4, "app-a"));
  // -n: the first N, most records first.
  r = RunLogctl({"sites", "--json", "--file", f, "-n", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  uint64_t prev = ~0ull, most = 0;
  for (const auto &[k, n] : all) most = std::max(most, n);
  for (const std::string &line : lines) {
    const uint64_t n = ParseJson(line)["records"].get<uint64_t>();
    EXPECT_LE(n, prev);
    prev = n;
  }
  EXPECT_EQ(ParseJson(lines[0])["records"].get<uint64_t>(), most);
}

// The table for a person: a header, one line per site, the total; shares
// of the records counted; free text by its kind; the last minute by the
// wall clock.
TEST_F(LogctlTest, SitesTableSharesAndTheLastMinute) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  const uint32_t busy = ring.Intern(3, "disk %d full", 42, "src/disk.c");
  const uint32_t quiet = ring.Intern(6, "started", 7, "src/main.c");
  const uint32_t text = ring.Intern(6, "%s", 1, "stdout");
  for (int i = 0; i < 3; i++) ring.Add(busy, "i", Args().i(i).bytes(), kT0 + uint64_t(i) * kMs);
  ring.Add(text, "s", Args().s("a line").bytes(), kT0 + 10 * kMs);
  const uint64_t now = uint64_t(time(nullptr)) * 1000000000ull;
  ring.Add(quiet, "", "", now);  // within the last minute
  ring.Close();
  Result r = RunLogctl({"sites", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_EQ(lines[0],
            "   RECORDS  SHARE LAST MIN  LEVEL    APP               SITE                       "
            "   FORMAT");
  EXPECT_EQ(lines[1],
            "         3  60.0%        0  err      testapp           src/disk.c:42              "
            "   disk %d full");
  EXPECT_EQ(lines[2],
            "         1  20.0%        1  info     testapp           src/main.c:7               "
            "   started");
  EXPECT_EQ(lines[3],
            "         1  20.0%        0  info     testapp           stdout                     "
            "   (text)");
  EXPECT_EQ(lines[4], "5 records from 3 sites");
  r = RunLogctl({"sites", "--json", "--file", f, "-p", "err"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "{\"records\":3,\"share\":1.000000,\"last_minute\":0,\"level\":\"err\",\"app\":"
            "\"testapp\",\"file\":\"src/disk.c\",\"line\":42,\"fmt\":\"disk %d full\"}\n");
  // Nothing matches: the header and "0 records from 0 sites"; exit 0.
  r = RunLogctl({"sites", "--file", f, "--app", "nobody"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 2u) << r.out;
  EXPECT_EQ(Lines(r.out)[1], "0 records from 0 sites");
  // What does not apply is refused, as for every command.
  r = RunLogctl({"sites", "--file", f, "-f"});
  EXPECT_EQ(r.status, 2);
}

}  // namespace
}  // namespace logsink::test
