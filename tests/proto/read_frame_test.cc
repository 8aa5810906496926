// read_frame_test.cc: the frames of a read through the daemon
// (proto/read.h, PROTOCOL.md "Reading through the daemon"): what the
// encoders write decodes to the same fields, every prefix of a frame is
// refused, and the values the protocol forbids are refused both ways.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "logsink/proto/read.h"

namespace logsink::test {
namespace {

ls_frame Parse(const std::vector<uint8_t> &buf, ptrdiff_t n) {
  ls_frame f{};
  EXPECT_EQ(ls_frame_parse(buf.data(), size_t(n), LS_FRAME_MAX, &f), n);
  return f;
}

TEST(ReadFrame, RequestRoundTripsAndBadOnesAreRefused) {
  std::vector<uint8_t> buf(64);
  ls_read_req in = {LS_READ_SEQ, 1234567, LS_READ_FOLLOW}, out{};
  ptrdiff_t n = ls_read_req_encode(buf.data(), buf.size(), &in);
  ASSERT_GT(n, 0);
  ls_frame f = Parse(buf, n);
  EXPECT_EQ(f.type, LS_F_READ_REQ);
  ASSERT_EQ(ls_read_req_decode(f.payload, f.len, &out), 0);
  EXPECT_EQ(out.from, LS_READ_SEQ);
  EXPECT_EQ(out.arg, 1234567u);
  EXPECT_EQ(out.flags, uint64_t{LS_READ_FOLLOW});
  for (size_t k = 0; k < f.len; k++) EXPECT_EQ(ls_read_req_decode(f.payload, k, &out), -EBADMSG);

  const ls_read_req bad[] = {
      {5, 0, 0}, {LS_READ_OLDEST, 1, 0}, {LS_READ_END, 7, 0}, {LS_READ_LAST, 10, 4}};
  for (const ls_read_req &b : bad) {
    EXPECT_EQ(ls_read_req_encode(buf.data(), buf.size(), &b), -EINVAL);
    const uint8_t raw[] = {b.from, uint8_t(b.arg), uint8_t(b.flags)};
    EXPECT_EQ(ls_read_req_decode(raw, sizeof raw, &out), -EBADMSG);
  }
  const uint8_t trailing[] = {LS_READ_OLDEST, 0, 0, 0};
  EXPECT_EQ(ls_read_req_decode(trailing, sizeof trailing, &out), -EBADMSG);
  EXPECT_EQ(ls_read_req_encode(buf.data(), 6, &in), -ENOBUFS);
}

TEST(ReadFrame, RecordRoundTrips) {
  const uint8_t boot[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  ls_read_record in{};
  in.kind = LS_READ_KIND_RECORD;
  in.level = 3;
  in.site_known = 1;
  in.seq = 99;
  in.block_seq = 7;
  in.ts_ns = 1700000000000000000ull;
  in.tid = 42;
  in.source_id = 5;
  in.pid = 1000;
  in.uid = 65534;
  in.gid = 65534;
  in.site_id = 3;
  in.line = 17;
  in.app = "app";
  in.app_len = 3;
  in.comm = "comm";
  in.comm_len = 4;
  in.unit = "";
  in.unit_len = 0;
  in.fmt = "x=%d";
  in.fmt_len = 4;
  in.file = "a.c";
  in.file_len = 3;
  in.args = "\x04";
  in.args_len = 1;
  in.truncated = 2;
  in.block_opened_ns = 11;
  in.boot_id = boot;
  in.block_open_mono_ns = 12;
  in.block_open_real_ns = 13;
  std::vector<uint8_t> buf(ls_read_record_max(&in));
  ptrdiff_t n = ls_read_record_encode(buf.data(), buf.size(), &in);
  ASSERT_GT(n, 0);
  ls_frame f = Parse(buf, n);
  EXPECT_EQ(f.type, LS_F_READ_RECORD);
  ls_read_record out{};
  ASSERT_EQ(ls_read_record_decode(f.payload, f.len, &out), 0);
  EXPECT_EQ(out.seq, 99u);
  EXPECT_EQ(out.uid, 65534u);
  EXPECT_EQ(out.level, 3);
  EXPECT_EQ(std::string(out.fmt, out.fmt_len), "x=%d");
  EXPECT_EQ(std::string(out.comm, out.comm_len), "comm");
  EXPECT_EQ(std::string(out.args, out.args_len), "\x04");
  EXPECT_EQ(out.truncated, 2u);
  EXPECT_EQ(std::memcmp(out.boot_id, boot, 16), 0);
  EXPECT_EQ(out.block_open_real_ns, 13u);
  for (size_t k = 0; k < f.len; k++)
    EXPECT_EQ(ls_read_record_decode(f.payload, k, &out), -EBADMSG) << k;
  in.level = 8;
  EXPECT_EQ(ls_read_record_encode(buf.data(), buf.size(), &in), -EINVAL);
  in.level = 3;
  // A site with fields: LS_SITE_FIELDS in the level byte (LS_READ_FIELDS).
  in.fields = 1;
  n = ls_read_record_encode(buf.data(), buf.size(), &in);
  ASSERT_GT(n, 0);
  f = Parse(buf, n);
  ASSERT_EQ(ls_read_record_decode(f.payload, f.len, &out), 0);
  EXPECT_EQ(out.level, 3);
  EXPECT_EQ(out.fields, 1);
  EXPECT_EQ(ls_read_record_encode(buf.data(), 20, &in), -ENOBUFS);
}

TEST(ReadFrame, LostAndEndRoundTrip) {
  std::vector<uint8_t> buf(64);
  ptrdiff_t n = ls_read_lost_encode(buf.data(), buf.size(), 77);
  ASSERT_GT(n, 0);
  ls_frame f = Parse(buf, n);
  uint64_t lost = 0;
  ASSERT_EQ(ls_read_lost_decode(f.payload, f.len, &lost), 0);
  EXPECT_EQ(lost, 77u);
  EXPECT_EQ(ls_read_lost_encode(buf.data(), buf.size(), 0), -EINVAL);
  const uint8_t zero[] = {0};
  EXPECT_EQ(ls_read_lost_decode(zero, 1, &lost), -EBADMSG);

  uint8_t id[16];
  for (int i = 0; i < 16; i++) id[i] = uint8_t(i);
  ls_read_end in = {id, 1024, 8754}, out{};
  n = ls_read_end_encode(buf.data(), buf.size(), &in);
  ASSERT_GT(n, 0);
  f = Parse(buf, n);
  ASSERT_EQ(ls_read_end_decode(f.payload, f.len, &out), 0);
  EXPECT_EQ(std::memcmp(out.ring_id, id, 16), 0);
  EXPECT_EQ(out.examined, 1024u);
  EXPECT_EQ(out.next_seq, 8754u);
  for (size_t k = 0; k < f.len; k++) EXPECT_EQ(ls_read_end_decode(f.payload, k, &out), -EBADMSG);
}

}  // namespace
}  // namespace logsink::test
