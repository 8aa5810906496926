// golden_test.cc: the golden wire vectors of tests/golden/frames.hex. Each is
// decoded with proto/frame.h (fields checked against the values below) and
// re-encoded with the test encoder, byte for byte. A client in another
// language can be checked against the same file (PROTOCOL.md "Golden vectors").
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "logsink/proto/frame.h"
#include "proto/golden_vectors.h"
#include "proto/wire_encoder.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1700000000000000000ull;  // 2023-11-14T22:13:20Z

class Golden : public ::testing::Test {
 protected:
  void SetUp() override { v_ = LoadVectors(); }
  // The frame called name, checked to be one whole frame of type.
  ls_frame Get(const std::string &name, uint8_t type) {
    auto it = v_.find(name);
    EXPECT_NE(it, v_.end()) << name;
    if (it == v_.end()) return ls_frame{};
    const std::string &b = it->second;
    ls_frame f{};
    EXPECT_EQ(
        ls_frame_parse(reinterpret_cast<const uint8_t *>(b.data()), b.size(), LS_FRAME_MAX, &f),
        ptrdiff_t(b.size()))
        << name;
    EXPECT_EQ(f.type, type) << name;
    return f;
  }
  // The test encoder's bytes are the vector called name.
  void ExpectEncodes(const std::string &name, const std::string &bytes) {
    EXPECT_EQ(ToHex(bytes), ToHex(v_[name])) << name;
  }
  // The INTERN frame called name, decoded, its site, level and line checked.
  ls_intern InternFrame(const std::string &name, uint32_t site, uint32_t level, uint32_t line) {
    ls_frame f = Get(name, LS_F_INTERN);
    ls_intern in{};
    EXPECT_EQ(ls_intern_decode(f.payload, f.len, &in), 0) << name;
    EXPECT_EQ(in.site, site) << name;
    EXPECT_EQ(in.level, level) << name;
    EXPECT_EQ(in.line, line) << name;
    return in;
  }
  std::map<std::string, std::string> v_;
};

TEST_F(Golden, Hello) {
  ls_frame f = Get("hello", LS_F_HELLO);
  ls_hello h;
  ASSERT_EQ(ls_hello_decode(f.payload, f.len, &h), 0);
  EXPECT_EQ(h.version, 1u);
  EXPECT_EQ(h.flags, 0u);
  EXPECT_EQ(std::string(h.app, h.app_len), "myapp");
  ExpectEncodes("hello", Hello(1, "myapp"));
}

TEST_F(Golden, Intern) {
  ls_intern in = InternFrame("intern", 1, 6, 42);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(std::string(in.fmt, in.fmt_len), "user %s port %d");
  EXPECT_EQ(std::string(in.file, in.file_len), "main.c");
  char sig[8];
  EXPECT_EQ(ls_fmt_signature(in.fmt, in.fmt_len, sig, sizeof sig), 2);
  EXPECT_STREQ(sig, "si");
  ExpectEncodes("intern", Intern(1, 6, 42, "user %s port %d", "main.c"));
}

TEST_F(Golden, InternEveryType) {
  ls_intern in = InternFrame("intern_all_types", 2, 7, 300);
  ASSERT_FALSE(HasFailure());
  char sig[16];
  ASSERT_EQ(ls_fmt_signature(in.fmt, in.fmt_len, sig, sizeof sig), 7);
  EXPECT_STREQ(sig, "iuifcsp");
  ExpectEncodes("intern_all_types", Intern(2, 7, 300, "%d %lu %.*f %c %s %p", "x.c"));
}

TEST_F(Golden, InternWithFields) {
  ls_intern in = InternFrame("intern_fields", 3, 6, 7);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(in.fields, 1);
  const std::string fmt(in.fmt, in.fmt_len);
  EXPECT_EQ(fmt, std::string("disk %s\x1f") + "user=%s ok:bool=%d");
  EXPECT_EQ(ls_fields_check(in.fmt, in.fmt_len, 0), 2);
  char sig[8];
  ASSERT_EQ(ls_fmt_signature(in.fmt, in.fmt_len, sig, sizeof sig), 3);
  EXPECT_STREQ(sig, "ssi");
  ExpectEncodes("intern_fields", Intern(3, 0x08 | 6, 7, fmt, "f.c"));
}

