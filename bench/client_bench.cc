// client_bench.cc: the cost of one LS_LOG call (one int; int + double
// + short string) from 1 and 2 threads, median and p99.9 in ns, beside
// spdlog's async logger (file sink) logging the same message in the same run;
// a disabled call (debug, below the client's level info) beside spdlog's;
// then end to end: 10,000,000 records from one client process through a
// running logsinkd into the ring file (records/s, bytes on disk per record),
// beside spdlog async writing the same records as text lines to a file.
//
// The daemon is running for every LS_LOG measurement: the driver starts
// <bin>/logsinkd on a scratch socket and ring file.
//
// Per-call timing: the TSC (lfence; rdtsc; lfence), calibrated against
// CLOCK_MONOTONIC, minus the measured cost of an empty timed region. The TSC
// of this VM advances in ~10 ns steps, so
//   - the median comes from batches of 16 calls timed together (sample =
//     batch time / 16: ~1 ns resolution; a histogram of those means),
//   - p99 / p99.9 / max come from single calls timed one by one (exact tails,
//     10 ns quantization).
// Calls are paced (1 M calls/s per thread by default: calls run back to back
// and the thread sleeps, untimed, whenever it is ~200 us ahead of schedule;
// --pace=spin busy-waits after each sample instead, which on 2 vCPUs starves
// the consumers when 2 threads log) so that neither logger's consumer falls behind: an
// unpaced burst of 500k calls at ~20 ns each outruns logsink's sender (its
// default 256 KiB thread buffer fills and records are dropped, which is cheap
// and would flatter it) and spdlog's worker alike.
#include <logsink/logsink.h>
#include <spdlog/async.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench_util.h"
#include "common/daemon_process.h"
#include "logsink/storage/ring.h"

