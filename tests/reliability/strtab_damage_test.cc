// strtab_damage_test.cc: a damaged string table against the real logsinkd and logctl.
// A string-table entry in the middle is zeroed and the last one is damaged
// (as a power loss with fsync = "never" can leave it: blocks and string
// entries are not written in order); the daemon restarts and a new client
// interns a new format. The new format gets a new id, never a damaged one's,
// so no old record renders as a message nobody logged; entries after the
// damaged one are still found; logctl verify keeps reporting the damage, and
// logctl cat warns of the damaged stretch between entries.
#include <gtest/gtest.h>

#include <fstream>

#include "daemon/harness.h"
#include "logsink/proto/format.h"
#include "logsink/storage/ring.h"
#include "reliability/rel_util.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1700000000000000000ull;

// Overwrites n bytes at off of path with byte b.
void Fill(const std::string &path, uint64_t off, size_t n, char b) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.is_open()) << path;
  f.seekp(std::streamoff(off));
  std::string bytes(n, b);
  f.write(bytes.data(), std::streamsize(n));
  ASSERT_TRUE(f.good());
}

TEST(StrtabDamage, DamagedIdsAreNeverReused) {
  TempDir dir;
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const std::string fmt1 = "first %d", fmt2 = "second %d", fmt3 = "third %d";
  {
    Client c(d.socket);
    std::vector<Rec> recs;
    for (int i = 0; i < 30; i++)
      recs.push_back(Rec(uint64_t(i % 3 + 1), kT0 + uint64_t(i), {Arg::I(i)}));
    ASSERT_TRUE(c.Send(Hello(1, "old") + Intern(1, 6, 1, fmt1, "a.c") +
                       Intern(2, 6, 2, fmt2, "a.c") + Intern(3, 6, 3, fmt3, "a.c") +
                       Records(1, recs)));
    ASSERT_TRUE(c.WaitRead());
  }
  ASSERT_EQ(d.Stop(), 0) << d.Stderr();

  // Entry 1 zeroed whole; entry 3 (the last) gets a flipped CRC byte.
  uint64_t strtab_off = 0;
  {
    std::unique_ptr<storage::RingReader> r;
    ASSERT_TRUE(storage::RingReader::Open(storage::Env::Default(), d.ring, nullptr, &r).ok());
    strtab_off = r->layout().strtab_off;
  }
  const size_t e1 = LS_ST_HDR + fmt1.size() + 3, e2 = LS_ST_HDR + fmt2.size() + 3;
  Fill(d.ring, strtab_off, e1, 0);
  Fill(d.ring, strtab_off + e1 + e2, 1, 0x55);
  ProcResult v = RunBin("logctl", {"verify", "--file", d.ring});
  EXPECT_EQ(v.status, 1) << v.out << v.err;
  // Readers report the damaged stretch between entries (FORMAT.md, "String
  // table"): logctl cat warns, names its offset and length, and reads on.
  // The damaged last entry ends the table unreported (it could be one being
  // written); verify reports both.
  ProcResult cat = RunBin("logctl", {"cat", "--no-pager", "--file", d.ring});
  EXPECT_EQ(cat.status, 0) << cat.out;
  const std::string warning = "offset " + std::to_string(strtab_off) +
                              ": damaged string-table bytes (" + std::to_string(e1) +
                              ") before the next entry (skipped)";
  EXPECT_NE(cat.out.find(warning), std::string::npos) << cat.out;  // stderr merged
  const size_t after = cat.out.find(warning) + warning.size();
  EXPECT_EQ(cat.out.find("string-table", after), std::string::npos) << cat.out;

  // Restarted, a new client interns a new format.
  ASSERT_TRUE(d.Start()) << d.Stderr();
  {
    Client c(d.socket);
    std::vector<Rec> recs;
    for (int i = 0; i < 10; i++) recs.push_back(Rec(1, kT0 + 100 + uint64_t(i), {Arg::I(i)}));
    ASSERT_TRUE(c.Send(Hello(1, "new") + Intern(1, 6, 9, "DELETING all files of %d", "b.c") +
                       Records(1, recs)));
    ASSERT_TRUE(c.WaitRead());
  }
  ASSERT_EQ(d.Stop(), 0) << d.Stderr();

  int old_unknown = 0, old_second = 0, deleting = 0;
  uint32_t deleting_id = 0;
  // Read back, the zeroed entry is reported, once, as the reader opens the
  // file; nothing else is damaged.
  RecordingReporter rep;
  std::vector<OwnedRecord> recs;
  ASSERT_TRUE(ReadRingFile(d.ring, &rep, &recs).ok());
  ASSERT_EQ(rep.bad.size(), 1u) << rep.Dump();
  EXPECT_EQ(rep.bad[0].off, strtab_off);
  for (const OwnedRecord &r : recs) {
    if (r.app == "old") {
      old_unknown += !r.site_known;
      old_second += r.site_known && r.fmt == fmt2;
      EXPECT_NE(r.fmt, "DELETING all files of %d") << "record " << r.seq << " site " << r.site_id;
    } else if (r.app == "new") {
      deleting += r.fmt == "DELETING all files of %d";
      deleting_id = r.site_id;
    }
  }
  EXPECT_EQ(old_unknown, 20);  // ids 1 and 3: damaged, shown as unknown
  EXPECT_EQ(old_second, 10);   // id 2, after the zeroed entry, still found
  EXPECT_EQ(deleting, 10);
  EXPECT_EQ(deleting_id, 4u);  // 1 and 3 stay retired
  v = RunBin("logctl", {"verify", "--file", d.ring});
  EXPECT_EQ(v.status, 1) << v.out << v.err;
  EXPECT_NE(v.out.find("unknown string id 1"), std::string::npos) << v.out << v.err;
  Figures(
      "damaged string table: 20 old records of ids 1 and 3 shown as unknown, 10 of id 2 "
      "found after the zeroed entry, the new format got id %u; verify exit %d",
      deleting_id, v.status);
}

}  // namespace
}  // namespace logsink::test
