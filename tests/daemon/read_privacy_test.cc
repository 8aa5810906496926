// read_privacy_test.cc: what a user outside the ring's group learns by
// reading their own records through the daemon (PROTOCOL.md, "Reading
// through the daemon"). The string table, the sources and the blocks are
// numbered ring-wide: a READ_RECORD that carried those numbers told a user
// whether someone else had already logged a site they guessed (an old id
// for a right guess, a fresh one for a wrong one), how many connections
// and blocks everyone made, and when others' records opened a block. A
// reader gets 0 for the three numbers, and block times only as far as they
// bear on its own record (its monotonic time and trusted filter time come
// out the same as from the file).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>

#include "as_user.h"
#include "harness.h"
#include "logsink/proto/read.h"

namespace logsink::test {
namespace {

constexpr uint32_t kUser = 65534;

uint64_t Now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// Connects, sends bytes, closes, and reports whether it all went.
std::string SendAll(const std::string &socket, const std::string &bytes) {
  Client c(socket);
  return c.ok() && c.Send(bytes) && c.WaitRead() ? "ok" : "failed";
}

// As the reading user: READ_REQ(OLDEST), then everything the daemon sends
// until it closes.
std::string ReadOwn(const std::string &socket) {
  Client c(socket);
  ls_read_req req = {LS_READ_OLDEST, 0, 0};
  uint8_t frame[LS_FRAME_HDR + 1 + 2 * LS_VARINT_MAX];
  ptrdiff_t n = ls_read_req_encode(frame, sizeof frame, &req);
  if (!c.ok() || n <= 0 || !c.Send(std::string(reinterpret_cast<char *>(frame), size_t(n))))
    return "";
  std::string all;
  auto deadline = Clock::now() + kHang;
  while (Clock::now() < deadline) {
    pollfd p{c.fd(), POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    char buf[65536];
    ssize_t k = recv(c.fd(), buf, sizeof buf, 0);
    if (k <= 0) return all;
    all.append(buf, size_t(k));
  }
  return all;
}

struct Frames {
  std::vector<ls_read_record> records;
  int ends = 0;
};

// Splits the bytes into frames (READ_RECORD's views point into `bytes`).
Frames Parse(const std::string &bytes) {
  Frames out;
  const auto *p = reinterpret_cast<const uint8_t *>(bytes.data());
  size_t left = bytes.size();
  while (left > 0) {
    ls_frame f;
    ptrdiff_t r = ls_frame_parse(p, left, LS_FRAME_MAX, &f);
    if (r <= 0) {
      ADD_FAILURE() << "a partial or bad frame at the end of the read";
      break;
    }
    if (f.type == LS_F_READ_RECORD) {
      ls_read_record rec;
      EXPECT_EQ(ls_read_record_decode(f.payload, f.len, &rec), 0);
      out.records.push_back(rec);
    } else if (f.type == LS_F_READ_END) {
      out.ends++;
    }
    p += r;
    left -= size_t(r);
  }
  return out;
}

struct FileView {
  uint64_t seq, ts_ns, mono, filter_time;
};

// The user's records as a reader of the file sees them (as root).
std::vector<FileView> FromFile(const std::string &ring) {
  std::unique_ptr<storage::RingReader> r;
  std::vector<FileView> out;
  if (!storage::RingReader::Open(storage::Env::Default(), ring, nullptr, &r).ok() ||
      !r->SeekOldest().ok())
    return out;
  storage::Record rec;
  while (r->Next(&rec).ok()) {
    if (rec.uid == kUser)
      out.push_back({rec.seq, rec.ts_ns, storage::MonotonicTime(rec), storage::FilterTime(rec)});
  }
  return out;
}

TEST(ReadPrivacy, ARecordReadThroughTheDaemonCarriesNoRingWideNumbers) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root, to act as another user";
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0711), 0);  // the user may reach the socket
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();