namespace {

using namespace logsink::bench;
namespace st = logsink::storage;

constexpr uint64_t kMiB = 1 << 20;

struct Config {
  bool smoke = false;
  int reps = 5;
  int64_t calls_per_thread = 500000;  // per repetition, per thread
  double pace_ns = 1000;              // one call per pace_ns per thread (1 M calls/s)
  uint64_t e2e_records = 10000000;
  uint64_t e2e_ring_size = 256 * kMiB;  // holds all 10M records: nothing is overwritten
  std::string bin_dir;
};
Config g_cfg;

// logsinkd from --bin-dir on sock and ring (tests/common's launcher: ready on
// its READY=1, stopped with SIGTERM and a deadline).
bool StartDaemon(logsink::test::DaemonProcess *d, const std::string &sock, const std::string &ring,
                 uint64_t size_bytes, std::string *err) {
  logsink::test::DaemonOptions o;
  o.bin = g_cfg.bin_dir + "/logsinkd";
  o.args = {"--socket", sock, "--file", ring, "--size", std::to_string(size_bytes)};
  return d->Start(o, err);
}
ScratchDir *g_dir = nullptr;
std::string g_sock;  // the per-call measurements' daemon

// ---- TSC ------------------------------------------------------------------
inline uint64_t Tsc() {
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}
double g_ns_per_tick = 1;
double g_overhead_ticks = 0;  // median of an empty timed region

void CalibrateTsc() {
  uint64_t n0 = NowNs(), t0 = Tsc();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  uint64_t n1 = NowNs(), t1 = Tsc();
  g_ns_per_tick = double(n1 - n0) / double(t1 - t0);
  std::vector<uint64_t> v(100000);
  for (auto &x : v) {
    uint64_t a = Tsc();
    uint64_t b = Tsc();
    x = b - a;
  }
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  g_overhead_ticks = double(v[v.size() / 2]);
}

double Percentile(std::vector<double> &v, double p) {
  if (v.empty()) return NAN;
  size_t k = std::min(v.size() - 1, size_t(p * double(v.size())));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

// Keeps the schedule of pace_ns per call: busy-waits until TSC `until`
// (--pace=spin), or (--pace=sleep, the default) lets calls run back to back and sleeps
// whenever the thread is more than ~200 us ahead of its schedule, leaving
// the CPU to the consumers (logsink's sender and logsinkd, spdlog's worker).
bool g_pace_sleep = true;
inline void PaceUntil(uint64_t until) {
  if (!g_pace_sleep) {
    while (__rdtsc() < until) _mm_pause();
    return;
  }
  uint64_t now = __rdtsc();
  if (until > now && double(until - now) * g_ns_per_tick > 200000)
    std::this_thread::sleep_for(
        std::chrono::nanoseconds(int64_t(double(until - now) * g_ns_per_tick)));
}
inline uint64_t PaceTicks(int calls) {
  return g_cfg.pace_ns > 0 ? uint64_t(g_cfg.pace_ns * calls / g_ns_per_tick) : 0;
}

// ---- the two loggers ---------------------------------------------------------
ls_client *g_client = nullptr;
std::shared_ptr<spdlog::details::thread_pool> g_spd_pool;
std::shared_ptr<spdlog::async_logger> g_spd;

enum class Who { kLogsink, kSpdlog };
enum class Msg { kInt, kThree };
const char *kStr = "tty-ssh0";  // the short string argument

inline void LogOne(Who who, Msg msg, int i) {
  if (who == Who::kLogsink) {
    if (msg == Msg::kInt)
      LS_LOG(g_client, LS_INFO, "user %d logged in.", i);
    else
      LS_LOG(g_client, LS_INFO, "user %d took %.3f ms on %s", i, i * 0.25, kStr);
  } else {
    if (msg == Msg::kInt)
      g_spd->info("user {} logged in.", i);
    else
      g_spd->info("user {} took {:.3f} ms on {}", i, i * 0.25, kStr);
  }
}

// Waits until both loggers have handed everything to their consumers, so a
// repetition does not start with the previous one's backlog.
void Drain() {
  if (g_client) ls_flush(g_client);
  if (g_spd_pool) {
    for (int i = 0; i < 10000 && g_spd_pool->queue_size() > 0; i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

uint64_t LsDropped() {
  ls_stats s;
  s.size = sizeof s;
  return ls_get_stats(g_client, &s) == 0 ? s.dropped : 0;
}

// One call per iteration, timed alone: the tails.
void BM_PerCall(benchmark::State &state, Who who, Msg msg) {
  std::vector<uint32_t> ticks(size_t(state.max_iterations));
  if (state.thread_index() == 0) Drain();
  uint64_t dropped0 = who == Who::kLogsink ? LsDropped() : 0;
  size_t n = 0;
  int i = int(state.thread_index()) * 100000000;
  const uint64_t pace = PaceTicks(1);
  uint64_t next = Tsc();
  for (auto _ : state) {
    uint64_t t0 = Tsc();
    LogOne(who, msg, i++);
    uint64_t t1 = Tsc();
    ticks[n++] = uint32_t(std::min<uint64_t>(t1 - t0, UINT32_MAX));
    next = std::max(next + pace, g_pace_sleep ? 0 : t1);
    PaceUntil(next);
  }
  std::vector<double> ns(n);
  for (size_t k = 0; k < n; k++)
    ns[k] = std::max(0.0, (ticks[k] - g_overhead_ticks) * g_ns_per_tick);
  auto avg = benchmark::Counter::kAvgThreads;
  state.counters["p50_ns"] = benchmark::Counter(Percentile(ns, 0.50), avg);
  state.counters["p99_ns"] = benchmark::Counter(Percentile(ns, 0.99), avg);
  state.counters["p999_ns"] = benchmark::Counter(Percentile(ns, 0.999), avg);
  state.counters["max_ns"] = benchmark::Counter(*std::max_element(ns.begin(), ns.end()), avg);
  if (who == Who::kLogsink && state.thread_index() == 0)
    state.counters["dropped"] = double(LsDropped() - dropped0);
}

// Sixteen calls per iteration, timed together: the median at ~1 ns resolution.
void BM_Batch(benchmark::State &state, Who who, Msg msg) {
  constexpr int kBatch = 16;
  std::vector<double> ns(size_t(state.max_iterations));
  if (state.thread_index() == 0) Drain();
  uint64_t dropped0 = who == Who::kLogsink ? LsDropped() : 0;
  size_t n = 0;
  int i = int(state.thread_index()) * 100000000;
  const uint64_t pace = PaceTicks(kBatch);
  uint64_t next = Tsc();
  for (auto _ : state) {
    uint64_t t0 = Tsc();
    for (int k = 0; k < kBatch; k++) LogOne(who, msg, i++);
    uint64_t t1 = Tsc();
    ns[n++] = std::max(0.0, (double(t1 - t0) - g_overhead_ticks) * g_ns_per_tick / kBatch);
    next = std::max(next + pace, g_pace_sleep ? 0 : t1);
    PaceUntil(next);
  }
  ns.resize(n);
  if (who == Who::kLogsink && state.thread_index() == 0)
    state.counters["dropped"] = double(LsDropped() - dropped0);
  auto avg = benchmark::Counter::kAvgThreads;
  state.counters["median_ns"] = benchmark::Counter(Percentile(ns, 0.50), avg);
  state.counters["p90_ns"] = benchmark::Counter(Percentile(ns, 0.90), avg);
}

// A disabled call: LS_LOG at debug from a client whose level is info,
// flat out (nothing reaches the sender). in_library: while another client
// of the process enables debug somewhere (a file rule), so the call goes
// into the library and its site's cached answer; else LS_LOG's own check
// skips it. Beside it spdlog's disabled call (its level is info).
ls_client *g_client_rules = nullptr;
void BM_Disabled(benchmark::State &state, Who who, bool in_library) {
  // 1024 calls per timed region: the TSC's ~10 ns steps are then ~0.01 ns
  // per call (16, as for enabled calls, quantizes a 2 ns call to 0.6 ns).
  constexpr int kBatch = 1024;
  if (in_library) {
    ls_options o;
    ls_options_init(&o);
    o.levels = "info,no-such-file.c=debug";
    g_client_rules = ls_open(g_sock.c_str(), "client_bench_rules", &o);
    if (!g_client_rules) {
      state.SkipWithError("ls_open failed");
      return;
    }
  }
  std::vector<double> ns(size_t(state.max_iterations));
  size_t n = 0;
  int i = 0;
  for (auto _ : state) {
    uint64_t t0 = Tsc();
    for (int k = 0; k < kBatch; k++, i++) {
      if (who == Who::kLogsink)
        LS_LOG(g_client, LS_DEBUG, "user %d logged in.", i);
      else
        g_spd->debug("user {} logged in.", i);
    }
    uint64_t t1 = Tsc();
    ns[n++] = std::max(0.0, (double(t1 - t0) - g_overhead_ticks) * g_ns_per_tick / kBatch);
  }
  ns.resize(n);
  state.counters["median_ns"] = Percentile(ns, 0.50);
  if (who == Who::kLogsink) state.counters["level_max"] = ls__level_max;
  if (g_client_rules) ls_close(g_client_rules);
  g_client_rules = nullptr;
}

// ---- end to end -------------------------------------------------------------
struct E2e {
  uint64_t in_file = 0;   // records in the ring (Summarize: newest - oldest + 1)
  uint64_t readable = 0;  // records of our site returned by RingReader::Next
  double bytes_per_record = 0;
};

// Records in the ring (by the Summary and by reading them all back), and the
// ring's bytes_used (block headers + entries) per record.
bool CountRing(const std::string &path, const char *fmt, E2e *out, std::string *err) {
  std::unique_ptr<st::RingReader> r;
  st::Status s = st::RingReader::Open(st::Env::Default(), path, nullptr, &r);
  st::RingReader::Summary sum;
  if (s.ok()) s = r->Summarize(&sum);
  if (s.ok()) s = r->SeekOldest();
  uint64_t all = 0, ours = 0;
  st::Record rec;
  while (s.ok() && (s = r->Next(&rec)).ok()) {
    all++;
    if (rec.kind == st::Record::Kind::kRecord && rec.site.fmt == fmt) ours++;
  }
  if (!s.ok() && s.code() != st::Status::Code::kNotFound) {
    *err = s.ToString();
    return false;
  }
  out->in_file = sum.newest_seq - sum.oldest_seq + 1;
  out->readable = ours;
  out->bytes_per_record = double(sum.bytes_used) / double(out->in_file);
  return true;
}

// Records in the ring now (the ring starts empty and does not wrap here):
// the newest record's sequence number + 1, found with SeekLast(1) (a binary
// search over block headers, not a scan, so polling it does not compete with
// the daemon for the CPU). 0 while the file has no record.
uint64_t RingRecordsNow(st::RingReader *r) {
  st::Record rec;
  if (!r->SeekLast(1).ok() || !r->Next(&rec).ok()) return 0;
  return rec.seq + 1;
}

// 10M records through a running logsinkd; timed from the first call until the
// ring file holds all of them (polled every ms, see RingRecordsNow). The
// daemon writes a partial block on its flush timer (default 100 ms), so the
// last records can take up to that long to appear: that is included.
void BM_E2eLogsink(benchmark::State &state) {
  const uint64_t n = g_cfg.e2e_records;
  for (auto _ : state) {
    std::string sock = g_dir->File("e2e.sock"), ring = g_dir->File("e2e.ring");
    unlink(ring.c_str());
    logsink::test::DaemonProcess d;
    std::string err;
    if (!StartDaemon(&d, sock, ring, g_cfg.e2e_ring_size, &err)) {
      state.SkipWithError(err.c_str());
      break;
    }
    ls_options o;
    ls_options_init(&o);
    // Default options: a full thread buffer waits while the daemon drains
    // (LS_BLOCK_WHILE_DRAINING), so the sustained rate is measured, nothing dropped.
    ls_client *c = ls_open(sock.c_str(), "client_bench", &o);
    if (!c) {
      state.SkipWithError("ls_open failed");
      break;
    }
    double d_cpu0 = logsink::test::ProcessCpuSeconds(d.pid()),
           c_cpu0 = logsink::test::ProcessCpuSeconds(getpid());
    uint64_t t0 = NowNs();
    for (uint64_t i = 0; i < n; i++) LS_LOG(c, LS_INFO, "user %d logged in.", int(i));
    ls_flush(c);
    // Closing, as a program that is done does: the daemon writes the open
    // block when it reads the EOF instead of at its next flush_interval.
    ls_stats cs;
    cs.size = sizeof cs;
    ls_get_stats(c, &cs);
    ls_close(c);
    uint64_t t_sent = NowNs(), t_end = t_sent;
    uint64_t last = 0, last_change = t_sent;
    std::unique_ptr<st::RingReader> reader;
    if (!st::RingReader::Open(st::Env::Default(), ring, nullptr, &reader).ok()) {
      state.SkipWithError("cannot open the daemon's ring file");
      break;
    }
    while (true) {
      uint64_t now_n = RingRecordsNow(reader.get());
      uint64_t now = NowNs();
      if (now_n >= n) {
        t_end = now;
        break;
      }
      if (now_n == 0 && now - t_sent > 5000000000ull) break;
      if (now_n != last) last = now_n, last_change = now;
      if (now - last_change > 5000000000ull) {  // no progress for 5 s: give up waiting
        t_end = last_change;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // CPU per record of the daemon and of this process (logging thread +
    // sender thread; the polling above is ~1 ms sleeps) over the timed part.
    double d_cpu = logsink::test::ProcessCpuSeconds(d.pid()) - d_cpu0,
           c_cpu = logsink::test::ProcessCpuSeconds(getpid()) - c_cpu0;
    d.Stop();
    E2e e;
    if (!CountRing(ring, "user %d logged in.", &e, &err)) {
      state.SkipWithError(err.c_str());
      break;
    }
    double dt = double(t_end - t0) / 1e9;
    state.SetIterationTime(dt);
    state.counters["records_per_s"] = double(e.in_file) / dt;
    state.counters["landed"] = double(e.in_file);
    state.counters["readable"] = double(e.readable);
    state.counters["client_dropped"] = double(cs.dropped);
    state.counters["bytes_per_record"] = e.bytes_per_record;
    state.counters["send_s"] = double(t_sent - t0) / 1e9;
    state.counters["daemon_cpu_ns_per_rec"] = d_cpu * 1e9 / double(n);
    state.counters["client_cpu_ns_per_rec"] = c_cpu * 1e9 / double(n);
    unlink(ring.c_str());
  }
}

// The same records through spdlog's async logger (default queue of 8192,
// blocking when full) into a text file; timed until the file is closed.
void BM_E2eSpdlog(benchmark::State &state) {
  const uint64_t n = g_cfg.e2e_records;
  for (auto _ : state) {
    std::string path = g_dir->File("e2e-spdlog.log");
    unlink(path.c_str());
    uint64_t t0 = NowNs();
    {
      auto pool = std::make_shared<spdlog::details::thread_pool>(8192, 1);
      auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, true);
      auto lg = std::make_shared<spdlog::async_logger>("e2e", sink, pool,
                                                       spdlog::async_overflow_policy::block);
      for (uint64_t i = 0; i < n; i++) lg->info("user {} logged in.", int(i));
      lg.reset();  // the pool's destructor drains the queue and joins the worker
      pool.reset();
    }
    double dt = double(NowNs() - t0) / 1e9;
    state.SetIterationTime(dt);
    struct stat sb;
    double size = stat(path.c_str(), &sb) == 0 ? double(sb.st_size) : 0;
    state.counters["records_per_s"] = double(n) / dt;
    state.counters["bytes_per_record"] = size / double(n);
    unlink(path.c_str());
  }
}

// ---- registration and report ----------------------------------------------------
std::string CallName(const char *kind, Who who, Msg msg) {
  return std::string("call/") + kind + "/" + (who == Who::kLogsink ? "logsink" : "spdlog") + "/" +
         (msg == Msg::kInt ? "int" : "int_double_str");
}

void Register() {
  for (Msg msg : {Msg::kInt, Msg::kThree}) {
    for (Who who : {Who::kLogsink, Who::kSpdlog}) {
      for (int threads : {1, 2}) {
        benchmark::RegisterBenchmark(
            (CallName("batch16", who, msg) + "/t" + std::to_string(threads)).c_str(), BM_Batch, who,
            msg)
            ->Threads(threads)
            ->Iterations(g_cfg.calls_per_thread / 16)
            ->Repetitions(g_cfg.reps)
            ->UseRealTime();
        benchmark::RegisterBenchmark(
            (CallName("percall", who, msg) + "/t" + std::to_string(threads)).c_str(), BM_PerCall,
            who, msg)
            ->Threads(threads)
            ->Iterations(g_cfg.calls_per_thread)
            ->Repetitions(g_cfg.reps)
            ->UseRealTime();
      }
    }
  }
  for (auto [name, who, in_library] :
       {std::tuple{"disabled/logsink", Who::kLogsink, false},
        std::tuple{"disabled/logsink_in_library", Who::kLogsink, true},
        std::tuple{"disabled/spdlog", Who::kSpdlog, false}})
    benchmark::RegisterBenchmark(name, BM_Disabled, who, in_library)
        ->Iterations(std::max<int64_t>(1, g_cfg.calls_per_thread / 1024))
        ->Repetitions(g_cfg.reps)
        ->UseRealTime();
  benchmark::RegisterBenchmark("e2e/logsink", BM_E2eLogsink)
      ->Iterations(1)
      ->Repetitions(g_cfg.reps)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("e2e/spdlog_async", BM_E2eSpdlog)
      ->Iterations(1)
      ->Repetitions(g_cfg.reps)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

bool Target(const char *what, double v, double goal, bool higher, const char *unit) {
  bool ok = !std::isnan(v) && (higher ? v >= goal : v <= goal);
  printf("  [%s] %s: measured %.3g%s, target %s %.3g%s\n", ok ? "MET" : "MISSED", what, v, unit,
         higher ? ">=" : "<=", goal, unit);
  return ok;
}

void PrintTables(const CollectingReporter &rep) {
  // Thread-count suffix: GB appends "/threads:N" to the run name but not to
  // function_name, which is what the reporter keys on.
  auto med = [&](const char *kind, Who w, Msg m, int t, const char *c) {
    return rep.Median(CallName(kind, w, m) + "/t" + std::to_string(t), c);
  };
  printf("\n== client_bench: medians of %d repetitions; %lld calls per thread per repetition ==\n",
         g_cfg.reps, (long long)g_cfg.calls_per_thread);
  printf("TSC: %.3f ns/tick, empty timed region %.0f ticks (subtracted). logsinkd running.\n",
         g_ns_per_tick, g_overhead_ticks);
  printf(
      "median: batches of 16 calls; p99/p99.9: single calls. spdlog: async logger, "
      "basic_file_sink_mt,\n"
      "queue 2^20 (never full within a repetition), 1 worker. logsink: default options "
      "(paced, the\nbuffer never fills).\n"
      "Calls are paced at one per %.0f ns per thread (%s; 0 = unpaced bursts with 16 MiB\n"
      "LS thread buffers) so neither logger's consumer falls behind; LS drop must be 0 for a\n"
      "fair row.\n\n",
      g_cfg.pace_ns, g_pace_sleep ? "untimed sleeps when ahead" : "untimed spin after each sample");
  printf("%-16s %3s | %9s %9s %9s %8s | %9s %9s %9s | %s\n", "message", "thr", "LS med", "LS p99",
         "LS p99.9", "LS drop", "spd med", "spd p99", "spd p99.9", "spdlog/LS (median)");
  for (Msg m : {Msg::kInt, Msg::kThree}) {
    for (int t : {1, 2}) {
      double lm = med("batch16", Who::kLogsink, m, t, "median_ns"),
             lp99 = med("percall", Who::kLogsink, m, t, "p99_ns"),
             lp = med("percall", Who::kLogsink, m, t, "p999_ns"),
             ld = med("percall", Who::kLogsink, m, t, "dropped") +
                  med("batch16", Who::kLogsink, m, t, "dropped"),
             sm = med("batch16", Who::kSpdlog, m, t, "median_ns"),
             sp99 = med("percall", Who::kSpdlog, m, t, "p99_ns"),
             sp = med("percall", Who::kSpdlog, m, t, "p999_ns");
      printf("%-16s %3d | %9.1f %9.0f %9.0f %8.0f | %9.1f %9.0f %9.0f | %s\n",
             m == Msg::kInt ? "int" : "int,double,str", t, lm, lp99, lp, ld, sm, sp99, sp,
             Ratio(sm / lm).c_str());
    }
  }
  const double dis = rep.Median("disabled/logsink", "median_ns"),
               dis_lib = rep.Median("disabled/logsink_in_library", "median_ns"),
               dis_spd = rep.Median("disabled/spdlog", "median_ns");
  printf(
      "\nA disabled call (LS_LOG at debug, client level info; spdlog->debug at its level info),\n"
      "flat out, median of batches of 1024:\n"
      "  LS_LOG skipped by its own check (no client enables debug): %.2f ns (level_max %.0f)\n"
      "  LS_LOG into the library (another client enables debug in a file): %.2f ns\n"
      "  spdlog: %.2f ns; spdlog/LS_LOG %s\n",
      dis, rep.Median("disabled/logsink", "level_max"), dis_lib, dis_spd,
      Ratio(dis_spd / dis).c_str());
  double e_ls = rep.Median("e2e/logsink", "records_per_s"),
         e_sp = rep.Median("e2e/spdlog_async", "records_per_s"),
         b_ls = rep.Median("e2e/logsink", "bytes_per_record"),
         b_sp = rep.Median("e2e/spdlog_async", "bytes_per_record"),
         landed = rep.Min("e2e/logsink", "landed"), readable = rep.Min("e2e/logsink", "readable");
  printf(
      "\nEnd to end: %llu records \"user %%d logged in.\", one client process (default options)\n"
      "-> logsinkd -> ring file (%llu MiB); timed until all are in the file.\n",
      (unsigned long long)g_cfg.e2e_records, (unsigned long long)(g_cfg.e2e_ring_size >> 20));
  printf("%-26s | %12s | %14s | %s\n", "", "records/s", "bytes/record", "landed (min)");
  printf("%-26s | %12s | %14.2f | %.0f in the file; %.0f read back by RingReader::Next\n",
         "logsink (ring, binary)", Si(e_ls).c_str(), b_ls, landed, readable);
  printf("%-26s | %12s | %14.2f | all (blocking)\n", "spdlog async (text file)", Si(e_sp).c_str(),
         b_sp);
  printf("ratio logsink/spdlog: %s records/s, %s fewer bytes per record\n",
         Ratio(e_ls / e_sp).c_str(), Ratio(b_sp / b_ls).c_str());
  printf(
      "logsink CPU per record (timed part, /proc): daemon %.0f ns, client process %.0f ns\n"
      "(logging thread + sender; 2 vCPUs shared by both processes and other work)\n",
      rep.Median("e2e/logsink", "daemon_cpu_ns_per_rec"),
      rep.Median("e2e/logsink", "client_cpu_ns_per_rec"));

  printf("\nTargets:\n");
  Target("LS_LOG median, 1 thread, one int",
         med("batch16", Who::kLogsink, Msg::kInt, 1, "median_ns"), 40, false, " ns");
  Target("spdlog async / LS_LOG at the median (1 thread, one int)",
         med("batch16", Who::kSpdlog, Msg::kInt, 1, "median_ns") /
             med("batch16", Who::kLogsink, Msg::kInt, 1, "median_ns"),
         10, true, "x");
  Target("end-to-end records/s", e_ls, 5e6, true, "");
  Target("a disabled LS_LOG", dis, 2, false, " ns");
  Target("bytes on disk per record", b_ls, 16, false, " B");
  printf("Tighter targets:\n");
  Target("LS_LOG median, 1 thread, one int",
         med("batch16", Who::kLogsink, Msg::kInt, 1, "median_ns"), 25, false, " ns");
  Target("end-to-end records/s from one thread, default options", e_ls, 10e6, true, "");
}

// Our flags: --smoke, --reps=N, --pace-ns=NS (0: unpaced bursts with big
// buffers), --pace=sleep|spin, --bin-dir DIR (where logsinkd is; default: this program's
// directory).
void ParseOwnFlags(int *argc, char **argv) {
  TakeOwnFlags(argc, argv, &g_cfg.smoke, &g_cfg.reps, [&](const std::string &a, int *i) {
    if (a == "--pace=sleep" || a == "--pace=spin") {
      g_pace_sleep = a == "--pace=sleep";
    } else if (a.rfind("--pace-ns=", 0) == 0) {
      g_cfg.pace_ns = atof(a.c_str() + 10);
    } else if (a == "--bin-dir" && *i + 1 < *argc) {
      g_cfg.bin_dir = argv[++*i];
    } else {
      return false;
    }
    return true;
  });
  if (g_cfg.bin_dir.empty()) {
    std::error_code ec;
    g_cfg.bin_dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path().string();
  }
  if (g_cfg.smoke) {
    g_cfg.reps = 1;
    g_cfg.calls_per_thread = 20000;
    g_cfg.e2e_records = 200000;
    g_cfg.e2e_ring_size = 16 * kMiB;
  }
}

}  // namespace

int main(int argc, char **argv) {
  ParseOwnFlags(&argc, argv);
  ScratchDir dir;
  if (!InitBench("client_bench", &argc, argv, dir)) return 1;
  g_dir = &dir;
  CalibrateTsc();

  // The daemon for the per-call measurements, and the two loggers.
  logsink::test::DaemonProcess daemon;
  std::string err, sock = dir.File("calls.sock");
  if (!StartDaemon(&daemon, sock, dir.File("calls.ring"), 256 * kMiB, &err)) {
    fprintf(stderr, "client_bench: %s\n", err.c_str());
    return 1;
  }
  // Default options (256 KiB thread buffers). Calls are paced
  // (see PaceUntil) so the sender keeps up: the table's LS drop column proves
  // it. --pace-ns=0 (burst mode) gives both loggers room for a whole
  // repetition instead: 16 MiB thread buffers here, spdlog's 2^20 queue.
  ls_options o;
  ls_options_init(&o);
  if (g_cfg.pace_ns <= 0) {
    o.thread_buffer_bytes = size_t(16) << 20;
    o.max_buffered_bytes = size_t(64) << 20;
  }
  // Level info: the disabled calls (BM_Disabled) are at debug; every call
  // measured enabled is at info.
  o.level = LS_INFO;
  g_sock = sock;
  g_client = ls_open(sock.c_str(), "client_bench", &o);
  // The default client, opened at info too: until it is open it counts as
  // what it would log (everything, without $LOGSINK_LEVEL), and LS_LOG's
  // own check would let every debug call into the library.
  if (ls_default_open(sock.c_str(), "client_bench", &o) != 0) {
    fprintf(stderr, "client_bench: ls_default_open failed\n");
    return 1;
  }
  if (!g_client) {
    fprintf(stderr, "client_bench: ls_open: %s\n", strerror(errno));
    return 1;
  }
  g_spd_pool = std::make_shared<spdlog::details::thread_pool>(1 << 20, 1);
  g_spd = std::make_shared<spdlog::async_logger>(
      "calls", std::make_shared<spdlog::sinks::basic_file_sink_mt>(dir.File("calls.log"), true),
      g_spd_pool, spdlog::async_overflow_policy::block);

  Register();
  CollectingReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  ls_close(g_client);
  g_client = nullptr;
  g_spd.reset();
  g_spd_pool.reset();
  daemon.Stop();
  PrintTables(rep);
  benchmark::Shutdown();
  return 0;
}
