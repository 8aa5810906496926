// logctl_stats_test.cc: the real logctl binary against rings written with
// storage's RingWriter (cli_fixture.h): `logctl stats`: from the ring alone, from a stand-in
// daemon, and with a silent one.
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <thread>

#include "cli_fixture.h"
#include "common/unix_socket.h"
#include "logsink/proto/frame_encode.h"
#include "logsink/proto/wire.h"

namespace logsink::test {
namespace {

TEST_F(LogctlTest, StatsWithoutDaemon) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 30);
  ring.writer()->AppendDropped(ring.source(), kT0 + 40 * kMs, 5, kT0);
  ring.writer()->AppendDropped(ring.source(), kT0 + 41 * kMs, 7, kT0);
  ring.Close();
  std::string sock = dir_.File("none.sock");
  Result r = RunLogctl({"stats", "--file", f, "--socket", sock});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("records:       32 (seq 0..31)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("block count:   8\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dropped:       12 records in 2 reports (full scan)"), std::string::npos);
  EXPECT_NE(r.out.find("oldest:        2025-11-23 10:00:00.000 +0000"), std::string::npos);
  EXPECT_NE(r.out.find("span:          0.041s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("daemon: not running (socket " + sock + ")"), std::string::npos);
  r = RunLogctl({"stats", "--json", "--file", f, "--socket", sock});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["records"].get<uint64_t>(), 32u);
  EXPECT_EQ(v["dropped"].get<uint64_t>(), 12u);
  EXPECT_EQ(v["block_count"].get<uint64_t>(), 8u);
  EXPECT_FALSE(v["daemon"]["running"].get<bool>());
}

// stats for a person: the rate over the span, the top writers
// (label and uid, most first) and a histogram by priority class, the same in
// --json.
TEST_F(LogctlTest, StatsShowsTopWritersAndAHistogram) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  Source quiet{2, 77, 1001, 100, "", "quietcomm"};  // no label: the comm stands in
  uint32_t info = ring.Intern(6, "n=%d"), err = ring.Intern(3, "e=%d"),
           warn = ring.Intern(4, "w=%d");
  // 120 ms: 100 info records in the first twelfth, 5 errors in the last,
  // 1 warning from the quiet writer in the middle.
  for (int i = 0; i < 100; i++) ring.Add(info, "i", Args().i(i).bytes(), kT0 + uint64_t(i) * 10000);
  ring.Add(warn, "i", Args().i(1).bytes(), kT0 + 60 * kMs, &quiet);
  for (int i = 0; i < 5; i++)
    ring.Add(err, "i", Args().i(i).bytes(), kT0 + 119 * kMs + uint64_t(i));
  ring.Close();
  Result r = RunLogctl({"stats", "--file", f, "--socket", dir_.File("none.sock")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rate:          890.8 records/s over the span\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("top writers:   records, share of the file, label (uid)\n"
                       "           105  99.1%  testapp (uid 1000)\n"
                       "             1   0.9%  quietcomm (uid 1001)\n"),
            std::string::npos)
      << r.out;
  std::vector<std::string> rows;
  for (const std::string &l : Lines(r.out))
    if (l.rfind("  2025-11-23 ", 0) == 0) rows.push_back(l);
  ASSERT_EQ(rows.size(), 12u) << r.out;
  EXPECT_EQ(rows[0], "  2025-11-23 10:00:00.000 +0000  " + std::string(40, '.') + "  100");
  // The bar starts after "  TIME  " (33 columns).
  EXPECT_EQ(rows[6].substr(33), "+" + std::string(41, ' ') + "1 (err 0, warning 1)") << rows[6];
  EXPECT_EQ(rows[11].substr(33), "##" + std::string(40, ' ') + "5 (err 5, warning 0)") << rows[11];
  EXPECT_EQ(rows[3].substr(33), std::string(42, ' ') + "0") << rows[3];
  // On a terminal (colour allowed) the picture is the same characters: no
  // colour codes, nothing that needs a colour to be read.
  std::string screen =
      RunOnTerminal({"stats", "--file", f, "--socket", dir_.File("none.sock")}, false);
  for (const std::string &row : rows)
    EXPECT_NE(screen.find(row + "\r\n"), std::string::npos) << row;
  EXPECT_EQ(screen.find("\x1b["), std::string::npos) << screen;
  r = RunLogctl({"stats", "--json", "--file", f, "--socket", dir_.File("none.sock")});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["top_writers"][0]["label"], "testapp");
  EXPECT_EQ(v["top_writers"][0]["records"].get<uint64_t>(), 105u);
  EXPECT_EQ(v["top_writers"][1]["uid"].get<uint64_t>(), 1001u);
  ASSERT_EQ(v["histogram"]["buckets"].size(), 12u);
  EXPECT_EQ(v["histogram"]["buckets"][0]["info"].get<uint64_t>(), 100u);
  EXPECT_EQ(v["histogram"]["buckets"][11]["err"].get<uint64_t>(), 5u);
}

// A stand-in daemon on a real socket: checks the RING_REQ and STATS_REQ
// frames and answers them, saying it writes the file (its identity, st_dev
// and st_ino).
TEST_F(LogctlTest, StatsAsksTheDaemon) {
  std::string f = EmptyRing(), sock = dir_.File("d.sock");
  int lfd = ListenUnix(sock, 4);
  ASSERT_GE(lfd, 0);
  std::unique_ptr<RingReader> reader;
  ASSERT_TRUE(RingReader::Open(Env::Default(), f, nullptr, &reader).ok());
  struct stat st;
  ASSERT_EQ(stat(f.c_str(), &st), 0);
  std::string ring_frame(LS_RING_FRAME_MAX, '\0');
  ls_ring ring = {reader->layout().ring_id.data(), uint64_t(st.st_dev), uint64_t(st.st_ino),
                  f.data(), f.size()};
  ptrdiff_t ring_len =
      ls_ring_encode(reinterpret_cast<uint8_t *>(ring_frame.data()), ring_frame.size(), &ring);
  ASSERT_GT(ring_len, 0);
  ring_frame.resize(size_t(ring_len));
  std::string got;
  std::thread server([&] {
    int c = accept(lfd, nullptr, nullptr);
    if (c < 0) return;
    // RING_REQ and STATS_REQ, 5 bytes each, no HELLO needed (PROTOCOL.md).
    char b[64];
    size_t want = 10;
    while (got.size() < want) {
      ssize_t n = read(c, b, sizeof b);
      if (n <= 0) break;
      got.append(b, n);
    }
    std::string payload = "\x02";
    payload +=
        "\x0a"
        "records_in";
    payload += "\xac\x02";  // 300
    payload += "\x06queued";
    payload += '\0';
    std::string frame(4, '\0');
    uint32_t len = 1 + payload.size();
    memcpy(frame.data(), &len, 4);
    frame += static_cast<char>(LS_F_STATS);
    frame += payload;
    frame = ring_frame + frame;
    if (write(c, frame.data(), frame.size()) < 0) {
    }
    close(c);
  });
  Result r = RunLogctl({"stats", "--file", f, "--socket", sock});
  server.join();
  close(lfd);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.out.find("daemon:        running (socket " + sock + ")\n  records_in=300\n  queued=0\n"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(got, std::string("\x01\0\0\0\x06\x01\0\0\0\x05", 10));
}

TEST_F(LogctlTest, StatsDoesNotHangOnASilentDaemon) {
  std::string f = EmptyRing(), sock = dir_.File("d.sock");
  int lfd = ListenUnix(sock, 4);
  ASSERT_GE(lfd, 0);  // accepted by the kernel, never answered
  Proc p({"stats", "--file", f, "--socket", sock});
  Result r = p.Finish(10000);
  close(lfd);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("daemon: unreachable (socket " + sock + "): no answer within the timeout"),
            std::string::npos)
      << r.out;
}

TEST_F(LogctlTest, StatsShowsTheCompression) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 3000);
  ring.Close();
  std::string sock = dir_.File("none.sock");
  Result r = RunLogctl({"stats", "--file", f, "--socket", sock});
  ASSERT_EQ(r.status, 0) << r.err;
  std::unique_ptr<RingReader> reader;
  ASSERT_TRUE(RingReader::Open(Env::Default(), f, nullptr, &reader).ok());
  RingReader::Summary sum;
  ASSERT_TRUE(reader->Summarize(&sum).ok());
  ASSERT_GT(sum.raw_bytes, sum.bytes_used);  // numbered records compress
  char want[128];
  snprintf(want, sizeof want,
           "\ncompression:   %.1fx (%.1f KiB of records in %.1f KiB of blocks)\n",
           double(sum.raw_bytes) / double(sum.bytes_used), double(sum.raw_bytes) / 1024,
           double(sum.bytes_used) / 1024);
  EXPECT_NE(r.out.find(want), std::string::npos) << want << r.out;
  // The lines around it stay.
  EXPECT_NE(r.out.find("bytes used:    " + std::to_string(sum.bytes_used) + " bytes"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("records:       3000 (seq 0..2999)"), std::string::npos) << r.out;
  r = RunLogctl({"stats", "--json", "--file", f, "--socket", sock});
  json v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["raw_bytes"].get<uint64_t>(), sum.raw_bytes);
  EXPECT_EQ(v["bytes_used"].get<uint64_t>(), sum.bytes_used);
  EXPECT_NEAR(v["compression_ratio"].get<double>(), double(sum.raw_bytes) / double(sum.bytes_used),
              0.001);
  // Stored as they are: 1.0x. An empty ring has no ratio.
  std::string g = dir_.File("plain.ring");
  TestRing plain(g, 12288 + 8 * 4096, 4096, LS_CODEC_NONE);
  WriteNumbered(&plain, 300);
  plain.Close();
  r = RunLogctl({"stats", "--file", g, "--socket", sock});
  EXPECT_NE(r.out.find("\ncompression:   1.0x ("), std::string::npos) << r.out;
  std::string e = dir_.File("empty.ring");
  TestRing(e).Close();
  r = RunLogctl({"stats", "--file", e, "--socket", sock});
  EXPECT_NE(r.out.find("\ncompression:   - (no blocks used)\n"), std::string::npos) << r.out;
  r = RunLogctl({"stats", "--json", "--file", e, "--socket", sock});
  v = ParseJson(Lines(r.out)[0]);
  ASSERT_FALSE(v.is_discarded()) << r.out;
  EXPECT_EQ(v["raw_bytes"].get<uint64_t>(), 0u);
  EXPECT_TRUE(v["compression_ratio"].is_null()) << r.out;
}

}  // namespace
}  // namespace logsink::test
