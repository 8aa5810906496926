// logctl_grep_test.cc: the fast read path (whole blocks decoded and records
// rendered on two threads, --grep literals found by substring search) prints
// exactly what the plain one prints (LOGSINK_PLAIN_READ=1: one thread, regexec), in every
// output mode, on a varied ring; and the literal search answers as regexec
// does, message by message.
#include <algorithm>
#include <random>

#include "cli_util.h"
#include "common/seed.h"
#include "logsink/render/filter.h"
#include "logsink/storage/cursor.h"

namespace logsink::test {
namespace {

using render::MessageMatcher;

// ---- the literal search against regexec --------------------------------------

TEST(GrepMatcherTest, LiteralsAreFoundWhereRegexecFindsThem) {
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  // Messages of bytes that matter: letters of both cases, NUL, high bytes,
  // newlines, and the pattern's own characters.
  const std::string alphabet =
      std::string("aAbBzZ %-_:/\n\x80\xc3\xa9\xff", 18) + std::string(1, '\0');
  auto pick = [&](const std::string &from, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; i++) s.push_back(from[rng() % from.size()]);
    return s;
  };
  for (int round = 0; round < 300; round++) {
    std::string pat = pick("aAbBzZ %-_:/", 1 + rng() % 3);
    ASSERT_TRUE(MessageMatcher::IsLiteral(pat)) << pat;
    const bool icase = rng() % 2;
    MessageMatcher fast, plain;
    std::string why;
    ASSERT_TRUE(fast.Add(pat, icase, true, &why)) << why;
    ASSERT_TRUE(plain.Add(pat, icase, false, &why)) << why;
    for (int m = 0; m < 200; m++) {
      std::string msg = pick(alphabet, rng() % 24);
      ASSERT_EQ(fast.Match(msg), plain.Match(msg))
          << "pattern '" << pat << "' icase " << icase << " message of " << msg.size() << " bytes";
    }
  }
}

TEST(GrepMatcherTest, OnlyPlainLiteralsAreLiterals) {
  EXPECT_TRUE(MessageMatcher::IsLiteral("quota exceeded"));
  EXPECT_TRUE(MessageMatcher::IsLiteral("a-b_c:d/e=f,g'h\"i"));
  for (const char *re : {"", "a.b", "a*", "a+", "a?", "(a)", "[a]", "a{2}", "a|b", "^a", "a$",
                         "a\\b", "tab\there", "caf\xc3\xa9"})
    EXPECT_FALSE(MessageMatcher::IsLiteral(re)) << re;
}

// ---- logctl, fast path against plain path -------------------------------------

class GrepCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = TestSeed();
    ring_ = std::make_unique<TestRing>(dir_.File("g.ring"), 12288 + 36 * 8192, 8192);
    Fill();
  }

  // Thousands of records (many batches of the second thread), of varied
  // sources, levels and text: control characters, NULs, high bytes, long
  // strings, drop reports, arguments cut by the writer.
  void Fill() {
    std::mt19937_64 rng(seed_);
    TestRing &r = *ring_;
    const uint32_t s_user = r.Intern(6, "user %s logged in from %s port %d");
    const uint32_t s_quota = r.Intern(4, "disk quota exceeded for %s (%d MiB over)");
    const uint32_t s_err = r.Intern(3, "failed to write %s: %s", 20, "io.c");
    const uint32_t s_num = r.Intern(7, "n=%d x=%x u=%u");
    const uint32_t s_free = r.Intern(5, "%s");
    static const char *const kWords[] = {
        "alpha",   "Quota",       "quota exceeded", "USER",      "user",        "b\x1b[31mred",
        "nul\0in", "caf\xc3\xa9", "\xff\xfe",       "tab\there", "line\nbreak", "a.c",
        "x7"};
    auto word = [&] {
      const char *w = kWords[rng() % 13];
      return std::string(w, w == kWords[6] ? 6 : std::strlen(w));
    };
    sources_.push_back(Source{1, 4242, 1000, 100, "testapp", "testcomm"});
    sources_.push_back(Source{2, 77, 0, 0, "", "kworker", "init.scope"});
    sources_.push_back(Source{3, 9000, 33, 33, "we b[1]", "nginx", "nginx.service"});
    sources_.push_back(Source{4, 12, 1001, 1001, "api", "api", ""});
    uint64_t ts = kT0;
    for (int i = 0; i < 30000; i++) {
      ts += 1000 + rng() % 5000000;
      const Source *src = &sources_[rng() % sources_.size()];
      switch (rng() % 8) {
        case 0:
        case 1:
        case 2:
          r.Add(s_user, "ssi",
                Args()
                    .s(word())
                    .s("10.0.0." + std::to_string(rng() % 256))
                    .i(int64_t(rng() % 65536))
                    .bytes(),
                ts, src);
          break;
        case 3:
          r.Add(s_quota, "si", Args().s(word()).i(int64_t(rng() % 1000) - 500).bytes(), ts, src);
          break;
        case 4:
          r.Add(s_err, "ss", Args().s(word()).s(word()).bytes(), ts, src);
          break;
        case 5:
          r.Add(s_num, "iiu", Args().i(int64_t(rng())).i(int64_t(rng() % 4096)).u(rng()).bytes(),
                ts, src);
          break;
        case 6:
          if (rng() % 50 == 0) {
            // Longer than a block: stored cut, with the TRUNC flag.
            r.Add(s_free, "s", Args().s(std::string(40000, 'q') + word()).bytes(), ts, src);
          } else {
            r.Add(s_free, "s", Args().s(word() + " " + word() + " " + word()).bytes(), ts, src);
          }
          break;
        default: {
          if (rng() % 40 == 0) {
            Status s = r.writer()->AppendDropped(*src, ts, 1 + rng() % 100, ts - 1000000);
            ASSERT_TRUE(s.ok()) << s.ToString();
          } else {
            r.Add(s_user, "ssi", Args().s("x").s(word()).i(-1).bytes(), ts, src);
          }
        }
      }
    }
    r.Flush();
  }

  // logctl args on the ring, plain and fast: the same output and status.
  void Same(std::vector<std::string> args) {
    args.insert(args.end(), {"--no-pager", "--file", ring_->path()});
    SpawnOptions plain;
    plain.env = {{"LOGSINK_PLAIN_READ", "1"}};
    Result a = RunLogctl(args, plain), b = RunLogctl(args);
    std::string what;
    for (const std::string &s : args) what += s + " ";
    EXPECT_EQ(a.status, b.status) << what << a.err << b.err;
    EXPECT_EQ(a.err, b.err) << what;
    ASSERT_EQ(a.out.size(), b.out.size()) << what;
    EXPECT_TRUE(a.out == b.out) << what << ": the outputs differ";
    outputs_.push_back(size_t(std::count(a.out.begin(), a.out.end(), '\n')));
  }

  TempDir dir_{"logsink-grep"};
  uint64_t seed_ = 0;
  std::vector<Source> sources_;
  std::unique_ptr<TestRing> ring_;
  std::vector<size_t> outputs_;
};

