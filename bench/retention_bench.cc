// retention_bench: history under a flood, the tiers beside one
// ring of the same size (the policy before tiers) in the same run. A 16 MiB
// ring (zstd, 8 KiB blocks); program A logs 200 errors, program B 200 info
// records, then program C (same uid) floods debug records of a realistic
// shape until it wrote F times the ring's capacity in entry bytes. Printed
// per policy and flood: how many of A's and B's records are left, how many
// flood records the first error outlived (and so how many seconds at 100 k,
// 1 M and 10 M records/s), how many of C's records are kept, and the
// writer's CPU per flood record (median of the repetitions) with the ratio
// to one ring. Then the flood an unprivileged user can send: C of another
// uid at level err, with the tiers and fairness on beside fairness off
// (where the last tier overwrites oldest first): what A and B keep, and
// what moving their records on in the last tier costs the writer. Last, a
// debug flood with a trickle of another program (1 record in 50): the
// tiers' cost when every block leaving tier 0 has records that move on.
// Then the error flood again after B logged a long history (6,250 records
// per MiB of ring), fairness off vs on: what B keeps, the rescues, the
// writer's CPU per flood record and the longest single Append (median of
// the repetitions' longest), which is what a rescue adds to one loop turn
// in the daemon.
//
// usage: retention_bench [--smoke] [--reps N] [--size MiB]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "logsink/proto/codec.h"
#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"

