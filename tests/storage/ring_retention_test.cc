// ring_retention_test.cc: tiers (FORMAT.md, "Tiers"): errors and quiet
// sources outlive a flood many times the file's size, a flood of errors
// still laps, the chatty writer keeps most of what it keeps alone, readers
// see every record present once and in order (whole file, cursors, a lapped
// follower), reopening continues every tier, and Verify is clean. Each
// scenario also runs on a file without tiers, to show what it loses there.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/asan.h"
#include "common/seed.h"
#include "fault_env.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

const std::string kPath = "/ring";
constexpr uint32_t kBs = 4096;
constexpr uint32_t kBlocks = 64;

WriterOptions Options(bool tiers) {
  WriterOptions o;
  o.codec = LS_CODEC_ZSTD;
  o.file_size = RingSize(kBlocks, kBs);
  o.block_size = kBs;
  if (tiers) {
    o.kept_share = 0.125;
    o.error_share = 0.125;
  }
  return o;
}

// One writer with three kinds of sites and a few sources.
class Retention : public testing::Test {
 protected:
  void Open(bool tiers) {
    std::unique_ptr<RingWriter> w;
    Status s = RingWriter::Open(&env_, kPath, Options(tiers), &w);
    ASSERT_TRUE(s.ok()) << s.ToString();
    w_ = std::move(w);
    Site err{3, 1, "error %s", "a.c"}, info{6, 2, "info %s", "b.c"}, dbg{7, 3, "debug %s", "c.c"};
    err_ = w_->Intern(err);
    info_ = w_->Intern(info);
    dbg_ = w_->Intern(dbg);
  }
  Source Src(uint64_t id, uint32_t uid, const char *app) { return TestSource(id, uid, app); }
  // Appends n records of src at site, each with a distinct payload.
  void Log(const Source &src, uint32_t site, int n) {
    for (int i = 0; i < n; i++) {
      Args a;
      a.Str(std::string(src.app) + "#" + std::to_string(next_[src.id]++) + " pad " +
            std::to_string(rng_() % 100000));
      ASSERT_TRUE(AppendRecord(w_.get(), src, site, "s", a.str(), ts_ += 1000).ok());
    }
  }
  // Everything a reader returns, checked: numbers strictly increase, no
  // corruption, Verify clean.
  std::vector<OwnedRecord> ReadBack() {
    EXPECT_TRUE(w_->Flush().ok());
    RecordingReporter rep;
    std::unique_ptr<RingReader> r;
    EXPECT_TRUE(RingReader::Open(&env_, kPath, &rep, &r).ok());
    std::vector<OwnedRecord> out;
    if (!r) return out;
    EXPECT_TRUE(ReadAllRecords(r.get(), &out).ok());
    for (size_t i = 1; i < out.size(); i++) EXPECT_LT(out[i - 1].seq, out[i].seq) << i;
    EXPECT_EQ(rep.corruptions(), 0u) << rep.Dump();
    EXPECT_TRUE(r->Verify().ok()) << rep.Dump();
    EXPECT_EQ(env_.Data(kPath).size(), Options(true).file_size);  // never grows
    return out;
  }
  static size_t Count(const std::vector<OwnedRecord> &recs, const std::string &app) {
    size_t n = 0;
    for (const auto &r : recs) n += r.app == app;
    return n;
  }
  // Appends flood records of src until `laps` times the file's slots were written.
  // A tiered ring holding 300 info records of root's "rootd".
  void OpenWithRootsRecords() {
    Open(true);
    Log(Src(1, 0, "rootd"), info_, 300);
  }
  // Root's 300 records are all still there.
  void ExpectRootsRecordsKept() {
    EXPECT_EQ(Count(ReadBack(), "rootd"), 300u)
        << "kept in tier 1 " << w_->stats().kept[1] << ", tier 2 " << w_->stats().kept[2];
  }
  void Flood(const Source &src, uint32_t site, int laps) {
    const uint64_t until = w_->stats().blocks_written + uint64_t(laps) * kBlocks;
    while (w_->stats().blocks_written < until) Log(src, site, 200);
  }
  // Errors of src, flushed every 100, until a write fails (the process
  // died: true) or `laps` times the file's slots were written (false).
  bool FloodUntilDead(const Source &src, int laps) {
    const uint64_t until = w_->stats().blocks_written + uint64_t(laps) * kBlocks;
    for (int i = 0; w_->stats().blocks_written < until; i++) {
      Args x;
      x.Str("flood#" + std::to_string(i) + " pad " + std::to_string(rng_() % 100000));
      if (!AppendRecord(w_.get(), src, err_, "s", x.str(), ts_ += 1000).ok()) return true;
      if (i % 100 == 99 && !w_->Flush().ok()) return true;
    }
    return false;
  }
  // What readers see of a file a crash left (after: once a restarted
  // writer appended 3000 more errors of src), checked: numbers strictly
  // increase. Verify's report goes to vrep.
  struct AfterCrash {
    std::vector<OwnedRecord> got;
    RecordingReporter rep, vrep;
    Status verify;
  };
  void ReadAfterCrash(bool after, const Source &src, AfterCrash *out) {
    if (after) {
      Open(true);  // recovery
      Log(src, err_, 3000);
      ASSERT_TRUE(w_->Flush().ok());
    }
    std::unique_ptr<RingReader> r = OpenReader(&env_, kPath, &out->rep);
    ASSERT_TRUE(r);
    out->got = ReadRecords(r.get());
    for (size_t i = 1; i < out->got.size(); i++)
      ASSERT_LT(out->got[i - 1].seq, out->got[i].seq) << i;
    std::unique_ptr<RingReader> v;
    ASSERT_TRUE(RingReader::Open(&env_, kPath, &out->vrep, &v).ok());
    out->verify = v->Verify();
  }
  // The writer died: writes work again, the next Open recovers.
  void Died() {
    env_.before_write = nullptr;
    env_.fail_writes = false;
    env_.cut_write = -1;
    w_.reset();
  }

