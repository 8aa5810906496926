// find_bench.cc: finding records in a long history. Fills a ring (1 GiB by
// default) with mixed records written through storage's RingWriter (several
// apps, units, pids and uids, mostly info, varied text; one rare app, one
// rare unit, one rare pid, rare crit records and a few err records
// sprinkled), then times the
// real `logctl` binary (fork + exec, output to /dev/null) on filtered reads,
// each with the summary index, with the block headers' summaries only
// (LOGSINK_NO_INDEX=1) and with no skipping (LOGSINK_NO_SKIP=1), and --grep on the
// plain path (LOGSINK_PLAIN_READ=1: one thread, every pattern through
// regexec) beside the default one, next to GNU `grep -c` on the same ring
// exported as text in the same run. Medians of --reps runs (warm page cache:
// one untimed run first), ratios, and [MET]/[MISS] against the goals (a MISS
// does not fail the run).
//
// usage: find_bench [--smoke] [--size BYTES] [--reps N] [--bin-dir DIR] [--part filters|grep]
//   --smoke: an 8 MiB ring, one rep (CI). --part: only the filtered reads
//   (with --since and tail), or only --grep (the two take about as long on
//   a quiet machine; a long run is more likely to be shared with other
//   work). --fill PATH: only write the ring
//   (--size) to PATH, for profiling logctl on it. --field-keys-cost: also
//   fill a second ring with the same records but no field keys and time
//   --app, -u and --pid on both in turns (what field keys cost the source
//   filters, which share the summary's filter). Exit status 1 when logctl fails
//   or its filtered output is wrong (a record missing from a summarized read).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "common/process.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/printf.h"
#include "logsink/storage/ring.h"

namespace st = logsink::storage;
namespace lt = logsink::test;
using logsink::bench::MedianOf;
using logsink::bench::NowNs;
using logsink::bench::Ratio;
using logsink::bench::ScratchDir;

