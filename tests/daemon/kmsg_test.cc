// kmsg_test.cc: kernel messages (daemon/KERNEL.md): the /dev/kmsg record
// parser on a table of odd inputs, the reader's record handling in process
// on a real ring (gaps the kernel reports become one counted DROPPED entry,
// records already in the ring are skipped, malformed records are kept), and
// the real logsinkd reading the real /dev/kmsg, each message exactly once
// across a restart.
#include "kmsg.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "common/seed.h"
#include "daemon/context_fixture.h"
#include "daemon/harness.h"
#include "kmsg_parse.h"
#include "logsink/proto/args.h"
#include "text_record.h"

namespace logsink::test {
namespace {

using namespace logsink::daemon;

TEST(KmsgParse, Table) {
  KmsgRecord r;
  ASSERT_TRUE(ParseKmsg("6,339,5140900,-;NET: Registered protocol family 10\n", &r));
  EXPECT_EQ(r.level, 6);
  EXPECT_EQ(r.facility, 0);
  EXPECT_EQ(r.seq, 339u);
  EXPECT_EQ(r.usec, 5140900u);
  EXPECT_FALSE(r.continuation);
  EXPECT_EQ(r.text, "NET: Registered protocol family 10");
  EXPECT_EQ(r.dict, "");

  ASSERT_TRUE(
      ParseKmsg("3,1024,99,-,caller=T1;usb 1-1: device not accepting address\n"
                " SUBSYSTEM=usb\n DEVICE=c189:1\n",
                &r));
  EXPECT_EQ(r.level, 3);
  EXPECT_EQ(r.text, "usb 1-1: device not accepting address");
  EXPECT_EQ(r.dict, "SUBSYSTEM=usb\nDEVICE=c189:1");

  ASSERT_TRUE(ParseKmsg("14,7,1,c;first half", &r));  // continued, no newline
  EXPECT_TRUE(r.continuation);
  EXPECT_EQ(r.facility, 1);  // written by a process: user
  EXPECT_EQ(r.level, 6);
  ASSERT_TRUE(ParseKmsg("14,8,2,+;second half\n", &r));
  EXPECT_TRUE(r.continuation);

  ASSERT_TRUE(ParseKmsg("6,9,3,-;tab\\x09and esc\\x1b and \\x5c and \\xZZ and \\x4\n", &r));
  EXPECT_EQ(r.text, "tab\tand esc\x1b and \\ and \\xZZ and \\x4");

  ASSERT_TRUE(ParseKmsg("6,10,3;no flag field\n", &r));  // older kernels
  EXPECT_EQ(r.text, "no flag field");
  ASSERT_TRUE(ParseKmsg("191,11,3,-;local7.debug\n", &r));
  EXPECT_EQ(r.facility, 23);
  EXPECT_EQ(r.level, 7);
  ASSERT_TRUE(ParseKmsg("6,12,3,-;\n", &r));  // empty text
  EXPECT_EQ(r.text, "");
  ASSERT_TRUE(ParseKmsg("6,13,3,-;semi;colons;inside\n ignored line without equals\n K=V\n", &r));
  EXPECT_EQ(r.text, "semi;colons;inside");
  EXPECT_EQ(r.dict, "K=V");

  for (const char *bad :
       {"", "no semicolon\n", "6,1;missing usec\n", "x,1,2,-;pri\n", "6,-1,2,-;seq\n",
        "6,1,2 ,-;usec\n", "6,99999999999999999999,1,-;big\n", ";only text\n"}) {
    EXPECT_FALSE(ParseKmsg(bad, &r)) << bad;
  }
}

// The reader in process, on a real ring file.
class KmsgReaderTest : public ContextTest {
 protected:
  KmsgReaderTest() : ContextTest(4u << 20) {}
  // The kernel's sequence number stored with a kernel record.
  static std::string Arg(const OwnedRecord &r, int i) {
    const uint8_t *p = reinterpret_cast<const uint8_t *>(r.args.data()), *end = p + r.args.size();
    ls_arg a{};
    for (int k = 0; k <= i; k++) {
      size_t n = ls_arg_get(LS_ARG_STR, p, end, &a);
      if (!n) return "?";
      p += n;
    }
    return std::string(reinterpret_cast<const char *>(a.s), a.len);
  }
};

constexpr uint64_t kReal = 1700000000000000000ull, kMono = 100000000000ull;  // 100 s after boot

TEST_F(KmsgReaderTest, RecordsGapsAndMalformedLines) {
  KmsgReader rx(&ctx_, -1, std::nullopt);
  rx.Store("6,5,99000000,-;first\n SUBSYSTEM=net\n", kReal, kMono);
  rx.Store("3,6,99500000,-;second\n", kReal, kMono);
  rx.Store("4,10,99600000,-;after a gap\n", kReal, kMono);  // 7, 8, 9 were overwritten
  rx.Store("this is not a kmsg record\n", kReal, kMono);
  auto got = Flushed();
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].file, "kernel");
  // The kernel's format with its dictionary's field (FORMAT.md, "Free-text
  // records"); the kernel's arguments as before, then the field's value.
  EXPECT_EQ(got[0].fmt, "%s%.0s%.0s%.0s\x1fSUBSYSTEM=%s");
  EXPECT_EQ(Arg(got[0], 0), "first");
  EXPECT_EQ(Arg(got[0], 1), "5");
  EXPECT_EQ(Arg(got[0], 2), "99000000");
  EXPECT_EQ(Arg(got[0], 3), "SUBSYSTEM=net");
  EXPECT_EQ(Arg(got[0], 4), "net");
  EXPECT_EQ(got[1].fmt, "%s%.0s%.0s%.0s");  // no dictionary, no fields
  EXPECT_EQ(got[0].level, 6);
  EXPECT_EQ(got[0].line, 0u);  // facility kern
  EXPECT_EQ(got[0].app, "kernel");
  EXPECT_EQ(got[0].uid, 0u);
  EXPECT_EQ(got[0].pid, 0u);
  // Logged 1 s before it was read: its realtime is 1 s before the read.
  EXPECT_EQ(got[0].ts_ns, kReal - 1000000000ull);
  EXPECT_EQ(got[1].level, 3);
  EXPECT_TRUE(got[2].dropped());
  EXPECT_EQ(got[2].dropped_count, 3u);
  EXPECT_EQ(Arg(got[3], 0), "after a gap");
  EXPECT_EQ(Arg(got[4], 0), "this is not a kmsg record");
  EXPECT_EQ(counters_.kmsg_records, 3u);
  EXPECT_EQ(counters_.kmsg_lost, 3u);
  EXPECT_EQ(counters_.kmsg_malformed, 1u);
}

