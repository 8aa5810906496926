// frame_encode_test.cc: proto/frame_encode.h, the encoders every producer
// uses. Each golden vector of tests/golden/frames.hex is decoded with
// frame.h and re-encoded with frame_encode.h, byte for byte; every encoder
// is run with every too-small capacity (it must fail with -ENOBUFS and never
// write at or past cap) and with values its decoder refuses (-EINVAL).
#include "logsink/proto/frame_encode.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "logsink/proto/frame.h"
#include "logsink/proto/shm.h"
#include "proto/golden_vectors.h"
#include "proto/wire_encoder.h"

namespace logsink::test {
namespace {

const uint8_t *U(const std::string &s) { return reinterpret_cast<const uint8_t *>(s.data()); }

// One encoder under test: writes into (buf, cap), returns bytes or -errno.
using Enc = std::function<ptrdiff_t(uint8_t *, size_t)>;

// Runs enc with a roomy buffer and returns the bytes; then with every
// smaller capacity, which must give -ENOBUFS and leave the guard bytes at
// and after cap untouched.
std::string Encode(const Enc &enc) {
  std::vector<uint8_t> buf(1 << 16);
  ptrdiff_t n = enc(buf.data(), buf.size());
  EXPECT_GT(n, 0);
  if (n <= 0) return {};
  std::string full(reinterpret_cast<const char *>(buf.data()), size_t(n));
  for (size_t cap = 0; cap < size_t(n); cap++) {
    std::fill(buf.begin(), buf.end(), 0xA5);
    EXPECT_EQ(enc(buf.data(), cap), -ENOBUFS) << "cap " << cap;
    for (size_t i = cap; i < size_t(n) + 16; i++)
      EXPECT_EQ(buf[i], 0xA5) << "cap " << cap << " byte " << i;
  }
  return full;
}

class FrameEncode : public ::testing::Test {
 protected:
  void SetUp() override { v_ = logsink::test::LoadVectors(); }
  ls_frame Get(const std::string &name) {
    ls_frame f{};
    const std::string &b = v_[name];
    EXPECT_EQ(ls_frame_parse(U(b), b.size(), LS_FRAME_MAX, &f), ptrdiff_t(b.size())) << name;
    return f;
  }
  std::map<std::string, std::string> v_;
};

TEST_F(FrameEncode, HelloMatchesGolden) {
  ls_frame f = Get("hello");
  ls_hello h;
  ASSERT_EQ(ls_hello_decode(f.payload, f.len, &h), 0);
  EXPECT_EQ(Encode([&](uint8_t *b, size_t c) { return ls_hello_encode(b, c, &h); }), v_["hello"]);
  h.flags = LS_HELLO_PRIO_PREFIX;  // a text-stream field without LS_HELLO_TEXT
  uint8_t buf[256];
  EXPECT_EQ(ls_hello_encode(buf, sizeof buf, &h), -EINVAL);
  h.flags = ls_hello_text_flags(3, 1, LS_HELLO_STREAM_STDERR, 0);
  ptrdiff_t n = ls_hello_encode(buf, sizeof buf, &h);
  ASSERT_GT(n, 0);
  ls_frame g = {};
  ls_hello back;
  ASSERT_EQ(ls_frame_parse(buf, size_t(n), 1024, &g), n);
  ASSERT_EQ(ls_hello_decode(g.payload, g.len, &back), 0);
  EXPECT_EQ(back.flags, h.flags);
  std::string long_app(LS_APP_MAX + 1, 'a');
  ls_hello big = {LS_PROTO_VERSION, 0, long_app.data(), long_app.size(), 0, 0, nullptr, 0,
                  nullptr,          0};
  EXPECT_EQ(ls_hello_encode(buf, sizeof buf, &big), -EINVAL);
}

TEST_F(FrameEncode, InternMatchesGolden) {
  for (const char *name : {"intern", "intern_all_types"}) {
    ls_frame f = Get(name);
    ls_intern in;
    ASSERT_EQ(ls_intern_decode(f.payload, f.len, &in), 0);
    EXPECT_EQ(Encode([&](uint8_t *b, size_t c) { return ls_intern_encode(b, c, &in); }), v_[name])
        << name;
  }
}

TEST_F(FrameEncode, InternRefusesWhatTheDecoderRefuses) {
  uint8_t buf[8192];
  std::string fmt(LS_INTERN_MAX_FMT + 1, 'x');
  ls_intern ok = {1, 6, 42, "%d", 2, "a.c", 3, 0};
  ASSERT_GT(ls_intern_encode(buf, sizeof buf, &ok), 0);
  ls_intern bad = ok;
  bad.site = 0;
  EXPECT_EQ(ls_intern_encode(buf, sizeof buf, &bad), -EINVAL);
  bad = ok;
  bad.site = LS_SITE_MAX + 1;
  EXPECT_EQ(ls_intern_encode(buf, sizeof buf, &bad), -EINVAL);
  bad = ok;
  bad.level = LS_LEVEL_MAX + 1;
  EXPECT_EQ(ls_intern_encode(buf, sizeof buf, &bad), -EINVAL);
  bad = ok;
  bad.fmt = fmt.data();
  bad.fmt_len = fmt.size();
  EXPECT_EQ(ls_intern_encode(buf, sizeof buf, &bad), -EINVAL);
}

TEST_F(FrameEncode, RecordsMatchGolden) {
  ls_frame f = Get("records");
  ls_records it;
  ASSERT_EQ(ls_records_begin(f.payload, f.len, &it), 0);
  std::vector<ls_record> recs;
  ls_record r;
  while (ls_records_next(&it, &r) == 1) {
    ASSERT_EQ(ls_records_args(&it, r.site == 2 ? "iuifcsp" : "si", &r), 0);
    recs.push_back(r);
  }
  ASSERT_EQ(recs.size(), 3u);
  Enc enc = [&](uint8_t *b, size_t c) -> ptrdiff_t {
    ptrdiff_t at = ls_records_open(b, c, it.tid);
    if (at < 0) return at;
    uint64_t prev = 0;
    for (const ls_record &x : recs) {
      ptrdiff_t k = ls_record_encode(b + at, c - size_t(at), &x, &prev);
      if (k < 0) return k;
      at += k;
    }
    return ls_frame_close(b, b + at);
  };
  EXPECT_EQ(logsink::test::ToHex(Encode(enc)), logsink::test::ToHex(v_["records"]));
  ls_record bad = recs[0];
  bad.site = 0;
  uint8_t buf[256];
  uint64_t prev = 0;
  EXPECT_EQ(ls_record_encode(buf, sizeof buf, &bad, &prev), -EINVAL);
}

TEST_F(FrameEncode, DroppedStatsReqRefuseMatchGolden) {
  ls_frame f = Get("dropped");
  ls_dropped d;
  ASSERT_EQ(ls_dropped_decode(f.payload, f.len, &d), 0);
  EXPECT_EQ(Encode([&](uint8_t *b, size_t c) { return ls_dropped_encode(b, c, &d); }),
            v_["dropped"]);
  EXPECT_EQ(Encode([](uint8_t *b, size_t c) { return ls_stats_req_encode(b, c); }),
            v_["stats_req"]);
  f = Get("refuse");
  ls_refuse r;
  ASSERT_EQ(ls_refuse_decode(f.payload, f.len, &r), 0);
  EXPECT_EQ(Encode([&](uint8_t *b, size_t c) { return ls_refuse_encode(b, c, &r); }), v_["refuse"]);
}

TEST_F(FrameEncode, RingReqAndRingMatchGolden) {
  EXPECT_EQ(Encode([](uint8_t *b, size_t c) { return ls_ring_req_encode(b, c); }), v_["ring_req"]);
  ls_frame f = Get("ring");
  ls_ring r{};
  ASSERT_EQ(ls_ring_decode(f.payload, f.len, &r), 0);
  EXPECT_EQ(Encode([&](uint8_t *b, size_t c) { return ls_ring_encode(b, c, &r); }), v_["ring"]);
  uint8_t buf[LS_RING_FRAME_MAX + 1];
  const uint8_t id[LS_RING_ID_LEN] = {1};
  std::string longest(LS_RING_PATH_MAX, 'p');
  ls_ring big = {id, UINT64_MAX, UINT64_MAX, longest.data(), longest.size()};
  EXPECT_GT(ls_ring_encode(buf, LS_RING_FRAME_MAX, &big), 0);
  std::string too_long(LS_RING_PATH_MAX + 1, 'p');
  ls_ring bad = {id, 1, 2, too_long.data(), too_long.size()};
  EXPECT_EQ(ls_ring_encode(buf, sizeof buf, &bad), -EINVAL);
  bad = {id, 1, 2, "", 0};
  EXPECT_EQ(ls_ring_encode(buf, sizeof buf, &bad), -EINVAL);
  bad = {id, 1, 2, "/a\0b", 4};
  EXPECT_EQ(ls_ring_encode(buf, sizeof buf, &bad), -EINVAL);
}

TEST_F(FrameEncode, StatsMatchesGolden) {
  ls_frame f = Get("stats");
  ls_statsframe_iter it;
  ASSERT_EQ(ls_statsframe_begin(f.payload, f.len, &it), 0);
  std::vector<std::pair<std::string, uint64_t>> counters;
  const char *name;
  size_t len;
  uint64_t v;
  while (ls_statsframe_next(&it, &name, &len, &v) == 1)
    counters.emplace_back(std::string(name, len), v);
  ASSERT_FALSE(counters.empty());
  Enc enc = [&](uint8_t *b, size_t c) -> ptrdiff_t {
    ptrdiff_t at = ls_statsframe_open(b, c, counters.size());
    if (at < 0) return at;
    for (const auto &[n, value] : counters) {
      ptrdiff_t k = ls_statsframe_add(b + at, c - size_t(at), n.data(), n.size(), value);
      if (k < 0) return k;
      at += k;
    }
    return ls_frame_close(b, b + at);
  };
  EXPECT_EQ(Encode(enc), v_["stats"]);
  std::string long_name(LS_STATS_NAME_MAX + 1, 'n');
  uint8_t buf[1024];
  EXPECT_EQ(ls_statsframe_add(buf, sizeof buf, long_name.data(), long_name.size(), 1), -EINVAL);
}

TEST_F(FrameEncode, VersionTwoFramesMatchGolden) {
  ls_frame f = Get("hello_v2");
  ls_hello h;
  ASSERT_EQ(ls_hello_decode(f.payload, f.len, &h), 0);
  EXPECT_EQ(Encode([&](uint8_t *b, size_t c) { return ls_hello_encode(b, c, &h); }),
            v_["hello_v2"]);
  h.version = 1;  // version 1 carries no caps nor levels
  uint8_t buf[256];
  EXPECT_EQ(ls_hello_encode(buf, sizeof buf, &h), -EINVAL);
  h.version = 3;
  EXPECT_EQ(ls_hello_encode(buf, sizeof buf, &h), -EINVAL);

  f = Get("welcome");
  ls_welcome w;
  ASSERT_EQ(ls_welcome_decode(f.payload, f.len, &w), 0);
  EXPECT_EQ(Encode([&](uint8_t *b, size_t c) { return ls_welcome_encode(b, c, &w); }),
            v_["welcome"]);
  f = Get("levels");
  const char *text;
  size_t n;
  ASSERT_EQ(ls_levels_decode(f.payload, f.len, &text, &n), 0);
  EXPECT_EQ(Encode([&](uint8_t *b, size_t c) { return ls_levels_encode(b, c, text, n); }),
            v_["levels"]);
  f = Get("level_req");
  ls_level_req r;
  ASSERT_EQ(ls_level_req_decode(f.payload, f.len, &r), 0);
  EXPECT_EQ(Encode([&](uint8_t *b, size_t c) { return ls_level_req_encode(b, c, &r); }),
            v_["level_req"]);
}

TEST_F(FrameEncode, LevelAnswerMatchesGoldenAndRulesRefuseWhatTheDecoderRefuses) {
  ls_frame f = Get("level_answer");
  ls_level_answer a;
  ASSERT_EQ(ls_level_answer_begin(f.payload, f.len, &a), 0);
  ls_level_sel s;
  ASSERT_EQ(ls_level_answer_rule(&a, &s), 1);
  ls_level_sel end;
  ASSERT_EQ(ls_level_answer_rule(&a, &end), 0);
  ls_level_client c;
  ASSERT_EQ(ls_level_answer_client(&a, &c), 1);
  Enc enc = [&](uint8_t *b, size_t cap) -> ptrdiff_t {
    ptrdiff_t at = ls_level_answer_open(b, cap, 0, "ok", 2, 1);
    if (at < 0) return at;
    ptrdiff_t k = ls_level_sel_encode(b + at, cap - size_t(at), &s, 1);
    if (k < 0) return k;
    at += k;
    k = ls_varint_encode(b + at, cap - size_t(at), 1);
    if (k < 0) return k;
    at += k;
    k = ls_level_client_encode(b + at, cap - size_t(at), &c);
    if (k < 0) return k;
    at += k;
    return ls_frame_close(b, b + at);
  };
  EXPECT_EQ(Encode(enc), v_["level_answer"]);

  uint8_t buf[1024];
  ls_level_sel bad = s;
  bad.which = LS_LSEL_PID;  // app given, not said; pid said, 0 is fine
  EXPECT_EQ(ls_level_sel_encode(buf, sizeof buf, &bad, 0), -EINVAL);
  bad = s;
  bad.level = 8;
  EXPECT_EQ(ls_level_sel_encode(buf, sizeof buf, &bad, 0), -EINVAL);
  bad = s;
  bad.line = 3;  // a line without a site
  EXPECT_EQ(ls_level_sel_encode(buf, sizeof buf, &bad, 0), -EINVAL);
  ls_level_req list = {LS_LEVEL_OP_LIST, s};  // LIST carries no rule
  EXPECT_EQ(ls_level_req_encode(buf, sizeof buf, &list), -EINVAL);
  ls_level_req reset = {LS_LEVEL_OP_RESET, s};  // nor a level to RESET
  EXPECT_EQ(ls_level_req_encode(buf, sizeof buf, &reset), -EINVAL);
  reset.rule.level = 0;
  reset.rule.by_uid = 0;
  const ptrdiff_t n = ls_level_req_encode(buf, sizeof buf, &reset);
  ASSERT_GT(n, 0);
  ls_frame g = {};
  ls_level_req back;
  ASSERT_EQ(ls_frame_parse(buf, size_t(n), 1024, &g), n);
  ASSERT_EQ(ls_level_req_decode(g.payload, g.len, &back), 0);
  EXPECT_EQ(back.op, LS_LEVEL_OP_RESET);
  // The decoder refuses what the encoder would not write: a selector's
  // value without its bit.
  std::vector<uint8_t> p(g.payload, g.payload + g.len);
  p[1] = 0;  // which: none, but app "web" follows
  EXPECT_EQ(ls_level_req_decode(p.data(), p.size(), &back), -EBADMSG);
}

TEST_F(FrameEncode, CensusMatchesGolden) {
  ls_frame f = Get("census");
  ls_census_iter it;
  ls_census_site site;
  ASSERT_EQ(ls_census_decode(f.payload, f.len, &it), 0);
  ASSERT_EQ(ls_census_next(&it, &site), 1);
  Enc census = [&](uint8_t *b, size_t cap) -> ptrdiff_t {
    ptrdiff_t at = ls__frame_open_varint(b, cap, LS_F_CENSUS, 1);
    if (at < 0) return at;
    ptrdiff_t k = ls_census_site_encode(b + at, cap - size_t(at), &site);
    if (k < 0) return k;
    return ls_frame_close(b, b + at + k);
  };
  EXPECT_EQ(Encode(census), v_["census"]);
  f = Get("census_answer");
  ls_census_answer a;
  ls_census_client c;
  ASSERT_EQ(ls_census_answer_begin(f.payload, f.len, &a), 0);
  ASSERT_EQ(ls_census_answer_client(&a, nullptr, &c), 1);
  Enc answer = [&](uint8_t *b, size_t cap) -> ptrdiff_t {
    ptrdiff_t at = ls__frame_open_varint(b, cap, LS_F_CENSUS_ANSWER, 1);
    if (at < 0) return at;
    ptrdiff_t k = ls_census_client_encode(b + at, cap - size_t(at), &c, 1);
    if (k < 0) return k;
    at += k;
    k = ls_census_site_encode(b + at, cap - size_t(at), &site);
    if (k < 0) return k;
    return ls_frame_close(b, b + at + k);
  };
  EXPECT_EQ(Encode(answer), v_["census_answer"]);
  uint8_t buf[64];
  ls_census_site bad = site;
  bad.level = 8;
  EXPECT_EQ(ls_census_site_encode(buf, sizeof buf, &bad), -EINVAL);
}

TEST(FrameClose, RefusesFramesAboveTheProtocolLimit) {
  std::vector<uint8_t> buf(LS_FRAME_MAX + 8);
  ASSERT_EQ(ls_frame_open(buf.data(), buf.size(), LS_F_RECORDS), ptrdiff_t(LS_FRAME_HDR));
  EXPECT_EQ(ls_frame_close(buf.data(), buf.data() + 4 + LS_FRAME_MAX), ptrdiff_t(4 + LS_FRAME_MAX));
  EXPECT_EQ(ls_frame_close(buf.data(), buf.data() + 5 + LS_FRAME_MAX), -E2BIG);
}

}  // namespace
}  // namespace logsink::test