TEST_F(GrepCliTest, EveryModeSameOutput) {
  for (const char *mode : {"short", "short-iso", "short-precise", "short-unix", "short-monotonic",
                           "cat", "verbose", "json", "json-pretty", "raw"}) {
    Same({"cat", "-o", mode});
    Same({"cat", "-o", mode, "--grep", "quota exceeded"});
    Same({"cat", "-o", mode, "-i", "--grep", "USER"});
  }
  // Batches start at 128 records and double up to 2048 (128 + 256 + 512 +
  // 1024 + 2048 = 3968): past 4096 lines the second thread had six or more.
  // (How many of the 30,000 records the ring keeps depends on the seed:
  // with 24 blocks, seed 13852868925169177807 kept 3,816 lines' worth, so
  // the ring has 36.)
  EXPECT_GT(outputs_[0], 4096u) << "the ring should give several batches";
}

TEST_F(GrepCliTest, PatternsAndFiltersSameOutput) {
  Same({"cat", "--grep", "user"});
  Same({"cat", "--grep", "a.c"});                    // a regular expression
  Same({"cat", "--grep", "x7", "--grep", "Quota"});  // any of them
  Same({"cat", "-i", "--grep", "caf"});
  Same({"cat", "--grep", "in from 10.0.0.1 "});
  Same({"cat", "--grep", "qqqq"});  // the cut records
  Same({"cat", "--grep", "no such text"});
  Same({"cat", "-p", "err", "--grep", "write"});
  Same({"cat", "--app", "api", "--grep", "user"});
  Same({"cat", "-r", "--grep", "user"});
  Same({"cat", "--show-cursor", "--grep", "user"});
  Same({"tail", "-n", "50", "--grep", "user"});
  Same({"tail", "-n", "3000"});
  Same({"export", "-o", "-"});
  Same({"export", "-o", "-", "--format", "json", "--grep", "exceeded"});
}

TEST_F(GrepCliTest, LostRecordsLineInPlace) {
  // A cursor older than the oldest record: the "records lost" line comes
  // first, then the records, in both paths.
  ring_.reset();  // closes the writer (flushed in Fill)
  std::unique_ptr<RingReader> rd;
  ASSERT_TRUE(RingReader::Open(Env::Default(), dir_.File("g.ring"), nullptr, &rd).ok());
  RingReader::Summary sum;
  ASSERT_TRUE(rd->Summarize(&sum).ok());
  ASSERT_GT(sum.oldest_seq, 0u) << "the ring should have wrapped";
  const std::string cursor = FormatCursor(rd->layout().RingIdHex(), 0);
  for (const char *grep : {"", "user"}) {
    std::vector<std::string> args = {"cat",        "--after-cursor", cursor,
                                     "--no-pager", "--file",         dir_.File("g.ring")};
    if (*grep) args.insert(args.end(), {"--grep", grep});
    SpawnOptions plain;
    plain.env = {{"LOGSINK_PLAIN_READ", "1"}};
    Result a = RunLogctl(args, plain), b = RunLogctl(args);
    EXPECT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(a.out.rfind("-- ", 0), 0u) << a.out.substr(0, 200);
    EXPECT_TRUE(a.out == b.out) << "the outputs differ";
  }
}

}  // namespace
}  // namespace logsink::test
