// inline_site_test.cc: no record lost for its size, with the real logsinkd. With 4 KiB
// blocks and a full string table, sites are stored inline in each record. A
// site whose record could not fit a block (a long format plus a 1 KiB file
// name) used to be accepted and its records discarded as "write errors";
// now its file name is cut so every record lands (sites_cut), and a format
// too long for a block is refused at INTERN (err_bad_intern), the client
// told by the closed connection, never accepted and lost.
#include <gtest/gtest.h>

#include "daemon/harness.h"
#include "reliability/rel_util.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1700000000000000000ull;

TEST(InlineSite, NoAcceptedRecordVanishesForItsSize) {
  TempDir dir;
  Daemon d(dir, {"--size", "256KiB", "--block-size", "4KiB"});  // a 4 KiB string table
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const std::string filler = std::string(4000, 'f') + " %d";  // fills the table
  const std::string fmt = std::string(3000, 'm') + " %d";
  const std::string file(1024, 'p');
  Client c(d.socket);
  std::vector<Rec> recs;
  for (int i = 0; i < 50; i++) recs.push_back(Rec(2, kT0 + uint64_t(i), {Arg::I(i)}));
  ASSERT_TRUE(c.Send(Hello(1, "inline") + Intern(1, 6, 1, filler, "a.c") +
                     Intern(2, 6, 2, fmt, file) + Records(1, recs)));
  ASSERT_TRUE(c.WaitRead());
  auto stats = c.Stats();
  EXPECT_EQ(stats["sites_cut"], 1u);
  EXPECT_EQ(stats["write_errors"], 0u);
  // A format that cannot fit a 4 KiB block even alone: refused at INTERN.
  Client big(d.socket);
  ASSERT_TRUE(big.Send(Hello(1, "big") + Intern(1, 6, 3, std::string(4090, 'b') + "%d", "b.c")));
  EXPECT_TRUE(big.WaitClosed());
  stats = c.Stats();
  EXPECT_EQ(stats["err_bad_intern"], 1u);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  int landed = 0;
  size_t file_len = 0;
  for (const OwnedRecord &r : ReadRing(d.ring)) {
    if (r.app != "inline" || r.fmt != fmt) continue;
    landed++;
    file_len = r.file.size();
    EXPECT_EQ(r.file, file.substr(0, r.file.size()));
  }
  EXPECT_EQ(landed, 50);
  EXPECT_LT(file_len, file.size());
  Figures(
      "inline sites in 4 KiB blocks, string table full: 50/50 records of a 3,003-byte "
      "format with a 1,024-byte file name landed (file name cut to %zu bytes, sites_cut=1, "
      "write_errors=0); a 4,092-byte format refused at INTERN",
      file_len);
}

}  // namespace
}  // namespace logsink::test
