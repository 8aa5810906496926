// since_trust_test.cc: --since and client timestamps against the real logsinkd and logctl.
// One client stamps 6,000 records 1 ns after the epoch between two runs of
// another client's correctly stamped records. Time filters search by the
// time the daemon opened each block, not by client timestamps, so
// `cat/tail/export --since` show all 400 good records; the badly stamped ones
// are shown too (at their block's time), never silently hidden.
#include <gtest/gtest.h>
#include <time.h>

#include "daemon/harness.h"
#include "reliability/rel_util.h"

namespace logsink::test {
namespace {

uint64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

int Count(const std::string &text, const std::string &needle) {
  int n = 0;
  for (size_t p = 0; (p = text.find(needle, p)) != std::string::npos; p += needle.size()) n++;
  return n;
}

TEST(SinceTrust, ClientTimestampsCannotHideOtherRecords) {
  TempDir dir;
  Daemon d(dir, {"--size", "4MiB"});
  ASSERT_TRUE(d.Start()) << d.Stderr();
  Client good(d.socket), liar(d.socket);
  ASSERT_TRUE(good.Send(Hello(1, "good") + Intern(1, 6, 1, "good %d", "g.c")));
  ASSERT_TRUE(liar.Send(Hello(1, "liar") + Intern(1, 6, 1, "liar %d", "l.c")));
  auto run = [&](Client &c, int from, int n, bool lie) {
    std::vector<Rec> recs;
    for (int i = from; i < from + n; i++) recs.push_back(Rec(1, lie ? 1 : NowNs(), {Arg::I(i)}));
    ASSERT_TRUE(c.Send(Records(1, recs)));
    ASSERT_TRUE(c.WaitRead());
  };
  run(good, 0, 200, false);
  for (int k = 0; k < 6; k++) run(liar, k * 1000, 1000, true);
  run(good, 200, 200, false);
  ASSERT_EQ(d.Stop(), 0) << d.Stderr();

  const ProcResult cat = RunBin("logctl", {"cat", "--since", "10min ago", "--file", d.ring});
  ASSERT_EQ(cat.status, 0) << cat.err;
  const ProcResult tail =
      RunBin("logctl", {"tail", "-n", "100000", "--since", "10min ago", "--file", d.ring});
  ASSERT_EQ(tail.status, 0) << tail.err;
  const std::string out = dir / "export.txt";
  ProcResult exp =
      RunBin("logctl", {"export", "--since", "10min ago", "--output", out, "--file", d.ring});
  ASSERT_EQ(exp.status, 0) << exp.err;
  const std::string exported = ReadFile(out);
  for (const std::string *text :
       {static_cast<const std::string *>(&cat.out), &tail.out, &exported}) {
    EXPECT_EQ(Count(*text, " good "), 400);
    EXPECT_EQ(Count(*text, " liar "), 6000);
  }
  // --until before the run: the badly stamped records are not "before" it.
  ProcResult until = RunBin("logctl", {"cat", "--until", "1h ago", "--file", d.ring});
  EXPECT_EQ(until.status, 0) << until.err;
  EXPECT_EQ(Count(until.out, " liar "), 0);
  Figures(
      "client timestamps (6,000 records stamped 1 ns after the epoch between 2 x 200 good "
      "ones): cat/tail/export --since '10min ago' show %d/%d/%d good and %d liar records",
      Count(cat.out, " good "), Count(tail.out, " good "), Count(exported, " good "),
      Count(cat.out, " liar "));
}

}  // namespace
}  // namespace logsink::test