  FaultEnv env_;
  std::unique_ptr<RingWriter> w_;
  uint32_t err_ = 0, info_ = 0, dbg_ = 0;
  uint64_t ts_ = 1700000000000000000ull;
  std::map<uint64_t, uint64_t> next_;
  std::mt19937_64 rng_{TestSeed()};
};

TEST_F(Retention, ErrorsAndAQuietSourceOutliveAFlood) {
  for (bool tiers : {false, true}) {
    SCOPED_TRACE(tiers ? "tiers" : "one ring");
    env_ = FaultEnv();
    Open(tiers);
    const Source a = Src(1, 1000, "errors"), b = Src(2, 1000, "quiet"), c = Src(3, 1000, "chatty");
    Log(a, err_, 200);
    Log(b, info_, 200);
    Flood(c, dbg_, 20);
    auto recs = ReadBack();
    if (tiers) {
      EXPECT_EQ(Count(recs, "errors"), 200u);
      EXPECT_EQ(Count(recs, "quiet"), 200u);
      const WriterStats &st = w_->stats();
      EXPECT_GT(st.kept[1], 0u);
      EXPECT_GT(st.evicted[2], 0u);  // debug records left the file
      EXPECT_EQ(st.evicted[0], 0u);  // no error did
    } else {
      EXPECT_EQ(Count(recs, "errors"), 0u);  // what the tiers are for
      EXPECT_EQ(Count(recs, "quiet"), 0u);
    }
    EXPECT_GT(Count(recs, "chatty"), 0u);
  }
}

// The flood's own warnings are kept in tier 1, which then turns over many
// times: the errors logged before it move on to tier 2 and stay, and tier
// 2 never fills with the flood's records (which would push them out).
TEST_F(Retention, ErrorsOutliveAFloodWithItsOwnWarnings) {
  Open(true);
  Site warn{4, 5, "warn %s", "w.c"};
  const uint32_t warn_id = w_->Intern(warn);
  const Source a = Src(1, 1000, "errors"), c = Src(3, 1000, "chatty");
  Log(a, err_, 200);
  const uint64_t until = w_->stats().blocks_written + 60ull * kBlocks;
  while (w_->stats().blocks_written < until) {
    Log(c, dbg_, 100);
    Log(c, warn_id, 3);
  }
  auto recs = ReadBack();
  EXPECT_EQ(Count(recs, "errors"), 200u);
  EXPECT_GT(w_->stats().kept[1], 0u);
}

// Another uid's flood, at the level of the records it pushes out: the
// records of the uid that wrote little stay.
TEST_F(Retention, AnotherUsersFloodLeavesRootsRecords) {
  OpenWithRootsRecords();
  Flood(Src(2, 1000, "logctl"), info_, 20);
  ExpectRootsRecordsKept();
}

// The same flood spread over several labels (a client chooses its label):
// the labels other than the largest move on to tier 1, but past it the uid
// decides, so they never reach tier 2 and root's records stay.
TEST_F(Retention, AFloodOverManyLabelsLeavesRootsRecords) {
  OpenWithRootsRecords();
  const Source f[3] = {Src(2, 1000, "a"), Src(3, 1000, "b"), Src(4, 1000, "c")};
  const uint64_t until = w_->stats().blocks_written + 40ull * kBlocks;
  for (int i = 0; w_->stats().blocks_written < until; i++) Log(f[i % 3], info_, 50);
  ExpectRootsRecordsKept();
}

// Retention's table of sources (uid, then label) cannot be used up for
// root: 40,960 labels (ten times the table), from one uid and then spread
// over 80 uids, leave root's programs apart, so a quiet root program's
// records outlive a chatty root program's flood. (Before: the first 4,096
// labels filled the table for good, and root's programs, sharing one key,
// kept 0 of 300.)
TEST_F(Retention, TenTimesTheSourceTableOfLabelsLeavesRootsProgramsApart) {
  for (int uids : {1, 80}) {
    SCOPED_TRACE(testing::Message() << uids << " uids");
    env_ = FaultEnv();
    Open(true);
    for (int i = 0; i < 40960; i++) {
      const std::string label = "label" + std::to_string(i);
      Log(Src(100 + uint64_t(i), uint32_t(60000 + i % uids), label.c_str()), info_, 1);
    }
    Log(Src(1, 0, "quiet"), info_, 300);
    Flood(Src(2, 0, "chatty"), info_, 20);
    EXPECT_EQ(Count(ReadBack(), "quiet"), 300u)
        << "kept in tier 1 " << w_->stats().kept[1] << ", tier 2 " << w_->stats().kept[2];
  }
}