namespace logsink::test {
namespace {

// RECORDS_AT as liblogsink writes it: `end` in 10 bytes filled in after
// the records (shm.h). The decoder reads back the slot, every end (0, one
// byte, the largest), the tid and the records; with every too-small
// capacity the opener fails and writes nothing at or past it.
TEST(RecordsAt, PaddedEndReadsBackAndTooSmallBuffersFail) {
  for (uint64_t end : {uint64_t{0}, uint64_t{5}, uint64_t{1} << 35, ~uint64_t{0}}) {
    uint8_t buf[256];
    ptrdiff_t at = ls_records_at_open(buf, sizeof buf, 3, 4242);
    ASSERT_GT(at, 0);
    const uint8_t args[] = {0x04};
    ls_record r = {7, 0, 1000, args, sizeof args};
    uint64_t prev = 0;
    ptrdiff_t n = ls_record_encode(buf + at, sizeof buf - size_t(at), &r, &prev);
    ASSERT_GT(n, 0);
    ls_records_at_set_end(buf, end);
    ptrdiff_t total = ls_frame_close(buf, buf + at + n);
    ASSERT_GT(total, 0);
    ls_frame f;
    ASSERT_EQ(ls_frame_parse(buf, size_t(total), 1u << 20, &f), total);
    ASSERT_EQ(f.type, LS_F_RECORDS_AT);
    uint64_t slot = 0, got_end = 1;
    const uint8_t *rec = nullptr;
    size_t rec_len = 0;
    ASSERT_EQ(ls_records_at_decode(f.payload, f.len, &slot, &got_end, &rec, &rec_len), 0);
    EXPECT_EQ(slot, 3u);
    EXPECT_EQ(got_end, end);
    uint64_t tid = 0;
    ASSERT_EQ(ls_get_varint(rec, rec + rec_len, &tid), 2u);
    EXPECT_EQ(tid, 4242u);
    EXPECT_EQ(rec_len, 2u + size_t(n));
  }
  for (size_t cap = 0; cap < LS_FRAME_HDR + 3 * LS_VARINT_MAX; cap++) {
    std::vector<uint8_t> b(cap + 8, 0xAA);
    EXPECT_EQ(ls_records_at_open(b.data(), cap, 3, 4242), -ENOBUFS) << cap;
    for (size_t i = cap; i < b.size(); i++) ASSERT_EQ(b[i], 0xAA) << cap;
  }
}

}  // namespace
}  // namespace logsink::test
