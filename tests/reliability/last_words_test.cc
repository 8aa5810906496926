// last_words_test.cc: records at flush_level, with the real logsinkd and
// the default client options. A record at flush_level (LS_WARNING) or more
// severe is in the socket when LS_LOG returns, together with everything the
// same thread logged before it: a process that logs 1,000 info records and
// one LS_ERR and is SIGKILLed right after the call loses none of them.
// (Before: 0 of the 1,001 landed.) And the fatal-signal handler: a process
// that logs 1,000 info records (staged, not yet sent) and then aborts
// or faults (SIGSEGV) keeps them all, dies by the same
// signal, and a handler the application installed before still runs. When
// the records cannot be sent (the crashing thread holds the lock the sender
// needs, or the daemon does not read), the handler gives up after its cap
// (1 s) and the process still dies by its signal: it never hangs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "common/daemon_process.h"
#include "common/process.h"
#include "common/ring_check.h"
#include "common/temp_dir.h"
#include "logsink/logsink.h"
#include "logsink/storage/ring.h"
#include "rel_util.h"
#include "testing.h"

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

enum class Death { kAbort, kBadAccess, kChained, kHoldingLock };

// The child of the crash tests: 1,000 info records stay staged (below
// batch_bytes and the flush interval), then it dies.
[[noreturn]] void CrashChild(const std::string &socket, Death how, int pipe_fd) {
  rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);  // the default action, without a core file
  // Under ASan its own SIGSEGV handler would come first in the chain: the
  // default action is what these tests expect before ours.
  signal(SIGSEGV, SIG_DFL);
  if (how == Death::kChained) {
    static int fd = pipe_fd;
    struct sigaction sa {};
    sa.sa_handler = [](int) {
      char b = 'h';
      (void)!write(fd, &b, 1);
      _exit(42);
    };
    sigaction(SIGSEGV, &sa, nullptr);
  }
  ls_client *c = ls_open(socket.c_str(), "crash", nullptr);
  if (!c || ls_flush(c) != 0) _exit(3);
  for (int i = 0; i < kInfo; i++) LS_LOG(c, LS_INFO, "crash info %d", i);
  if (how == Death::kHoldingLock) ls__test_hold_lock(c);
  if (how == Death::kAbort || how == Death::kHoldingLock) abort();
  // A store to a page without access: a real fault (a NULL store would be
  // caught by UBSan before it faults in the sanitizer builds).
  void *page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  volatile int *volatile p = static_cast<int *>(page);
  *p = 1;
  _exit(4);
}

int CrashRun(Death how, int *landed, bool *handler_ran, double *died_after_s = nullptr) {
  TempDir dir;
  Daemon d(dir, {"--size", "16MiB"});
  EXPECT_TRUE(d.Start()) << d.Stderr();
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    CrashChild(d.socket, how, fds[1]);
  }
  close(fds[1]);
  auto t0 = std::chrono::steady_clock::now();
  int st = WaitExit(pid, Ms(20000));
  if (died_after_s)
    *died_after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char b;
  *handler_ran = read(fds[0], &b, 1) == 1;
  close(fds[0]);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  *landed = 0;
  for (const OwnedRecord &r : ReadRing(d.ring))
    *landed += r.app == "crash" && r.fmt == "crash info %d";
  return st;
}

TEST(LastWords, AbortSendsWhatWasStagedAndStillAborts) {
  int landed = 0;
  bool ran = false;
  EXPECT_EQ(CrashRun(Death::kAbort, &landed, &ran), 128 + SIGABRT);
  EXPECT_EQ(landed, kInfo);
  Figures("crash handler: abort() after %d staged records: %d landed", kInfo, landed);
}

TEST(LastWords, InvalidAccessSendsWhatWasStagedAndDiesBySigsegv) {
  int landed = 0;
  bool ran = false;
  EXPECT_EQ(CrashRun(Death::kBadAccess, &landed, &ran), 128 + SIGSEGV);
  EXPECT_EQ(landed, kInfo);
  Figures("crash handler: invalid memory access after %d staged records: %d landed", kInfo, landed);
}

TEST(LastWords, TheApplicationsEarlierHandlerRunsAfterTheRecordsAreSent) {
  int landed = 0;
  bool ran = false;
  EXPECT_EQ(CrashRun(Death::kChained, &landed, &ran), 42);
  EXPECT_TRUE(ran);
  EXPECT_EQ(landed, kInfo);
}

