// render_bench.cc: what the renderer (render/render.h) costs per record for
// a brace format (proto/braces.h: the sites of the C++ API's LS_FMT) beside
// the printf format of the same message (the baseline), in the same run.
// Each format is compiled once (render::Compile, as logctl's FormatCache
// does per site), then render::RenderMessage renders a pool of 16 records
// (paths, durations, statuses and widths varied; the argument bytes made by
// the C++ API's own encoder, logsink.hpp's detail::put) over and over into
// one reused string. Rows:
//   printf          "GET %s took %.3f s status %d"            (the baseline)
//   braces          0x1E "sfi" 0x1E "GET {} took {:.3f} s status {}"
//   printf %-*s     "GET %-*s took %.3f s status %d"          (width per record)
//   braces {:{}}    0x1E "sifi" 0x1E "GET {:{}} took {:.3f} s status {}"
// A nested width ({:{}}) makes fmt's text depend on the record, so it is
// built per record; the plain brace text can be built once per site.
// Printed: ns per record (this thread's CPU time over --records renders,
// the median of --reps repetitions, min and max beside it) and the ratio of
// each brace row to its printf row. The repetitions are the outer loop and
// the rows take turns inside it, so a slow spell of the machine hits every
// row. Before timing, every record of every row is rendered once and
// checked: each brace row must print exactly what its printf row prints (a
// difference, or a mismatch, exits 1).
//
// usage: render_bench [--smoke] [--reps=N] [--records=N]
//   --smoke: one repetition of 2,000 records per row (CI).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <logsink/logsink.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "bench_util.h"
#include "logsink/render/render.h"

namespace {

using namespace logsink::bench;
namespace ld = logsink::detail;
namespace rd = logsink::render;

constexpr size_t kPool = 16;

// The argument bytes of one record, as LS_FMT / LS_LOG encode them.
template <typename... A>
std::string Encode(const A &...args) {
  unsigned char buf[512];
  unsigned char *p = buf;
  uint64_t trunc = 0;
  ((p = ld::put(p, ld::value<ld::norm_t<A>>(args), SIZE_MAX, &trunc)), ...);
  return std::string(reinterpret_cast<char *>(buf), size_t(p - buf));
}

struct Row {
  const char *label;
  std::string fmt;                // the site's format bytes
  std::vector<std::string> args;  // kPool records' argument bytes
  int baseline;                   // index of the printf row it is compared with; -1: itself
  rd::Format compiled;
  std::vector<double> ns;  // ns per record, one per repetition
};

// Renders n records of row r; returns this thread's CPU ns per record.
double TimeRow(const Row &r, uint64_t n, std::string *out) {
  const uint64_t t0 = ThreadCpuNs();
  for (uint64_t i = 0; i < n; i++) {
    out->clear();
    rd::RenderMessage(r.compiled, r.args[i % kPool], out);
    benchmark::DoNotOptimize(out->data());
  }
  const uint64_t t1 = ThreadCpuNs();
  benchmark::ClobberMemory();
  return double(t1 - t0) / double(n);
}

}  // namespace

int main(int argc, char **argv) {
  bool smoke = false;
  int reps = 9;
  uint64_t records = 200000;
  TakeOwnFlags(&argc, argv, &smoke, &reps, [&](const std::string &a, int *) {
    if (a.rfind("--records=", 0) == 0) {
      records = std::max<uint64_t>(1, strtoull(a.c_str() + 10, nullptr, 10));
      return true;
    }
    return false;
  });
  if (argc > 1) {
    fprintf(stderr,
            "render_bench: unknown argument %s\nusage: %s [--smoke] [--reps=N] [--records=N]\n",
            argv[1], argv[0]);
    return 2;
  }
  if (smoke) {
    reps = 1;
    records = 2000;
  }

  const char *const paths[] = {"/",
                               "/index.html",
                               "/api/v1/users/1234",
                               "/api/v1/orders?page=3",
                               "/static/app.3f9c1e.js",
                               "/health",
                               "/api/v1/search?q=disk+quota",
                               "/login"};
  const int statuses[] = {200, 200, 200, 304, 200, 404, 500, 201};
  std::vector<Row> rows(4);
  rows[0] = {"printf", "GET %s took %.3f s status %d", {}, -1, {}, {}};
  rows[1] = {"braces", "\x1esfi\x1eGET {} took {:.3f} s status {}", {}, 0, {}, {}};
  rows[2] = {"printf %-*s", "GET %-*s took %.3f s status %d", {}, -1, {}, {}};
  rows[3] = {"braces {:{}}", "\x1esifi\x1eGET {:{}} took {:.3f} s status {}", {}, 2, {}, {}};
  for (size_t i = 0; i < kPool; i++) {
    const char *path = paths[i % 8];
    const double secs = 0.0005 + 0.0371 * double(i * i % 23);
    const int status = statuses[(i * 5) % 8];
    const int width = 16 + int(i % 4) * 4;
    rows[0].args.push_back(Encode(path, secs, status));
    rows[1].args.push_back(Encode(path, secs, status));
    rows[2].args.push_back(Encode(width, path, secs, status));
    rows[3].args.push_back(Encode(path, width, secs, status));
  }

  // Every record of every row once: brace rows print what their printf
  // rows print.
  bool wrong = false;
  for (Row &r : rows) {
    rd::Compile(r.fmt, &r.compiled);
    if (!r.compiled.ok) {
      fprintf(stderr, "render_bench: WRONG: %s does not compile\n", r.label);
      wrong = true;
    }
  }
  for (size_t i = 0; i < kPool && !wrong; i++) {
    std::string want[4];
    for (size_t k = 0; k < rows.size(); k++) {
      if (!rd::RenderMessage(rows[k].compiled, rows[k].args[i], &want[k])) {
        fprintf(stderr, "render_bench: WRONG: %s, record %zu: %s\n", rows[k].label, i,
                want[k].c_str());
        wrong = true;
      }
      if (rows[k].baseline >= 0 && want[k] != want[rows[k].baseline]) {
        fprintf(stderr, "render_bench: WRONG: %s, record %zu: \"%s\" where %s prints \"%s\"\n",
                rows[k].label, i, want[k].c_str(), rows[rows[k].baseline].label,
                want[rows[k].baseline].c_str());
        wrong = true;
      }
    }
    if (i == 0 && !wrong)
      printf("record 0: \"%s\"\n          \"%s\"\n", want[0].c_str(), want[2].c_str());
  }
  if (wrong) return 1;

  std::string out;
  out.reserve(256);
  for (Row &r : rows) TimeRow(r, std::min<uint64_t>(records, 20000), &out);  // warm up
  for (int rep = 0; rep < reps; rep++)
    for (Row &r : rows) r.ns.push_back(TimeRow(r, records, &out));

  printf("%d repetitions of %llu records per row (thread CPU time), medians\n", reps,
         static_cast<unsigned long long>(records));
  printf("%-14s %10s %10s %10s %12s\n", "row", "ns/record", "min", "max", "vs printf");
  for (const Row &r : rows) {
    const double med = MedianOf(r.ns);
    char ratio[32] = "";
    if (r.baseline >= 0)
      snprintf(ratio, sizeof ratio, "%s", Ratio(med / MedianOf(rows[r.baseline].ns)).c_str());
    printf("%-14s %10.1f %10.1f %10.1f %12s\n", r.label, med,
           *std::min_element(r.ns.begin(), r.ns.end()), *std::max_element(r.ns.begin(), r.ns.end()),
           ratio);
  }
  return 0;
}
