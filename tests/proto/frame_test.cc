// frame_test.cc: unit tests of proto/frame.h, the bounded decoders of frames
// and payloads that logsinkd runs on untrusted bytes.
#include "logsink/proto/frame.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "logsink/proto/args.h"
#include "logsink/proto/frame_encode.h"
#include "proto/wire_encoder.h"

namespace logsink::test {
namespace {

using logsink::test::Arg;
using logsink::test::Rec;

const uint8_t *U(const std::string &s) { return reinterpret_cast<const uint8_t *>(s.data()); }
std::string Payload(const std::string &frame) { return frame.substr(LS_FRAME_HDR); }

TEST(FrameParse, NeedsFourBytesThenTheWholeFrame) {
  std::string f = logsink::test::Hello(1, "app");
  ls_frame fr;
  for (size_t n = 0; n < f.size(); n++)
    EXPECT_EQ(ls_frame_parse(U(f), n, 1024, &fr), 0) << "prefix " << n;
  ASSERT_EQ(ls_frame_parse(U(f), f.size(), 1024, &fr), ptrdiff_t(f.size()));
  EXPECT_EQ(fr.type, LS_F_HELLO);
  EXPECT_EQ(fr.len, f.size() - LS_FRAME_HDR);
  EXPECT_EQ(fr.payload, U(f) + LS_FRAME_HDR);
  std::string two = f + f;  // bytes after the frame are not its business
  EXPECT_EQ(ls_frame_parse(U(two), two.size(), 1024, &fr), ptrdiff_t(f.size()));
}

TEST(FrameParse, LengthIsJudgedFromItsFourBytes) {
  std::string zero("\0\0\0\0", 4);
  ls_frame fr;
  EXPECT_EQ(ls_frame_parse(U(zero), 4, 1024, &fr), -EBADMSG);
  std::string big;
  logsink::test::PutU32(&big, 1025);
  EXPECT_EQ(ls_frame_parse(U(big), 4, 1024, &fr), -E2BIG);
  EXPECT_EQ(ls_frame_parse(U(big), 4, 1025, &fr), 0);  // allowed, incomplete
  std::string huge;
  logsink::test::PutU32(&huge, LS_FRAME_MAX + 1);
  EXPECT_EQ(ls_frame_parse(U(huge), 4, UINT32_MAX, &fr), -E2BIG);
  std::string one;
  logsink::test::PutU32(&one, 1);
  one.push_back(char(LS_F_STATS_REQ));
  ASSERT_EQ(ls_frame_parse(U(one), 5, 1024, &fr), 5);
  EXPECT_EQ(fr.len, 0u);
}

TEST(Hello, DecodesAndRefusesOtherVersions) {
  std::string p = Payload(logsink::test::Hello(1, "myapp"));
  ls_hello h;
  ASSERT_EQ(ls_hello_decode(U(p), p.size(), &h), 0);
  EXPECT_EQ(h.version, 1u);
  EXPECT_EQ(std::string(h.app, h.app_len), "myapp");
  p = Payload(logsink::test::Hello(3, "x"));
  EXPECT_EQ(ls_hello_decode(U(p), p.size(), &h), -EPROTONOSUPPORT);
  EXPECT_EQ(h.version, 3u);
  EXPECT_EQ(ls_hello_decode(U(p), 4, &h), -EPROTONOSUPPORT);  // only the version is needed
  p = Payload(logsink::test::Hello(0, "x"));
  EXPECT_EQ(ls_hello_decode(U(p), p.size(), &h), -EPROTONOSUPPORT);
  // Version 2 needs its caps and levels after app.
  p = Payload(logsink::test::Hello(2, "x"));
  EXPECT_EQ(ls_hello_decode(U(p), p.size(), &h), -EBADMSG);
  p = Payload(logsink::test::Hello2("x", 0x80000001u, "info"));
  ASSERT_EQ(ls_hello_decode(U(p), p.size(), &h), 0);
  EXPECT_EQ(h.caps, 0x80000001u);  // bits the daemon does not know are kept, and ignored
  EXPECT_EQ(std::string(h.levels, h.levels_len), "info");
  p += "!";
  EXPECT_EQ(ls_hello_decode(U(p), p.size(), &h), -EBADMSG);
  p = Payload(logsink::test::Hello(1, "x", 4));
  EXPECT_EQ(ls_hello_decode(U(p), p.size(), &h), -EBADMSG);  // unknown flags
}

TEST(Hello, TextStreamFlags) {
  ls_hello h;
  uint32_t ok = ls_hello_text_flags(3, 23, LS_HELLO_STREAM_STDERR, 1);
  EXPECT_EQ(ok, 0x02170303u);
  std::string p = Payload(logsink::test::Hello(1, "t", ok));
  ASSERT_EQ(ls_hello_decode(U(p), p.size(), &h), 0);
  EXPECT_EQ(h.flags, ok);
  p = Payload(logsink::test::Hello(1, "t", ok | LS_HELLO_CONFIRM));
  ASSERT_EQ(ls_hello_decode(U(p), p.size(), &h), 0);
  EXPECT_EQ(h.flags, ok | LS_HELLO_CONFIRM);
  const uint32_t bad[] = {
      LS_HELLO_PRIO_PREFIX,                            // text fields without TEXT
      LS_HELLO_CONFIRM,                                // ditto
      6u << LS_HELLO_LEVEL_SHIFT,                      // ditto
      LS_HELLO_TEXT | 24u << LS_HELLO_FACILITY_SHIFT,  // facility 24
      LS_HELLO_TEXT | 3u << LS_HELLO_STREAM_SHIFT,     // stream 3
      LS_HELLO_TEXT | 0x10u,                           // an unknown bit
      LS_HELLO_TEXT | LS_HELLO_RELAY,                  // RELAY without its pid
      LS_HELLO_TEXT | 0x80000000u,
  };
  for (uint32_t f : bad) {
    p = Payload(logsink::test::Hello(1, "t", f));
    EXPECT_EQ(ls_hello_decode(U(p), p.size(), &h), -EBADMSG) << std::hex << f;
  }
}

// RELAY: a u32 pid (not 0) follows app, and only then.
TEST(Hello, RelayCarriesThePid) {
  ls_hello h;
  const uint32_t f =
      ls_hello_text_flags(6, 1, LS_HELLO_STREAM_STDOUT, 0) | LS_HELLO_CONFIRM | LS_HELLO_RELAY;
  EXPECT_EQ(f, 0x0101060du);  // PROTOCOL.md's example
  std::string base = Payload(logsink::test::Hello(1, "job", f));
  std::string p = base + std::string("\x92\x10\x00\x00", 4);  // 4242
  ASSERT_EQ(ls_hello_decode(U(p), p.size(), &h), 0);
  EXPECT_EQ(h.pid, 4242u);
  EXPECT_EQ(std::string(h.app, h.app_len), "job");
  for (size_t n = base.size(); n < p.size(); n++)
    EXPECT_EQ(ls_hello_decode(U(p), n, &h), -EBADMSG) << n;  // a pid cut short
  std::string zero = base + std::string(4, '\0');
  EXPECT_EQ(ls_hello_decode(U(zero), zero.size(), &h), -EBADMSG);
  std::string longer = p + "x";
  EXPECT_EQ(ls_hello_decode(U(longer), longer.size(), &h), -EBADMSG);
  // Without RELAY a pid is a trailing byte too many.
  std::string plain = Payload(logsink::test::Hello(1, "job", f & ~LS_HELLO_RELAY)) +
                      std::string("\x92\x10\x00\x00", 4);
  EXPECT_EQ(ls_hello_decode(U(plain), plain.size(), &h), -EBADMSG);
  // The encoder writes it back, and refuses RELAY with pid 0.
  uint8_t buf[128];
  h = {1, f, "job", 3, 4242, 0, nullptr, 0, nullptr, 0};
  ptrdiff_t n = ls_hello_encode(buf, sizeof buf, &h);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(reinterpret_cast<char *>(buf) + 5, size_t(n) - 5), p);
  h.pid = 0;
  EXPECT_EQ(ls_hello_encode(buf, sizeof buf, &h), -EINVAL);
}

TEST(Hello, EveryPrefixAndTrailingByteIsMalformed) {
  std::string p = Payload(logsink::test::Hello(1, "myapp"));
  ls_hello h;
  for (size_t n = 0; n < p.size(); n++) EXPECT_EQ(ls_hello_decode(U(p), n, &h), -EBADMSG) << n;
  std::string longer = p + "x";
  EXPECT_EQ(ls_hello_decode(U(longer), longer.size(), &h), -EBADMSG);
}

TEST(Intern, DecodesFields) {
  std::string p = Payload(logsink::test::Intern(7, 3, 4242, "user %s port %d", "main.c"));
  ls_intern in;
  ASSERT_EQ(ls_intern_decode(U(p), p.size(), &in), 0);
  EXPECT_EQ(in.site, 7u);
  EXPECT_EQ(in.level, 3u);
  EXPECT_EQ(in.line, 4242u);
  EXPECT_EQ(std::string(in.fmt, in.fmt_len), "user %s port %d");
  EXPECT_EQ(std::string(in.file, in.file_len), "main.c");
  for (size_t n = 0; n < p.size(); n++) EXPECT_EQ(ls_intern_decode(U(p), n, &in), -EBADMSG) << n;
}

TEST(Intern, RefusesOutOfRangeFields) {
  ls_intern in;
  auto bad = [&](const std::string &frame) {
    std::string p = Payload(frame);
    return ls_intern_decode(U(p), p.size(), &in);
  };
  EXPECT_EQ(bad(logsink::test::Intern(0, 6, 1, "x", "f")), -EBADMSG);
  EXPECT_EQ(bad(logsink::test::Intern(LS_SITE_MAX + 1, 6, 1, "x", "f")), -EBADMSG);
  EXPECT_EQ(bad(logsink::test::Intern(LS_SITE_MAX, 6, 1, "x", "f")), 0);
  // The level byte: the level in bits 0-2, FIELDS in bit 3, the rest 0.
  EXPECT_EQ(bad(logsink::test::Intern(1, 0x08 | 6, 1, "x", "f")), 0);
  EXPECT_EQ(in.level, 6);
  EXPECT_EQ(in.fields, 1);
  EXPECT_EQ(bad(logsink::test::Intern(1, 6, 1, "x", "f")), 0);
  EXPECT_EQ(in.fields, 0);
  EXPECT_EQ(bad(logsink::test::Intern(1, 0x10, 1, "x", "f")), -EBADMSG);
  EXPECT_EQ(bad(logsink::test::Intern(1, 0x80 | 6, 1, "x", "f")), -EBADMSG);
  EXPECT_EQ(bad(logsink::test::Intern(1, 6, uint64_t(UINT32_MAX) + 1, "x", "f")), -EBADMSG);
  EXPECT_EQ(bad(logsink::test::Intern(1, 6, 1, std::string(LS_INTERN_MAX_FMT + 1, 'a'), "f")),
            -EBADMSG);
  EXPECT_EQ(bad(logsink::test::Intern(1, 6, 1, std::string(LS_INTERN_MAX_FMT, 'a'), "f")), 0);
  EXPECT_EQ(bad(logsink::test::Intern(1, 6, 1, "x", std::string(LS_INTERN_MAX_FILE + 1, 'f'))),
            -EBADMSG);
  EXPECT_EQ(bad(logsink::test::Intern(1, 6, 1, "x", "f") + "z"), -EBADMSG);
}

TEST(Records, IteratesEveryArgumentType) {
  std::vector<Rec> recs = {
      {1,
       1000,
       {Arg::I(-5), Arg::U(1ull << 40), Arg::F(2.5), Arg::C(0x263A), Arg::S("bob"),
        Arg::P(0xdeadbeef)}},
      {2, 990, {}},  // negative delta
      {1,
       5000,
       {Arg::I(7), Arg::U(0), Arg::F(-0.0), Arg::C('x'), Arg::S(""), Arg::P(0)},
       true,
       12}};
  std::string p = logsink::test::RecordsPayload(77, recs);
  const char *sig1 = "iufcsp";
  ls_records it;
  ls_record r;
  ASSERT_EQ(ls_records_begin(U(p), p.size(), &it), 0);
  EXPECT_EQ(it.tid, 77u);
  ASSERT_EQ(ls_records_next(&it, &r), 1);
  EXPECT_EQ(r.site, 1u);
  EXPECT_EQ(r.ts_ns, 1000u);
  EXPECT_EQ(r.truncated, 0u);
  ASSERT_EQ(ls_records_args(&it, sig1, &r), 0);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(r.args), r.args_len),
            logsink::test::EncodeArgs(recs[0].args));
  EXPECT_EQ(ls_args_check(sig1, r.args, r.args_len), 0);
  ASSERT_EQ(ls_records_next(&it, &r), 1);
  EXPECT_EQ(r.site, 2u);
  EXPECT_EQ(r.ts_ns, 990u);
  ASSERT_EQ(ls_records_args(&it, "", &r), 0);
  EXPECT_EQ(r.args_len, 0u);
  ASSERT_EQ(ls_records_next(&it, &r), 1);
  EXPECT_EQ(r.ts_ns, 5000u);
  EXPECT_EQ(r.truncated, 12u);
  ASSERT_EQ(ls_records_args(&it, sig1, &r), 0);
  EXPECT_EQ(ls_records_next(&it, &r), 0);
}

