// ring_bench.cc: writing ~25-byte messages through storage's
// RingWriter (real record encoding + CRC32C + pwrite of 8 KiB blocks) side by
// side with Logger4 (bench/logger4.h, the shifting fixed-size text log of the
// published post) in the same run, on a fresh 100 KiB file (the post's table)
// and in the steady state of a full rolling log of 1 MiB .. 1 GiB. Prints
// messages/s for both and the ratio per row, then checks its targets.
//
// The message: "user %d logged in." with an 8-digit int (10000000 + k).
//   Logger4 gets the text "user 10000123 logged in." + '\n' = 25 bytes.
//   ring(int): site "user %d logged in." interned once, the record carries the
//              int (zigzag varint, 4 bytes): 9 bytes per entry.
//   ring(str): site "%s", the record carries the same 24-byte text as a string
//              argument (formatted per message like Logger4's): 30 bytes per entry.
// Neither reads a clock per message (Logger4's line has no timestamp): ring
// records get a synthetic timestamp advancing 1 us per message.
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "logger4.h"
#include "logsink/proto/codec.h"
#include "logsink/storage/ring.h"

namespace {

using namespace logsink::bench;
namespace st = logsink::storage;

constexpr uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;
constexpr uint64_t kFreshFileSize = 100 * kKiB;  // the post's "100 KB" file

struct Config {
  bool smoke = false;
  int reps = 5;                   // repetitions of every row (median reported)
  int logger4_steady_reps = 3;    // Logger4 steady-state rows are slow: fewer
  double logger4_budget_s = 5;    // a Logger4 steady run stops here and extrapolates
  double limit_s = 60;            // runs estimated above this are reported as "> 60 s"
  uint8_t codec = LS_CODEC_ZSTD;  // --codec: how the ring stores blocks
  std::vector<uint64_t> fresh_counts{100, 1000, 10000, 100000};
  uint64_t steady_msgs = 1000000;
  std::vector<uint64_t> steady_sizes{1 * kMiB, 16 * kMiB, 64 * kMiB, 1 * kGiB};
};

Config g_cfg;
ScratchDir *g_dir = nullptr;

enum class Kind { kLogger4, kRingInt, kRingStr };
const char *KindName(Kind k) {
  switch (k) {
    case Kind::kLogger4:
      return "logger4";
    case Kind::kRingInt:
      return "ring_int";
    case Kind::kRingStr:
      return "ring_str";
  }
  return "?";
}

// The int of message k: always 8 digits (a mask, not a modulo: no division
// in the timed loop).
inline uint64_t MsgInt(uint64_t k) { return 10000000 + (k & 0x3ffffff); }

// Writes "user <8 digits> logged in." (24 bytes) into buf; returns its length.
inline size_t FormatMsg(char *buf, uint64_t k) {
  std::memcpy(buf, "user ", 5);
  char *p = std::to_chars(buf + 5, buf + 16, MsgInt(k)).ptr;
  std::memcpy(p, " logged in.", 11);
  return size_t(p + 11 - buf);
}

// A RingWriter plus the source and site a record needs.
class RingSink {
 public:
  st::Status Open(const std::string &path, uint64_t size, bool str) {
    str_ = str;
    st::WriterOptions o;
    o.file_size = size;
    o.codec = g_cfg.codec;
    st::Status s = st::RingWriter::Open(st::Env::Default(), path, o, &w_);
    if (!s.ok()) return s;
    src_ = st::Source{w_->next_source_id(), uint32_t(getpid()), getuid(), getgid(),
                      "ring_bench",         "ring_bench"};
    st::Site site{6, 42, str ? "%s" : "user %d logged in.", "bench/ring_bench.cc"};
    site_id_ = w_->Intern(site);
    if (site_id_ == 0) return st::Status::IOError("Intern returned 0 (string table full)");
    return st::Status::OK();
  }

  st::Status Log(uint64_t k) {
    uint8_t args[40];
    size_t n;
    if (str_) {
      size_t len = FormatMsg(reinterpret_cast<char *>(args) + 1, k);
      args[0] = uint8_t(len);  // varint of a length < 128
      n = len + 1;
    } else {
      n = ls_put_varint(args, ls_zigzag(int64_t(MsgInt(k))));
    }
    st::RecordIn r;
    r.source = &src_;
    r.tid = 1;
    r.site_id = site_id_;
    r.signature = str_ ? "s" : "i";
    r.ts_ns = ts_ += 1000;
    r.args = args;
    r.args_len = n;
    return w_->Append(r);
  }

  st::RingWriter *writer() { return w_.get(); }
  void Close() { w_.reset(); }