// What the kernel overwrote while logsinkd was down is counted too: the ring
// holds 1..5, the kernel's buffer now starts at 10.
TEST_F(KmsgReaderTest, AGapWhileTheDaemonWasDownIsCounted) {
  KmsgReader rx(&ctx_, -1, 5);
  for (int s = 10; s <= 12; s++) {
    rx.Store("6," + std::to_string(s) + ",1000,-;line " + std::to_string(s) + "\n", kReal, kMono);
  }
  auto got = Flushed();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_TRUE(got[0].dropped());
  EXPECT_EQ(got[0].dropped_count, 4u);  // 6, 7, 8, 9
  EXPECT_EQ(counters_.kmsg_lost, 4u);
  EXPECT_EQ(Arg(got[1], 1), "10");
}

TEST_F(KmsgReaderTest, WhatTheRingHoldsIsSkippedAndFoundAgainAfterARestart) {
  {
    KmsgReader rx(&ctx_, -1, std::nullopt);
    for (int s = 1; s <= 5; s++) {
      rx.Store("6," + std::to_string(s) + ",1000,-;line " + std::to_string(s) + "\n", kReal, kMono);
    }
    ASSERT_TRUE(w_->Flush().ok());
  }
  const auto boot = storage::Env::Default()->BootId();
  auto last = LastKernelSeq(dir_ / "r", boot);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(*last, 5u);
  auto other = boot;
  other[0] ^= 1;
  EXPECT_FALSE(
      LastKernelSeq(dir_ / "r", other).has_value());  // another boot's records do not count

  KmsgReader again(&ctx_, -1, last);  // the kernel hands out 1..7 again after the restart
  for (int s = 1; s <= 7; s++) {
    again.Store("6," + std::to_string(s) + ",1000,-;line " + std::to_string(s) + "\n", kReal,
                kMono);
  }
  auto got = Flushed();
  ASSERT_EQ(got.size(), 7u);
  for (int s = 1; s <= 7; s++) EXPECT_EQ(Arg(got[s - 1], 1), std::to_string(s));
  EXPECT_EQ(counters_.kmsg_skipped, 5u);
  EXPECT_EQ(counters_.kmsg_lost, 0u);
}