TEST(Records, TruncatedOrMismatchedArgumentsAreMalformed) {
  std::vector<Rec> recs = {{3, 1, {Arg::S("hello"), Arg::F(1.0), Arg::I(1 << 20)}}};
  std::string p = logsink::test::RecordsPayload(1, recs);
  // Only the tid (1 byte): no record at all.
  {
    ls_records it;
    ls_record r;
    ASSERT_EQ(ls_records_begin(U(p), 1, &it), 0);
    EXPECT_EQ(ls_records_next(&it, &r), 0);
  }
  // Every longer strict prefix fails, in the head or in the arguments.
  for (size_t n = 2; n < p.size(); n++) {
    ls_records it;
    ls_record r;
    ASSERT_EQ(ls_records_begin(U(p), n, &it), 0);
    int rc = ls_records_next(&it, &r);
    if (rc == 1) rc = ls_records_args(&it, "sfi", &r);
    EXPECT_EQ(rc, -EBADMSG) << "prefix " << n;
  }
  ls_records it;
  ls_record r;
  ASSERT_EQ(ls_records_begin(U(p), p.size(), &it), 0);
  ASSERT_EQ(ls_records_next(&it, &r), 1);
  // The signature wants one more argument than there is.
  EXPECT_EQ(ls_records_args(&it, "sfii", &r), -EBADMSG);
}