TEST_F(Golden, RecordsWithEveryArgumentType) {
  ls_frame f = Get("records", LS_F_RECORDS);
  std::vector<Rec> recs = {{2,
                            kT0,
                            {Arg::I(-2), Arg::U(300), Arg::I(3), Arg::F(1.5), Arg::C(0xe9),
                             Arg::S("bob"), Arg::P(0x7ffd1000)}},
                           {1, kT0 + 1500, {Arg::S("eve"), Arg::I(23)}},
                           {1, kT0 + 1000, {Arg::S("abc"), Arg::I(-1)}, true, 5}};
  ls_records it;
  ls_record r;
  ASSERT_EQ(ls_records_begin(f.payload, f.len, &it), 0);
  EXPECT_EQ(it.tid, 4242u);
  for (const auto &want : recs) {
    ASSERT_EQ(ls_records_next(&it, &r), 1);
    EXPECT_EQ(r.site, want.site);
    EXPECT_EQ(r.ts_ns, want.ts_ns);
    EXPECT_EQ(r.truncated, want.truncated);
    ASSERT_EQ(ls_records_args(&it, want.site == 2 ? "iuifcsp" : "si", &r), 0);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(r.args), r.args_len),
              EncodeArgs(want.args));
  }
  EXPECT_EQ(ls_records_next(&it, &r), 0);
  ExpectEncodes("records", Records(4242, recs));
}

TEST_F(Golden, Dropped) {
  ls_frame f = Get("dropped", LS_F_DROPPED);
  ls_dropped d;
  ASSERT_EQ(ls_dropped_decode(f.payload, f.len, &d), 0);
  EXPECT_EQ(d.count, 17u);
  EXPECT_EQ(d.since_ns, kT0);
  EXPECT_EQ(d.now_ns, kT0 + 1000000000);
  ExpectEncodes("dropped", Dropped(17, kT0, kT0 + 1000000000));
}

TEST_F(Golden, StatsReq) {
  ls_frame f = Get("stats_req", LS_F_STATS_REQ);
  EXPECT_EQ(ls_stats_req_decode(f.payload, f.len), 0);
  ExpectEncodes("stats_req", StatsReq());
}

TEST_F(Golden, RingReq) {
  ls_frame f = Get("ring_req", LS_F_RING_REQ);
  EXPECT_EQ(ls_ring_req_decode(f.payload, f.len), 0);
  ExpectEncodes("ring_req", RingReq());
}

TEST_F(Golden, Ring) {
  ls_frame f = Get("ring", LS_F_RING);
  ls_ring r{};
  ASSERT_EQ(ls_ring_decode(f.payload, f.len, &r), 0);
  std::string id(reinterpret_cast<const char *>(r.ring_id), LS_RING_ID_LEN);
  std::string want_id;
  for (char c = 0; c < 16; c++) want_id += c;
  EXPECT_EQ(id, want_id);
  EXPECT_EQ(r.dev, 2049u);
  EXPECT_EQ(r.ino, 131u);
  EXPECT_EQ(std::string(r.path, r.path_len), "/var/lib/logsink/logsink.ring");
  ExpectEncodes("ring", Ring(want_id, 2049, 131, "/var/lib/logsink/logsink.ring"));
}

TEST_F(Golden, Refuse) {
  ls_frame f = Get("refuse", LS_F_REFUSE);
  ls_refuse r;
  ASSERT_EQ(ls_refuse_decode(f.payload, f.len, &r), 0);
  EXPECT_EQ(r.version, 1u);
  EXPECT_EQ(std::string(r.reason, r.reason_len), "version 2 not supported");
  ExpectEncodes("refuse", Refuse(1, "version 2 not supported"));
}