  // Root's program: a site, and a few more connections (sources).
  const uint64_t t0 = Now();
  ASSERT_EQ(SendAll(d.socket, Hello(1, "rootd") + Intern(1, 6, 10, "root secret %d", "r.c") +
                                  Records(1, {Rec(1, t0, {Arg::I(1)})})),
            "ok");
  for (int i = 0; i < 5; i++) {
    ASSERT_EQ(SendAll(d.socket, Hello(1, "rootd") + Intern(1, 6, 11, "more %d", "r.c") +
                                    Records(1, {Rec(1, t0 + 1, {Arg::I(i)})})),
              "ok");
  }
  // The user guesses root's site (same format, file, line, level: the ring
  // keeps one entry for both) and logs one of its own; a third record's
  // clock is an hour behind, so its block's open time is what filters use.
  const uint64_t t1 = Now();
  auto sent = RunAsUser(kUser, [&] {
    return SendAll(d.socket, Hello(1, "guess") + Intern(1, 6, 10, "root secret %d", "r.c") +
                                 Intern(2, 6, 12, "fresh %d", "u.c") +
                                 Records(7, {Rec(1, t1, {Arg::I(2)}), Rec(2, t1 + 1, {Arg::I(3)}),
                                             Rec(2, t1 - 3600ull * 1000000000u, {Arg::I(4)})}));
  });
  ASSERT_TRUE(sent.has_value());
  ASSERT_EQ(*sent, "ok");
  ASSERT_TRUE(WaitUntil([&] { return FromFile(d.ring).size() == 3; })) << d.Stderr();

  // The file: the guess shares root's string-table entry, the fresh site
  // has a newer one; all of it in numbers every writer advanced.
  const std::vector<FileView> file = FromFile(d.ring);
  std::vector<OwnedRecord> all = ReadRing(d.ring);
  std::vector<OwnedRecord> mine;
  for (auto &r : all)
    if (r.uid == kUser) mine.push_back(r);
  ASSERT_EQ(mine.size(), 3u);
  EXPECT_LT(mine[0].site_id, mine[1].site_id) << "the file numbers sites ring-wide";
  EXPECT_GT(mine[0].source_id, 1u) << "the file numbers sources ring-wide";

  auto got = RunAsUser(kUser, [&] { return ReadOwn(d.socket); });
  ASSERT_TRUE(got.has_value());
  Frames f = Parse(*got);
  EXPECT_EQ(f.ends, 1);
  ASSERT_EQ(f.records.size(), 3u);
  for (size_t i = 0; i < f.records.size(); i++) {
    const ls_read_record &r = f.records[i];
    SCOPED_TRACE("record " + std::to_string(i));
    EXPECT_EQ(r.uid, kUser);
    EXPECT_EQ(r.seq, file[i].seq);
    EXPECT_EQ(r.ts_ns, file[i].ts_ns);
    // The guess and the fresh site look alike: neither tells its age.
    EXPECT_EQ(r.site_id, 0u);
    EXPECT_EQ(r.site_known, 1u);
    EXPECT_EQ(r.source_id, 0u);
    EXPECT_EQ(r.block_seq, 0u);
    // The block's clock pair sits at the record's own time, and gives the
    // monotonic time the file gives.
    EXPECT_EQ(r.block_open_real_ns, r.ts_ns);
    EXPECT_EQ(r.block_open_mono_ns, file[i].mono);
    storage::Record as_read;
    as_read.ts_ns = r.ts_ns;
    as_read.block_opened_ns = r.block_opened_ns;
    as_read.block_open_real_ns = r.block_open_real_ns;
    as_read.block_open_mono_ns = r.block_open_mono_ns;
    EXPECT_EQ(storage::MonotonicTime(as_read), file[i].mono);
    EXPECT_EQ(storage::FilterTime(as_read), file[i].filter_time);
  }
  EXPECT_EQ(std::string(f.records[0].fmt, f.records[0].fmt_len), "root secret %d");
  EXPECT_EQ(std::string(f.records[1].fmt, f.records[1].fmt_len), "fresh %d");
  // The block's open time only where the record's own clock is not
  // trusted (the third record: an hour behind).
  EXPECT_EQ(f.records[0].block_opened_ns, 0u);
  EXPECT_EQ(f.records[1].block_opened_ns, 0u);
  EXPECT_NE(f.records[2].block_opened_ns, 0u);
  EXPECT_EQ(f.records[2].block_opened_ns, file[2].filter_time);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

}  // namespace
}  // namespace logsink::test