TEST(Records, SiteOutOfRangeIsMalformed) {
  ls_records it;
  ls_record r;
  std::string p = logsink::test::RecordsPayload(1, {{0, 1, {}}});
  ASSERT_EQ(ls_records_begin(U(p), p.size(), &it), 0);
  EXPECT_EQ(ls_records_next(&it, &r), -EBADMSG);
  p = logsink::test::RecordsPayload(1, {{LS_SITE_MAX + 1, 1, {}}});
  ASSERT_EQ(ls_records_begin(U(p), p.size(), &it), 0);
  EXPECT_EQ(ls_records_next(&it, &r), -EBADMSG);
  EXPECT_EQ(ls_records_begin(U(p), 0, &it), -EBADMSG);  // no tid
}

TEST(ArgsSpan, RefusesOverlongVarintsAndStrings) {
  std::string eleven(10, '\x80');
  eleven.push_back('\x01');
  const uint8_t *b = U(eleven);
  EXPECT_EQ(ls_args_span("i", b, b + eleven.size()), -EBADMSG);
  std::string overflow(9, '\xff');
  overflow.push_back('\x02');  // bit 64 set
  b = U(overflow);
  EXPECT_EQ(ls_args_span("u", b, b + overflow.size()), -EBADMSG);
  std::string max(9, '\xff');
  max.push_back('\x01');
  b = U(max);
  EXPECT_EQ(ls_args_span("u", b, b + max.size()), 10);
  std::string s;
  logsink::test::PutVarint(&s, 100);
  s += "short";
  b = U(s);
  EXPECT_EQ(ls_args_span("s", b, b + s.size()), -EBADMSG);
  std::string d(7, '\0');
  b = U(d);
  EXPECT_EQ(ls_args_span("f", b, b + d.size()), -EBADMSG);
  EXPECT_EQ(ls_args_span("x", b, b + d.size()), -EBADMSG);  // unknown type
  EXPECT_EQ(ls_args_span("", b, b), 0);
}

