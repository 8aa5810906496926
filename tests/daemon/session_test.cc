// session_test.cc: the daemon's per-connection protocol state machine
// (daemon/src/session.h) in process, on a real ring file: frames split at
// every byte give the same records, and randomly mutated streams never crash
// it nor put a record on disk whose arguments do not match its format; a
// text stream's <N> prefix and a syslog datagram's PRI follow one rule.
#include "session.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <deque>
#include <map>
#include <random>
#include <set>

#include "common/seed.h"
#include "daemon/context_fixture.h"
#include "daemon/harness.h"
#include "logsink/proto/args.h"
#include "logsink/proto/frame.h"
#include "syslog_parse.h"

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

class SessionTest : public ContextTest {
 protected:
  SessionTest() : ContextTest(1u << 20) {}
};

// A text stream (HELLO with LS_HELLO_TEXT): text may follow HELLO in the same
// read, lines may be split anywhere, bytes that look like frames are text,
// <N> prefixes set a line's priority, the partial last line is kept at the
// end, and the acknowledgment counts every line.
TEST_F(SessionTest, TextStreamSplitAnywhere) {
  std::string frame_like(
      "\x00\x00\x00\x05\x03"
      "abc",
      8);
  const std::string text = "one\n<11>two\n" + frame_like + "\npartial";
  const std::string s =
      Hello(1, "txt", ls_hello_text_flags(4, 3, LS_HELLO_STREAM_STDOUT, 1)) + text;
  for (size_t k = 0; k <= s.size(); k++) {
    Session sess(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
    ASSERT_TRUE(sess.Feed(U(s), k, 0));
    ASSERT_TRUE(sess.Feed(U(s) + k, s.size() - k, 0));
    EXPECT_FALSE(sess.partial()) << "an unfinished line is not a stalled frame";
    EXPECT_TRUE(sess.text());
    EXPECT_TRUE(sess.Finish());
    sess.AppendTextAck();
    ls_frame f;
    ls_statsframe_iter it;
    ASSERT_EQ(ls_frame_parse(U(sess.out()), sess.out().size(), LS_FRAME_MAX, &f),
              ptrdiff_t(sess.out().size()));
    ASSERT_EQ(f.type, LS_F_STATS);
    ASSERT_EQ(ls_statsframe_begin(f.payload, f.len, &it), 0);
    std::map<std::string, uint64_t> ack;
    const char *name;
    size_t len;
    uint64_t v;
    while (ls_statsframe_next(&it, &name, &len, &v) == 1) ack[std::string(name, len)] = v;
    EXPECT_EQ(ack, (std::map<std::string, uint64_t>{
                       {"lines", 4}, {"lines_cut", 0}, {"partial_lines", 1}}));
  }
  auto got = Flushed();
  ASSERT_EQ(got.size(), (s.size() + 1) * 4);
  for (size_t i = 0; i < got.size(); i += 4) {
    EXPECT_EQ(got[i].args, EncodeArgs({Arg::S("one")}));
    EXPECT_EQ(got[i].level, 4);
    EXPECT_EQ(got[i].line, 3u) << "the facility";
    EXPECT_EQ(got[i].file, "stdout");
    EXPECT_EQ(got[i].fmt, "%s");
    EXPECT_EQ(got[i].app, "txt");
    EXPECT_EQ(got[i].pid, 1u);
    EXPECT_EQ(got[i + 1].args, EncodeArgs({Arg::S("two")}));
    EXPECT_EQ(got[i + 1].level, 3);
    EXPECT_EQ(got[i + 1].line, 1u);
    EXPECT_EQ(got[i + 2].args, EncodeArgs({Arg::S(frame_like)}));
    EXPECT_EQ(got[i + 3].args, EncodeArgs({Arg::S("partial")}));
  }
  EXPECT_EQ(counters_.errors(), 0u);
  EXPECT_EQ(counters_.text_streams, s.size() + 1);
  EXPECT_EQ(counters_.text_partial_lines, s.size() + 1);
}

TEST_F(SessionTest, TextStreamLongLineIsCutAndCounted) {
  const std::string s = Hello(1, "txt", ls_hello_text_flags(6, 1, LS_HELLO_STREAM_TEXT, 0)) +
                        std::string(3 * kMaxTextLine, 'y') + "\nnext\n";
  Session sess(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
  for (size_t at = 0; at < s.size(); at += 1000)  // in pieces, as reads come
    ASSERT_TRUE(sess.Feed(U(s) + at, std::min<size_t>(1000, s.size() - at), 0));
  EXPECT_FALSE(sess.Finish()) << "no partial line";
  auto got = Flushed();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].file, "text");
  EXPECT_EQ(got[0].truncated + got[0].args.size() - 2, 3 * kMaxTextLine)
      << "every byte is either stored or counted (2: the string's length varint)";
  EXPECT_GE(got[0].truncated, 2 * kMaxTextLine);
  EXPECT_EQ(got[1].args, EncodeArgs({Arg::S("next")}));
  EXPECT_EQ(counters_.text_lines_cut, 1u);
  EXPECT_EQ(counters_.text_lines, 2u);
}