namespace logsink::bench {
namespace {

using storage::RecordIn;
using storage::RingReader;
using storage::RingWriter;
using storage::Site;
using storage::Source;
using storage::Status;

struct Result {
  uint64_t errors_left = 0, quiet_left = 0, flood_kept = 0, flood_written = 0;
  uint64_t outlived = 0;  // flood records written before the first error left (all: none left)
  bool errors_all_survived = false;
  double ns_per_record = 0;
  double writes_per_block = 0;         // slot writes (sealed and partial) per sealed block
  uint64_t rescued = 0, rewrites = 0;  // the writer's counters (WriterStats)
  double max_append_us = 0;            // the longest flood Append (when timed)
};

uint64_t CpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void PutVar(std::string *s, uint64_t v) {
  uint8_t b[LS_VARINT_MAX];
  s->append(reinterpret_cast<char *>(b), ls_put_varint(b, v));
}
void PutStr(std::string *s, const std::string &v) {
  PutVar(s, v.size());
  s->append(v);
}

// err_flood: C is another uid (65534) and floods at level err; fair: the
// writer's fairness; trickle: every trickle-th flood record is program D's
// (same uid as C, info) instead (0: none); quiet_n: B's records (before the
// flood); timed: each flood Append is timed (max_append_us).
bool Run(const std::string &path, uint64_t size, bool tiers, double flood_x, uint64_t seed,
         Result *out, bool err_flood = false, bool fair = true, uint64_t trickle = 0,
         uint64_t quiet_n = 200, bool timed = false) {
  *out = Result();
  storage::WriterOptions o;
  o.file_size = size;
  o.fairness = fair;
  if (tiers) o.kept_share = o.error_share = 0.125;
  std::unique_ptr<RingWriter> w;
  Status s = RingWriter::Open(storage::Env::Default(), path, o, &w);
  if (!s.ok()) {
    std::fprintf(stderr, "retention_bench: %s\n", s.ToString().c_str());
    return false;
  }
  const uint32_t err = w->Intern(Site{3, 10, "disk %s failed: code=%d", "a.c"});
  const uint32_t info = w->Intern(Site{6, 20, "job %s done in %dms", "b.c"});
  const uint32_t dbg =
      w->Intern(Site{uint8_t(err_flood ? 3 : 7), 30, "%s k=%ld code=%d path=%s", "c.c"});
  const uint32_t cuid = err_flood ? 65534 : 1000;
  Source a{1, 101, 1000, 1000, "a", "a"}, b{2, 102, 1000, 1000, "b", "b"},
      c{3, 103, cuid, cuid, "c", "c"}, d{4, 104, cuid, cuid, "d", "d"};
  uint64_t ts = 1800000000000000000ull;
  std::mt19937_64 rng(seed);
  std::string args;
  auto append = [&](const Source &src, uint32_t site, const char *sig) {
    RecordIn in;
    in.source = &src;
    in.tid = src.pid;
    in.site_id = site;
    in.signature = sig;
    in.ts_ns = ts += 1000 + rng() % 1000;
    in.args = reinterpret_cast<const uint8_t *>(args.data());
    in.args_len = args.size();
    return w->Append(in);
  };
  for (uint64_t i = 0; i < std::max<uint64_t>(200, quiet_n); i++) {
    if (i >= 200) {  // B's long history: the rest of its records
      args.clear();
      PutStr(&args, "backup-" + std::to_string(i));
      PutVar(&args, ls_zigzag(int64_t(rng() % 5000)));
      if (!append(b, info, "si").ok()) return false;
      continue;
    }
    args.clear();
    // Built by appends: GCC 12 at -O3 reports a false -Wrestrict inside
    // operator+(const char *, std::string &&).
    std::string word = "sd";
    word += std::to_string(i % 4);
    PutStr(&args, word);
    PutVar(&args, ls_zigzag(5 + i));
    if (!append(a, err, "si").ok()) return false;
    args.clear();
    word = "backup-";
    word += std::to_string(i);
    PutStr(&args, word);
    PutVar(&args, ls_zigzag(int64_t(rng() % 5000)));
    if (!append(b, info, "si").ok()) return false;
  }
  // The flood: the codec benchmark's native shape (a word, a counter, a
  // code, a 21-byte path).
  // Made before the clock starts: the writer's cost is what is timed.
  static const char *const kWords[] = {"GET", "PUT", "POST", "DELETE", "HEAD"};
  std::vector<std::string> pool(1 << 16);
  for (size_t i = 0; i < pool.size(); i++) {
    std::string &x = pool[i];
    PutStr(&x, kWords[rng() % 5]);
    PutVar(&x, ls_zigzag(int64_t(rng() % 1000000)));
    PutVar(&x, ls_zigzag(int64_t(200 + rng() % 400)));
    char p[32];
    std::snprintf(p, sizeof p, "/srv/data/%05u/%05u", unsigned(rng() % 100000),
                  unsigned(rng() % 100000));
    PutStr(&x, p);
  }
  const uint64_t budget = uint64_t(double(size) * flood_x);
  const uint64_t block_count = w->layout().TierBlocks(0);
  uint64_t bytes = 0, n = 0;
  bool first_lost = false;
  const uint64_t cpu0 = CpuNs();
  while (bytes < budget) {
    const std::string &x = pool[n % pool.size()];
    const bool from_d = trickle && n % trickle == trickle - 1;
    RecordIn in;
    in.source = from_d ? &d : &c;
    in.tid = in.source->pid;
    in.site_id = dbg;
    in.signature = "sdds";
    in.ts_ns = ts += 1500;
    in.args = reinterpret_cast<const uint8_t *>(x.data());
    in.args_len = x.size();
    if (timed) {
      timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      if (!w->Append(in).ok()) return false;
      clock_gettime(CLOCK_MONOTONIC, &t1);
      const double us = double(t1.tv_sec - t0.tv_sec) * 1e6 + double(t1.tv_nsec - t0.tv_nsec) / 1e3;
      out->max_append_us = std::max(out->max_append_us, us);
    } else if (!w->Append(in).ok()) {
      return false;
    }
    bytes += x.size() + 6;
    n++;
    // One ring loses A's errors with its first block (slot 0 overwritten):
    // when block number block_count is first written. The tiers: read below.
    if (!tiers && !first_lost && w->current_block_seq() > block_count) {
      first_lost = true;
      out->outlived = n;
    }
  }
  out->ns_per_record = double(CpuNs() - cpu0) / double(n);
  out->flood_written = n;
  if (!w->Flush().ok()) return false;
  const storage::WriterStats &st = w->stats();
  out->writes_per_block =
      st.blocks_written ? double(st.blocks_written + st.flushes) / double(st.blocks_written) : 0;
  out->rescued = st.rescued;
  out->rewrites = st.rewrites;
  std::unique_ptr<RingReader> r;
  if (!RingReader::Open(storage::Env::Default(), path, nullptr, &r).ok()) return false;
  storage::Record rec;
  while ((s = r->Next(&rec)).ok()) {
    if (rec.source_id == 1) out->errors_left++;
    if (rec.source_id == 2) out->quiet_left++;
    if (rec.source_id == 3 || rec.source_id == 4) out->flood_kept++;
  }
  if (!s.IsNotFound()) return false;
  out->errors_all_survived = out->errors_left == 200;
  if (out->errors_all_survived) out->outlived = n;
  if (!tiers && !first_lost) out->outlived = n;  // the flood never lapped
  return true;
}

// reps runs of run(rep, &result): the last one's result in *last, the
// median of their writer CPU per record in *ns. false: a run failed.
template <typename F>
bool Repeat(int reps, F run, Result *last, double *ns) {
  std::vector<double> costs;
  for (int rep = 0; rep < reps; rep++) {
    if (!run(uint64_t(rep), last)) return false;
    costs.push_back(last->ns_per_record);
  }
  *ns = MedianOf(costs);
  return true;
}

}  // namespace
}  // namespace logsink::bench