TEST(Dropped, DecodesExactly) {
  std::string p = Payload(logsink::test::Dropped(17, 1000, 2000));
  ls_dropped d;
  ASSERT_EQ(ls_dropped_decode(U(p), p.size(), &d), 0);
  EXPECT_EQ(d.count, 17u);
  EXPECT_EQ(d.since_ns, 1000u);
  EXPECT_EQ(d.now_ns, 2000u);
  for (size_t n = 0; n < p.size(); n++) EXPECT_EQ(ls_dropped_decode(U(p), n, &d), -EBADMSG);
  std::string longer = p + "x";
  EXPECT_EQ(ls_dropped_decode(U(longer), longer.size(), &d), -EBADMSG);
}

TEST(StatsReq, MustBeEmpty) {
  std::string x = "x";
  EXPECT_EQ(ls_stats_req_decode(U(x), 0), 0);
  EXPECT_EQ(ls_stats_req_decode(U(x), 1), -EBADMSG);
}

TEST(RingReq, MustBeEmpty) {
  std::string x = "x";
  EXPECT_EQ(ls_ring_req_decode(U(x), 0), 0);
  EXPECT_EQ(ls_ring_req_decode(U(x), 1), -EBADMSG);
}

TEST(Ring, DecodesExactlyAndRefusesBadPaths) {
  const std::string id(16, '\x5a');
  std::string p = Payload(logsink::test::Ring(id, 7, 1ull << 40, "/tmp/r.ring"));
  ls_ring r{};
  ASSERT_EQ(ls_ring_decode(U(p), p.size(), &r), 0);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(r.ring_id), 16), id);
  EXPECT_EQ(r.dev, 7u);
  EXPECT_EQ(r.ino, 1ull << 40);
  EXPECT_EQ(std::string(r.path, r.path_len), "/tmp/r.ring");
  for (size_t n = 0; n < p.size(); n++) EXPECT_EQ(ls_ring_decode(U(p), n, &r), -EBADMSG);
  std::string longer = p + "x";
  EXPECT_EQ(ls_ring_decode(U(longer), longer.size(), &r), -EBADMSG);
  std::string empty = Payload(logsink::test::Ring(id, 7, 1ull << 40, ""));
  EXPECT_EQ(ls_ring_decode(U(empty), empty.size(), &r), -EBADMSG);
  std::string nul = Payload(logsink::test::Ring(id, 7, 1ull << 40, std::string("/a\0b", 4)));
  EXPECT_EQ(ls_ring_decode(U(nul), nul.size(), &r), -EBADMSG);
  std::string max =
      Payload(logsink::test::Ring(id, 7, 1ull << 40, std::string(LS_RING_PATH_MAX, 'a')));
  EXPECT_EQ(ls_ring_decode(U(max), max.size(), &r), 0);
  std::string over =
      Payload(logsink::test::Ring(id, 7, 1ull << 40, std::string(LS_RING_PATH_MAX + 1, 'a')));
  EXPECT_EQ(ls_ring_decode(U(over), over.size(), &r), -EBADMSG);
}

