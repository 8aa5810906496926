// logctl_tail_test.cc: the real logctl binary against rings written with
// storage's RingWriter (cli_fixture.h): `logctl tail`: the newest records, -n, a filter walking
// back, -r.
#include "cli_fixture.h"

namespace logsink::test {
namespace {

TEST_F(LogctlTest, TailPrintsTheLastTenOldestFirst) {
  TestRing ring(dir_.File("r.ring"));
  WriteNumbered(&ring, 25);
  ring.Close();
  Result r = RunLogctl({"tail", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 10u) << r.out;
  for (int i = 0; i < 10; i++)
    EXPECT_EQ(lines[i],
              Line(15 + i, "testapp(testcomm)[4242]: <info> n=" + std::to_string(15 + i)));
  EXPECT_EQ(r.err, "");
}

TEST_F(LogctlTest, TailLineCounts) {
  TestRing ring(dir_.File("r.ring"));
  WriteNumbered(&ring, 25);
  ring.Close();
  Result r = RunLogctl({"tail", "-n", "0", "--file", dir_.File("r.ring")});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  r = RunLogctl({"tail", "-n1", "--file", dir_.File("r.ring")});
  EXPECT_EQ(r.out, Line(24, "testapp(testcomm)[4242]: <info> n=24\n"));
  r = RunLogctl({"tail", "--lines=1000", "--file", dir_.File("r.ring")});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 25u);
  EXPECT_EQ(lines.front(), Line(0, "testapp(testcomm)[4242]: <info> n=0"));
}

TEST_F(LogctlTest, EmptyRingPrintsNothing) {
  TestRing ring(dir_.File("r.ring"));
  ring.Close();
  for (const char *cmd : {"tail", "cat"}) {
    Result r = RunLogctl({cmd, "--file", dir_.File("r.ring")});
    EXPECT_EQ(r.status, 0) << cmd << r.err;
    EXPECT_EQ(r.out, "") << cmd;
  }
}

TEST_F(LogctlTest, TailWithFilterWalksBackForMatches) {
  TestRing ring(dir_.File("r.ring"), 12288 + 64 * 4096);
  uint32_t rare = ring.Intern(3, "rare event %d");
  uint32_t noise = ring.Intern(6, "noise %d");
  ring.Add(rare, "i", Args().i(1).bytes(), kT0);
  ring.Add(rare, "i", Args().i(2).bytes(), kT0 + 1);
  for (int i = 0; i < 8000; i++) ring.Add(noise, "i", Args().i(i).bytes(), kT0 + 2 + i);
  ring.Close();
  Result r = RunLogctl({"tail", "-n", "1", "--level", "err", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_NE(lines[0].find("rare event 2"), std::string::npos);
  r = RunLogctl({"tail", "-n", "5", "--grep", "^rare", "--file", dir_.File("r.ring")});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("rare event 1"), std::string::npos);
  EXPECT_NE(lines[1].find("rare event 2"), std::string::npos);
  r = RunLogctl({"tail", "-n", "3", "--grep", "noise (7999|5)$", "--file", dir_.File("r.ring")});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("noise 5"), std::string::npos);
  EXPECT_NE(lines[1].find("noise 7999"), std::string::npos);
}

// -r/--reverse prints newest first, for cat, tail and tail with a
// filter; -n still picks the newest N.
TEST_F(LogctlTest, ReverseIsNewestFirst) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 5);
  ring.Close();
  auto fwd = Lines(RunLogctl({"cat", "-o", "cat", "--file", f}).out);
  ASSERT_EQ(fwd, (std::vector<std::string>{"n=0", "n=1", "n=2", "n=3", "n=4"}));
  auto rev = Lines(RunLogctl({"cat", "-r", "-o", "cat", "--file", f}).out);
  EXPECT_EQ(rev, (std::vector<std::string>{"n=4", "n=3", "n=2", "n=1", "n=0"}));
  rev = Lines(RunLogctl({"tail", "--reverse", "-n", "2", "-o", "cat", "--file", f}).out);
  EXPECT_EQ(rev, (std::vector<std::string>{"n=4", "n=3"}));
  rev = Lines(RunLogctl({"tail", "-r", "-n", "2", "-g", "n=[013]", "-o", "cat", "--file", f}).out);
  EXPECT_EQ(rev, (std::vector<std::string>{"n=3", "n=1"}));
  rev = Lines(
      RunLogctl({"tail", "-r", "-n", "3", "--since", "@1763892000.001", "-o", "cat", "--file", f})
          .out);
  EXPECT_EQ(rev, (std::vector<std::string>{"n=4", "n=3", "n=2"}));
}

}  // namespace
}  // namespace logsink::test
