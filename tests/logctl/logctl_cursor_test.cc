// logctl_cursor_test.cc: cursors in logctl (issue 15): --show-cursor prints
// the cursor of the last record shown, --after-cursor and --cursor-file
// continue exactly after it (a run that finds nothing new keeps the file),
// a cursor of a recreated ring is refused, and records overwritten since
// the cursor are reported as lost.
#include <gtest/gtest.h>
#include <unistd.h>

#include "cli_util.h"
#include "common/temp_dir.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1763892000000000000ull;  // 2025-11-23T10:00:00Z
constexpr uint64_t kMs = 1000000;

std::string CursorLine(const std::string &out) {
  auto lines = Lines(out);
  return lines.empty() ? "" : lines.back();
}

TEST(LogctlCursor, ShowAfterAndCursorFileContinueExactly) {
  TempDir dir;
  std::string f = dir / "r.ring", cf = dir / "cursor";
  TestRing ring(f, 8192 + 4096 + 64 * 4096);
  uint32_t site = ring.Intern(6, "m%d");
  for (int i = 0; i < 10; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i * kMs);
  ring.Flush();

  Result r = RunLogctl({"tail", "-n", "3", "--show-cursor", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_NE(lines[2].find(" m9"), std::string::npos);
  ASSERT_EQ(lines[3].rfind("-- cursor: ls1-", 0), 0u) << lines[3];
  std::string c9 = lines[3].substr(11);
  EXPECT_EQ(c9.substr(c9.size() - 2), "-9");

  // Nothing after the last record yet; then three more.
  r = RunLogctl({"cat", "--after-cursor", c9, "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  for (int i = 10; i < 13; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i * kMs);
  ring.Flush();
  r = RunLogctl({"cat", "--after-cursor", c9, "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_NE(lines[0].find(" m10"), std::string::npos);
  EXPECT_NE(lines[2].find(" m12"), std::string::npos);

  // --cursor-file: the first run shows everything and stores the cursor,
  // the next shows only what came since, one that shows nothing keeps it.
  r = RunLogctl({"cat", "--cursor-file", cf, "--file", f});
  EXPECT_EQ(Lines(r.out).size(), 13u) << r.err;
  std::string stored = ReadFile(cf);
  EXPECT_EQ(stored.substr(stored.size() - 3), "-c\n") << stored;  // record 12
  r = RunLogctl({"cat", "--cursor-file", cf, "--file", f});
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(ReadFile(cf), stored);
  ring.Add(site, "i", Args().i(13).bytes(), kT0 + 13 * kMs);
  ring.Flush();
  r = RunLogctl({"cat", "--cursor-file", cf, "--json", "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_NE(lines[0].find("\"msg\":\"m13\""), std::string::npos);
  // Filters apply after the cursor; the cursor names the last record shown.
  r = RunLogctl({"cat", "--after-cursor", c9, "--grep", "m1[01]$", "--show-cursor", "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(CursorLine(r.out).substr(CursorLine(r.out).size() - 2), "-b");
}

TEST(LogctlCursor, RefusesAnotherRingsCursorAndReportsLostRecords) {
  TempDir dir;
  std::string f = dir / "r.ring";
  std::string c0;
  {
    // 8 blocks of 4 KiB, the block layout as it is: this test laps the ring.
    TestRing ring(f, 12288 + 8 * 4096, 4096, LS_CODEC_NONE);
    uint32_t site = ring.Intern(6, "m%d");
    ring.Add(site, "i", Args().i(0).bytes(), kT0);
    ring.Flush();
    Result r = RunLogctl({"cat", "--show-cursor", "--file", f});
    c0 = CursorLine(r.out).substr(11);
    // Lap the ring: record 0 and many after it are overwritten.
    for (int i = 1; i < 20000; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i * kMs);
    ring.Close();
  }
  Result r = RunLogctl({"cat", "--after-cursor", c0, "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("records lost (overwritten before they were read)"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines.back().find(" m19999"), std::string::npos);

  r = RunLogctl({"cat", "--after-cursor", "nonsense", "--file", f});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is not a logsink cursor"), std::string::npos) << r.err;

  ASSERT_EQ(unlink(f.c_str()), 0);
  {
    TestRing again(f);  // recreated: a new identity
    uint32_t site = again.Intern(6, "m%d");
    again.Add(site, "i", Args().i(0).bytes(), kT0);
    again.Close();
  }
  r = RunLogctl({"cat", "--after-cursor", c0, "--file", f});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("belongs to another ring"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace logsink::test