TEST(Refuse, Decodes) {
  std::string p = Payload(logsink::test::Refuse(1, "too new"));
  ls_refuse r;
  ASSERT_EQ(ls_refuse_decode(U(p), p.size(), &r), 0);
  EXPECT_EQ(r.version, 1u);
  EXPECT_EQ(std::string(r.reason, r.reason_len), "too new");
  for (size_t n = 0; n < p.size(); n++) EXPECT_EQ(ls_refuse_decode(U(p), n, &r), -EBADMSG);
}

TEST(Stats, IteratesAndChecksTheCount) {
  std::string p = Payload(logsink::test::Stats({{"records", 5}, {"err_bad_length", 300}}));
  ls_statsframe_iter it{};
  const char *name = nullptr;
  size_t len = 0;
  uint64_t v = 0;
  ASSERT_EQ(ls_statsframe_begin(U(p), p.size(), &it), 0);
  ASSERT_EQ(ls_statsframe_next(&it, &name, &len, &v), 1);
  EXPECT_EQ(std::string(name, len), "records");
  EXPECT_EQ(v, 5u);
  ASSERT_EQ(ls_statsframe_next(&it, &name, &len, &v), 1);
  EXPECT_EQ(std::string(name, len), "err_bad_length");
  EXPECT_EQ(v, 300u);
  EXPECT_EQ(ls_statsframe_next(&it, &name, &len, &v), 0);
  std::string lying;
  logsink::test::PutVarint(&lying, 1000000);  // more entries than bytes
  EXPECT_EQ(ls_statsframe_begin(U(lying), lying.size(), &it), -EBADMSG);
  ASSERT_EQ(ls_statsframe_begin(U(p), p.size() - 1, &it), 0);
  ASSERT_EQ(ls_statsframe_next(&it, &name, &len, &v), 1);
  EXPECT_EQ(ls_statsframe_next(&it, &name, &len, &v), -EBADMSG);
}

}  // namespace
}  // namespace logsink::test