namespace {

// What the filters look for: each is rare (see Fill).
constexpr const char *kRareApp = "rareapp";
constexpr const char *kRareUnit = "rare-batch.service";
constexpr uint32_t kRarePid = 777777;
constexpr const char *kLiteral = "quota exceeded";
// Named fields: tenant (one of 12 in a block: keyed in the summaries) and
// user (one of 40: more than a block's field keys hold, so summed up by
// its name alone), each with a rare value.
constexpr const char *kRareTenant = "rare-tenant";
constexpr const char *kRareUser = "rare-user";

struct Rng {  // xorshift64*: fixed seed, same ring every run
  uint64_t s;
  uint64_t Next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  uint32_t Below(uint32_t n) { return uint32_t(Next() % n); }
};

struct SiteDef {
  SiteDef(uint8_t l, const char *f, uint8_t fl = 0) : level(l), fmt(f), flags(fl) {}
  uint8_t level;
  const char *fmt;
  uint8_t flags;
  std::string sig;
  uint32_t id = 0;
};
struct SourceDef {
  uint32_t pid, uid;
  const char *app, *unit;
};

void PutStr(std::string *out, std::string_view s) {
  uint8_t v[LS_VARINT_MAX];
  out->append(reinterpret_cast<const char *>(v), ls_put_varint(v, s.size()));
  out->append(s);
}
void PutInt(std::string *out, int64_t x) {
  uint8_t v[LS_VARINT_MAX];
  out->append(reinterpret_cast<const char *>(v), ls_put_varint(v, ls_zigzag(x)));
}

const char *const kWords[] = {"alpha",  "orders",  "users", "cart",   "invoice", "session",
                              "static", "reports", "auth",  "search", "billing", "metrics",
                              "queue",  "upload",  "feed",  "inbox"};
const char *const kHosts[] = {"10.0.3.17", "10.0.4.2",   "192.168.1.40", "172.16.9.81",
                              "10.1.0.99", "10.0.12.34", "192.168.7.3",  "172.16.0.5"};

// Fills path (size bytes) until every slot was written once. Returns the
// timestamp of the record in the middle (for --since), 0 on failure.
// fields = false: the field site without its flag FIELDS (the same records,
// its list read as text): blocks then get no field keys (the A/B of
// --field-keys-cost).
uint64_t Fill(const std::string &path, uint64_t size, uint64_t *records, bool fields = true) {
  st::WriterOptions o;
  o.file_size = size;  // codec: zstd, the default
  std::unique_ptr<st::RingWriter> w;
  st::Status s = st::RingWriter::Open(st::Env::Default(), path, o, &w);
  if (!s.ok()) {
    fprintf(stderr, "find_bench: %s: %s\n", path.c_str(), s.ToString().c_str());
    return 0;
  }
  std::vector<SiteDef> sites = {
      {6, "GET /api/v1/%s/%d %d %dB in %dms"},
      {6, "user %s logged in from %s port %d"},
      {6, "connection from %s closed after %d requests"},
      {6, "cache %s: %d hits, %d misses, ratio %d%%"},
      {6, "job %s-%d finished in %d.%03ds"},
      {7, "gc pause %dus, heap %dMiB"},
      {5, "config reloaded: %d keys changed"},
      {4, "slow query on %s took %dms"},
      {6, "disk quota exceeded for %s (%d MiB over)"},  // kLiteral, about 1 in 2000
      {3, "failed to write %s: %s"},                    // err, about 1 in 33000
      {2, "raid %s degraded: %d of %d disks left"},     // crit, about 1 in 150000
      // Fields: tenant (one of 12, kRareTenant about 1 in 150000), user
      // (one of 40, kRareUser as rare), a request id per record, a status.
      {6, "request done\x1ftenant=%s user=%s req=%llu status=%d", LS_ST_F_FIELDS},
  };
  for (SiteDef &d : sites) {
    char sig[LS_FMT_MAX_ARGS + 1];
    if (ls_fmt_signature(d.fmt, strlen(d.fmt), sig, sizeof sig) < 0) abort();
    d.sig = sig;
    st::Site site{d.level, 1, d.fmt, "bench/find_bench.cc"};
    site.flags = fields ? d.flags : 0;
    d.id = w->Intern(site);
    if (d.id == 0) abort();
  }
  std::vector<SourceDef> defs = {
      {2101, 33, "nginx", "nginx.service"},
      {2102, 33, "nginx", "nginx.service"},
      {3300, 109, "postgres", "postgresql.service"},
      {3301, 109, "postgres", "postgresql.service"},
      {880, 0, "sshd", "ssh.service"},
      {912, 0, "cron", "cron.service"},
      {4410, 1000, "api", "api.service"},
      {4411, 1000, "api", "api.service"},
      {4412, 1000, "worker", "worker.service"},
      {5120, 1001, "backup", "backup.service"},
      {6001, 0, "monitor", "monitor.service"},
      {6002, 998, "cache", "redis.service"},
      // The rare ones: their own app, unit or pid.
      {9001, 1002, kRareApp, "misc.service"},
      {9002, 1003, "batch", kRareUnit},
      {kRarePid, 1004, "tool", "tool.service"},
  };
  std::vector<st::Source> srcs;
  for (size_t k = 0; k < defs.size(); k++)
    srcs.push_back(st::Source{w->next_source_id() + k, defs[k].pid, defs[k].uid, defs[k].uid,
                              defs[k].app, defs[k].app, defs[k].unit});
  const size_t kCommon = defs.size() - 3;
  Rng rng{0x9e3779b97f4a7c15ull};
  uint64_t ts = 1795000000ull * 1000000000ull;
  uint64_t n = 0, mid_ts = 0;
  const uint64_t blocks = w->layout().block_count;
  std::string args;
  while (s.ok() && w->current_block_seq() < blocks) {
    ts += 20000 + rng.Below(60000);  // 20..80 us apart
    if (mid_ts == 0 && w->current_block_seq() >= blocks / 2) mid_ts = ts;
    // Rare sources: about 1 record in 50000 each.
    const uint32_t pick = rng.Below(150000);
    const size_t src = pick < 3 ? kCommon + pick : rng.Below(uint32_t(kCommon));
    uint32_t si;
    const uint32_t r = rng.Below(100000);
    if (rng.Below(150000) == 0)
      si = 10;
    else if (r < 3)
      si = 9;
    else if (r < 52)
      si = 8;
    else if (r < 300)
      si = 7;
    else if (r < 600)
      si = 6;
    else if (r < 4000)
      si = 5;
    else if (r < 24000)
      si = 11;
    else
      si = rng.Below(5);
    args.clear();
    const char *w1 = kWords[rng.Below(16)];
    const char *h = kHosts[rng.Below(8)];
    switch (si) {
      case 0:
        PutStr(&args, w1);
        PutInt(&args, rng.Below(1000000));
        PutInt(&args, rng.Below(20) ? 200 : 404);
        PutInt(&args, rng.Below(90000));
        PutInt(&args, rng.Below(500));
        break;
      case 1:
        PutStr(&args, kWords[rng.Below(16)]);
        PutStr(&args, h);
        PutInt(&args, 1024 + rng.Below(60000));
        break;
      case 2:
        PutStr(&args, h);
        PutInt(&args, rng.Below(1000));
        break;
      case 3:
        PutStr(&args, w1);
        PutInt(&args, rng.Below(100000));
        PutInt(&args, rng.Below(10000));
        PutInt(&args, rng.Below(100));
        break;
      case 4:
        PutStr(&args, w1);
        PutInt(&args, rng.Below(100000));
        PutInt(&args, rng.Below(100));
        PutInt(&args, rng.Below(1000));
        break;
      case 5:
        PutInt(&args, rng.Below(20000));
        PutInt(&args, rng.Below(4096));
        break;
      case 6:
        PutInt(&args, rng.Below(40));
        break;
      case 7:
        PutStr(&args, w1);
        PutInt(&args, 500 + rng.Below(10000));
        break;
      case 8:
        PutStr(&args, kWords[rng.Below(16)]);
        PutInt(&args, 1 + rng.Below(900));
        break;
      case 11: {
        char tenant[16], user[16];
        snprintf(tenant, sizeof tenant, "tenant%02u", rng.Below(12));
        snprintf(user, sizeof user, "user%02u", rng.Below(40));
        PutStr(&args, rng.Below(30000) == 0 ? kRareTenant : tenant);
        PutStr(&args, rng.Below(30000) == 0 ? kRareUser : user);
        uint8_t v[LS_VARINT_MAX];
        args.append(reinterpret_cast<const char *>(v), ls_put_varint(v, n));  // req: %llu
        PutInt(&args, rng.Below(50) ? 200 : 503);
        break;
      }
      case 10:
        PutStr(&args, "md0");
        PutInt(&args, 2 + rng.Below(4));
        PutInt(&args, 8);
        break;
      default:
        PutStr(&args, std::string("/var/lib/") + w1 + ".db");
        PutStr(&args, "No space left on device");
        break;
    }
    st::RecordIn in;
    in.source = &srcs[src];
    in.tid = srcs[src].pid;
    in.site_id = sites[si].id;
    in.signature = sites[si].sig;
    in.ts_ns = ts;
    in.args = reinterpret_cast<const uint8_t *>(args.data());
    in.args_len = args.size();
    s = w->Append(in);
    n++;
  }
  if (s.ok()) s = w->Flush();
  if (!s.ok()) {
    fprintf(stderr, "find_bench: %s\n", s.ToString().c_str());
    return 0;
  }
  *records = n;
  return mid_ts;
}

struct Env {
  bool no_skip = false, plain = false, no_index = false;
};

// The switches, and the child's stdout to `out` (a path; /dev/null when
// empty) unless it stays the pipe.
lt::SubprocessOptions ChildOptions(const Env &e, const std::string &out = "", bool pipe = false) {
  lt::SubprocessOptions so;
  so.child_setup = [e, out, pipe] {
    int fd = pipe          ? -1
             : out.empty() ? open("/dev/null", O_WRONLY)
                           : open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) dup2(fd, 1);
    if (e.no_skip) setenv("LOGSINK_NO_SKIP", "1", 1);
    if (e.plain) setenv("LOGSINK_PLAIN_READ", "1", 1);
    if (e.no_index) setenv("LOGSINK_NO_INDEX", "1", 1);
  };
  return so;
}