int main(int argc, char **argv) {
  using namespace logsink::bench;
  bool smoke = false;
  int reps = 3;
  uint64_t mib = 16;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--smoke")) {
      smoke = true;
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--size") && i + 1 < argc) {
      mib = uint64_t(std::max(1, std::atoi(argv[++i])));
    } else {
      std::fprintf(stderr, "usage: retention_bench [--smoke] [--reps N] [--size MiB]\n");
      return 2;
    }
  }
  if (smoke) reps = 1, mib = 1;
  ScratchDir dir;
  if (!dir.ok()) return 1;
  const std::vector<double> floods =
      smoke ? std::vector<double>{3} : std::vector<double>{2, 10, 40};
  const uint64_t seed = 20261126;
  std::printf(
      "retention_bench: %llu MiB ring (zstd, 8 KiB blocks), tiers 1/8 + 1/8 vs one ring;\n"
      "200 errors (A) and 200 info records (B), then a debug flood (C, same uid) of F x "
      "the ring in entry bytes; %d repetition(s), seed %llu\n\n",
      (unsigned long long)mib, reps, (unsigned long long)seed);
  std::printf("%-9s %5s %10s %10s %14s %14s %10s %10s %10s %11s\n", "policy", "F", "errors",
              "quiet", "flood kept", "flood written", "s @100k/s", "s @1M/s", "s @10M/s",
              "ns/record");
  bool ok = true;
  for (double f : floods) {
    double ns[2] = {0, 0};
    for (int t = 0; t < 2; t++) {
      const bool tiers = t == 1;
      Result last;
      ok = Repeat(
          reps,
          [&](uint64_t rep, Result *r) {
            const std::string path = dir.File(t ? "tiers.ring" : "one.ring");
            std::remove(path.c_str());
            return Run(path, mib << 20, tiers, f, seed + rep, r);
          },
          &last, &ns[t]);
      if (!ok) break;
      auto secs = [&](double rate) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.1f", last.errors_all_survived ? ">" : "",
                      double(last.outlived) / rate);
        return std::string(buf);
      };
      std::printf("%-9s %5.0f %6llu/200 %6llu/200 %14llu %14llu %10s %10s %10s %11.1f\n",
                  tiers ? "tiers" : "one ring", f, (unsigned long long)last.errors_left,
                  (unsigned long long)last.quiet_left, (unsigned long long)last.flood_kept,
                  (unsigned long long)last.flood_written, secs(1e5).c_str(), secs(1e6).c_str(),
                  secs(1e7).c_str(), ns[t]);
    }
    if (!ok) break;
    std::printf("%-9s %5.0f writer CPU per flood record, tiers / one ring: %s\n\n", "", f,
                Ratio(ns[1] / ns[0]).c_str());
  }
  std::printf(
      "(\"s @R\": seconds the first error outlived a flood at R records/s; \">\": all 200 "
      "errors were still there when the flood ended)\n");
  if (!ok) return 1;

  std::printf("\nthe flood at level err from another uid (65534), tiers, fairness off vs on:\n");
  std::printf("%-13s %5s %10s %10s %14s %14s %11s\n", "fairness", "F", "errors", "quiet",
              "flood kept", "flood written", "ns/record");
  for (double f : floods) {
    double ns[2] = {0, 0};
    for (int t = 0; t < 2 && ok; t++) {
      Result last;
      ok = Repeat(
          reps,
          [&](uint64_t rep, Result *r) {
            const std::string path = dir.File("fair.ring");
            std::remove(path.c_str());
            return Run(path, mib << 20, true, f, seed + rep, r, true, t == 1);
          },
          &last, &ns[t]);
      if (!ok) break;
      std::printf("%-13s %5.0f %6llu/200 %6llu/200 %14llu %14llu %11.1f\n", t ? "on" : "off", f,
                  (unsigned long long)last.errors_left, (unsigned long long)last.quiet_left,
                  (unsigned long long)last.flood_kept, (unsigned long long)last.flood_written,
                  ns[t]);
    }
    if (!ok) break;
    std::printf("%-13s %5.0f writer CPU per flood record, fairness on / off: %s\n\n", "", f,
                Ratio(ns[1] / ns[0]).c_str());
  }
  if (!ok) return 1;

  // Every block leaving tier 0 now holds a few records that move on: the
  // tiers' cost on a steady mix (each such move writes the next tier's
  // current block before the old block's slot is overwritten).
  std::printf(
      "\na debug flood with a trickle of another program (D, 1 record in 50), tiers vs one "
      "ring:\n");
  std::printf("%-9s %5s %14s %14s %13s %11s\n", "policy", "F", "flood kept", "flood written",
              "writes/block", "ns/record");
  for (double f : floods) {
    double ns[2] = {0, 0};
    for (int t = 0; t < 2 && ok; t++) {
      Result last;
      ok = Repeat(
          reps,
          [&](uint64_t rep, Result *r) {
            const std::string path = dir.File("mix.ring");
            std::remove(path.c_str());
            return Run(path, mib << 20, t == 1, f, seed + rep, r, false, true, 50);
          },
          &last, &ns[t]);
      if (!ok) break;
      std::printf("%-9s %5.0f %14llu %14llu %13.2f %11.1f\n", t ? "tiers" : "one ring", f,
                  (unsigned long long)last.flood_kept, (unsigned long long)last.flood_written,
                  last.writes_per_block, ns[t]);
    }
    if (!ok) break;
    std::printf("%-9s %5.0f writer CPU per flood record, tiers / one ring: %s\n\n", "", f,
                Ratio(ns[1] / ns[0]).c_str());
  }
  if (!ok) return 1;

  // The error flood once more, after B left a long history (the storm
  // benchmark's shape: root's lines fill much of the ring first): the
  // last tier's rescues now move B's records on block after block, so what
  // the rescues cost per flood record and in the longest single Append
  // (each timed) shows here.
  const uint64_t quiet_n = mib * 6250;
  std::printf(
      "\nthe flood at level err from another uid (65534) after B logged %llu info records, "
      "fairness off vs on:\n",
      (unsigned long long)quiet_n);
  std::printf("%-13s %5s %14s %14s %12s %10s %11s %12s\n", "fairness", "F", "quiet", "flood kept",
              "rescued", "rewrites", "ns/record", "max append");
  for (double f : floods) {
    double ns[2] = {0, 0};
    for (int t = 0; t < 2 && ok; t++) {
      Result last;
      std::vector<double> maxes;
      ok = Repeat(
          reps,
          [&](uint64_t rep, Result *r) {
            const std::string path = dir.File("history.ring");
            std::remove(path.c_str());
            const bool done =
                Run(path, mib << 20, true, f, seed + rep, r, true, t == 1, 0, quiet_n, true);
            maxes.push_back(r->max_append_us);
            return done;
          },
          &last, &ns[t]);
      if (!ok) break;
      std::printf("%-13s %5.0f %7llu/%-6llu %14llu %12llu %10llu %11.1f %9.0f us\n",
                  t ? "on" : "off", f, (unsigned long long)last.quiet_left,
                  (unsigned long long)quiet_n, (unsigned long long)last.flood_kept,
                  (unsigned long long)last.rescued, (unsigned long long)last.rewrites, ns[t],
                  MedianOf(maxes));
    }
    if (!ok) break;
    std::printf("%-13s %5.0f writer CPU per flood record, fairness on / off: %s\n\n", "", f,
                Ratio(ns[1] / ns[0]).c_str());
  }
  return ok ? 0 : 1;
}