// Errors alone still behave like a ring: the newest are kept, the oldest go.
TEST_F(Retention, AFloodOfErrorsStillLaps) {
  Open(true);
  const Source a = Src(1, 1000, "errors");
  Flood(a, err_, 10);
  auto recs = ReadBack();
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs.back().seq + 1, w_->next_record_seq());  // the newest is there
  EXPECT_GT(recs.front().seq, 0u);                        // the oldest went
  EXPECT_GT(w_->stats().evicted[0], 0u);
}

// The chatty writer keeps at least 90% of what it keeps with the file to
// itself, when two others write a little.
TEST_F(Retention, TheChattyWriterKeepsMostOfWhatItKeepsAlone) {
  size_t alone = 0, shared = 0;
  for (bool others : {false, true}) {
    env_ = FaultEnv();
    Open(true);
    const Source a = Src(1, 1000, "errors"), b = Src(2, 1000, "quiet"), c = Src(3, 1000, "chatty");
    if (others) {
      Log(a, err_, 200);
      Log(b, info_, 200);
    }
    Flood(c, dbg_, 20);
    (others ? shared : alone) = Count(ReadBack(), "chatty");
  }
  std::printf("chatty records kept: alone %zu, with others %zu (%.1f%%)\n", alone, shared,
              100.0 * double(shared) / double(alone));
  EXPECT_GE(double(shared), 0.9 * double(alone));
}

// Fairness no level claim beats (FORMAT.md, "Tiers"): one uid's errors,
// many times the file, leave every other class's records, whatever their
// level: root's info, another uid's errors, a quiet uid's info and the
// kernel's (a class of its own, though uid 0). Before, the last tier
// overwrote them oldest first: 0 of each were left.
TEST_F(Retention, AnErrorFloodOfOneUidLeavesEveryoneElsesRecords) {
  Open(true);
  Log(Src(1, 0, "rootd"), info_, 300);
  Log(Src(2, 1000, "errs"), err_, 200);
  Log(Src(3, 2000, "quiet"), info_, 200);
  Log(Src(4, 0, "kernel"), info_, 50);
  Flood(Src(5, 65534, "flood"), err_, 20);
  auto recs = ReadBack();
  const WriterStats &st = w_->stats();
  EXPECT_EQ(Count(recs, "rootd"), 300u);
  EXPECT_EQ(Count(recs, "errs"), 200u);
  EXPECT_EQ(Count(recs, "quiet"), 200u);
  EXPECT_EQ(Count(recs, "kernel"), 50u);
  EXPECT_GT(Count(recs, "flood"), 0u);
  EXPECT_GT(st.rescued, 0u);
  EXPECT_GT(st.evicted_for_rescue, 0u);
}

// A class over its share but not the largest (root, a third or more of
// the last tier, beside the kernel and a flood of another uid) still keeps
// every record: only the largest class's records leave or give way while
// there is room for the others.
TEST_F(Retention, AClassOverItsShareButNotTheLargestKeepsItsRecords) {
  Open(true);
  Log(Src(1, 0, "rootd"), info_, 600);
  Log(Src(2, 0, "rootd-errs"), err_, 600);
  Log(Src(3, 0, "kernel"), info_, 20);
  Flood(Src(4, 65534, "flood"), err_, 20);
  auto recs = ReadBack();
  EXPECT_EQ(Count(recs, "rootd"), 600u);
  EXPECT_EQ(Count(recs, "rootd-errs"), 600u);
  EXPECT_EQ(Count(recs, "kernel"), 20u);
}

// Root over its share (its own errors fill the file) keeps its newest
// errors: one record of another uid in the oldest block does not stop the
// last tier (it moves on with the next block), and root's new records
// replace root's old ones. The kernel's few records stay apart from root's.
TEST_F(Retention, AClassOverItsShareStillKeepsItsNewest) {
  Open(true);
  const Source root = Src(1, 0, "rootd");
  Log(Src(2, 65534, "pin"), err_, 3);
  Log(Src(3, 0, "kernel"), err_, 20);
  Flood(root, err_, 10);
  auto recs = ReadBack();
  EXPECT_EQ(Count(recs, "pin"), 3u);
  EXPECT_EQ(Count(recs, "kernel"), 20u);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs.back().seq + 1, w_->next_record_seq());  // root's newest is there
  // And the last tier kept turning over with root's errors.
  size_t root_in_file = Count(recs, "rootd");
  EXPECT_GT(root_in_file, 0u);
  EXPECT_GT(w_->stats().evicted[0], 0u);
}

