// spdlog_sink_bench.cc: for bench/spdlog_sink/run.sh. The same spdlog call,
// SPDLOG_LOGGER_INFO(lg, "user {} logged in from port {}", i, port), through
//   logsink       a spdlog::logger with logsink::spdlog_sink_mt (liblogsink's
//                 default options, into a running logsinkd), and
//   spdlog_async  spdlog's async logger (its queue of 8192, blocking when
//                 full, one worker thread) in front of basic_file_sink_mt,
//                 spdlog's own way to keep the caller off the disk,
// in one process, alternating.
//
//   spdlog_sink_bench SOCKET DIR CALLS REPS
//     per repetition both variants (which goes first alternates), CALLS
//     calls each, paced at one call per microsecond: bursts of 256 calls
//     (well inside liblogsink's thread buffer and spdlog's queue) run back
//     to back, timed in batches of 64 with CLOCK_MONOTONIC (the cost of an
//     empty timed region subtracted), then the thread sleeps, untimed, until
//     the schedule catches up. Prints "rep R VARIANT NS" per repetition: the
//     median batch mean, ns per call. Fails if liblogsink dropped a record or
//     spdlog's queue overran. The file sink writes DIR/spdlog.log.
#include <logsink/spdlog_sink.h>
#include <spdlog/async.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kBatch = 64, kBurst = 256;

uint64_t NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}
void SleepUntil(uint64_t t) {
  timespec ts = {time_t(t / 1000000000u), long(t % 1000000000u)};
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
}
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median ns per call of `calls` paced calls into lg; i counts calls.
double Timed(spdlog::logger *lg, uint64_t calls, double empty, uint64_t *i) {
  std::vector<double> means;
  const size_t nb = size_t(calls / kBatch);
  uint64_t next = NowNs();
  while (means.size() < nb) {
    for (int k = 0; k < kBurst / kBatch && means.size() < nb; k++) {
      const uint64_t t0 = NowNs();
      for (int j = 0; j < kBatch; j++, (*i)++)
        SPDLOG_LOGGER_INFO(lg, "user {} logged in from port {}", *i, int(*i & 0xffff));
      means.push_back((double(NowNs() - t0) - empty) / kBatch);
    }
    next += kBurst * 1000u;  // 1 call per us
    if (NowNs() < next) SleepUntil(next);
  }
  return Median(means);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: spdlog_sink_bench SOCKET DIR CALLS REPS\n");
    return 2;
  }
  const uint64_t calls = std::strtoull(argv[3], nullptr, 10);
  const int reps = std::atoi(argv[4]);

  ls_client *c = ls_open(argv[1], "spdlog_sink_bench", nullptr);
  if (!c || ls_flush(c) != 0) {
    std::fprintf(stderr, "spdlog_sink_bench: could not connect to %s\n", argv[1]);
    return 1;
  }
  spdlog::logger via_sink("bench", std::make_shared<logsink::spdlog_sink_mt>(c));
  auto pool = std::make_shared<spdlog::details::thread_pool>(8192, 1);
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(
      std::string(argv[2]) + "/spdlog.log", true);
  auto async = std::make_shared<spdlog::async_logger>("bench", file, pool,
                                                      spdlog::async_overflow_policy::block);

  std::vector<double> e;
  for (int k = 0; k < 1001; k++) {
    const uint64_t t0 = NowNs();
    e.push_back(double(NowNs() - t0));
  }
  const double empty = Median(e);
  uint64_t i_ls = 0, i_async = 0;
  Timed(&via_sink, calls / 4, empty, &i_ls);  // warm-up: sites made, buffers and queue touched
  Timed(async.get(), calls / 4, empty, &i_async);
  for (int r = 1; r <= reps; r++) {
    for (int k = 0; k < 2; k++) {
      const bool sink = (r + k) % 2;
      const double ns =
          sink ? Timed(&via_sink, calls, empty, &i_ls) : Timed(async.get(), calls, empty, &i_async);
      if (sink)
        via_sink.flush();
      else
        async->flush();  // posted to the worker
      std::printf("rep %d %s %.2f\n", r, sink ? "logsink" : "spdlog_async", ns);
      std::fflush(stdout);
    }
  }
  ls_flush(c);
  ls_stats s{};
  s.size = sizeof s;
  if (ls_get_stats(c, &s) != 0 || s.dropped || s.errors || s.logged != i_ls) {
    std::fprintf(stderr, "spdlog_sink_bench: logsink logged %llu of %llu, dropped %llu\n",
                 (unsigned long long)s.logged, (unsigned long long)i_ls,
                 (unsigned long long)s.dropped);
    return 1;
  }
  if (pool->overrun_counter() != 0) {
    std::fprintf(stderr, "spdlog_sink_bench: spdlog's queue overran %zu times\n",
                 pool->overrun_counter());
    return 1;
  }
  ls_close(c);  // the loggers, still alive, no longer log; the sink does not own c
  return 0;
}
