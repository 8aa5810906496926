// bench_util.h: helpers shared by the benchmark drivers: a scratch directory
// on the real file system, a Google Benchmark reporter that keeps every
// repetition's counters so a driver can print medians and ratios, and small
// formatting helpers for the side-by-side tables.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace logsink::bench {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it
// when destroyed.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const std::string &path() const { return path_; }
  std::string File(const std::string &name) const { return path_ + "/" + name; }
  bool ok() const { return !path_.empty(); }

 private:
  std::string path_;
};

// Console reporter that also records, per registered benchmark name, the user
// counters of every repetition (iteration runs only, not aggregates).
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run> &reports) override;
  // Median over repetitions of counter `counter` of benchmark `name`; NaN when
  // the benchmark did not run (filtered out, or failed).
  double Median(const std::string &name, const std::string &counter) const;
  double Max(const std::string &name, const std::string &counter) const;
  double Min(const std::string &name, const std::string &counter) const;
  int Count(const std::string &name) const;
  bool Failed(const std::string &name) const;

 private:
  std::vector<double> Values(const std::string &name, const std::string &counter) const;
  std::map<std::string, std::vector<benchmark::UserCounters>> runs_;
  std::map<std::string, bool> failed_;
};

// Takes a driver's own flags out of argv, leaving the rest for Google
// Benchmark: --smoke sets *smoke, --reps=N sets *reps (at least 1), and
// take(flag, &i) returns true for any other flag of the driver's (it may
// consume argv[++i]).
void TakeOwnFlags(int *argc, char **argv, bool *smoke, int *reps,
                  const std::function<bool(const std::string &, int *)> &take);

// Google Benchmark's flags (what the driver's own flags left in argv) and the
// scratch directory: false, after saying why on stderr, when either fails.
bool InitBench(const char *driver, int *argc, char **argv, const ScratchDir &dir);

double MedianOf(std::vector<double> v);
// "12.3 M", "456 k", "789" (3 significant digits); "-" for NaN.
std::string Si(double v);
// "12.3x", "-" for NaN.
std::string Ratio(double v);
uint64_t NowNs();        // CLOCK_MONOTONIC
uint64_t ThreadCpuNs();  // CLOCK_THREAD_CPUTIME_ID: this thread's CPU time (user + system)

}  // namespace logsink::bench
