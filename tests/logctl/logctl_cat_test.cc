// logctl_cat_test.cc: the real logctl binary against rings written with
// storage's RingWriter (cli_fixture.h): `logctl cat` and its filters (-p, --pid, --uid, --app,
// --since/--until, --grep), and filtered reads that skip blocks by their summaries.
#include <functional>

#include "cli_fixture.h"

namespace logsink::test {
namespace {

// The levels' names, by number.
const char *const names[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};

// A ring at path with one record per level, "at emerg" .. "at debug", at
// kT0 + level ms.
void WriteOnePerLevel(const std::string &path) {
  TestRing ring(path);
  for (int l = 0; l < 8; l++) {
    uint32_t site = ring.Intern(static_cast<uint8_t>(l), std::string("at ") + names[l]);
    ring.Add(site, "", "", kT0 + l * kMs);
  }
  ring.Close();
}

TEST_F(LogctlTest, CatPrintsEveryStoredRecordInOrderAcrossWraps) {
  // The block layout as it is: this test laps a small ring.
  TestRing ring(dir_.File("r.ring"), 12288 + 8 * 4096, 4096, LS_CODEC_NONE);
  const int kN = 20000;  // several laps of an 8-block ring
  WriteNumbered(&ring, kN);
  EXPECT_GT(ring.writer()->stats().wraps + ring.writer()->current_block_seq() / 8, 3u);
  ring.Close();
  Result r = RunLogctl({"cat", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_GT(lines.size(), 100u);
  ASSERT_LT(lines.size(), static_cast<size_t>(kN));
  int first = kN - static_cast<int>(lines.size());
  for (size_t i = 0; i < lines.size(); i++) {
    std::string want = "<info> n=" + std::to_string(first + static_cast<int>(i));
    ASSERT_EQ(lines[i].substr(lines[i].size() - want.size()), want) << i;
  }
  // tail -n agrees with cat's ending.
  r = RunLogctl({"tail", "-n", "5", "--file", dir_.File("r.ring")});
  EXPECT_EQ(Lines(r.out), std::vector<std::string>(lines.end() - 5, lines.end()));
}

TEST_F(LogctlTest, LevelFilterShowsThatLevelAndMoreSevere) {
  WriteOnePerLevel(dir_.File("r.ring"));
  Result r = RunLogctl({"cat", "--level", "warning", "--file", dir_.File("r.ring")});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_EQ(lines[0], Line(0, "testapp(testcomm)[4242]: <emerg> at emerg"));
  EXPECT_EQ(lines[4], Line(4, "testapp(testcomm)[4242]: <warning> at warning"));
  r = RunLogctl({"cat", "--level", "3", "--file", dir_.File("r.ring")});
  EXPECT_EQ(Lines(r.out).size(), 4u);
  r = RunLogctl({"cat", "-p", "debug", "--file", dir_.File("r.ring")});
  EXPECT_EQ(Lines(r.out).size(), 8u);
}

// -p takes journalctl's ranges FROM..TO and names in any case.
TEST_F(LogctlTest, LevelRangesAndNamesInAnyCase) {
  WriteOnePerLevel(dir_.File("r.ring"));
  std::string f = dir_.File("r.ring");
  // The levels shown, as the digits of their numbers.
  auto levels = [&](const std::string &p) {
    Result r = RunLogctl({"cat", "-p", p, "--file", f});
    EXPECT_EQ(r.status, 0) << p << ": " << r.err;
    std::string got;
    for (auto &l : Lines(r.out))
      for (int i = 0; i < 8; i++)
        if (l.size() > strlen(names[i]) + 3 &&
            l.compare(l.size() - strlen(names[i]) - 3, std::string::npos,
                      std::string("at ") + names[i]) == 0)
          got += char('0' + i);
    return got;
  };
  EXPECT_EQ(levels("err..warning"), "34");
  EXPECT_EQ(levels("warning..err"), "34");  // either order, like journalctl
  EXPECT_EQ(levels("..warning"), "01234");
  EXPECT_EQ(levels("notice.."), "567");
  EXPECT_EQ(levels(".."), "01234567");
  EXPECT_EQ(levels("3..4"), "34");
  EXPECT_EQ(levels("1..crit"), "12");
  EXPECT_EQ(levels("ERR"), "0123");
  EXPECT_EQ(levels("Warning"), "01234");
  EXPECT_EQ(levels("CRIT..Notice"), "2345");
  EXPECT_EQ(levels("debug..debug"), "7");
  EXPECT_EQ(levels("5"), "012345");
  // tail counts matching records, and --level works like -p.
  Result r = RunLogctl({"tail", "-n", "1", "--level=alert..err", "--file", f});
  ASSERT_EQ(Lines(r.out).size(), 1u) << r.out << r.err;
  EXPECT_NE(r.out.find("at err"), std::string::npos) << r.out;
  for (const char *bad : {"loud", "err...warning", "err..loud", "8", "err..warning..", "-1", "",
                          "e", "errr", "0x3"}) {
    r = RunLogctl({"cat", "-p", bad, "--file", f});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_EQ(r.out, "") << bad;
    EXPECT_EQ(r.err, std::string("logctl: cat: bad level '") + bad +
                         "': expected emerg, alert, crit, err, warning, notice, info, debug (any "
                         "case) or 0-7, or a range FROM..TO such as err..warning, ..warning, "
                         "err..\nTry 'logctl cat --help'.\n")
        << bad;
  }
  // send takes one level (in any case) or FACILITY.LEVEL, not a range.
  r = RunLogctl({"send", "--level", "err..warning", "--socket", dir_.File("none.sock"), "x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "logctl: send: bad level 'err..warning': expected LEVEL or FACILITY.LEVEL (user.err, "
            "local3.notice); levels: emerg, alert, crit, err, warning, notice, info, debug or "
            "0-7; facilities: kern, user, mail, daemon, auth, syslog, lpr, news, uucp, cron, "
            "authpriv, ftp, ntp, audit, alert, clock, local0-local7");
  r = RunLogctl({"cat", "--help"});
  EXPECT_NE(r.out.find("FROM..TO"), std::string::npos) << r.out;
}

TEST_F(LogctlTest, PidUidAndAppFilters) {
  TestRing ring(dir_.File("r.ring"));
  Source other{2, 777, 0, 0, "", "otherproc"};
  uint32_t site = ring.Intern(6, "from %s");
  for (int i = 0; i < 6; i++) {
    bool mine = i % 2 == 0;
    ring.Add(site, "s", Args().s(mine ? "mine" : "other").bytes(), kT0 + i * kMs,
             mine ? &ring.source() : &other);
  }
  ring.Close();
  std::string f = dir_.File("r.ring");
  Result r = RunLogctl({"cat", "--pid", "777", "--file", f});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  for (auto &l : lines)
    EXPECT_NE(l.find("otherproc[777]: <info> from other"), std::string::npos) << l;
  r = RunLogctl({"cat", "--uid", "1000", "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  for (auto &l : lines)
    EXPECT_NE(l.find("testapp(testcomm)[4242]: <info> from mine"), std::string::npos);
  r = RunLogctl({"cat", "--app", "testapp", "--file", f});
  EXPECT_EQ(Lines(r.out).size(), 3u);
  // An empty label falls back to the process name.
  r = RunLogctl({"cat", "--app", "otherproc", "--file", f});
  EXPECT_EQ(Lines(r.out).size(), 3u);
  r = RunLogctl({"cat", "--app", "nobody", "--file", f});
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.status, 0);
}

// A repeated --pid, --uid, --app or --grep matches any of its
// values (the last one used to win); different filters are ANDed.
TEST_F(LogctlTest, RepeatedMatchesAreOredAndFieldsAnded) {
  TestRing ring(dir_.File("r.ring"));
  Source a{1, 101, 1001, 0, "alpha", "alpha"};
  Source b{2, 102, 1002, 0, "beta", "beta"};
  Source c{3, 103, 1003, 0, "", "gamma"};
  uint32_t info = ring.Intern(6, "%s says %s");
  uint32_t err = ring.Intern(3, "%s fails %s");
  int t = 0;
  for (const Source *src : {&a, &b, &c}) {
    std::string name(src->comm);
    ring.Add(info, "ss", Args().s(name).s("hello").bytes(), kT0 + t++ * kMs, src);
    ring.Add(err, "ss", Args().s(name).s("badly").bytes(), kT0 + t++ * kMs, src);
  }
  ring.Close();
  std::string f = dir_.File("r.ring");
  // The messages shown, joined by '|'.
  auto shown = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "cat");
    args.push_back("--file");
    args.push_back(f);
    Result r = RunLogctl(args);
    EXPECT_EQ(r.status, 0) << r.err;
    std::string got;
    for (auto &l : Lines(r.out)) {
      size_t p = l.find("> ");
      if (!got.empty()) got += '|';
      got.append(p == std::string::npos ? l : l.substr(p + 2));
    }
    return got;
  };
  EXPECT_EQ(shown({"--app", "alpha", "--app", "gamma"}),
            "alpha says hello|alpha fails badly|gamma says hello|gamma fails badly");
  EXPECT_EQ(shown({"--pid", "102", "--pid", "103"}),
            "beta says hello|beta fails badly|gamma says hello|gamma fails badly");
  EXPECT_EQ(shown({"--uid", "1001", "--uid", "1002", "--uid", "1001"}),
            "alpha says hello|alpha fails badly|beta says hello|beta fails badly");
  EXPECT_EQ(shown({"-g", "^beta says", "--grep", "gamma fails"}),
            "beta says hello|gamma fails badly");
  EXPECT_EQ(shown({"-g", "^BETA SAYS", "-i", "--grep", "GAMMA"}),
            "beta says hello|gamma says hello|gamma fails badly");
  // Across fields: AND.
  EXPECT_EQ(shown({"--app", "alpha", "--app", "beta", "-p", "err"}),
            "alpha fails badly|beta fails badly");
  EXPECT_EQ(shown({"--app", "alpha", "--app", "beta", "--pid", "102", "--pid", "103"}),
            "beta says hello|beta fails badly");
  EXPECT_EQ(shown({"--app", "alpha", "--grep", "beta", "--grep", "gamma"}), "");
  // tail walks back for matches of any value.
  Result r = RunLogctl({"tail", "-n", "3", "--app", "alpha", "--app", "gamma", "--file", f});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_NE(lines[0].find("alpha fails badly"), std::string::npos);
  EXPECT_NE(lines[2].find("gamma fails badly"), std::string::npos);
  // One bad expression among good ones is still a usage error.
  r = RunLogctl({"cat", "-g", "ok", "-g", "(", "--file", f});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("logctl: cat: bad regular expression '(': ", 0), 0u) << r.err;
  r = RunLogctl({"cat", "--help"});
  EXPECT_NE(r.out.find("A repeated --pid, --uid, --app, --unit or --grep matches any of its "
                       "values"),
            std::string::npos)
      << r.out;
}

TEST_F(LogctlTest, SinceAndUntil) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "m%d");
  for (int i = 0; i < 600; i++) ring.Add(site, "i", Args().i(i).bytes(), kT0 + i * 1000 * kMs);
  ring.Close();
  std::string f = dir_.File("r.ring");
  // kT0 = 2025-11-23T10:00:00Z; records one second apart.
  Result r = RunLogctl({"cat", "--since", "2025-11-23T10:09:50Z", "--file", f});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 10u) << r.err;
  EXPECT_NE(lines[0].find(" m590"), std::string::npos) << lines[0];
  r = RunLogctl({"cat", "--since", "@1763892100", "--until", "2025-11-23 10:01:49", "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 10u) << r.out << r.err;  // TZ=UTC in the child
  EXPECT_NE(lines[0].find(" m100"), std::string::npos);
  EXPECT_NE(lines[9].find(" m109"), std::string::npos);
  r = RunLogctl({"tail", "-n", "3", "--since", "2025-11-23T11:09:00+01:00", "--file", f});
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_NE(lines[2].find(" m599"), std::string::npos);
  r = RunLogctl({"tail", "-n", "100", "--since", "2025-11-23T10:09:58Z", "--file", f});
  EXPECT_EQ(Lines(r.out).size(), 2u);
  // Relative times: the records are in the past, "1h ago" is after them all.
  r = RunLogctl({"cat", "--since", "1h ago", "--file", f});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  r = RunLogctl({"cat", "--until", "yesterday", "--file", f});
  EXPECT_EQ(Lines(r.out).size(), 600u);
}

TEST_F(LogctlTest, GrepMatchesTheRenderedMessage) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(6, "user %s port %d");
  const char *users[] = {"alice", "bob", "carol", "bob"};
  for (int i = 0; i < 4; i++)
    ring.Add(site, "si", Args().s(users[i]).i(20 + i).bytes(), kT0 + i * kMs);
  ring.Close();
  Result r = RunLogctl({"cat", "--grep", "bob port 2[0-9]$", "--file", dir_.File("r.ring")});
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_NE(lines[0].find("user bob port 21"), std::string::npos);
  EXPECT_NE(lines[1].find("user bob port 23"), std::string::npos);
  r = RunLogctl({"cat", "-g", "CAROL", "-i", "--file", dir_.File("r.ring")});
  EXPECT_EQ(Lines(r.out).size(), 1u);
}

// A ring of many compressed blocks, written in bursts of one source at a time
// (each burst longer than a block), with errors only in beta's bursts and two
// "rare" records at the very start: filtered reads skip the blocks whose
// summaries rule out every record.
class BlockSkipTest : public LogctlTest {
 protected:
  struct Written {
    const Source *src;
    int level;
  };
  void SetUp() override {
    f_ = dir_.File("r.ring");
    ring_ = std::make_unique<TestRing>(f_, 12288 + 256 * 4096);
    info_ = ring_->Intern(6, "n=%d");
    err_ = ring_->Intern(3, "e=%d");
    Add(&rare_, 6);
    Add(&rare_, 3);
    const Source *srcs[] = {&alpha_, &beta_, &gamma_};
    for (int i = 0; i < kN; i++) {
      const Source *src = srcs[i / kBurst % 3];
      Add(src, src == &beta_ && i % 97 == 0 ? 3 : 6);
    }
    ring_->Flush();
  }
  void Add(const Source *src, int level) {
    int i = int(recs_.size());
    ring_->Add(level == 3 ? err_ : info_, "i", Args().i(i).bytes(), kT0 + uint64_t(i) * kMs, src);
    recs_.push_back({src, level});
  }
  // What the unfiltered cat prints (no block is skipped), one line a record.
  const std::vector<std::string> &All() {
    if (all_.empty()) {
      Result r = RunLogctl({"cat", "--file", f_});
      EXPECT_EQ(r.status, 0) << r.err;
      all_ = Lines(r.out);
      EXPECT_EQ(all_.size(), recs_.size()) << "the ring lapped";
    }
    return all_;
  }
  // The lines of the records `keep` passes, oldest first.
  std::vector<std::string> Expected(const std::function<bool(const Written &)> &keep) {
    std::vector<std::string> out;
    const auto &all = All();
    for (size_t i = 0; i < recs_.size() && i < all.size(); i++)
      if (keep(recs_[i])) out.push_back(all[i]);
    return out;
  }
  // Runs logctl CMD ARGS --file f_ and returns its lines.
  std::vector<std::string> Run(std::vector<std::string> args) {
    args.push_back("--file");
    args.push_back(f_);
    Result r = RunLogctl(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return Lines(r.out);
  }
  // Blocks a reader with filter bf skips reading the whole ring.
  uint64_t Skipped(const RecordFilter &bf) {
    std::unique_ptr<RingReader> r;
    Status s = RingReader::Open(Env::Default(), f_, nullptr, &r);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return 0;
    r->SetFilter(&bf);
    std::vector<OwnedRecord> recs;
    s = ReadAllRecords(r.get(), &recs);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return r->blocks_skipped();
  }
  static std::vector<std::string> Last(const std::vector<std::string> &v, size_t n) {
    return std::vector<std::string>(v.end() - std::min(n, v.size()), v.end());
  }

  static constexpr int kN = 60000, kBurst = 6000;
  std::string f_;
  std::unique_ptr<TestRing> ring_;
  uint32_t info_ = 0, err_ = 0;
  Source alpha_{1, 101, 1001, 0, "alpha", "alpha"};
  Source beta_{2, 102, 1002, 0, "beta", "beta"};
  Source gamma_{3, 103, 1003, 0, "", "gamma"};  // no label: --app matches its comm
  Source rare_{4, 104, 1004, 0, "rare", "rare"};
  std::vector<Written> recs_;
  std::vector<std::string> all_;
};

TEST_F(BlockSkipTest, FilteredOutputIsExactlyThePerRecordFiltersWhileBlocksAreSkipped) {
  const auto &all = All();
  ASSERT_EQ(all.size(), recs_.size());
  // The layout does let a reader skip: these filters rule out whole blocks.
  RecordFilter bf;
  bf.apps = {"alpha"};
  EXPECT_GT(Skipped(bf), 3u);
  bf.apps = {"rare"};
  EXPECT_GT(Skipped(bf), 10u);
  bf = RecordFilter();
  bf.levels = 0x0f;  // emerg..err
  EXPECT_GT(Skipped(bf), 3u);

  auto is = [](const Source *s) { return [s](const Written &w) { return w.src == s; }; };
  auto alpha = Expected(is(&alpha_)), gamma = Expected(is(&gamma_));
  auto rare = Expected(is(&rare_));
  ASSERT_EQ(rare.size(), 2u);
  EXPECT_EQ(Run({"cat", "--app", "alpha"}), alpha);
  EXPECT_EQ(Run({"cat", "--app", "gamma"}), gamma);
  EXPECT_EQ(Run({"cat", "--app", "rare"}), rare);
  EXPECT_EQ(Run({"cat", "--app", "nobody"}), std::vector<std::string>());
  EXPECT_EQ(Run({"cat", "--app", "alpha", "--app", "rare"}),
            Expected([&](const Written &w) { return w.src == &alpha_ || w.src == &rare_; }));
  auto errors = Expected([](const Written &w) { return w.level <= 3; });
  EXPECT_GT(errors.size(), 10u);
  EXPECT_EQ(Run({"cat", "-p", "err"}), errors);
  EXPECT_EQ(Run({"cat", "-p", "err", "--app", "beta"}),
            Expected([&](const Written &w) { return w.level <= 3 && w.src == &beta_; }));
  EXPECT_EQ(Run({"cat", "-p", "info..debug", "--app", "rare"}), std::vector<std::string>{rare[0]});
  EXPECT_EQ(Run({"cat", "--pid", "101", "--pid", "103"}),
            Expected([&](const Written &w) { return w.src == &alpha_ || w.src == &gamma_; }));
  EXPECT_EQ(Run({"cat", "--uid", "1002"}), Expected(is(&beta_)));
  // Records 20000..31999 by time (1 ms apart from kT0 = 10:00:00): alpha's
  // bursts are 2..6001, 18002..24001, 36002..42001, so 20000..24001 of them.
  std::vector<std::string> window;
  for (int i = 20000; i <= 31999; i++)
    if (recs_[size_t(i)].src == &alpha_) window.push_back(all[size_t(i)]);
  ASSERT_EQ(window.size(), 4002u);
  EXPECT_EQ(Run({"cat", "--app", "alpha", "--since", "2025-11-23T10:00:20Z", "--until",
                 "2025-11-23T10:00:31.999Z"}),
            window);
  // tail -n N walks back over skipped blocks to N matches or the ring's start.
  EXPECT_EQ(Run({"tail", "-n", "5", "--app", "alpha"}), Last(alpha, 5));
  EXPECT_EQ(Run({"tail", "-n", "3000", "--app", "gamma"}), Last(gamma, 3000));
  EXPECT_EQ(Run({"tail", "-n", "10", "--app", "rare"}), rare);
  EXPECT_EQ(Run({"tail", "-n", "1", "-p", "err", "--app", "rare"}), Last(rare, 1));
  EXPECT_EQ(Run({"tail", "-n", "7", "-p", "err"}), Last(errors, 7));
  EXPECT_EQ(Run({"tail", "-n", "10", "--app", "nobody"}), std::vector<std::string>());
  // --reverse and export go through the same reading.
  auto beta = Expected(is(&beta_));
  EXPECT_EQ(Run({"cat", "-r", "--app", "beta"}),
            std::vector<std::string>(beta.rbegin(), beta.rend()));
  EXPECT_EQ(Run({"export", "-o", "-", "--app", "alpha"}), alpha);
}

// -f with a filter: a partial block skipped for its summary is read again
// when it grows, and after tail walked back over skipped blocks it follows
// from where it read, each match once.
TEST_F(BlockSkipTest, FollowWithAFilterShowsEachMatchOnce) {
  All();
  Proc p({"tail", "-f", "-n", "5", "--app", "rare", "--file", f_});
  std::string line;
  for (int i = 0; i < 2; i++) {
    ASSERT_TRUE(p.ReadLine(&line, 10000)) << i;
    EXPECT_EQ(line, all_[size_t(i)]);
  }
  // Others' records first (the partial block's summary rules it out), then
  // rare's in the same block, then whole blocks of others, then rare's again.
  for (int i = 0; i < 50; i++) Add(&beta_, 6);
  ring_->Flush();
  usleep(300 * 1000);  // logctl looks at the partial block (and skips it)
  std::vector<int> want;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 3; i++) {
      want.push_back(int(recs_.size()));
      Add(&rare_, 6);
    }
    ring_->Flush();
    for (int i = 0; i < 5000; i++) Add(&alpha_, 6);
    ring_->Flush();
  }
  for (int i : want) {
    ASSERT_TRUE(p.ReadLine(&line, 10000)) << "waiting for record " << i;
    EXPECT_NE(line.find("rare[104]: <info> n=" + std::to_string(i)), std::string::npos) << line;
  }
  usleep(300 * 1000);
  p.Signal(SIGTERM);
  Result r = p.Finish(10000);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");  // nothing more, no record twice
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace logsink::test