 private:
  std::unique_ptr<st::RingWriter> w_;
  st::Source src_;
  uint32_t site_id_ = 0;
  bool str_ = false;
  uint64_t ts_ = 1700000000000000000ull;
};

// Records present in a ring file now (newest - oldest + 1), or -1.
double RingRecordsKept(const std::string &path) {
  std::unique_ptr<st::RingReader> r;
  if (!st::RingReader::Open(st::Env::Default(), path, nullptr, &r).ok()) return -1;
  st::RingReader::Summary sum;
  if (!r->Summarize(&sum).ok()) return -1;
  return double(sum.newest_seq - sum.oldest_seq + 1);
}

uint64_t FileSize(const std::string &path) {
  struct stat sb;
  return stat(path.c_str(), &sb) == 0 ? uint64_t(sb.st_size) : 0;
}

std::string FreshName(Kind k, uint64_t n) {
  return std::string("fresh/") + KindName(k) + "/" + std::to_string(n);
}
std::string SteadyName(Kind k, uint64_t size) {
  return std::string("steady/") + KindName(k) + "/" + std::to_string(size >> 20) + "MiB";
}

// The post's table: n messages into a fresh 100 KiB file. Timed: create/open,
// n messages, final flush, close (for both). The file is removed untimed.
void BM_Fresh(benchmark::State &state, Kind kind, uint64_t n) {
  std::string path = g_dir->File(std::string("fresh-") + KindName(kind));
  double total_s = 0, open_s = 0, cpu_s = 0, kept = 0;
  uint64_t total = 0;
  for (auto _ : state) {
    unlink(path.c_str());
    uint64_t c0 = ThreadCpuNs();
    uint64_t t0 = NowNs();
    if (kind == Kind::kLogger4) {
      Logger4 l(path, kFreshFileSize);
      char buf[32];
      for (uint64_t i = 0; i < n; i++) l.Log({buf, FormatMsg(buf, i)});
      l.Flush();
      if (!l.ok()) {
        state.SkipWithError("Logger4 I/O failed");
        break;
      }
    } else {
      RingSink s;
      st::Status status = s.Open(path, kFreshFileSize, kind == Kind::kRingStr);
      open_s += double(NowNs() - t0) / 1e9;
      for (uint64_t i = 0; status.ok() && i < n; i++) status = s.Log(i);
      if (status.ok()) status = s.writer()->Flush();
      if (!status.ok()) {
        state.SkipWithError(status.ToString().c_str());
        break;
      }
      s.Close();
    }
    double dt = double(NowNs() - t0) / 1e9;
    cpu_s += double(ThreadCpuNs() - c0) / 1e9;
    state.SetIterationTime(dt);
    total_s += dt;
    total += n;
  }
  // Untimed: how many messages the 100 KiB file holds now.
  if (kind == Kind::kLogger4) {
    uint64_t size = FileSize(path);
    kept = double(size / 25);
    if (size > kFreshFileSize) state.SkipWithError("Logger4 file grew past its maximum");
  } else {
    kept = RingRecordsKept(path);
  }
  unlink(path.c_str());
  state.counters["msgs_per_s"] = total_s > 0 ? double(total) / total_s : 0;
  state.counters["cpu_msgs_per_s"] = cpu_s > 0 ? double(total) / cpu_s : 0;
  // Ring only: the same without RingWriter::Open (create + fallocate + fdatasync).
  if (kind != Kind::kLogger4 && total_s > open_s)
    state.counters["msgs_per_s_no_open"] = double(total) / (total_s - open_s);
  state.counters["kept"] = kept;
}

// One full rolling log, kept open across the repetitions of its row.
struct Steady {
  std::string path;
  std::unique_ptr<Logger4> logger4;
  RingSink ring;
  uint64_t next = 0;  // message counter
  int runs = 0;
  double prefill_s = 0;
};
std::map<std::string, Steady> g_steady;

// Fills the log until it is full (untimed): Logger4 until its first shift,
// the ring until every slot has been written once.
st::Status Prefill(Kind kind, uint64_t size, Steady *s) {
  uint64_t t0 = NowNs();
  if (kind == Kind::kLogger4) {
    s->logger4 = std::make_unique<Logger4>(s->path, size);
    char buf[32];
    while (s->logger4->ok() && s->logger4->bytes_moved() == 0) {
      s->logger4->Log({buf, FormatMsg(buf, s->next++)});
    }
    if (!s->logger4->ok()) return st::Status::IOError("Logger4 prefill failed");
  } else {
    st::Status status = s->ring.Open(s->path, size, kind == Kind::kRingStr);
    if (!status.ok()) return status;
    uint64_t blocks = s->ring.writer()->layout().block_count;
    while (status.ok() && s->ring.writer()->current_block_seq() < blocks) {
      status = s->ring.Log(s->next++);
    }
    if (!status.ok()) return status;
  }
  s->prefill_s = double(NowNs() - t0) / 1e9;
  return st::Status::OK();
}

// Steady state: steady_msgs messages into an already full log of `size`
// bytes, ending with a flush. Logger4 runs stop at logger4_budget_s and report
// the rate measured so far (its cost per message is the same for every flush
// once full, so the rate extrapolates linearly); est_s is the full run's time.
void BM_Steady(benchmark::State &state, Kind kind, uint64_t size, int reps) {
  std::string name = SteadyName(kind, size);
  Steady &s = g_steady[name];
  if (s.path.empty()) {
    s.path = g_dir->File(std::string("steady-") + KindName(kind));
    unlink(s.path.c_str());
    st::Status status = Prefill(kind, size, &s);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      return;
    }
  }
  const uint64_t msgs = g_cfg.steady_msgs;
  uint64_t done = 0;
  double dt = 0, cpu = 0;
  for (auto _ : state) {
    uint64_t c0 = ThreadCpuNs();
    uint64_t t0 = NowNs();
    if (kind == Kind::kLogger4) {
      const uint64_t deadline = t0 + uint64_t(g_cfg.logger4_budget_s * 1e9);
      char buf[32];
      for (done = 0; done < msgs; done++) {
        s.logger4->Log({buf, FormatMsg(buf, s.next++)});
        if ((done & 255) == 255 && NowNs() > deadline) {
          done++;
          break;
        }
      }
      s.logger4->Flush();
      if (!s.logger4->ok()) state.SkipWithError("Logger4 I/O failed");
    } else {
      st::Status status;
      for (done = 0; status.ok() && done < msgs; done++) status = s.ring.Log(s.next++);
      if (status.ok()) status = s.ring.writer()->Flush();
      if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    }
    dt = double(NowNs() - t0) / 1e9;
    cpu = double(ThreadCpuNs() - c0) / 1e9;
    state.SetIterationTime(dt);
  }
  state.counters["msgs_per_s"] = dt > 0 ? double(done) / dt : 0;
  state.counters["cpu_msgs_per_s"] = cpu > 0 ? double(done) / cpu : 0;
  state.counters["est_s"] = done ? dt * double(msgs) / double(done) : 0;
  state.counters["partial"] = done < msgs ? 1 : 0;
  state.counters["prefill_s"] = s.prefill_s;
  if (++s.runs == reps) {  // last repetition of this row: record and clean up
    if (kind == Kind::kLogger4) {
      state.counters["kept"] = double(s.logger4->file_size() / 25);
      s.logger4.reset();
    } else {
      s.ring.writer()->Flush();
      s.ring.Close();
      state.counters["kept"] = RingRecordsKept(s.path);
    }
    unlink(s.path.c_str());
    g_steady.erase(name);
  }
}