// A line cut at kMaxTextLine ends on a character boundary: "é" is two
// bytes, and an odd number of bytes before the line makes the cut fall
// inside one; the stored text is whole characters, the rest counted.
TEST_F(SessionTest, TextStreamCutLandsOnACharacterBoundary) {
  std::string line = "x";  // 1 + 2k bytes: byte kMaxTextLine is inside an "é"
  while (line.size() < kMaxTextLine + 100) line += "\xc3\xa9";
  const std::string s =
      Hello(1, "txt", ls_hello_text_flags(6, 1, LS_HELLO_STREAM_TEXT, 0)) + line + "\n";
  Session sess(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
  ASSERT_TRUE(sess.Feed(U(s), s.size(), 0));
  auto got = Flushed();
  ASSERT_EQ(got.size(), 1u);
  const std::string stored = got[0].args.substr(2);  // after the length varint
  // Cut at kMaxTextLine here and again by the writer (the record must fit a
  // block); both cuts keep whole characters: "x" and then pairs.
  EXPECT_LT(stored.size(), kMaxTextLine);
  EXPECT_EQ(stored.size() % 2, 1u);
  EXPECT_TRUE(line.compare(0, stored.size(), stored) == 0);
  EXPECT_EQ(got[0].truncated, line.size() - stored.size());
}

// One <PRI> rule (syslog_parse.h, ParsePri) for a text stream's prefixes and
// the syslog socket's datagrams: on each edge case both take the prefix, with
// the same priority, or both refuse it (the line is then stored whole at the
// stream's own priority, the datagram whole as malformed).
TEST_F(SessionTest, PrioPrefixAndSyslogPriFollowOneRule) {
  const std::string n20(20, '9');
  const struct {
    std::string prefix;
    int pri;  // -1: not a PRI
  } cases[] = {
      {"<0>", 0},
      {"<7>", 7},
      {"<8>", 8},
      {"<13>", 13},
      {"<191>", 191},
      {"<192>", -1},
      {"<999>", -1},
      {"<003>", -1},
      {"<03>", -1},
      {"<00>", -1},
      {"<013>", -1},
      {"<>", -1},
      {"<1", -1},
      {"<1 >", -1},
      {"< 1>", -1},
      {"<1000>", -1},
      {"<" + n20 + ">", -1},
      {"<0000000000000000000001>", -1},
      {"<-1>", -1},
      {"<+1>", -1},
      {"1>", -1},
  };
  std::string text;
  for (const auto &c : cases) text += c.prefix + "m\n";
  const std::string s = Hello(1, "txt", ls_hello_text_flags(6, 3, LS_HELLO_STREAM_TEXT, 1)) + text;
  Session sess(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
  ASSERT_TRUE(sess.Feed(U(s), s.size(), 0));
  auto got = Flushed();
  ASSERT_EQ(got.size(), std::size(cases));
  for (size_t i = 0; i < std::size(cases); i++) {
    const auto &c = cases[i];
    SCOPED_TRACE(c.prefix);
    unsigned pri = 1000;
    const size_t n = daemon::ParsePri(c.prefix + "m", &pri);
    EXPECT_EQ(n, c.pri < 0 ? 0 : c.prefix.size());
    if (c.pri >= 0) {
      EXPECT_EQ(pri, unsigned(c.pri));
    }
    // The text stream: prefix taken (level N % 8, facility N / 8 from 8 on)
    // or the whole line at the stream's level 6, facility 3.
    EXPECT_EQ(got[i].args, EncodeArgs({Arg::S(c.pri < 0 ? c.prefix + "m" : "m")}));
    EXPECT_EQ(got[i].level, c.pri < 0 ? 6 : c.pri % 8);
    EXPECT_EQ(got[i].line, c.pri < 8 ? 3u : unsigned(c.pri / 8)) << "the facility";
    // The syslog socket: the same PRI, or a datagram malformed by its PRI.
    const SyslogMessage m = daemon::ParseSyslog(c.prefix + "Nov 25 12:40:16 t: m");
    if (c.pri < 0) {
      EXPECT_EQ(m.form, SyslogForm::kMalformed);
      EXPECT_EQ(m.bad, SyslogBad::kPri);
    } else {
      EXPECT_EQ(m.form, SyslogForm::kRfc3164);
      EXPECT_EQ(m.severity, c.pri % 8);
      EXPECT_EQ(m.facility, c.pri / 8);
      EXPECT_EQ(m.severity, got[i].level) << "both paths read the same level";
    }
  }
}

// Version 2 (PROTOCOL.md, "Versions and capabilities"): HELLO is answered
// with WELCOME at once, with the capabilities in use (only those the daemon
// knows; none for a text stream) and the rules in force for the client.
TEST_F(SessionTest, VersionTwoHelloIsWelcomedWithTheRulesForTheClient) {
  std::string msg;
  LevelRule r;
  r.which = LS_LSEL_APP;
  r.app = "web";
  r.level = 7;
  ASSERT_EQ(levels_.Set(r, 0, 1, &msg), 0) << msg;
  struct Case {
    uint32_t flags, caps;
    std::string app;
    uint32_t want_caps;
    std::string want_levels;
  };
  for (const Case &c :
       {Case{0, 0xffffffffu, "web", LS_CAP_LEVELS | LS_CAP_CENSUS | LS_CAP_FIELDS | LS_CAP_BRACES,
             "debug"},
        Case{0, LS_CAP_LEVELS, "db", LS_CAP_LEVELS, ""}, Case{0, 0, "web", 0, ""},
        Case{ls_hello_text_flags(6, 1, 0, 0), LS_CAP_LEVELS, "web", 0, ""}}) {
    std::string p;
    PutU32(&p, 2);
    PutU32(&p, c.flags);
    PutStr(&p, c.app);
    PutU32(&p, c.caps);
    PutStr(&p, "info");
    const std::string hello = Frame(LS_F_HELLO, p);
    Session sess(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
    ASSERT_TRUE(sess.Feed(U(hello), hello.size(), 0));
    ls_frame f;
    ASSERT_EQ(ls_frame_parse(U(sess.out()), sess.out().size(), LS_FRAME_MAX, &f),
              ptrdiff_t(sess.out().size()));
    ASSERT_EQ(f.type, LS_F_WELCOME);
    ls_welcome w;
    ASSERT_EQ(ls_welcome_decode(f.payload, f.len, &w), 0);
    EXPECT_EQ(w.version, 2u);
    EXPECT_EQ(w.caps, c.want_caps) << c.app;
    EXPECT_EQ(std::string(w.levels, w.levels_len), c.want_levels) << c.app;
    EXPECT_EQ(sess.own_levels(), "info");
    // A push sends only a changed text, only to a client that takes them.
    sess.out().clear();
    EXPECT_EQ(sess.PushLevels(c.want_levels), false);
    EXPECT_EQ(sess.PushLevels("err"), c.want_caps != 0);
    EXPECT_EQ(sess.out().empty(), c.want_caps == 0);
  }
  // The census (CENSUS) needs its capability in use, and is bounded.
  for (bool with_cap : {true, false}) {
    std::string p;
    PutU32(&p, 2);
    PutU32(&p, 0);
    PutStr(&p, "web");
    PutU32(&p, with_cap ? LS_CAP_CENSUS : 0);
    PutStr(&p, "");
    std::string census;
    PutVarint(&census, 2);
    for (int i = 0; i < 2; i++) {
      census.push_back(char(7));
      PutVarint(&census, 10 + i);
      PutStr(&census, "debug %d");
      PutStr(&census, "a.c");
    }
    const std::string s = Frame(LS_F_HELLO, p) + Frame(LS_F_CENSUS, census);
    Session sess(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
    EXPECT_EQ(sess.Feed(U(s), s.size(), 0), with_cap);
    EXPECT_EQ(sess.census_count(), with_cap ? 2u : 0u);
    Limits one;
    one.max_sites = 1;
    Session small(&ctx_, one, Peer{1, 2, 3, "t"});
    EXPECT_EQ(small.Feed(U(s), s.size(), 0), with_cap) << "more sites: the census goes, not it";
    EXPECT_EQ(small.census_count(), 0u);
  }
  // A census past 1 MiB is let go as a whole (counted); the connection goes on.
  {
    std::string p;
    PutU32(&p, 2);
    PutU32(&p, 0);
    PutStr(&p, "big");
    PutU32(&p, LS_CAP_CENSUS);
    PutStr(&p, "");
    std::string s = Frame(LS_F_HELLO, p);
    for (int f = 0; f < 5; f++) {
      std::string census;
      PutVarint(&census, 60);
      for (int i = 0; i < 60; i++) {
        census.push_back(char(7));
        PutVarint(&census, uint64_t(f * 60 + i + 1));
        PutStr(&census, std::string(4000, 'x'));
        PutStr(&census, "big.c");
      }
      s += Frame(LS_F_CENSUS, census);
    }
    const uint64_t dropped = counters_.census_dropped;
    Session sess(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
    EXPECT_TRUE(sess.Feed(U(s), s.size(), 0));
    EXPECT_EQ(counters_.census_dropped, dropped + 1);
    EXPECT_EQ(sess.census_count(), 0u);
    EXPECT_TRUE(sess.census().empty());
  }
  // Version 1 gets no answer.
  Session v1(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
  const std::string hello = Hello(1, "web");
  ASSERT_TRUE(v1.Feed(U(hello), hello.size(), 0));
  EXPECT_TRUE(v1.out().empty());
  EXPECT_FALSE(v1.PushLevels("debug"));
}

// Fields (PROTOCOL.md, "Fields"): an INTERN with FIELDS is taken on a
// connection that took the capability, with a list that parses and no
// trusted name; its site keeps the flag, its records all their arguments.
TEST_F(SessionTest, BraceFormatsNeedTheirCapabilityAndAValidText) {
  auto hello = [](uint32_t caps) {
    std::string p;
    PutU32(&p, 2);
    PutU32(&p, 0);
    PutStr(&p, "cxx");
    PutU32(&p, caps);
    PutStr(&p, "");
    return Frame(LS_F_HELLO, p);
  };
  // PROTOCOL.md, "Brace formats": letters i s, the text, a field list.
  const std::string good = std::string("\x1eis\x1e{:>4} {}\x1f") + "user=%s";
  const std::string s = hello(LS_CAP_BRACES | LS_CAP_FIELDS) +
                        Intern(1, 0x08 | 6, 9, good, "f.cc") +
                        Records(4, {{1, 100, {Arg::I(-5), Arg::S("sda"), Arg::S("alice")}}});
  Session sess(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
  ASSERT_TRUE(sess.Feed(U(s), s.size(), 0));
  const std::vector<OwnedRecord> v = Flushed();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].fmt, good);
  EXPECT_EQ(v[0].site_flags, LS_ST_F_FIELDS);

  // Refused, each closing its connection as a bad INTERN: no capability
  // (a version 1 client too), a text that does not parse, an index past
  // the letters, a nested width of a string, an empty spec, an unknown
  // letter, no second 0x1E, a 0x1F without FIELDS.
  auto intern = [&](uint32_t caps, const std::string &fmt) {
    return hello(caps) + Intern(1, 6, 9, fmt, "f.cc");
  };
  const uint32_t caps = LS_CAP_BRACES | LS_CAP_FIELDS;
  const std::vector<std::string> bad = {
      intern(LS_CAP_FIELDS, "\x1ei\x1e{}"),
      Hello(1, "old") + Intern(1, 6, 9, "\x1ei\x1e{}", "f.cc"),
      intern(caps, "\x1ei\x1e{"),
      intern(caps, "\x1ei\x1e{1}"),
      intern(caps, "\x1eis\x1e{:{}}"),
      intern(caps, "\x1ei\x1e{:}"),
      intern(caps, "\x1eq\x1e{}"),
      intern(caps, "\x1ei{}"),
      intern(caps, std::string("\x1ei\x1e{}\x1f") + "user=%s"),
  };
  for (const std::string &b : bad) {
    const uint64_t before = counters_.err[int(daemon::Err::kBadIntern)];
    Session x(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
    EXPECT_FALSE(x.Feed(U(b), b.size(), 0));
    EXPECT_EQ(counters_.err[int(daemon::Err::kBadIntern)], before + 1);
  }
  // The arguments go by the letters: a string where an integer is due is
  // a bad record.
  const std::string mismatch =
      intern(caps, "\x1ei\x1e{}") + Records(4, {{1, 100, {Arg::S("not an integer")}}});
  Session m(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
  EXPECT_FALSE(m.Feed(U(mismatch), mismatch.size(), 0));
}

TEST_F(SessionTest, FieldsNeedTheirCapabilityAndAValidList) {
  auto hello = [](uint32_t caps) {
    std::string p;
    PutU32(&p, 2);
    PutU32(&p, 0);
    PutStr(&p, "fielder");
    PutU32(&p, caps);
    PutStr(&p, "");
    return Frame(LS_F_HELLO, p);
  };
  const std::string good = std::string("disk %s\x1f") + "user=%s n=%lld ok:bool=%d";
  const std::string s =
      hello(LS_CAP_FIELDS) + Intern(1, 0x08 | 6, 9, good, "f.c") +
      Records(4, {{1, 100, {Arg::S("sda"), Arg::S("alice"), Arg::I(-5), Arg::I(1)}}});
  Session sess(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
  ASSERT_TRUE(sess.Feed(U(s), s.size(), 0));
  const std::vector<OwnedRecord> v = Flushed();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].fmt, good);
  EXPECT_EQ(v[0].site_flags, LS_ST_F_FIELDS);
  EXPECT_EQ(v[0].level, 6);

  // Refused, each closing its connection as a bad INTERN.
  const std::string without = hello(LS_CAP_LEVELS) + Intern(1, 0x08 | 6, 9, good, "f.c");
  const std::string v1 = Hello(1, "old") + Intern(1, 0x08 | 6, 9, good, "f.c");
  const std::string trusted =
      hello(LS_CAP_FIELDS) + Intern(1, 0x08 | 6, 9, std::string("m\x1f") + "_PID=%d", "f.c");
  const std::string repeated =
      hello(LS_CAP_FIELDS) + Intern(1, 0x08 | 6, 9, std::string("m\x1f") + "a=%d a=%d", "f.c");
  const std::string width =
      hello(LS_CAP_FIELDS) + Intern(1, 0x08 | 6, 9, std::string("m\x1f") + "a=%5d", "f.c");
  const std::string no_list = hello(LS_CAP_FIELDS) + Intern(1, 0x08 | 6, 9, "m %d", "f.c");
  for (const std::string *bad : {&without, &v1, &trusted, &repeated, &width, &no_list}) {
    const uint64_t before = counters_.err[int(daemon::Err::kBadIntern)];
    Session b(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
    EXPECT_FALSE(b.Feed(U(*bad), bad->size(), 0));
    EXPECT_EQ(counters_.err[int(daemon::Err::kBadIntern)], before + 1);
  }
  // Without the bit, a 0x1F is a byte of the text: a plain site.
  const std::string plain =
      hello(LS_CAP_FIELDS) + Intern(2, 6, 9, good, "g.c") +
      Records(4, {{2, 100, {Arg::S("sda"), Arg::S("bob"), Arg::I(1), Arg::I(0)}}});
  Session p(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
  ASSERT_TRUE(p.Feed(U(plain), plain.size(), 0));
  const std::vector<OwnedRecord> w = Flushed();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1].site_flags, 0);

  // The string table full: the site goes inline in each record, its
  // fields with it.
  std::deque<std::string> fill;
  uint32_t line = 0;
  for (size_t size = 4096; size >= 1; size /= 2) {
    do {
      fill.push_back(std::string(size, 'x'));
      ASSERT_LT(++line, 100000u);
    } while (w_->Intern(storage::Site{6, line, fill.back(), "f"}) != 0);
  }
  const std::string inl =
      hello(LS_CAP_FIELDS) + Intern(1, 0x08 | 6, 9, good, "inline.c") +
      Records(4, {{1, 100, {Arg::S("sdb"), Arg::S("carol"), Arg::I(2), Arg::I(0)}}});
  Session q(&ctx_, Limits{}, Peer{1, 2, 3, "t"});
  ASSERT_TRUE(q.Feed(U(inl), inl.size(), 0));
  const std::vector<OwnedRecord> x = Flushed();
  ASSERT_EQ(x.size(), 3u);
  EXPECT_EQ(x[2].site_id, 0u);  // inline
  EXPECT_EQ(x[2].fmt, good);
  EXPECT_EQ(x[2].site_flags, LS_ST_F_FIELDS);
}

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