// k uids flood at once, each at a level of its own choosing changed at
// random (err claims included), into a file a few others wrote a little
// to first: those few keep every record. Randomized (the seed is printed).
TEST_F(Retention, KUidsFloodingAtOnceLeaveTheQuietRecords) {
  std::mt19937_64 rng(TestSeed());
  for (int k : kAsanBuild ? std::vector<int>{2, 5} : std::vector<int>{2, 3, 5}) {
    SCOPED_TRACE(testing::Message() << k << " flooding uids");
    env_ = FaultEnv();
    next_.clear();
    Open(true);
    Log(Src(1, 0, "rootd"), info_, 300);
    Log(Src(2, 2000, "quiet"), dbg_, 100);
    Log(Src(3, 0, "kernel"), info_, 30);
    const uint32_t levels[3] = {err_, info_, dbg_};
    const uint64_t until = w_->stats().blocks_written + 30ull * kBlocks;
    while (w_->stats().blocks_written < until) {
      const uint64_t f = rng() % uint64_t(k), label = rng() % 3;  // a uid, one of its labels
      const std::string app = "flood" + std::to_string(f) + "." + std::to_string(label);
      Log(Src(10 + f * 3 + label, uint32_t(60000 + f), app.c_str()), levels[rng() % 3],
          int(1 + rng() % 200));
    }
    auto recs = ReadBack();
    EXPECT_EQ(Count(recs, "rootd"), 300u);
    EXPECT_EQ(Count(recs, "quiet"), 100u);
    EXPECT_EQ(Count(recs, "kernel"), 30u);
  }
}

// A cursor in the part of tier 0 the writer overwrote: the reader returns
// the records kept in the older tiers from there on, then tier 0, and
// reports as lost exactly the numbers it never returns.
TEST_F(Retention, ACursorIntoOverwrittenRecordsFindsTheKeptOnes) {
  Open(true);
  const Source a = Src(1, 1000, "errors"), c = Src(3, 1000, "chatty");
  for (int i = 0; i < 40; i++) {
    Log(a, err_, 5);
    Log(c, dbg_, 300);
  }
  const uint64_t cursor = 1000;  // long overwritten in tier 0
  Flood(c, dbg_, 3);
  auto all = ReadBack();
  RecordingReporter rep;
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env_, kPath, &rep, &r).ok());
  ASSERT_TRUE(r->SeekSeq(cursor).ok());
  std::vector<OwnedRecord> got;
  ASSERT_TRUE(ReadAllRecords(r.get(), &got).ok());
  std::vector<uint64_t> want_seqs, got_seqs;
  for (const auto &x : all) {
    if (x.seq >= cursor) want_seqs.push_back(x.seq);
  }
  for (const auto &x : got) got_seqs.push_back(x.seq);
  EXPECT_EQ(got_seqs, want_seqs);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(rep.lost, got.back().seq + 1 - cursor - got.size());
  EXPECT_GT(Count(got, "errors"), 0u);
}

// A follower lapped in tier 0 gets the records kept from what it missed,
// then goes on; nothing twice, nothing out of order.
TEST_F(Retention, ALappedFollowerGetsTheKeptRecords) {
  Open(true);
  const Source a = Src(1, 1000, "errors"), c = Src(3, 1000, "chatty");
  Log(c, dbg_, 100);
  ASSERT_TRUE(w_->Flush().ok());
  RecordingReporter rep;
  std::unique_ptr<RingReader> r = OpenReader(&env_, kPath, &rep);
  ASSERT_TRUE(r);
  std::vector<OwnedRecord> got = ReadRecords(r.get());
  // Errors among a flood that laps tier 0 several times while the follower waits.
  for (int i = 0; i < 10; i++) {
    Log(a, err_, 3);
    Log(c, dbg_, 8000);
  }
  ASSERT_TRUE(w_->Flush().ok());
  ASSERT_TRUE(ReadAllRecords(r.get(), &got).ok());
  for (size_t i = 1; i < got.size(); i++) ASSERT_LT(got[i - 1].seq, got[i].seq) << i;
  EXPECT_EQ(Count(got, "errors"), 30u);
  EXPECT_GT(rep.lost, 0u);
  // Everything the follower did not get is gone from the file.
  auto all = ReadBack();
  std::set<uint64_t> seen;
  for (const auto &x : got) seen.insert(x.seq);
  for (const auto &x : all) EXPECT_TRUE(seen.count(x.seq)) << x.seq;
  EXPECT_EQ(got.back().seq + 1 - got.front().seq, got.size() + rep.lost);
}