// The thread that crashes holds the client's lock (say, it faulted inside
// the library): the sender cannot take its pass, the handler's wait runs
// out, and the process dies by SIGABRT all the same. What was staged is
// lost; the figure says how many landed anyway (a flush-interval pass that
// came first).
TEST(LastWords, CrashHoldingTheSendersLockStillDiesBySignal) {
  int landed = 0;
  bool ran = false;
  double after = 0;
  EXPECT_EQ(CrashRun(Death::kHoldingLock, &landed, &ran, &after), 128 + SIGABRT)
      << "a hang shows as -1";
  EXPECT_LT(after, 10.0) << "the handler waits 1 s at most";
  Figures(
      "crash handler, lock held by the crashing thread: died by SIGABRT %.2f s after start "
      "(wait cap 1 s), %d of %d staged records landed",
      after, landed, kInfo);
}

// The daemon is stopped (SIGSTOP) and its socket buffer full, so the sender
// is stuck: the crash handler waits its cap, then the process dies by
// SIGABRT. After SIGCONT the daemon stores what reached the socket and the
// ring stays sound.
TEST(LastWords, CrashWhileTheDaemonDoesNotReadWaitsOnlyTheCap) {
  constexpr int kMany = 300000;  // megabytes on the wire: more than the socket buffers hold
  TempDir dir;
  Daemon d(dir, {"--size", "16MiB"});
  ASSERT_TRUE(d.Start()) << d.Stderr();
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    close(go[1]);
    rlimit none{0, 0};
    setrlimit(RLIMIT_CORE, &none);
    ls_client *c = ls_open(d.socket.c_str(), "stuck", nullptr);
    if (!c || ls_flush(c) != 0) _exit(3);
    char b = 'r';
    if (write(ready[1], &b, 1) != 1 || read(go[0], &b, 1) != 1) _exit(3);
    for (int i = 0; i < kMany; i++) LS_LOG(c, LS_INFO, "stuck %d", i);
    abort();
  }
  close(ready[1]);
  close(go[0]);
  char b = 0;
  ASSERT_EQ(read(ready[0], &b, 1), 1);
  ASSERT_EQ(kill(d.pid(), SIGSTOP), 0);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(write(go[1], &b, 1), 1);
  int st = WaitExit(pid, Ms(30000));
  double after = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(kill(d.pid(), SIGCONT), 0);
  close(ready[0]);
  close(go[1]);
  EXPECT_EQ(st, 128 + SIGABRT) << "a hang shows as -1";
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  // ReadRing fails the test on any corruption the reader meets; what landed
  // is each record at most once. (Not in order: after the send timeout the
  // client reconnects, and the daemon, once continued, reads the old and the
  // new connection's buffered records interleaved.)
  int landed = 0, duplicates = 0;
  std::vector<uint8_t> seen(kMany, 0);
  for (const OwnedRecord &r : ReadRing(d.ring)) {
    std::vector<Val> v;
    if (r.app != "stuck" || r.fmt != "stuck %d" || !DecodeArgs(r.fmt, r.args, &v) || v.empty() ||
        v[0].i < 0 || v[0].i >= kMany)
      continue;
    landed++;
    duplicates += seen[size_t(v[0].i)]++ > 0;
  }
  EXPECT_EQ(duplicates, 0);
  // Not a performance figure: a wait that does not end at its cap (1 s after
  // block_timeout_ms) would show here as many seconds.
  EXPECT_LT(after, 10.0);
  Figures(
      "crash handler, daemon stopped: %d records logged, died by SIGABRT %.2f s later "
      "(each stall costs at most block_timeout 1 s, the handler at most 1 s), %d landed "
      "after SIGCONT",
      kMany, after, landed);
}

// $LOGSINK_CRASH_HANDLER=0 and ls_options.crash_handler = 0 leave the
// signal dispositions alone.
TEST(LastWords, CrashHandlerCanBeTurnedOff) {
  for (int mode = 0; mode < 3; mode++) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      signal(SIGSEGV, SIG_DFL);
      if (mode == 0) setenv("LOGSINK_CRASH_HANDLER", "0", 1);
      ls_options o;
      ls_options_init(&o);
      o.crash_handler = mode == 1 ? 0 : 1;
      ls_client *c = ls_open("/nonexistent/logsink.sock", "off", &o);
      if (!c) _exit(3);
      struct sigaction now {};
      sigaction(SIGSEGV, nullptr, &now);
      bool ours = (now.sa_flags & SA_SIGINFO) != 0;
      _exit(ours ? 10 : 11);
    }
    // mode 2 (defaults) installs it: the control that this test can fail.
    EXPECT_EQ(WaitExit(pid, Ms(20000)), mode == 2 ? 10 : 11) << "mode " << mode;
  }
}

}  // namespace
}  // namespace logsink::test
