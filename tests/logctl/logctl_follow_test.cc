// logctl_follow_test.cc: `logctl tail -f` against a live RingWriter in the
// test process: new records appear promptly, nothing is lost across many
// laps when logctl keeps up, and a lapped follower reports exactly how many
// records it lost.
#include <memory>

#include "cli_util.h"

namespace logsink::test {
namespace {

using logsink::storage::RingReader;

constexpr int kHangMs = 10000;  // a hang limit, not a performance bound

class FollowTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(WriterOptions().codec); }
  void Open(uint8_t codec) {
    ring_ = std::make_unique<TestRing>(dir_.File("r.ring"), 12288 + 8 * 4096, 4096, codec);
    site_ = ring_->Intern(6, "n=%d");
  }
  // The block layout as it is, for the tests that lap the small ring (its
  // compressed blocks hold far more records): the ring, still without
  // records, opened again uncompressed.
  void UseUncompressedRing() {
    ring_.reset();
    Open(LS_CODEC_NONE);
  }
  void Write(int from, int to) {
    for (int i = from; i < to; i++) ring_->Add(site_, "i", Args().i(i).bytes(), kT0 + i);
    ring_->Flush();
  }
  // Reads lines until "n=<last>" shows up; checks they are n=from..last.
  void Expect(Proc *p, int from, int last) {
    std::string line;
    for (int i = from; i <= last; i++) {
      ASSERT_TRUE(p->ReadLine(&line, kHangMs)) << "waiting for n=" << i;
      std::string want = "<info> n=" + std::to_string(i);
      ASSERT_EQ(line.substr(line.size() - std::min(line.size(), want.size())), want) << line;
    }
  }
  // Writes records from..to-1 and expects the follower to print them.
  void WriteAndExpect(Proc *p, int from, int to) {
    Write(from, to);
    Expect(p, from, to - 1);
  }
  // Ends the follower with SIGTERM: it exits 0 and prints nothing more on
  // standard output; returns its result.
  Result ExpectQuietEnd(Proc *p) {
    p->Signal(SIGTERM);
    Result r = p->Finish(kHangMs);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    return r;
  }
  // Ends the follower with sig: it exits 0.
  void ExpectCleanEnd(Proc *p, int sig) {
    p->Signal(sig);
    EXPECT_EQ(p->Finish(kHangMs).status, 0);
  }
  TempDir dir_;
  std::unique_ptr<TestRing> ring_;
  uint32_t site_ = 0;
};

TEST_F(FollowTest, NewRecordsAppearAndSigtermEndsCleanly) {
  Write(0, 5);
  Proc p({"tail", "-f", "-n", "2", "--file", dir_.File("r.ring")});
  Expect(&p, 3, 4);
  WriteAndExpect(&p, 5, 8);
  WriteAndExpect(&p, 8, 9);
  EXPECT_EQ(ExpectQuietEnd(&p).err, "");
}

// journalctl's reflex, without a command: the last 10, then new ones.
TEST_F(FollowTest, TopLevelFollowIsTailFollow) {
  Write(0, 25);
  Proc p({"-f", "--file", dir_.File("r.ring")});
  Expect(&p, 15, 24);
  WriteAndExpect(&p, 25, 27);
  ExpectQuietEnd(&p);
}

TEST_F(FollowTest, SigintEndsCleanly) {
  Write(0, 1);
  Proc p({"tail", "--follow", "--file", dir_.File("r.ring")});
  Expect(&p, 0, 0);  // logctl is following from here on
  WriteAndExpect(&p, 1, 2);
  ExpectCleanEnd(&p, SIGINT);
}

TEST_F(FollowTest, KeepsUpAcrossManyLapsWithoutLoss) {
  UseUncompressedRing();
  Write(0, 1);
  Proc p({"tail", "-f", "-n", "1", "--file", dir_.File("r.ring")});
  Expect(&p, 0, 0);
  // The ring holds 8 blocks (~4,000 records); each batch is far less, and we
  // wait for logctl to print it before writing the next: 60 batches of 400
  // are several laps.
  int next = 1;
  for (int batch = 0; batch < 60; batch++) {
    WriteAndExpect(&p, next, next + 400);
    next += 400;
  }
  EXPECT_GE(ring_->writer()->current_block_seq(), 4u * 8);
  p.Signal(SIGTERM);
  Result r = p.Finish(kHangMs);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.find("lost"), std::string::npos) << r.out;
}

TEST_F(FollowTest, LappedFollowerReportsExactLoss) {
  UseUncompressedRing();
  Write(0, 100);
  Proc p({"tail", "-f", "-n", "1", "--file", dir_.File("r.ring")});
  Expect(&p, 99, 99);
  // Freeze logctl, lap it twice, then let it go on.
  p.Signal(SIGSTOP);
  Write(100, 6000);
  std::unique_ptr<RingReader> reader;
  ASSERT_TRUE(RingReader::Open(Env::Default(), dir_.File("r.ring"), nullptr, &reader).ok());
  RingReader::Summary sum;
  ASSERT_TRUE(reader->Summarize(&sum).ok());
  ASSERT_GT(sum.oldest_seq, 100u);
  ASSERT_EQ(sum.newest_seq, 5999u);
  p.Signal(SIGCONT);
  std::string line;
  ASSERT_TRUE(p.ReadLine(&line, kHangMs));
  EXPECT_EQ(line, "-- " + std::to_string(sum.oldest_seq - 100) +
                      " records lost (overwritten before they were read) --");
  Expect(&p, static_cast<int>(sum.oldest_seq), 5999);
  WriteAndExpect(&p, 6000, 6010);
  ExpectCleanEnd(&p, SIGTERM);
}

TEST_F(FollowTest, JsonFollowReportsLossAsJson) {
  UseUncompressedRing();
  Write(0, 1);
  Proc p({"tail", "-f", "-n", "1", "--json", "--file", dir_.File("r.ring")});
  std::string line;
  ASSERT_TRUE(p.ReadLine(&line, kHangMs));
  EXPECT_EQ(line.rfind("{\"seq\":0,", 0), 0u) << line;
  p.Signal(SIGSTOP);
  Write(1, 6000);
  p.Signal(SIGCONT);
  ASSERT_TRUE(p.ReadLine(&line, kHangMs));
  EXPECT_EQ(line.rfind("{\"lost\":", 0), 0u) << line;
  ExpectCleanEnd(&p, SIGTERM);
}

TEST_F(FollowTest, FollowWithFilter) {
  uint32_t err = ring_->Intern(3, "bad %d");
  ring_->Add(err, "i", Args().i(6).bytes(), kT0);
  Write(0, 50);
  Proc p({"tail", "-f", "-n", "1", "--level", "err", "--file", dir_.File("r.ring")});
  std::string line;
  ASSERT_TRUE(p.ReadLine(&line, kHangMs));
  EXPECT_NE(line.find("<err> bad 6"), std::string::npos) << line;
  Write(50, 100);
  ring_->Add(err, "i", Args().i(7).bytes(), kT0 + 100);
  ring_->Flush();
  ASSERT_TRUE(p.ReadLine(&line, kHangMs));
  EXPECT_NE(line.find("<err> bad 7"), std::string::npos) << line;
  p.Signal(SIGTERM);
  Result r = p.Finish(kHangMs);
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace logsink::test