const lt::Ms kLimit(1800000);  // a hang limit, not a bound
bool g_failed = false;

// Seconds one run of bin args takes (to completion, output to /dev/null or,
// with pipe, read and dropped).
double TimeRun(const std::string &bin, const std::vector<std::string> &args, const Env &e,
               bool pipe = false) {
  const uint64_t t0 = NowNs();
  lt::ProcResult r = lt::RunProcess(bin, args, ChildOptions(e, "", pipe), kLimit);
  const double sec = double(NowNs() - t0) / 1e9;
  if (r.status != 0 && !(bin.find("grep") != std::string::npos && r.status == 1)) {
    fprintf(stderr, "find_bench: %s exited %d: %s\n", bin.c_str(), r.status, r.err.c_str());
    g_failed = true;
  }
  return sec;
}

// Seconds until the first line of output arrives.
double TimeFirstLine(const std::string &bin, const std::vector<std::string> &args, const Env &e) {
  lt::SubprocessOptions so = ChildOptions(e, "", true);
  const uint64_t t0 = NowNs();
  lt::Subprocess p(bin, args, so);
  std::string line;
  bool got = p.ReadLine(&line, kLimit);
  const double sec = double(NowNs() - t0) / 1e9;
  if (!got) {
    fprintf(stderr, "find_bench: %s printed nothing\n", bin.c_str());
    g_failed = true;
  }
  return sec;  // the destructor kills the rest of the run
}