// --since into the kept tiers: with a clock that moves (the writer's and
// the records'), a time search returns every record present from that time
// on, those kept in tiers 1 and 2 (long after their blocks opened) included.
TEST_F(Retention, SinceFindsKeptRecords) {
  Open(true);
  const Source a = Src(1, 1000, "errors"), c = Src(3, 1000, "chatty");
  auto tick = [&](int n) {  // n records' worth of time, on both clocks
    env_.now_ns += uint64_t(n) * 100000000ull;
    env_.mono_ns += uint64_t(n) * 100000000ull;
    ts_ = env_.now_ns;
  };
  for (int round = 0; round < 30; round++) {
    tick(1000);
    Log(a, err_, 5);
    for (int i = 0; i < 20; i++) {
      tick(100);
      Log(c, dbg_, 100);
    }
  }
  auto all = ReadBack();
  ASSERT_GT(Count(all, "errors"), 100u);
  for (size_t pick : {all.size() / 10, all.size() / 3, all.size() / 2}) {
    // A time inside the errors' stretch: a kept record's time.
    size_t k = pick;
    while (k < all.size() && all[k].app != "errors") k++;
    ASSERT_LT(k, all.size());
    const uint64_t since = all[k].ts_ns;
    std::vector<uint64_t> want;
    for (const auto &x : all) {
      if (x.ts_ns >= since) want.push_back(x.seq);
    }
    std::unique_ptr<RingReader> r;
    ASSERT_TRUE(RingReader::Open(&env_, kPath, nullptr, &r).ok());
    ASSERT_TRUE(r->SeekTime(since).ok());
    std::vector<OwnedRecord> got;
    ASSERT_TRUE(ReadAllRecords(r.get(), &got).ok());
    std::vector<uint64_t> have;
    for (const auto &x : got) {
      if (x.ts_ns >= since) have.push_back(x.seq);
    }
    EXPECT_EQ(have, want) << "since record " << k;
  }
}

// The last n records of a tiered ring are the last n of what a reader shows
// from the oldest, across tiers, for n within tier 0, reaching into tiers 1
// and 2, and beyond everything; the same in steps of 1..3 blocks
// (StartSeekLast, SeekLastStep: the daemon's way), which take at least one
// step per block walked over.
TEST_F(Retention, LastNReachesIntoTheKeptTiersAlsoInSteps) {
  Open(true);
  const Source a = Src(1, 1000, "errors"), c = Src(3, 1000, "chatty");
  for (int round = 0; round < 10; round++) {
    Log(a, err_, 20);
    Flood(c, dbg_, 2);
  }
  auto all = ReadBack();
  ASSERT_GT(w_->stats().kept[2], 0u) << "tier 2 holds records";
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env_, kPath, nullptr, &r).ok());
  for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(50), uint64_t(all.size() / 2),
                     uint64_t(all.size() - 3), uint64_t(all.size()), uint64_t(1) << 62}) {
    SCOPED_TRACE(testing::Message() << "n " << n << " of " << all.size());
    std::vector<uint64_t> want;
    for (size_t i = all.size() - std::min<uint64_t>(n, all.size()); i < all.size(); i++)
      want.push_back(all[i].seq);
    auto seqs = [&] {
      std::vector<OwnedRecord> got;
      EXPECT_TRUE(ReadAllRecords(r.get(), &got).ok());
      std::vector<uint64_t> v;
      for (const auto &x : got) v.push_back(x.seq);
      return v;
    };
    ASSERT_TRUE(r->SeekLast(n).ok());
    EXPECT_EQ(seqs(), want);
    for (uint64_t budget : {1, 2, 3}) {
      ASSERT_TRUE(r->StartSeekLast(n).ok());
      bool done = false;
      uint64_t steps = 0;
      while (!done) {
        ASSERT_TRUE(r->SeekLastStep(budget, &done).ok());
        ASSERT_LT(++steps, 10u * kBlocks) << "no end";
      }
      EXPECT_EQ(seqs(), want) << "budget " << budget;
      if (!want.empty()) {
        // Blocks from the one reading starts at to the newest: each tier's
        // but its newest walked over, budget blocks a step.
        const uint64_t blocks = uint64_t(std::count_if(all.begin(), all.end(), [&](const auto &x) {
          return x.seq >= want.front() && (&x == &all.back() || (&x)[1].block_seq != x.block_seq);
        }));
        EXPECT_GE(steps, (std::max<uint64_t>(blocks, 3) - 3) / budget) << "budget " << budget;
      }
    }
  }
}

// Closing and reopening continues every tier: the records kept before and
// after are all there, in order.
TEST_F(Retention, ReopeningContinuesEveryTier) {
  Open(true);
  const Source a = Src(1, 1000, "errors"), c = Src(3, 1000, "chatty");
  Log(a, err_, 100);
  Flood(c, dbg_, 5);
  ASSERT_TRUE(w_->Flush().ok());
  w_.reset();
  Open(true);
  const Source a2 = Src(4, 1000, "errors2"), c2 = Src(5, 1000, "chatty");
  Log(a2, err_, 100);
  Flood(c2, dbg_, 5);
  auto recs = ReadBack();
  EXPECT_EQ(Count(recs, "errors"), 100u);
  EXPECT_EQ(Count(recs, "errors2"), 100u);
}

