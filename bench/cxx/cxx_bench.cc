// cxx_bench.cc: for bench/cxx/run.sh. The same record through the C API and
// the C++ API, into a running logsinkd, and the parts of the C++ call:
//   c      LS_LOG(c, LS_INFO, "user %s req %d took %.3f s", user, req, secs)
//   cxx    LS_FMT(c, LS_INFO, "user {} req {} took {:.3f} s", user, req, secs)
//   text   LS_FMT(c, LS_INFO, "user login")      (stamp + publish, no arguments)
//   clock  rdtsc                                  (a record's timestamp alone:
//                                                  liblogsink's stamp on x86)
// So per call: copy = cxx - text, publish = text - clock, clock = clock.
//
//   cxx_bench SOCKET CALLS REPS
//     per repetition every variant (the order rotating), CALLS calls each,
//     paced at one call per microsecond: bursts of 256 calls (well inside a
//     256 KiB thread buffer) timed in batches of 64 with CLOCK_MONOTONIC
//     (an empty timed region's cost subtracted), then an untimed sleep
//     until the schedule catches up. Prints "rep R VARIANT NS": the median
//     batch mean, ns per call. Fails if the client dropped a record.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <logsink/logsink.hpp>
#include <string>
#include <vector>

namespace {

constexpr int kBatch = 64, kBurst = 256;
const char *const kUsers[] = {"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"};
const char *const kVariants[] = {"c", "cxx", "text", "clock"};

uint64_t NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

uint64_t g_sink;  // keeps the clock variant's reads

void Batch(ls_client *c, int variant, uint64_t *i) {
  for (int k = 0; k < kBatch; k++, (*i)++) {
    const char *user = kUsers[*i & 7];
    const int req = int(*i);
    const double secs = double(*i & 1023) * 0.001;
    switch (variant) {
      case 0:
        LS_LOG(c, LS_INFO, "user %s req %d took %.3f s", user, req, secs);
        break;
      case 1:
        LS_FMT(c, LS_INFO, "user {} req {} took {:.3f} s", user, req, secs);
        break;
      case 2:
        LS_FMT(c, LS_INFO, "user login");
        break;
      default:
#if defined(__x86_64__) || defined(__i386__)
        g_sink += __builtin_ia32_rdtsc();
#else
        timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        g_sink += uint64_t(t.tv_nsec);
#endif
        break;
    }
  }
}

double Timed(ls_client *c, int variant, uint64_t calls, double empty) {
  const size_t nb = size_t(calls / kBatch);
  std::vector<double> means(nb);
  uint64_t i = 0, next = NowNs();
  size_t b = 0;
  while (b < nb) {
    for (int k = 0; k < kBurst / kBatch && b < nb; k++, b++) {
      const uint64_t t0 = NowNs();
      Batch(c, variant, &i);
      means[b] = (double(NowNs() - t0) - empty) / kBatch;
    }
    next += kBurst * 1000u;  // 1 call per us
    if (NowNs() < next) {
      timespec ts = {time_t(next / 1000000000u), long(next % 1000000000u)};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    }
  }
  return Median(means);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: cxx_bench SOCKET CALLS REPS\n");
    return 2;
  }
  ls_client *c = ls_open(argv[1], "cxx_bench", nullptr);
  if (!c || ls_flush(c) != 0) {
    std::fprintf(stderr, "cxx_bench: could not connect to %s\n", argv[1]);
    return 1;
  }
  const uint64_t calls = std::strtoull(argv[2], nullptr, 10);
  const int reps = std::atoi(argv[3]);
  std::vector<double> e(1001);
  for (double &x : e) {
    const uint64_t t0 = NowNs();
    x = double(NowNs() - t0);
  }
  const double empty = Median(e);
  for (int v = 0; v < 4; v++) Timed(c, v, calls / 4, empty);  // warm-up: sites interned
  for (int r = 1; r <= reps; r++) {
    for (int k = 0; k < 4; k++) {
      const int v = (r + k) % 4;  // rotate which goes first
      const double ns = Timed(c, v, calls, empty);
      ls_flush(c);
      std::printf("rep %d %s %.2f\n", r, kVariants[v], ns);
      std::fflush(stdout);
    }
  }
  ls_stats s;
  std::memset(&s, 0, sizeof s);
  s.size = sizeof s;
  if (ls_get_stats(c, &s) != 0 || s.dropped || s.errors) {
    std::fprintf(stderr, "cxx_bench: dropped %llu, errors %llu\n",
                 static_cast<unsigned long long>(s.dropped),
                 static_cast<unsigned long long>(s.errors));
    return 1;
  }
  ls_close(c);
  return g_sink == 1 ? 3 : 0;
}