// The real thing: logsinkd reading /dev/kmsg, a message written there by
// this test found in the ring exactly once, across a restart.
TEST(KmsgDaemon, RealKernelLogExactlyOnceAcrossARestart) {
  ASSERT_EQ(geteuid(), 0u) << "writing /dev/kmsg needs root (the test suite runs as root)";
  std::mt19937_64 rng(TestSeed());
  const std::string tag = "logsink-test-" + std::to_string(rng() % 1000000000);
  auto write_kmsg = [](const std::string &line) {
    int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_EQ(write(fd, line.data(), line.size()), ssize_t(line.size())) << strerror(errno);
    close(fd);
  };
  TempDir dir;
  const std::string toml = "[kernel]\nread = \"yes\"\n";
  auto count = [&](const std::string &text) {
    std::vector<OwnedRecord> recs;
    if (!ReadRingFile(dir / "logsink.ring", nullptr, &recs).ok()) return -1;
    int n = 0;
    for (const auto &r : recs) {
      if (r.file == "kernel" && r.args.find(text) != std::string::npos) {
        EXPECT_EQ(r.level, 4);  // <12>: user.warning
        EXPECT_EQ(r.line, 1u);  // the kernel gives a process's lines facility user
        n++;
      }
    }
    return n;
  };
  {
    Daemon d(dir, {}, toml);
    ASSERT_TRUE(d.Start()) << d.Stderr();
    write_kmsg("<12>" + tag + ": one\n");
    EXPECT_TRUE(WaitUntil([&] { return count(tag + ": one") == 1; })) << d.Stderr();
    ASSERT_EQ(d.Stop(), 0) << d.Stderr();
  }
  {
    Daemon d(dir, {}, toml);
    ASSERT_TRUE(d.Start()) << d.Stderr();
    write_kmsg("<12>" + tag + ": two\n");
    EXPECT_TRUE(WaitUntil([&] { return count(tag + ": two") == 1; })) << d.Stderr();
    ASSERT_EQ(d.Stop(), 0) << d.Stderr();
    EXPECT_NE(d.Stderr().find("already in the ring"), std::string::npos) << d.Stderr();
  }
  EXPECT_EQ(count(tag + ": one"), 1);  // not read twice after the restart
  EXPECT_EQ(count(tag + ": two"), 1);
  // logctl -k shows them, with the kernel's fields in JSON.
  auto k = RunProcess(BinPath("logctl"), {"cat", "--file", dir / "logsink.ring", "-k", "--json"});
  ASSERT_EQ(k.status, 0) << k.err;
  int shown = 0;
  for (const std::string &line : Lines(k.out)) {
    EXPECT_NE(line.find("\"file\":\"kernel\""), std::string::npos) << line;  // -k: nothing else
    if (line.find(tag + ": ") == std::string::npos) continue;
    shown++;
    EXPECT_NE(line.find("\"facility\":\"user\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"kernel\":{\"seq\":\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"level\":\"warning\""), std::string::npos) << line;
  }
  EXPECT_EQ(shown, 2) << k.out;
}

// "yes" with a device that cannot be opened refuses to start, saying why.
TEST(KmsgDaemon, UnopenableDeviceWithReadYesIsAClearError) {
  TempDir dir;
  Daemon d(dir, {}, "[kernel]\nread = \"yes\"\ndevice = \"" + std::string(dir / "nope") + "\"\n");
  EXPECT_FALSE(d.Start());
  EXPECT_NE(d.Stderr().find("cannot open"), std::string::npos) << d.Stderr();
}

}  // namespace
}  // namespace logsink::test
