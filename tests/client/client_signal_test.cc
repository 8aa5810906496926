// client_signal_test.cc: LS_LOG from a signal handler that interrupts an
// LS_LOG of the same thread, against the real logsinkd; the same with
// LS_FMT (C++), whose arguments are written between ls__slot_open and
// ls__slot_close. Another thread sends a bounded number of signals to the
// main thread while it logs in a tight loop; every record that reaches the
// ring must decode as one of the two call sites with its own arguments, and
// landed + dropped must equal the calls.
#include <errno.h>
#include <gtest/gtest.h>
#include <logsink/logsink.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <logsink/logsink.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client_harness.h"
#include "client_stats.h"
#include "render_ref.h"

namespace logsink::test {
namespace {

constexpr int kMain = 100000;   // records of the main loop
constexpr int kSignals = 2000;  // one every kMain / kSignals main records
constexpr int kPerSignal = 3;   // records per handler run
// The sites' formats as the ring keeps them: printf (LS_LOG) and brace
// formats (LS_FMT: proto/braces.h, type letters then text).
const std::string kMainFmt[2] = {"main %d", "\x1ei\x1emain {}"};
const std::string kHandlerFmt[2] = {"handler %d %d %s", "\x1eiis\x1ehandler {} {} {}"};
// Longer than a main record, so a handler record staged over a half-written
// main record (or the reverse) shows as a wrong length, not a lookalike.
constexpr const char *kPadding = "padding-padding-padding-padding-padding";

ls_client *g_client;
bool g_fmt;                     // LS_FMT instead of LS_LOG
std::atomic<int> g_handled{0};  // handler runs; only the main thread runs it

void LogFromHandler(int run) {
  for (int i = 0; i < kPerSignal; i++) {
    if (g_fmt)
      LS_FMT(g_client, LS_INFO, "handler {} {} {}", run, i, kPadding);
    else
      LS_LOG(g_client, LS_INFO, "handler %d %d %s", run, i, kPadding);
  }
}

void LogMain(int i) {
  if (g_fmt)
    LS_FMT(g_client, LS_INFO, "main {}", i);
  else
    LS_LOG(g_client, LS_INFO, "main %d", i);
}

void OnSignal(int) {
  int e = errno;
  int run = g_handled.load(std::memory_order_relaxed);
  LogFromHandler(run);
  g_handled.store(run + 1, std::memory_order_release);
  errno = e;
}

void HandlerLoggingDuringALog(bool fmt) {
  g_fmt = fmt;
  g_handled = 0;
  const std::string &main_fmt = kMainFmt[fmt], &handler_fmt = kHandlerFmt[fmt];
  TempDir dir;
  // A ring large enough that the daemon overwrites nothing of this test.
  Daemon daemon(dir, {"--size", "64MiB"});
  ASSERT_TRUE(daemon.Start()) << daemon.Stderr();
  ls_options o;
  ls_options_init(&o);
  o.flush_level = -1;
  // Room for every record: a call that finds its buffer full returns early,
  // and the test wants the signals to land in calls that stage.
  o.thread_buffer_bytes = 16u << 20;
  o.max_buffered_bytes = 64u << 20;
  g_client = ls_open(daemon.socket.c_str(), "signal", &o);
  ASSERT_NE(g_client, nullptr);
  // The documented precondition: the thread and both call sites have logged
  // outside a handler (first calls allocate and lock).
  LogMain(-1);
  LogFromHandler(-1);

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  struct sigaction old {};
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);

  pthread_t main_thread = pthread_self();
  std::atomic<int> progress{0};
  std::thread killer([&] {
    for (int s = 0; s < kSignals; s++) {
      // Paced by the main loop's progress, so the signals spread over it.
      while (progress.load(std::memory_order_relaxed) < s * (kMain / kSignals))
        std::this_thread::yield();
      pthread_kill(main_thread, SIGUSR1);
      // One signal at a time: a pending signal is not queued twice.
      while (g_handled.load(std::memory_order_acquire) <= s) std::this_thread::yield();
    }
  });
  for (int i = 0; i < kMain; i++) {
    LogMain(i);
    progress.store(i + 1, std::memory_order_relaxed);
  }
  killer.join();  // the last signals may be handled while waiting here
  ASSERT_EQ(sigaction(SIGUSR1, &old, nullptr), 0);
  ASSERT_EQ(g_handled.load(), kSignals);

  ASSERT_EQ(ls_flush(g_client), 0);
  ls_stats s = Stats(g_client);
  const uint64_t calls = uint64_t(kMain) + 1 + uint64_t(kSignals + 1) * kPerSignal;
  printf("calls %llu, sent %llu, dropped %llu\n", (unsigned long long)calls,
         (unsigned long long)s.sent, (unsigned long long)s.dropped);
  EXPECT_EQ(s.sent + s.dropped, calls) << "every call is either sent or counted as dropped";
  EXPECT_EQ(s.buffered_bytes, 0u);
  ls_close(g_client);
  g_client = nullptr;

  // ReadRing fails the test on any corruption the reader finds.
  auto v = WaitRing(daemon.ring, [&](const std::vector<OwnedRecord> &r) {
    return CountFmt(r, main_fmt) + CountFmt(r, handler_fmt) >= s.sent &&
           DroppedReported(r) >= s.dropped;
  });
  std::set<int> mains;
  std::set<std::pair<int, int>> handlers;
  int prev_main = -2;
  for (const auto &r : v) {
    if (r.dropped()) continue;
    auto args = DecodeArgs(r.fmt, r.args);
    ASSERT_TRUE(args.has_value()) << "arguments do not decode: " << r.fmt;
    if (r.fmt == main_fmt) {
      ASSERT_EQ(args->size(), 1u);
      int n = int(int64_t((*args)[0].u));
      ASSERT_GE(n, -1);
      ASSERT_LT(n, kMain);
      ASSERT_GT(n, prev_main) << "main records in order, each once";
      prev_main = n;
      mains.insert(n);
    } else if (r.fmt == handler_fmt) {
      ASSERT_EQ(args->size(), 3u);
      int run = int(int64_t((*args)[0].u)), i = int(int64_t((*args)[1].u));
      ASSERT_GE(run, -1);
      ASSERT_LT(run, kSignals);
      ASSERT_GE(i, 0);
      ASSERT_LT(i, kPerSignal);
      ASSERT_EQ(std::string(reinterpret_cast<const char *>((*args)[2].s), (*args)[2].len),
                kPadding);
      ASSERT_TRUE(handlers.insert({run, i}).second) << "handler record twice";
    } else {
      FAIL() << "a record of no call site of this test: " << r.fmt;
    }
  }
  EXPECT_EQ(mains.size() + handlers.size(), s.sent) << "what was counted as sent landed";
  EXPECT_EQ(DroppedReported(v), s.dropped) << "and the rest was reported as dropped";
}

TEST(ClientSignalTest, HandlerLoggingDuringALogCorruptsNothingAndCountsAddUp) {
  HandlerLoggingDuringALog(false);
}

TEST(ClientSignalTest, HandlerLoggingDuringAnLsFmtCorruptsNothingAndCountsAddUp) {
  HandlerLoggingDuringALog(true);
}

}  // namespace
}  // namespace logsink::test