// The process dies in a write (cut after some bytes, every write after it
// failing) at many points of a flood that moves records between the tiers;
// a new writer opens the file and goes on. Readers then show only records
// that were appended, each once, in order; Verify finds at most the torn
// slot.
TEST_F(Retention, AWriteCutAnywhereNeverShowsBadRecords) {
  int runs = 0, torn_found = 0;
  for (int64_t cut = 40; cut < 400; cut += 23) {
    SCOPED_TRACE(testing::Message() << "cut write " << cut);
    env_ = FaultEnv();
    Open(true);
    env_.cut_write = cut;
    env_.cut_after = size_t(rng_() % kBs);
    const Source a = Src(1, 1000, "errors"), c = Src(3, 1000, "chatty");
    std::set<std::string> appended;
    bool dead = false;
    for (int i = 0; !dead && i < 60000; i++) {
      const bool err = i % 50 == 0;
      const Source &src = err ? a : c;
      Args x;
      std::string payload = std::string(src.app) + "#" + std::to_string(i) + " pad " +
                            std::to_string(rng_() % 100000);
      x.Str(payload);
      if (AppendRecord(w_.get(), src, err ? err_ : dbg_, "s", x.str(), ts_ += 1000).ok()) {
        appended.insert(payload);
      } else {
        dead = true;
      }
      if (i % 500 == 499 && !w_->Flush().ok()) dead = true;
    }
    if (!dead) continue;  // the flood ended before that write
    runs++;
    env_.fail_writes = false;
    env_.cut_write = -1;
    w_.reset();
    Open(true);  // recovery
    const Source a2 = Src(4, 1000, "after");
    for (int i = 0; i < 300; i++) {
      Args x;
      std::string payload = "after#" + std::to_string(i);
      x.Str(payload);
      ASSERT_TRUE(AppendRecord(w_.get(), a2, err_, "s", x.str(), ts_ += 1000).ok());
      appended.insert(payload);
    }
    ASSERT_TRUE(w_->Flush().ok());
    RecordingReporter rep;
    std::unique_ptr<RingReader> r = OpenReader(&env_, kPath, &rep);
    ASSERT_TRUE(r);
    std::vector<OwnedRecord> got = ReadRecords(r.get());
    for (size_t i = 0; i < got.size(); i++) {
      if (i) {
        ASSERT_LT(got[i - 1].seq, got[i].seq) << i;
      }
      // The argument is one string: its bytes after the length varint.
      std::string_view args = got[i].args;
      uint64_t len = 0;
      size_t n = ls_get_varint(reinterpret_cast<const uint8_t *>(args.data()),
                               reinterpret_cast<const uint8_t *>(args.data() + args.size()), &len);
      ASSERT_GT(n, 0u);
      ASSERT_TRUE(appended.count(std::string(args.substr(n)))) << "never appended: " << args;
    }
    EXPECT_EQ(Count(got, "after"), 300u);
    EXPECT_LE(rep.corruptions(), 1u) << rep.Dump();
    torn_found += rep.corruptions() > 0;
    // Verify finds nothing but that torn slot: no record kept twice (the
    // victim of the cut write is evicted again after the restart), no
    // number going back.
    RecordingReporter vrep;
    std::unique_ptr<RingReader> v;
    ASSERT_TRUE(RingReader::Open(&env_, kPath, &vrep, &v).ok());
    Status vs = v->Verify();
    EXPECT_LE(vrep.corruptions(), 1u) << vrep.Dump();
    EXPECT_EQ(vrep.Dump().find("goes back"), std::string::npos) << vrep.Dump();
    if (vrep.corruptions() == 0) {
      EXPECT_TRUE(vs.ok()) << vrep.Dump();
    }
  }
  std::printf("write cuts: %d runs, %d left a torn slot a reader skipped and reported\n", runs,
              torn_found);
  EXPECT_GE(runs, 8);  // most cut points fall inside the flood
}

// The records a tier's oldest block keeps are written to the next tier
// before that block's slot is overwritten: a crash right after the
// overwrite loses none of them (they were in the file already). Root's
// records share tier 1's first block with the flood's; the process dies
// in the write that overwrites that block.
TEST_F(Retention, ACrashRightAfterATiersOldestBlockIsOverwrittenKeepsWhatMovedOn) {
  Layout l;
  ASSERT_TRUE(Layout::Compute(Options(true).file_size, kBs, 0, &l).ok());
  ASSERT_TRUE(l.SetTiers(0.125, 0.125).ok());
  const uint64_t first = l.Tier(1).blocks_off;
  const uint64_t last = first + uint64_t(l.TierBlocks(1) - 1) * kBs;
  // The overwrite lands whole (the block is gone), or not at all (its
  // records are then in both tiers: each is shown once, in order).
  for (size_t lands : {size_t(kBs), size_t(0)}) {
    SCOPED_TRACE(testing::Message() << "bytes of the overwrite that land: " << lands);
    env_ = FaultEnv();
    next_.clear();
    Open(true);
    Log(Src(1, 0, "rootd"), info_, 300);
    ASSERT_TRUE(w_->Flush().ok());
    bool lapped = false;  // tier 1 wrote its last slot: its next write to the first overwrites
    env_.before_write = [&](int64_t idx, uint64_t off) {
      if (off == last) lapped = true;
      if (off == first && lapped && env_.cut_write < 0) {
        env_.cut_write = idx;
        env_.cut_after = lands;  // then the process dies
      }
    };
    const Source f = Src(2, 65534, "flood");
    ASSERT_TRUE(FloodUntilDead(f, 30)) << "tier 1 never overwrote its first slot";
    Died();
    // As the crash left it, then after the restarted writer laps tier 1
    // again (it must not move the records kept already once more).
    for (bool after : {false, true}) {
      SCOPED_TRACE(after ? "after the restart" : "as the crash left it");
      AfterCrash a;
      ReadAfterCrash(after, f, &a);
      EXPECT_EQ(a.rep.corruptions(), 0u) << a.rep.Dump();
      EXPECT_EQ(Count(a.got, "rootd"), 300u);
      EXPECT_TRUE(a.verify.ok()) << a.vrep.Dump();
    }
  }
}