TEST_F(Golden, Stats) {
  ls_frame f = Get("stats", LS_F_STATS);
  ls_statsframe_iter it{};
  const char *name = nullptr;
  size_t len = 0;
  uint64_t v = 0;
  ASSERT_EQ(ls_statsframe_begin(f.payload, f.len, &it), 0);
  ASSERT_EQ(ls_statsframe_next(&it, &name, &len, &v), 1);
  EXPECT_EQ(std::string(name, len), "records");
  EXPECT_EQ(v, 3u);
  ASSERT_EQ(ls_statsframe_next(&it, &name, &len, &v), 1);
  EXPECT_EQ(std::string(name, len), "err_bad_length");
  EXPECT_EQ(v, 200u);
  EXPECT_EQ(ls_statsframe_next(&it, &name, &len, &v), 0);
  ExpectEncodes("stats", Stats({{"records", 3}, {"err_bad_length", 200}}));
}

TEST_F(Golden, HelloVersionTwo) {
  ls_frame f = Get("hello_v2", LS_F_HELLO);
  ls_hello h;
  ASSERT_EQ(ls_hello_decode(f.payload, f.len, &h), 0);
  EXPECT_EQ(h.version, 2u);
  EXPECT_EQ(h.flags, 0u);
  EXPECT_EQ(std::string(h.app, h.app_len), "myapp");
  EXPECT_EQ(h.caps, LS_CAP_LEVELS);
  EXPECT_EQ(std::string(h.levels, h.levels_len), "info,net.c=debug");
  ExpectEncodes("hello_v2", Hello2("myapp", 1, "info,net.c=debug"));
}

TEST_F(Golden, WelcomeAndLevels) {
  ls_frame f = Get("welcome", LS_F_WELCOME);
  ls_welcome w;
  ASSERT_EQ(ls_welcome_decode(f.payload, f.len, &w), 0);
  EXPECT_EQ(w.version, 2u);
  EXPECT_EQ(w.caps, 1u);
  EXPECT_EQ(std::string(w.levels, w.levels_len), "debug");
  ExpectEncodes("welcome", Welcome(2, 1, "debug"));
  f = Get("levels", LS_F_LEVELS);
  const char *text = nullptr;
  size_t n = 0;
  ASSERT_EQ(ls_levels_decode(f.payload, f.len, &text, &n), 0);
  EXPECT_EQ(std::string(text, n), "net.c:12=off");
  ExpectEncodes("levels", Levels("net.c:12=off"));
}

