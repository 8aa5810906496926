// bench_util.cc: scratch directories, the collecting reporter and table
// formatting shared by the benchmark drivers (see bench_util.h).
#include "bench_util.h"

#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace logsink::bench {

ScratchDir::ScratchDir() {
  const char *tmp = getenv("TMPDIR");
  std::string tmpl = std::string(tmp && tmp[0] ? tmp : "/tmp") + "/logsink-bench-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) != nullptr) path_ = buf.data();
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

bool InitBench(const char *driver, int *argc, char **argv, const ScratchDir &dir) {
  benchmark::Initialize(argc, argv);
  if (benchmark::ReportUnrecognizedArguments(*argc, argv)) return false;
  if (!dir.ok()) {
    fprintf(stderr, "%s: cannot create a scratch directory under $TMPDIR or /tmp\n", driver);
    return false;
  }
  return true;
}

void CollectingReporter::ReportRuns(const std::vector<Run> &reports) {
  ConsoleReporter::ReportRuns(reports);
  for (const Run &r : reports) {
    if (r.run_type != Run::RT_Iteration) continue;
    const std::string &name = r.run_name.function_name;
    if (r.error_occurred) {
      failed_[name] = true;
      continue;
    }
    runs_[name].push_back(r.counters);
  }
}

std::vector<double> CollectingReporter::Values(const std::string &name,
                                               const std::string &counter) const {
  std::vector<double> v;
  auto it = runs_.find(name);
  if (it == runs_.end()) return v;
  for (const auto &c : it->second) {
    auto ci = c.find(counter);
    if (ci != c.end()) v.push_back(ci->second.value);
  }
  return v;
}

double CollectingReporter::Median(const std::string &name, const std::string &counter) const {
  return MedianOf(Values(name, counter));
}

double CollectingReporter::Max(const std::string &name, const std::string &counter) const {
  auto v = Values(name, counter);
  return v.empty() ? NAN : *std::max_element(v.begin(), v.end());
}

double CollectingReporter::Min(const std::string &name, const std::string &counter) const {
  auto v = Values(name, counter);
  return v.empty() ? NAN : *std::min_element(v.begin(), v.end());
}

int CollectingReporter::Count(const std::string &name) const {
  auto it = runs_.find(name);
  return it == runs_.end() ? 0 : static_cast<int>(it->second.size());
}

bool CollectingReporter::Failed(const std::string &name) const { return failed_.count(name) > 0; }

void TakeOwnFlags(int *argc, char **argv, bool *smoke, int *reps,
                  const std::function<bool(const std::string &, int *)> &take) {
  int out = 1;
  for (int i = 1; i < *argc; i++) {
    std::string a = argv[i];
    if (a == "--smoke") {
      *smoke = true;
    } else if (a.rfind("--reps=", 0) == 0) {
      *reps = std::max(1, atoi(a.c_str() + 7));
    } else if (!take(a, &i)) {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
}

double MedianOf(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string Si(double v) {
  if (std::isnan(v)) return "-";
  char buf[32];
  const char *unit = "";
  if (v >= 1e9) {
    v /= 1e9;
    unit = " G";
  } else if (v >= 1e6) {
    v /= 1e6;
    unit = " M";
  } else if (v >= 1e3) {
    v /= 1e3;
    unit = " k";
  }
  snprintf(buf, sizeof buf, v >= 100 ? "%.0f%s" : v >= 10 ? "%.1f%s" : "%.2f%s", v, unit);
  return buf;
}

std::string Ratio(double v) {
  if (std::isnan(v)) return "-";
  char buf[32];
  snprintf(buf, sizeof buf, v >= 100 ? "%.0fx" : v >= 10 ? "%.1fx" : "%.2fx", v);
  return buf;
}

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

}  // namespace logsink::bench
