// session_test.cc: the daemon's per-connection protocol state machine
// (daemon/src/session.h) in process, on a real ring file: frames split at
// every byte give the same records, and randomly mutated streams never crash
// it nor put a record on disk whose arguments do not match its format.
#include "session.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <random>
#include <set>

#include "common/seed.h"
#include "daemon/harness.h"
#include "logsink/proto/args.h"

namespace logsink::test {
namespace {

using namespace logsink::daemon;  // Session and what it takes

const uint8_t *U(const std::string &s) { return reinterpret_cast<const uint8_t *>(s.data()); }

std::string Stream() {
  return Hello(1, "sess") + Intern(1, 6, 42, "user %s port %d", "main.c") +
         Intern(2, 7, 300, "%d %lu %.*f %c %s %p", "x.c") +
         Records(9, {{2,
                      100,
                      {Arg::I(-2), Arg::U(300), Arg::I(3), Arg::F(1.5), Arg::C(0xe9), Arg::S("bob"),
                       Arg::P(0x7ffd1000)}},
                     {1, 200, {Arg::S("eve"), Arg::I(23)}}}) +
         Dropped(3, 1, 2) + Records(9, {{1, 300, {Arg::S("zed"), Arg::I(-7)}}});
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spdlog::set_level(spdlog::level::off);
    storage::WriterOptions o;
    o.file_size = 1u << 20;
    ASSERT_TRUE(storage::RingWriter::Open(storage::Env::Default(), dir_ / "r", o, &w_).ok());
    ctx_.writer = w_.get();
    ctx_.counters = &counters_;
  }
  std::vector<OwnedRecord> Flushed() {
    EXPECT_TRUE(w_->Flush().ok());
    return ReadRing(dir_ / "r");
  }
  TempDir dir_;
  std::unique_ptr<storage::RingWriter> w_;
  Counters counters_;
  Context ctx_;
};

TEST_F(SessionTest, EverySplitGivesTheSameRecords) {
  const std::string s = Stream();
  std::set<size_t> boundaries = {0};
  for (size_t at = 0; at < s.size();) {
    ls_frame f;
    ptrdiff_t n = ls_frame_parse(U(s) + at, s.size() - at, LS_FRAME_MAX, &f);
    ASSERT_GT(n, 0);
    at += size_t(n);
    boundaries.insert(at);
  }
  for (size_t k = 0; k <= s.size(); k++) {
    Session sess(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
    ASSERT_TRUE(sess.Feed(U(s), k, 0));
    EXPECT_EQ(sess.partial(), boundaries.count(k) == 0) << k;
    ASSERT_TRUE(sess.Feed(U(s) + k, s.size() - k, 0));
    EXPECT_FALSE(sess.partial());
  }
  auto got = Flushed();
  ASSERT_EQ(got.size(), (s.size() + 1) * 4);
  for (size_t i = 0; i < got.size(); i += 4) {
    EXPECT_EQ(got[i].fmt, "%d %lu %.*f %c %s %p");
    EXPECT_EQ(got[i + 1].args, EncodeArgs({Arg::S("eve"), Arg::I(23)}));
    EXPECT_EQ(got[i + 2].dropped_count, 3u);
    EXPECT_EQ(got[i + 3].ts_ns, 300u);
  }
  EXPECT_EQ(counters_.errors(), 0u);
}

TEST_F(SessionTest, MutatedStreamsNeverWriteInvalidRecords) {
  const std::string base = Stream();
  std::mt19937_64 rng(TestSeed(20261123));
  int rejected = 0;
  for (int iter = 0; iter < 4000; iter++) {
    std::string s = base;
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; e++) {
      size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s[at] = char(rng());
          break;
        case 1:
          s.insert(at, 1, char(rng()));
          break;
        default:
          s.erase(at, 1 + rng() % 3);
          break;
      }
      // push_back, not `s = "x"`: GCC 12 at -O3 reports a false -Wrestrict
      // inside std::string::assign(const char*) here.
      if (s.empty()) s.push_back('x');
    }
    Session sess(&ctx_, Limits{4096, 16, 64}, Peer{1, 2, 3, "t"});
    size_t off = 0;
    bool ok = true;
    while (ok && off < s.size()) {
      size_t n = std::min(s.size() - off, size_t(1 + rng() % 40));
      ok = sess.Feed(U(s) + off, n, 0);
      off += n;
    }
    if (!ok) rejected++;
  }
  EXPECT_GT(rejected, 1000);  // most mutations are caught...
  EXPECT_EQ(counters_.errors(), uint64_t(rejected));
  // ...and whatever got through is well-formed by its own format.
  auto got = Flushed();
  EXPECT_GT(got.size(), 0u);
  for (const OwnedRecord &g : got) {
    if (g.kind != storage::Record::Kind::kRecord) continue;
    char sig[LS_FMT_MAX_ARGS + 1];
    ASSERT_GE(ls_fmt_signature(g.fmt.data(), g.fmt.size(), sig, sizeof sig), 0) << g.fmt;
    EXPECT_EQ(ls_args_check(sig, U(g.args), g.args.size()), 0) << g.fmt;
  }
}

}  // namespace
}  // namespace logsink::test