TEST_F(Golden, LevelRequestAndAnswer) {
  ls_frame f = Get("level_req", LS_F_LEVEL_REQ);
  ls_level_req r;
  ASSERT_EQ(ls_level_req_decode(f.payload, f.len, &r), 0);
  EXPECT_EQ(r.op, LS_LEVEL_OP_SET);
  EXPECT_EQ(r.rule.which, LS_LSEL_APP | LS_LSEL_SITE);
  EXPECT_EQ(std::string(r.rule.app, r.rule.app_len), "web");
  EXPECT_EQ(std::string(r.rule.file, r.rule.file_len), "net.c");
  EXPECT_EQ(r.rule.line, 0u);
  EXPECT_EQ(r.rule.level, 7);
  WireRule w;
  w.which = 0x11;
  w.app = "web";
  w.file = "net.c";
  w.level = 7;
  ExpectEncodes("level_req", LevelReq(1, w));

  f = Get("level_answer", LS_F_LEVEL_ANSWER);
  ls_level_answer a;
  ASSERT_EQ(ls_level_answer_begin(f.payload, f.len, &a), 0);
  EXPECT_EQ(a.status, 0u);
  EXPECT_EQ(std::string(a.message, a.message_len), "ok");
  ls_level_sel s;
  ASSERT_EQ(ls_level_answer_rule(&a, &s), 1);
  EXPECT_EQ(s.which, LS_LSEL_APP);
  EXPECT_EQ(std::string(s.app, s.app_len), "web");
  EXPECT_EQ(s.level, 7);
  EXPECT_EQ(s.at_ns, kT0);
  ASSERT_EQ(ls_level_answer_rule(&a, &s), 0);
  ls_level_client c;
  ASSERT_EQ(ls_level_answer_client(&a, &c), 1);
  EXPECT_EQ(c.pid, 42u);
  EXPECT_EQ(c.uid, 1000u);
  EXPECT_EQ(std::string(c.app, c.app_len), "web");
  EXPECT_EQ(c.caps, 1u);
  EXPECT_EQ(std::string(c.own, c.own_len), "info");
  EXPECT_EQ(std::string(c.pushed, c.pushed_len), "debug");
  EXPECT_EQ(ls_level_answer_client(&a, &c), 0);
  std::string p;
  PutVarint(&p, 0);
  PutStr(&p, "ok");
  PutVarint(&p, 1);
  w = WireRule{};
  w.which = 1;
  w.app = "web";
  w.level = 7;
  PutRule(&p, w);
  PutVarint(&p, 0);
  PutVarint(&p, kT0);
  PutVarint(&p, 1);
  PutVarint(&p, 42);
  PutVarint(&p, 1000);
  PutStr(&p, "web");
  PutStr(&p, "");
  PutVarint(&p, 1);
  PutStr(&p, "info");
  PutStr(&p, "debug");
  ExpectEncodes("level_answer", Frame(LS_F_LEVEL_ANSWER, p));
}

TEST_F(Golden, CensusAndItsAnswer) {
  ls_frame f = Get("census", LS_F_CENSUS);
  ls_census_iter it;
  ls_census_site s;
  ASSERT_EQ(ls_census_decode(f.payload, f.len, &it), 0);
  ASSERT_EQ(ls_census_next(&it, &s), 1);
  EXPECT_EQ(s.level, 7);
  EXPECT_EQ(s.line, 42u);
  EXPECT_EQ(std::string(s.fmt, s.fmt_len), "never %d");
  EXPECT_EQ(std::string(s.file, s.file_len), "net.c");
  EXPECT_EQ(ls_census_next(&it, &s), 0);
  EXPECT_EQ(it.p, f.payload + f.len);
  std::string site(1, char(7));
  PutVarint(&site, 42);
  PutStr(&site, "never %d");
  PutStr(&site, "net.c");
  std::string p;
  PutVarint(&p, 1);
  ExpectEncodes("census", Frame(LS_F_CENSUS, p + site));

  f = Get("census_answer", LS_F_CENSUS_ANSWER);
  ls_census_answer a;
  ls_census_client c;
  ASSERT_EQ(ls_census_answer_begin(f.payload, f.len, &a), 0);
  ASSERT_EQ(ls_census_answer_client(&a, nullptr, &c), 1);
  EXPECT_EQ(c.pid, 42u);
  EXPECT_EQ(c.uid, 1000u);
  EXPECT_EQ(std::string(c.app, c.app_len), "web");
  EXPECT_EQ(std::string(c.own, c.own_len), "info");
  ASSERT_EQ(ls_census_next(&c.sites, &s), 1);
  EXPECT_EQ(std::string(s.fmt, s.fmt_len), "never %d");
  ls_census_client next;
  EXPECT_EQ(ls_census_answer_client(&a, &c, &next), 0);
  p.clear();
  PutVarint(&p, 1);
  PutVarint(&p, 42);
  PutVarint(&p, 1000);
  PutStr(&p, "web");
  PutStr(&p, "");
  PutStr(&p, "info");
  PutStr(&p, "");
  PutVarint(&p, 1);
  ExpectEncodes("census_answer", Frame(LS_F_CENSUS_ANSWER, p + site));
}

}  // namespace
}  // namespace logsink::test