double Median(int reps, const std::function<double()> &run) {
  run();  // warm-up
  std::vector<double> v;
  for (int i = 0; i < reps; i++) v.push_back(run());
  return MedianOf(v);
}

// Medians of a and b, run in turns (a, b, a, b, ...), so that load from
// elsewhere weighs on both alike. The caller warmed both up.
std::pair<double, double> Pair(int reps, const std::function<double()> &a,
                               const std::function<double()> &b) {
  std::vector<double> va, vb;
  for (int i = 0; i < reps; i++) {
    va.push_back(a());
    vb.push_back(b());
  }
  return {MedianOf(va), MedianOf(vb)};
}

// Medians of each of fs, run in turns as in Pair.
std::vector<double> Turns(int reps, const std::vector<std::function<double()>> &fs) {
  std::vector<std::vector<double>> v(fs.size());
  for (int i = 0; i < reps; i++)
    for (size_t k = 0; k < fs.size(); k++) v[k].push_back(fs[k]());
  std::vector<double> out;
  for (auto &x : v) out.push_back(MedianOf(x));
  return out;
}

std::string Ms(double sec) {
  char b[32];
  snprintf(b, sizeof b, sec < 0.1 ? "%.1f ms" : "%.0f ms", sec * 1e3);
  return b;
}

uint64_t Lines(const std::string &bin, const std::vector<std::string> &args, const Env &e) {
  lt::SubprocessOptions so = ChildOptions(e, "", true);
  lt::ProcResult r = lt::RunProcess(bin, args, so, kLimit);
  if (r.status != 0) g_failed = true;
  uint64_t n = 0;
  for (char c : r.out) n += c == '\n';
  return n;
}

std::string Rate(double bytes, double sec) {
  char b[32];
  snprintf(b, sizeof b, "%.0f MB/s", bytes / sec / 1e6);
  return b;
}

}  // namespace