// A crash at any write while the last tier rewrites blocks for fairness
// (the next blocks rewritten, the oldest not yet overwritten: its records
// are in two blocks; or a rewrite torn): readers show each record once and
// in order, the restarted writer does not move them again, and root's
// records, under their share, are all there unless the torn slot held some.
TEST_F(Retention, ACrashDuringAFairnessRewriteShowsEachRecordOnce) {
  int runs = 0, whole = 0;
  const int tries = kAsanBuild ? 12 : 24;  // a few floods each, to a crash
  for (int run = 0; run < tries; run++) {
    const int64_t cut = 300 + int64_t(rng_() % 3000);
    SCOPED_TRACE(testing::Message() << "cut write " << cut);
    env_ = FaultEnv();
    next_.clear();
    Open(true);
    Log(Src(1, 0, "rootd"), info_, 300);
    ASSERT_TRUE(w_->Flush().ok());
    env_.cut_write = cut;
    env_.cut_after = size_t(rng_() % kBs);
    const Source f = Src(2, 65534, "flood");
    if (!FloodUntilDead(f, 30)) continue;
    runs++;
    Died();
    // As the crash left it, then after the restarted writer turned the
    // tiers over again.
    for (bool after : {false, true}) {
      SCOPED_TRACE(after ? "after the restart" : "as the crash left it");
      AfterCrash a;
      ReadAfterCrash(after, f, &a);
      EXPECT_LE(a.rep.corruptions(), 1u) << a.rep.Dump();
      if (a.rep.corruptions() == 0) {
        EXPECT_EQ(Count(a.got, "rootd"), 300u);
        whole += after;
      }
      EXPECT_LE(a.vrep.corruptions(), 1u) << a.vrep.Dump();
      EXPECT_EQ(a.vrep.Dump().find("goes back"), std::string::npos) << a.vrep.Dump();
    }
  }
  std::printf("fairness crash cuts: %d runs, %d without a torn slot\n", runs, whole);
  EXPECT_GE(runs, tries - 4);
}

}  // namespace
}  // namespace logsink::test

namespace logsink::test {
namespace {

// A reader given the writer (ReaderOptions::tails_from, the daemon's reads)
// finds each tier's newest block from the writer's word: tiers 1 and 2 of a
// fresh file, not yet written, cost it no pass over their slots (before: a
// pass over every slot of both at each search, on the daemon's loop: 16 MiB
// of reads per read request on a 64 MiB ring). What it reads is the same,
// before and after the tiers fill.
TEST(RetentionTails, AReaderGivenTheWriterSearchesNoTierNotYetWritten) {
  FaultEnv env;
  WriterOptions o;
  o.codec = LS_CODEC_ZSTD;
  o.block_size = 4096;
  o.file_size = RingSize(256, o.block_size);
  o.kept_share = 0.125;  // 32 slots each
  o.error_share = 0.125;
  std::unique_ptr<RingWriter> w;
  ASSERT_TRUE(RingWriter::Open(&env, "/ring", o, &w).ok());
  const uint32_t site = w->Intern(Site{3, 1, "error %s", "a.c"});
  Source src;
  src.id = 1;
  src.pid = 7;
  src.uid = src.gid = 1000;
  src.app = src.comm = "app";
  uint64_t ts = 1700000000000000000ull;
  auto log = [&](int n) {
    for (int i = 0; i < n; i++) {
      Args a;
      a.Str("record " + std::to_string(ts));
      ASSERT_TRUE(AppendRecord(w.get(), src, site, "s", a.str(), ts++).ok());
    }
    ASSERT_TRUE(w->Flush().ok());
  };
  // Reads every record with and without the writer's word: the same
  // records; returns the bytes each read from the file.
  auto read_both = [&](uint64_t *with, uint64_t *without) {
    std::vector<OwnedRecord> got[2];
    uint64_t reads[2];
    for (int k = 0; k < 2; k++) {
      ReaderOptions ro;
      ro.crc_retries = 0;
      if (k == 0) ro.tails_from = w.get();
      std::unique_ptr<RingReader> r;
      const uint64_t before = env.bytes_read;
      ASSERT_TRUE(RingReader::Open(&env, "/ring", nullptr, ro, &r).ok());
      ASSERT_TRUE(ReadAllRecords(r.get(), &got[k]).ok());
      reads[k] = env.bytes_read - before;
    }
    ASSERT_EQ(got[0].size(), got[1].size());
    for (size_t i = 0; i < got[0].size(); i++) ASSERT_EQ(got[0][i].seq, got[1][i].seq) << i;
    *with = reads[0];
    *without = reads[1];
  };
  log(200);  // a few blocks of tier 0; tiers 1 and 2 empty
  ASSERT_EQ(w->current_block_seq(1), 0u);
  uint64_t with = 0, without = 0;
  read_both(&with, &without);
  std::printf("tiers 1 and 2 empty: %llu bytes read with the writer's word, %llu without\n",
              (unsigned long long)with, (unsigned long long)without);
  const uint64_t tiers_12 = 2 * 32 * uint64_t(o.block_size);
  EXPECT_GE(without, tiers_12) << "a pass over each empty tier";
  EXPECT_LT(with, tiers_12 / 4);
  // Tier 0 laps: the kept tiers fill and wrap; the same records either way.
  while (w->current_block_seq(1) < 40) log(500);
  read_both(&with, &without);
  EXPECT_GT(w->stats().kept[1], 0u);
}

}  // namespace
}  // namespace logsink::test