void Register() {
  const Kind kinds[] = {Kind::kLogger4, Kind::kRingInt, Kind::kRingStr};
  for (uint64_t n : g_cfg.fresh_counts) {
    for (Kind k : kinds) {
      benchmark::RegisterBenchmark(FreshName(k, n).c_str(), BM_Fresh, k, n)
          ->UseManualTime()
          ->MinTime(g_cfg.smoke ? 0.01 : 0.2)
          ->Repetitions(g_cfg.reps)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  for (uint64_t size : g_cfg.steady_sizes) {
    for (Kind k : kinds) {
      int reps = k == Kind::kLogger4 ? g_cfg.logger4_steady_reps : g_cfg.reps;
      benchmark::RegisterBenchmark(SteadyName(k, size).c_str(), BM_Steady, k, size, reps)
          ->UseManualTime()
          ->Iterations(1)
          ->Repetitions(reps)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

bool g_all_met = true;
void Target(const char *what, double measured, double goal, bool higher_is_better,
            const char *unit) {
  bool ok = !std::isnan(measured) && (higher_is_better ? measured >= goal : measured <= goal);
  if (!ok) g_all_met = false;
  printf("  [%s] %s: measured %.3g%s, target %s %.3g%s\n", ok ? "MET" : "MISSED", what, measured,
         unit, higher_is_better ? ">=" : "<=", goal, unit);
}

void PrintTables(const CollectingReporter &rep) {
  auto rate = [&](const std::string &n) { return rep.Median(n, "msgs_per_s"); };
  auto kept = [&](const std::string &n) { return rep.Max(n, "kept"); };
  printf("\n== ring_bench: medians of %d repetitions (Logger4 steady state: %d) ==\n", g_cfg.reps,
         g_cfg.logger4_steady_reps);
  printf(
      "message: \"user %%d logged in.\" = 25 bytes of text per line for Logger4;\n"
      "ring(int) stores the int (9 B/entry), ring(str) the 24-byte text as %%s (30 B/entry).\n");
  st::Layout lay;
  st::Layout::Compute(kFreshFileSize, 8192, 0, &lay);
  printf(
      "\nFresh %llu KiB file. Ring fixed overhead: superblocks %llu KiB + string table %llu KiB"
      " -> %u blocks x 8 KiB = %llu KiB for records.\n"
      "Timed: create/open + N messages + flush + close, both. RingWriter::Open of a new file\n"
      "includes posix_fallocate and an fdatasync; \"w/o Open\" excludes it (ring(int) only).\n",
      (unsigned long long)(kFreshFileSize / kKiB), 8ull,
      (unsigned long long)(lay.strtab_size / kKiB), lay.block_count,
      (unsigned long long)(lay.capacity() / kKiB));
  printf("%9s | %14s | %14s %8s | %14s %8s | %18s | %s\n", "messages", "Logger4 msg/s", "ring(int)",
         "ratio", "ring(str)", "ratio", "int w/o Open ratio", "msgs kept: L4 / int / str");
  for (uint64_t n : g_cfg.fresh_counts) {
    double l4 = rate(FreshName(Kind::kLogger4, n)), ri = rate(FreshName(Kind::kRingInt, n)),
           rs = rate(FreshName(Kind::kRingStr, n));
    double rio = rep.Median(FreshName(Kind::kRingInt, n), "msgs_per_s_no_open");
    printf("%9llu | %14s | %14s %8s | %14s %8s | %9s %8s | %s / %s / %s\n", (unsigned long long)n,
           Si(l4).c_str(), Si(ri).c_str(), Ratio(ri / l4).c_str(), Si(rs).c_str(),
           Ratio(rs / l4).c_str(), Si(rio).c_str(), Ratio(rio / l4).c_str(),
           Si(kept(FreshName(Kind::kLogger4, n))).c_str(),
           Si(kept(FreshName(Kind::kRingInt, n))).c_str(),
           Si(kept(FreshName(Kind::kRingStr, n))).c_str());
  }
  printf(
      "\nSteady state: %llu messages into a full file (prefilled untimed), ending with a flush.\n"
      "Logger4 runs stop after %.0f s and report the rate so far (est = projected full run).\n",
      (unsigned long long)g_cfg.steady_msgs, g_cfg.logger4_budget_s);
  printf("%9s | %24s | %14s %8s | %14s %8s\n", "file", "Logger4 msg/s (est run)", "ring(int)",
         "ratio", "ring(str)", "ratio");
  for (uint64_t size : g_cfg.steady_sizes) {
    std::string l4n = SteadyName(Kind::kLogger4, size);
    double l4 = rate(l4n), ri = rate(SteadyName(Kind::kRingInt, size)),
           rs = rate(SteadyName(Kind::kRingStr, size));
    double est = rep.Median(l4n, "est_s");
    char l4s[64];
    if (std::isnan(l4))
      snprintf(l4s, sizeof l4s, "-");
    else if (est > g_cfg.limit_s)
      snprintf(l4s, sizeof l4s, "%s (> %.0f s: ~%.0f s)", Si(l4).c_str(), g_cfg.limit_s, est);
    else
      snprintf(l4s, sizeof l4s, "%s (%.2f s)", Si(l4).c_str(), est);
    char sz[16];
    snprintf(sz, sizeof sz, size >= kGiB ? "%llu GiB" : "%llu MiB",
             (unsigned long long)(size >= kGiB ? size / kGiB : size / kMiB));
    printf("%9s | %24s | %14s %8s | %14s %8s\n", sz, l4s, Si(ri).c_str(), Ratio(ri / l4).c_str(),
           Si(rs).c_str(), Ratio(rs / l4).c_str());
  }

  // The same rows by thread CPU time (user + system of the logging thread; both
  // loggers do all their work on it): robust to other processes taking the
  // shared vCPUs, but blind to I/O waits.
  auto cpu = [&](const std::string &n) { return rep.Median(n, "cpu_msgs_per_s"); };
  printf("\nSame rows by thread CPU time (msgs per CPU-second of the logging thread):\n");
  printf("%-16s | %14s | %14s %8s | %14s %8s\n", "row", "Logger4", "ring(int)", "ratio",
         "ring(str)", "ratio");
  auto cpu_row = [&](const std::string &label, const std::string &l4n, const std::string &rin,
                     const std::string &rsn) {
    double l4 = cpu(l4n), ri = cpu(rin), rs = cpu(rsn);
    printf("%-16s | %14s | %14s %8s | %14s %8s\n", label.c_str(), Si(l4).c_str(), Si(ri).c_str(),
           Ratio(ri / l4).c_str(), Si(rs).c_str(), Ratio(rs / l4).c_str());
  };
  for (uint64_t n : g_cfg.fresh_counts)
    cpu_row("fresh " + std::to_string(n), FreshName(Kind::kLogger4, n),
            FreshName(Kind::kRingInt, n), FreshName(Kind::kRingStr, n));
  for (uint64_t size : g_cfg.steady_sizes)
    cpu_row("full " + std::to_string(size >> 20) + " MiB", SteadyName(Kind::kLogger4, size),
            SteadyName(Kind::kRingInt, size), SteadyName(Kind::kRingStr, size));

  printf("\nTargets, on ring(int), wall-clock medians:\n");
  double l4_100k = rate(FreshName(Kind::kLogger4, 100000)),
         ri_100k = rate(FreshName(Kind::kRingInt, 100000));
  if (!std::isnan(l4_100k))
    Target("ring / Logger4 at 100,000 msgs into 100 KiB", ri_100k / l4_100k, 3, true, "x");
  double l4_16 = rate(SteadyName(Kind::kLogger4, 16 * kMiB)),
         ri_16 = rate(SteadyName(Kind::kRingInt, 16 * kMiB));
  if (!std::isnan(l4_16)) Target("ring / Logger4 at 16 MiB full", ri_16 / l4_16, 1000, true, "x");
  double ri_1m = rate(SteadyName(Kind::kRingInt, 1 * kMiB)),
         ri_1g = rate(SteadyName(Kind::kRingInt, 1 * kGiB));
  if (!std::isnan(ri_1g)) Target("ring msgs/s at 1 MiB / at 1 GiB", ri_1m / ri_1g, 1.3, false, "x");
  printf(
      "(also ring(str): 100k/100KiB %s, 16 MiB %s, 1MiB/1GiB %s)\n",
      Ratio(rate(FreshName(Kind::kRingStr, 100000)) / l4_100k).c_str(),
      Ratio(rate(SteadyName(Kind::kRingStr, 16 * kMiB)) / l4_16).c_str(),
      Ratio(rate(SteadyName(Kind::kRingStr, 1 * kMiB)) / rate(SteadyName(Kind::kRingStr, 1 * kGiB)))
          .c_str());
}

// Our flags (removed before Google Benchmark parses the rest):
//   --smoke            tiny sizes, 1 repetition, for CI (< 60 s)
//   --reps=N           repetitions per row (default 5; Logger4 steady: min(N, 3))
//   --logger4-budget=S seconds after which a Logger4 steady run stops (default 5)
//   --codec=C          how the ring stores blocks: zstd (the default), lz4 or none
void ParseOwnFlags(int *argc, char **argv) {
  TakeOwnFlags(argc, argv, &g_cfg.smoke, &g_cfg.reps, [](const std::string &a, int *) {
    if (a.rfind("--logger4-budget=", 0) == 0) {
      g_cfg.logger4_budget_s = atof(a.c_str() + 17);
    } else if (a.rfind("--codec=", 0) == 0) {
      if (!st::ParseCodec(a.substr(8), &g_cfg.codec)) {
        fprintf(stderr, "ring_bench: unknown codec '%s' (zstd, lz4 or none)\n", a.c_str() + 8);
        exit(2);
      }
    } else {
      return false;
    }
    return true;
  });
  g_cfg.logger4_steady_reps = std::min(g_cfg.reps, 3);
  if (g_cfg.smoke) {
    g_cfg.reps = g_cfg.logger4_steady_reps = 1;
    g_cfg.logger4_budget_s = 1;
    g_cfg.fresh_counts = {100, 10000};
    g_cfg.steady_msgs = 20000;
    g_cfg.steady_sizes = {1 * kMiB, 16 * kMiB};
  }
}

}  // namespace

int main(int argc, char **argv) {
  ParseOwnFlags(&argc, argv);
  ScratchDir dir;
  if (!InitBench("ring_bench", &argc, argv, dir)) return 1;
  g_dir = &dir;
  printf("scratch dir: %s\n", dir.path().c_str());
  Register();
  CollectingReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  PrintTables(rep);
  g_steady.clear();
  benchmark::Shutdown();
  return 0;
}
