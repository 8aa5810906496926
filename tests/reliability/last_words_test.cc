// last_words_test.cc: issue 13 (2), first half, with the real logsinkd and
// the default client options. A record at flush_level (LS_WARNING) or more
// severe is in the socket when LS_LOG returns, together with everything the
// same thread logged before it: a process that logs 1,000 info records and
// one LS_ERR and is SIGKILLed right after the call loses none of them.
// (Before: 0 of the 1,001 landed.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/daemon_process.h"
#include "common/process.h"
#include "common/ring_check.h"
#include "common/temp_dir.h"
#include "logsink/logsink.h"
#include "logsink/storage/ring.h"
#include "rel_util.h"

namespace logsink::test {
namespace {

constexpr int kInfo = 1000, kRounds = 20;

// The child: opens a client, waits until it is connected (one ls_flush),
// logs, and kills itself right after the LS_ERR call returns.
[[noreturn]] void Child(const std::string &socket, int round) {
  ls_client *c = ls_open(socket.c_str(), "lastwords", nullptr);
  if (!c || ls_flush(c) != 0) _exit(3);
  for (int i = 0; i < kInfo; i++) LS_LOG(c, LS_INFO, "round %d info %d", round, i);
  LS_LOG(c, LS_ERR, "round %d last words", round);
  raise(SIGKILL);
  _exit(4);
}

TEST(LastWords, ErrorAndEverythingBeforeItSurviveSigkillRightAfterTheCall) {
  TempDir dir;
  Daemon d(dir, {"--size", "16MiB"});
  ASSERT_TRUE(d.Start()) << d.Stderr();
  for (int round = 0; round < kRounds; round++) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) Child(d.socket, round);
    int st = WaitExit(pid, Ms(20000));
    ASSERT_EQ(st, 128 + SIGKILL) << "round " << round;
  }
  ASSERT_EQ(d.Stop(), 0) << d.Stderr();
  std::vector<int> info(kRounds, 0), last(kRounds, 0);
  for (const OwnedRecord &r : ReadRing(d.ring)) {
    std::vector<Val> v;
    if (r.app != "lastwords" || !DecodeArgs(r.fmt, r.args, &v) || v.empty()) continue;
    if (v[0].i < 0 || v[0].i >= kRounds) continue;
    if (r.fmt == "round %d info %d") info[size_t(v[0].i)]++;
    if (r.fmt == "round %d last words") last[size_t(v[0].i)]++;
  }
  int complete = 0;
  for (int round = 0; round < kRounds; round++) {
    EXPECT_EQ(info[size_t(round)], kInfo) << "round " << round;
    EXPECT_EQ(last[size_t(round)], 1) << "round " << round;
    complete += info[size_t(round)] == kInfo && last[size_t(round)] == 1;
  }
  Figures(
      "last words: %d/%d processes SIGKILLed right after LS_ERR kept all %d info records "
      "and the error",
      complete, kRounds, kInfo);
}

}  // namespace
}  // namespace logsink::test