namespace logsink::test {
namespace {

// A reader of the file itself (logctl: no writer to ask) passes over an
// empty tier's slots once, however often it searches the tier's newest
// block (opening, positioning, reading on): before, each search read both
// kept tiers whole, and every search their first eight slots (653 KB to
// read 200 records here; 1 GiB on a fresh 1 GiB file). Once the tiers fill, their records are read.
TEST(RetentionTails, AReaderPassesOverAnEmptyTierOnce) {
  FaultEnv env;
  WriterOptions o;
  o.codec = LS_CODEC_ZSTD;
  o.block_size = 4096;
  o.file_size = RingSize(256, o.block_size);
  o.kept_share = 0.125;  // 32 slots each
  o.error_share = 0.125;
  std::unique_ptr<RingWriter> w;
  ASSERT_TRUE(RingWriter::Open(&env, "/ring", o, &w).ok());
  const uint32_t site = w->Intern(Site{3, 1, "error %s", "a.c"});
  Source src;
  src.id = 1;
  src.pid = 7;
  src.uid = src.gid = 1000;
  src.app = src.comm = "app";
  uint64_t ts = 1700000000000000000ull;
  auto log = [&](int n) {
    for (int i = 0; i < n; i++) {
      Args a;
      a.Str("record " + std::to_string(ts));
      ASSERT_TRUE(AppendRecord(w.get(), src, site, "s", a.str(), ts++).ok());
    }
    ASSERT_TRUE(w->Flush().ok());
  };
  log(200);
  ReaderOptions ro;
  ro.crc_retries = 0;
  std::unique_ptr<RingReader> r;
  const uint64_t before = env.bytes_read;
  ASSERT_TRUE(RingReader::Open(&env, "/ring", nullptr, ro, &r).ok());
  ASSERT_TRUE(r->SeekOldest().ok());
  std::vector<OwnedRecord> got;
  ASSERT_TRUE(ReadAllRecords(r.get(), &got).ok());
  ASSERT_EQ(got.size(), 200u);
  const uint64_t bytes = env.bytes_read - before, one_pass = 2 * 32 * uint64_t(o.block_size);
  std::printf(
      "200 records of a fresh tiered file: %llu bytes read (one pass over both kept "
      "tiers: %llu)\n",
      (unsigned long long)bytes, (unsigned long long)one_pass);
  EXPECT_LT(bytes, one_pass + one_pass / 2);
  ASSERT_EQ(w->current_block_seq(1), 0u);
  // The tiers fill: the reader that saw them empty, positioned again, reads
  // what a new reader reads, the kept tiers' records first.
  while (w->current_block_seq(2) < 3) log(500);
  ASSERT_GT(w->stats().kept[2], 0u);
  std::vector<OwnedRecord> again, fresh;
  ASSERT_TRUE(r->SeekOldest().ok());
  ASSERT_TRUE(ReadAllRecords(r.get(), &again).ok());
  std::unique_ptr<RingReader> r2;
  ASSERT_TRUE(RingReader::Open(&env, "/ring", nullptr, ro, &r2).ok());
  ASSERT_TRUE(ReadAllRecords(r2.get(), &fresh).ok());
  ASSERT_EQ(again.size(), fresh.size());
  for (size_t i = 0; i < fresh.size(); i++) ASSERT_EQ(again[i].seq, fresh[i].seq) << i;
  EXPECT_FALSE(fresh.empty());
}

}  // namespace
}  // namespace logsink::test