int main(int argc, char **argv) {
  bool smoke = false;
  uint64_t size = 1ull << 30;
  int reps = 3;
  std::string bin_dir, fill_only;
  bool filters = true, greps = true, keys_cost = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--smoke") {
      smoke = true;
    } else if (a == "--size" && i + 1 < argc) {
      size = strtoull(argv[++i], nullptr, 0);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (a == "--field-keys-cost") {
      keys_cost = true;
    } else if (a == "--fill" && i + 1 < argc) {
      fill_only = argv[++i];
    } else if (a == "--bin-dir" && i + 1 < argc) {
      bin_dir = argv[++i];
    } else if (a == "--part" && i + 1 < argc) {
      std::string part = argv[++i];
      filters = part == "filters";
      greps = part == "grep";
      if (!filters && !greps) {
        fprintf(stderr, "find_bench: --part is filters or grep, not '%s'\n", part.c_str());
        return 2;
      }
    } else {
      fprintf(stderr,
              "usage: find_bench [--smoke] [--size BYTES] [--reps N] [--bin-dir DIR] [--part "
              "filters|grep] [--fill PATH] [--field-keys-cost]\n");
      return 2;
    }
  }
  if (!fill_only.empty()) {
    uint64_t n = 0;
    if (Fill(fill_only, size, &n) == 0) return 1;
    printf("%" PRIu64 " records\n", n);
    return 0;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows in a log file too
  if (smoke) {
    size = 8ull << 20;
    reps = 1;
  }
  if (reps < 1) reps = 1;
  const std::string logctl = bin_dir.empty() ? lt::BinPath("logctl") : bin_dir + "/logctl";
  const std::string grep = access("/usr/bin/grep", X_OK) == 0 ? "/usr/bin/grep" : "/bin/grep";
  ScratchDir dir;
  if (!dir.ok()) {
    fprintf(stderr, "find_bench: cannot create a scratch directory under $TMPDIR or /tmp\n");
    return 1;
  }
  const std::string ring = dir.File("find.ring"), text = dir.File("find.txt");
  uint64_t records = 0;
  uint64_t t0 = NowNs();
  const uint64_t mid_ts = Fill(ring, size, &records);
  if (mid_ts == 0) return 1;
  printf("ring: %" PRIu64 " MiB, %" PRIu64 " records (filled in %.1f s), %d reps, medians\n",
         uint64_t(size >> 20), records, double(NowNs() - t0) / 1e9, reps);

  const std::vector<std::string> base = {"cat", "--no-pager", "--file", ring};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> v = base;
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  // Each case: one untimed run of each side first, whose lines are
  // counted (the summarized read must find what the full one finds), then
  // the timed runs, the two sides taking turns.
  bool wrong = false;
  double rare_worst = 0, err_time = 0, first_on = 0, tail_on = 0, g_fast = 0, text_bytes = 0;
  if (filters) {
    // Three ways: the summary index (the default), the summaries in the block
    // headers only (LOGSINK_NO_INDEX=1: every block read) and no skipping.
    printf("%-34s %10s %10s %10s %8s %8s\n", "logctl cat ...", "index", "headers", "no skip",
           "speedup", "lines");
    const Env kHeaders{false, false, true}, kNoSkip{true, false, false};
    struct Case {
      const char *label;
      std::vector<std::string> extra;
    };
    const std::vector<Case> cases = {
        {"--app rareapp", {"--app", kRareApp}},
        {"-u rare-batch", {"-u", kRareUnit}},
        {"--pid 777777", {"--pid", std::to_string(kRarePid)}},
        {"tenant=rare-tenant (field)", {std::string("tenant=") + kRareTenant}},
        {"user=rare-user (name only)", {std::string("user=") + kRareUser}},
        {"-p crit", {"-p", "crit"}},
        {"-p err", {"-p", "err"}}};
    for (const Case &c : cases) {
      const auto args = with(c.extra);
      const uint64_t n_on = Lines(logctl, args, Env{}), n_hdr = Lines(logctl, args, kHeaders),
                     n_off = Lines(logctl, args, kNoSkip);
      if (n_on != n_off || n_hdr != n_off || n_on == 0) {
        printf("find_bench: WRONG: %s: %" PRIu64 " lines with the index, %" PRIu64
               " with header summaries, %" PRIu64 " without skipping\n",
               c.label, n_on, n_hdr, n_off);
        wrong = true;
      }
      const std::vector<double> t = Turns(reps, {[&] { return TimeRun(logctl, args, Env{}); },
                                                 [&] { return TimeRun(logctl, args, kHeaders); },
                                                 [&] { return TimeRun(logctl, args, kNoSkip); }});
      // The goal is for rare records (about 1 in 150,000, as the rare app):
      // err is about 1 in 33,000, reported beside them.
      // user= is reported beside them: a field of more values per block
      // than its summary keys (FORMAT.md, "Block summaries") is found by
      // reading every block that has it.
      if (std::string(c.label) == "-p err")
        err_time = t[0];
      else if (std::string(c.label).find("name only") == std::string::npos)
        rare_worst = std::max(rare_worst, t[0]);
      printf("%-34s %10s %10s %10s %8s %8" PRIu64 "\n", c.label, Ms(t[0]).c_str(), Ms(t[1]).c_str(),
             Ms(t[2]).c_str(), Ratio(t[2] / t[0]).c_str(), n_on);
    }

    // --since the middle: time to the first line, and to the end.
    char since[32];
    snprintf(since, sizeof since, "@%" PRIu64, uint64_t(mid_ts / 1000000000u));
    const auto since_args = with({"--since", since});
    TimeFirstLine(logctl, since_args, Env{});
    TimeFirstLine(logctl, since_args, Env{true, false});
    double first_off;
    std::tie(first_on, first_off) = Pair(
        reps, [&] { return TimeFirstLine(logctl, since_args, Env{}); },
        [&] {
          return TimeFirstLine(logctl, since_args, Env{true, false});
        });
    TimeRun(logctl, since_args, Env{});
    double all_on = Median(reps, [&] { return TimeRun(logctl, since_args, Env{}); });
    printf("%-34s %10s %10s %8s\n", "--since <middle>: first line", Ms(first_on).c_str(),
           Ms(first_off).c_str(), Ratio(first_off / first_on).c_str());
    printf("%-34s %10s\n", "--since <middle>: to the end", Ms(all_on).c_str());
    const std::vector<std::string> tail = {"tail", "-n", "100", "--no-pager", "--file", ring};
    TimeRun(logctl, tail, Env{});
    double tail_off;
    std::tie(tail_on, tail_off) = Pair(
        reps, [&] { return TimeRun(logctl, tail, Env{}); },
        [&] {
          return TimeRun(logctl, tail, Env{true, false});
        });
    printf("%-34s %10s %10s %8s\n", "tail -n 100", Ms(tail_on).c_str(), Ms(tail_off).c_str(),
           Ratio(tail_off / tail_on).c_str());
  }

  if (greps) {
    // The ring as text, once: what GNU grep reads, and the byte count the
    // --grep rate is given in.
    t0 = NowNs();
    lt::ProcResult ex = lt::RunProcess(logctl, base, ChildOptions(Env{}, text), kLimit);
    const double export_sec = double(NowNs() - t0) / 1e9;
    struct stat stt;
    if (ex.status != 0 || stat(text.c_str(), &stt) != 0) {
      fprintf(stderr, "find_bench: logctl cat failed (%d): %s\n", ex.status, ex.err.c_str());
      return 1;
    }
    text_bytes = double(stt.st_size);
    printf("text: %.0f MiB of `logctl cat` output (written once in %.1f s)\n\n",
           text_bytes / 1048576, export_sec);

    // --grep: the default path (a second thread; a literal by substring
    // search) and the plain one (one thread, regexec), and GNU grep -c on the
    // exported text. The untimed runs count lines: every path, and GNU grep,
    // must find as many.
    const auto grep_args = with({"--grep", kLiteral});
    const auto grep_re = with({"--grep", "quota exceed(ed)?"});
    const uint64_t n_fast = Lines(logctl, grep_args, Env{}),
                   n_plain = Lines(logctl, grep_args, Env{false, true}),
                   n_re = Lines(logctl, grep_re, Env{}),
                   n_re_plain = Lines(logctl, grep_re, Env{false, true});
    lt::ProcResult gc = lt::RunProcess(grep, {"-c", kLiteral, text}, {}, kLimit);
    const uint64_t n_gnu = strtoull(gc.out.c_str(), nullptr, 10);
    if (n_fast != n_plain || n_fast != n_re || n_fast != n_re_plain || n_fast != n_gnu ||
        n_fast == 0) {
      printf("find_bench: WRONG: --grep lines: %" PRIu64 " default, %" PRIu64 " plain, %" PRIu64
             " regex, %" PRIu64 " regex plain, GNU grep -c %" PRIu64 "\n",
             n_fast, n_plain, n_re, n_re_plain, n_gnu);
      wrong = true;
    }
    double g_plain;
    std::tie(g_fast, g_plain) = Pair(
        reps, [&] { return TimeRun(logctl, grep_args, Env{}); },
        [&] {
          return TimeRun(logctl, grep_args, Env{false, true});
        });
    auto [g_re, g_re_plain] = Pair(
        reps, [&] { return TimeRun(logctl, grep_re, Env{}); },
        [&] {
          return TimeRun(logctl, grep_re, Env{false, true});
        });
    auto [g_cat, g_cat_plain] = Pair(
        reps, [&] { return TimeRun(logctl, base, Env{}); },
        [&] {
          return TimeRun(logctl, base, Env{false, true});
        });
    // Through a pipe: GNU grep stops at the first match when its output is
    // /dev/null.
    double g_gnu = Median(reps, [&] { return TimeRun(grep, {"-c", kLiteral, text}, Env{}, true); });
    auto rate = [&](double sec) { return Rate(text_bytes, sec); };
    printf("\n%-34s %10s %12s %10s %12s %8s\n", "rendered-text rate", "default", "", "plain", "",
           "speedup");
    auto row = [&](const char *label, double fast, double plain) {
      printf("%-34s %10s %12s %10s %12s %8s\n", label, Ms(fast).c_str(), rate(fast).c_str(),
             Ms(plain).c_str(), rate(plain).c_str(), Ratio(plain / fast).c_str());
    };
    row("--grep 'quota exceeded' (literal)", g_fast, g_plain);
    row("--grep 'quota exceed(ed)?' (regex)", g_re, g_re_plain);
    row("cat (everything rendered)", g_cat, g_cat_plain);
    printf("%-34s %10s %12s   (logctl --grep default: %s of GNU grep's time)\n",
           "GNU grep -c (text file)", Ms(g_gnu).c_str(), rate(g_gnu).c_str(),
           Ratio(g_fast / g_gnu).c_str());
  }

  if (keys_cost) {
    // What field keys cost the other filters: the same records in a second
    // ring whose field site has no FIELDS flag (so no field keys), the
    // source filters on both, in turns.
    const std::string plain = dir.File("plain.ring");
    uint64_t n_plain = 0;
    if (Fill(plain, size, &n_plain, false) == 0) return 1;
    printf("\n%-34s %10s %10s %8s\n", "field keys' cost (index)", "keys", "no keys", "ratio");
    const std::vector<std::pair<const char *, std::vector<std::string>>> cases = {
        {"--app rareapp", {"--app", kRareApp}},
        {"-u rare-batch", {"-u", kRareUnit}},
        {"--pid 777777", {"--pid", std::to_string(kRarePid)}}};
    for (const auto &[label, extra] : cases) {
      auto args = with(extra);
      auto pargs = args;
      pargs[3] = plain;  // "cat --no-pager --file RING"
      TimeRun(logctl, args, Env{});
      TimeRun(logctl, pargs, Env{});
      auto [k, nk] = Pair(
          reps, [&] { return TimeRun(logctl, args, Env{}); },
          [&] { return TimeRun(logctl, pargs, Env{}); });
      printf("%-34s %10s %10s %8s\n", label, Ms(k).c_str(), Ms(nk).c_str(), Ratio(k / nk).c_str());
    }
  }

  printf("\ngoals:\n");
  auto goal = [](bool met, const std::string &what) {
    printf("  [%s] %s\n", met ? "MET" : "MISS", what.c_str());
  };
  if (filters) {
    goal(rare_worst < 0.050,
         "a rare app, unit, pid, keyed field value or level < 50 ms (slowest of the five: " +
             Ms(rare_worst) + ")");
    goal(err_time < 0.050, "-p err (about 1 record in 33,000) < 50 ms (" + Ms(err_time) + ")");
    goal(first_on < 0.010, "--since <middle>: first line < 10 ms (" + Ms(first_on) + ")");
    goal(tail_on < 0.050, "tail -n 100 < 50 ms (" + Ms(tail_on) + ")");
  }
  if (greps)
    goal(text_bytes / g_fast >= 1e9,
         "--grep LITERAL >= 1 GB/s of rendered text (" + Rate(text_bytes, g_fast) + ")");
  if (g_failed) printf("find_bench: a logctl run failed (see stderr)\n");
  return wrong || g_failed ? 1 : 0;
}
