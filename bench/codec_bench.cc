// codec_bench.cc: compressed blocks (WriterOptions::codec). For each
// workload, in one run, the same records go through RingWriter into a fresh
// 16 MiB ring with codec none (the baseline), lz4, zstd level 1 (the
// default) and zstd level 3, until the ring has lapped once (its first slot
// is reused); then RingReader reads the whole ring back. Reported per row:
// records kept in the file and the ratio to none, bytes per record on disk,
// the writer's cost per record (timed around the Append calls only; the
// records are generated untimed, in chunks, beforehand), the reader's
// records/s over the whole ring, and the compression the writer saw.
// Medians of --reps repetitions (default 5, at least 3 unless --smoke); the
// repetitions are the outer loop, so a slow spell of the machine hits every
// codec rather than one.
//
// Every record read back is checked against what was written (the
// generator is a pure function of the seed and the record's index): on the
// first repetition of each row every record in the file, on every
// repetition the newest 1000 (RingReader::SeekLast) and that the newest is
// the last one appended. Any difference exits 1.
//
// Workloads (deterministic: the same build and seed give the same records;
// the seed is printed, --seed=N changes it; another compiler may evaluate
// the generator's draws in another order):
//   steady  site "%s k=%ld code=%d path=%s" as one program logs it in a
//           loop: the word "request", a counter, a code mostly 0, the same
//           21-byte path, timestamps ~120 ns apart; ~39-byte entries. The
//           shape the native goal (8x) was set on.
//   native  site "%s k=%ld code=%d path=%s": a short word (8 kinds), a
//           counter, a small int (mostly 0), a 21-byte path from a skewed
//           pool of 4096; 4 threads of one process. ~40-byte entries.
//   text    free-text lines of ~135 bytes as one "%s" argument, as `logctl
//           send`/`logctl run` store them: web access log, sshd, cron,
//           systemd, JSON application lines, firewall; client IPs from a
//           skewed pool, ports, ids, sizes and durations random.
//   syslog  the way logsinkd stores an RFC 3164 datagram (site
//           "%s%.0s%.0s", file "syslog:rfc3164", message, timestamp,
//           hostname), 4 senders, 16 facility/level sites, with much random
//           content (UUIDs, hex keys, base64 tokens, random IPv4s, sizes):
//           a poor case for compression, shown as it is.
// Record timestamps advance by a random 1..20 us (ns resolution) per record.
//
// usage: codec_bench [--smoke] [--reps=N] [--ring-mib=N] [--seed=N] [--show=N]
//   --smoke: a 1 MiB ring and one repetition (CI, well under a second of work).
//   --show=N: prints the first N records of each workload (their string
//   arguments, rendered roughly) and exits.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"
#include "logsink/proto/printf.h"
#include "logsink/storage/ring.h"

namespace {

using namespace logsink::bench;
namespace st = logsink::storage;

constexpr uint64_t kMiB = 1024 * 1024;

struct Config {
  bool smoke = false;
  int reps = 5;
  uint64_t ring_size = 16 * kMiB;
  uint64_t seed = 20261125;
  uint64_t verify_last = 1000;  // newest records checked on every repetition
  uint64_t show = 0;            // --show=N: print N records of each workload and exit
  size_t chunk = 4096;          // records generated (untimed) per timed batch
};
Config g_cfg;

// ---- deterministic randomness: record i's values depend on (seed, i) only ----

inline uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class Rng {
 public:
  Rng(uint64_t seed, uint64_t salt, uint64_t i)
      : s_(Mix(seed ^ Mix(salt * 0x100000001b3ull + i))) {}
  uint64_t Next() { return Mix(s_ += 0x9e3779b97f4a7c15ull); }
  uint32_t Below(uint32_t n) { return uint32_t(((Next() >> 32) * n) >> 32); }
  bool Chance(uint32_t percent) { return Below(100) < percent; }
  // A skewed pick in [0, n): the smaller of two draws (hot items are common).
  uint32_t Skewed(uint32_t n) { return std::min(Below(n), Below(n)); }
  template <size_t N>
  const char *Pick(const char *const (&a)[N]) {
    return a[Below(N)];
  }

 private:
  uint64_t s_;
};

// 2026-11-25 12:00:00 UTC; record i's timestamp is strictly increasing.
constexpr uint64_t kBaseTs = 1795608000ull * 1000000000ull;
inline uint64_t TsOf(uint64_t seed, uint64_t i) {
  // i * 10.5 us on average, plus jitter below the step: 1..20 us apart.
  return kBaseTs + i * 10500 + Rng(seed, 99, i).Below(9500);
}

// ---- text helpers -------------------------------------------------------------

__attribute__((format(printf, 2, 3))) void Appendf(std::string *out, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) out->append(buf, std::min<size_t>(size_t(n), sizeof buf - 1));
}

void PutStrArg(std::string *out, std::string_view s) {
  uint8_t v[LS_VARINT_MAX];
  out->append(reinterpret_cast<const char *>(v), ls_put_varint(v, s.size()));
  out->append(s);
}
void PutIntArg(std::string *out, int64_t x) {
  uint8_t v[LS_VARINT_MAX];
  out->append(reinterpret_cast<const char *>(v), ls_put_varint(v, ls_zigzag(x)));
}

const char *const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

struct WallTime {
  struct tm tm;
  unsigned ms;
};
WallTime WallOf(uint64_t ts) {
  WallTime w;
  time_t s = time_t(ts / 1000000000ull);
  gmtime_r(&s, &w.tm);
  w.ms = unsigned(ts / 1000000 % 1000);
  return w;
}
// "Nov 25 12:00:01" (RFC 3164, day space-padded)
void Rfc3164Time(std::string *out, const WallTime &w) {
  Appendf(out, "%s %2d %02d:%02d:%02d", kMonths[w.tm.tm_mon], w.tm.tm_mday, w.tm.tm_hour,
          w.tm.tm_min, w.tm.tm_sec);
}

// IPv4 of client k of a pool (the same k gives the same address).
void PoolIp(std::string *out, uint32_t k) {
  static const unsigned kFirst[] = {23, 31, 45, 66, 81, 92, 104, 151, 178, 185, 203, 212};
  uint64_t h = Mix(0xc0ffee + k);
  Appendf(out, "%u.%u.%u.%u", kFirst[h % 12], unsigned(h >> 8 & 255), unsigned(h >> 16 & 255),
          unsigned(1 + (h >> 24) % 254));
}
void RandomIp(std::string *out, Rng &r) {
  uint64_t h = r.Next();
  Appendf(out, "%u.%u.%u.%u", unsigned(1 + h % 223), unsigned(h >> 8 & 255),
          unsigned(h >> 16 & 255), unsigned(1 + (h >> 24) % 254));
}
void RandomHex(std::string *out, Rng &r, int digits) {
  static const char kHex[] = "0123456789abcdef";
  uint64_t h = 0;
  for (int i = 0; i < digits; i++) {
    if (i % 16 == 0) h = r.Next();
    out->push_back(kHex[h & 15]);
    h >>= 4;
  }
}
void RandomB64(std::string *out, Rng &r, int chars) {
  static const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint64_t h = 0;
  for (int i = 0; i < chars; i++) {
    if (i % 10 == 0) h = r.Next();
    out->push_back(kB64[h & 63]);
    h >>= 6;
  }
}
void RandomUuid(std::string *out, Rng &r) {
  RandomHex(out, r, 8);
  out->push_back('-');
  RandomHex(out, r, 4);
  out->append("-4");
  RandomHex(out, r, 3);
  out->push_back('-');
  RandomHex(out, r, 4);
  out->push_back('-');
  RandomHex(out, r, 12);
}

// ---- workloads ----------------------------------------------------------------

struct SiteDef {
  uint8_t level;
  uint32_t line;
  std::string fmt, file, sig;
};
struct SourceDef {
  uint32_t pid;
  std::string app, comm;
};
// One generated record: its site and source (indexes), timestamp, thread id
// and argument bytes (args[off, off + len) of its chunk).
struct Gen {
  uint32_t site = 0, source = 0;
  uint64_t ts = 0, tid = 0;
  size_t off = 0, len = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual const char *name() const = 0;
  // Appends record i's argument bytes to *args and fills the rest of *g.
  virtual void Make(uint64_t seed, uint64_t i, Gen *g, std::string *args) const = 0;
  std::vector<SiteDef> sites;
  std::vector<SourceDef> sources;

 protected:
  void AddSite(uint8_t level, uint32_t line, const char *fmt, const char *file) {
    char sig[LS_FMT_MAX_ARGS + 1];
    if (ls_fmt_signature(fmt, strlen(fmt), sig, sizeof sig) < 0) abort();
    sites.push_back({level, line, fmt, file, sig});
  }
};

class NativeWorkload : public Workload {
 public:
  NativeWorkload() {
    AddSite(6, 214, "%s k=%ld code=%d path=%s", "src/store/engine.cc");
    sources.push_back({31337, "store", "store"});
  }
  const char *name() const override { return "native"; }
  void Make(uint64_t seed, uint64_t i, Gen *g, std::string *args) const override {
    static const char *const kWords[] = {"get",  "put",  "del",  "scan",
                                         "open", "sync", "stat", "read"};
    Rng r(seed, 1, i);
    g->site = 0;
    g->source = 0;
    g->ts = TsOf(seed, i);
    g->tid = 31337 + r.Below(4);
    PutStrArg(args, r.Pick(kWords));
    PutIntArg(args, int64_t(1000000 + i));                         // the counter
    PutIntArg(args, r.Chance(85) ? 0 : int64_t(1 + r.Below(40)));  // the code
    uint32_t file = r.Skewed(4096);
    char path[32];
    snprintf(path, sizeof path, "/var/lib/db/t%02u/%05u", file % 64, (file * 2654435761u) % 100000);
    PutStrArg(args, path);  // 21 bytes
  }
};

// The shape the goal for native records was set on (one program logging in
// a loop: the same word and path, a counter, a code that is mostly 0,
// timestamps a tight loop apart); uncompressed it takes ~39 B per record,
// and an 8 KiB block of it compresses ~15x alone.
class SteadyWorkload : public Workload {
 public:
  SteadyWorkload() {
    AddSite(6, 88, "%s k=%ld code=%d path=%s", "src/app/main.c");
    sources.push_back({4711, "app", "app"});
  }
  const char *name() const override { return "steady"; }
  void Make(uint64_t seed, uint64_t i, Gen *g, std::string *args) const override {
    Rng r(seed, 4, i);
    g->site = 0;
    g->source = 0;
    g->ts = kBaseTs + i * 120 + r.Below(60);  // ~120 ns apart, with the clock's jitter
    g->tid = 4711;
    PutStrArg(args, "request");
    PutIntArg(args, int64_t(1000000 + i));
    PutIntArg(args, r.Chance(95) ? 0 : int64_t(1 + r.Below(3)));
    PutStrArg(args, "/var/lib/app/data.bin");  // 21 bytes
  }
};

class TextWorkload : public Workload {
 public:
  TextWorkload() {
    AddSite(6, 0, "%s", "text");  // what `logctl send` stores
    sources.push_back({4242, "web01", "logctl"});
  }
  const char *name() const override { return "text"; }
  void Make(uint64_t seed, uint64_t i, Gen *g, std::string *args) const override {
    Rng r(seed, 2, i);
    g->site = 0;
    g->source = 0;
    g->ts = TsOf(seed, i);
    g->tid = 0;
    line_.clear();
    Line(r, WallOf(g->ts), &line_);
    PutStrArg(args, line_);
  }

 private:
  static void SyslogPrefix(std::string *o, const WallTime &w) {
    Rfc3164Time(o, w);
    o->append(" web-prod-01 ");
  }
  static void Line(Rng &r, const WallTime &w, std::string *o) {
    uint32_t kind = r.Below(100);
    if (kind < 35) {  // web access log (nginx combined)
      static const char *const kAgents[] = {
          "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
          "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X)",
          "curl/8.5.0",
          "Go-http-client/2.0",
          "kube-probe/1.28",
          "python-requests/2.31.0"};
      PoolIp(o, r.Skewed(5000));
      Appendf(o, " - - [%02d/%s/%04d:%02d:%02d:%02d +0000] \"", w.tm.tm_mday, kMonths[w.tm.tm_mon],
              w.tm.tm_year + 1900, w.tm.tm_hour, w.tm.tm_min, w.tm.tm_sec);
      switch (r.Below(6)) {
        case 0:
          Appendf(o, "GET /api/v1/orders/%u", 100000 + r.Below(900000));
          break;
        case 1:
          Appendf(o, "GET /api/v1/users/%u/cart", r.Below(200000));
          break;
        case 2:
          Appendf(o, "GET /static/js/app.%s.js", r.Chance(90) ? "3f9c2a1b" : "77d0e4c2");
          break;
        case 3:
          o->append("GET /healthz");
          break;
        case 4:
          Appendf(o, "POST /api/v1/orders?cart=%u", r.Below(200000));
          break;
        default:
          Appendf(o, "GET /images/products/%u.jpg", r.Skewed(20000));
          break;
      }
      static const unsigned kStatus[] = {200, 200, 200, 200, 200, 200,
                                         200, 304, 404, 201, 301, 500};
      Appendf(o, " HTTP/1.1\" %u %u \"-\" \"%s\" rt=%u.%03u", kStatus[r.Below(12)],
              150 + r.Below(60000), r.Pick(kAgents), r.Chance(90) ? 0 : 1 + r.Below(3),
              r.Below(1000));
    } else if (kind < 55) {  // JSON application lines
      Appendf(o, "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03uZ\",\"host\":\"web-prod-01\",",
              w.tm.tm_year + 1900, w.tm.tm_mon + 1, w.tm.tm_mday, w.tm.tm_hour, w.tm.tm_min,
              w.tm.tm_sec, w.ms);
      switch (r.Below(3)) {
        case 0:
          Appendf(o,
                  "\"level\":\"info\",\"svc\":\"orders\",\"msg\":\"order placed\",\"order_id\":%u,"
                  "\"user_id\":%u,\"total_cents\":%u}",
                  100000 + r.Below(900000), r.Below(200000), 100 + r.Below(50000));
          break;
        case 1:
          Appendf(o,
                  "\"level\":\"warn\",\"svc\":\"payments\",\"msg\":\"retrying charge\","
                  "\"attempt\":%u,\"order_id\":%u,\"err\":\"gateway timeout\"}",
                  1 + r.Below(3), 100000 + r.Below(900000));
          break;
        default:
          Appendf(
              o,
              "\"level\":\"info\",\"svc\":\"api\",\"msg\":\"request\",\"path\":\"/v1/items/%u\","
              "\"status\":200,\"ms\":%u.%u,\"req\":\"",
              r.Below(50000), r.Below(300), r.Below(10));
          RandomHex(o, r, 16);
          o->append("\"}");
          break;
      }
    } else if (kind < 70) {  // sshd
      static const char *const kUsers[] = {"deploy", "alice", "backup", "ci"};
      static const char *const kKeys[] = {"u3B8qX0pVt4m2h7YcZr9kLw1sN6eJdQfGa5oTiRxHbE",
                                          "Zk2pW9xq7N1cR4vT8bL3mY6sJ0hF5dGaQeUiOtXrCwA",
                                          "f8Kq1Lr5Tn2Xy7Vb0Mw3Jc9Hd6Gs4Pa1Ze8Ui5Ox2Qk",
                                          "Q0aB9cD8eF7gH6iJ5kL4mN3oP2qR1sT0uV9wX8yZ7ab"};
      static const char *const kBad[] = {"admin", "test",     "oracle", "ubuntu",
                                         "git",   "postgres", "user1",  "pi"};
      SyslogPrefix(o, w);
      Appendf(o, "sshd[%u]: ", 1000 + r.Below(60000));
      uint32_t k = r.Below(4);
      if (k == 0) {
        uint32_t u = r.Below(4);
        Appendf(o, "Accepted publickey for %s from ", kUsers[u]);
        PoolIp(o, r.Skewed(50));
        Appendf(o, " port %u ssh2: ED25519 SHA256:%s", 1024 + r.Below(64000), kKeys[u]);
      } else if (k == 1) {
        Appendf(o, "Failed password for invalid user %s from ", r.Pick(kBad));
        RandomIp(o, r);
        Appendf(o, " port %u ssh2", 1024 + r.Below(64000));
      } else if (k == 2) {
        o->append("Connection closed by authenticating user root ");
        RandomIp(o, r);
        Appendf(o, " port %u [preauth]", 1024 + r.Below(64000));
      } else {
        uint32_t u = r.Below(4);
        Appendf(o, "pam_unix(sshd:session): session opened for user %s(uid=%u) by (uid=0)",
                kUsers[u], 1000 + u);
      }
    } else if (kind < 80) {  // cron
      static const char *const kCmds[] = {
          "/usr/local/bin/backup.sh --incremental --target /mnt/backup/daily >/dev/null 2>&1",
          "cd / && run-parts --report /etc/cron.hourly",
          "/usr/bin/php /var/www/app/artisan schedule:run >> /dev/null 2>&1",
          "command -v debian-sa1 > /dev/null && debian-sa1 1 1"};
      SyslogPrefix(o, w);
      Appendf(o, "CRON[%u]: ", 1000 + r.Below(60000));
      if (r.Chance(60))
        Appendf(o, "(%s) CMD (%s)", r.Chance(70) ? "root" : "www-data", r.Pick(kCmds));
      else
        Appendf(o, "pam_unix(cron:session): session %s for user root%s",
                r.Chance(50) ? "closed" : "opened", r.Chance(50) ? "" : "(uid=0) by (uid=0)");
    } else if (kind < 90) {  // systemd
      static const char *const kUnits[] = {"logrotate.service", "apt-daily.service",
                                           "man-db.service",    "certbot.service",
                                           "fstrim.service",    "sysstat-collect.service"};
      static const char *const kDescs[] = {"Rotate log files",
                                           "Daily apt download activities",
                                           "Daily man-db regeneration",
                                           "Certbot",
                                           "Discard unused blocks on filesystems",
                                           "system activity accounting tool"};
      SyslogPrefix(o, w);
      switch (r.Below(5)) {
        case 0: {
          uint32_t s = 1000 + r.Below(9000);
          Appendf(o, "systemd[1]: Started session-%u.scope - Session %u of User deploy.", s, s);
          break;
        }
        case 1:
          Appendf(o, "systemd[1]: %s: Deactivated successfully.", r.Pick(kUnits));
          break;
        case 2: {
          uint32_t u = r.Below(6);
          Appendf(o, "systemd[1]: Finished %s - %s.", kUnits[u], kDescs[u]);
          break;
        }
        case 3:
          Appendf(o, "systemd[1]: %s: Consumed %u.%03us CPU time, %u.%uM memory peak.",
                  r.Pick(kUnits), r.Below(5), r.Below(1000), 1 + r.Below(90), r.Below(10));
          break;
        default:
          Appendf(o, "systemd[1]: Starting %s...", r.Pick(kUnits));
          break;
      }
    } else {  // firewall (kernel, ufw)
      static const unsigned kPorts[] = {22, 23, 80, 443, 445, 3389, 5900, 8080};
      SyslogPrefix(o, w);
      Appendf(o, "kernel: [UFW BLOCK] IN=eth0 OUT= SRC=");
      RandomIp(o, r);
      Appendf(o, " DST=10.0.0.5 LEN=%u TTL=%u ID=%u PROTO=TCP SPT=%u DPT=%u SYN",
              r.Chance(70) ? 60u : 40u + r.Below(30), 30 + r.Below(100), r.Below(65536),
              1024 + r.Below(64000), kPorts[r.Below(8)]);
    }
  }
  mutable std::string line_;
};

class SyslogWorkload : public Workload {
 public:
  SyslogWorkload() {
    // As logsinkd stores RFC 3164 (daemon/src/text_record.cc): site line =
    // facility, file "syslog:rfc3164"; arguments message, timestamp, hostname.
    for (uint32_t fac : {1u, 3u, 4u, 16u})
      for (uint8_t lvl : {3, 4, 5, 6}) AddSite(lvl, fac, "%s%.0s%.0s", "syslog:rfc3164");
    sources.push_back({2101, "api", "api"});
    sources.push_back({2102, "worker", "worker"});
    sources.push_back({2103, "authd", "authd"});
    sources.push_back({2104, "billing", "billing"});
  }
  const char *name() const override { return "syslog"; }
  void Make(uint64_t seed, uint64_t i, Gen *g, std::string *args) const override {
    Rng r(seed, 3, i);
    g->ts = TsOf(seed, i);
    g->tid = 0;
    g->source = r.Below(4);
    static const uint8_t kLevels[] = {6, 6, 6, 6, 6, 6, 5, 5, 4, 3};
    uint32_t lvl = kLevels[r.Below(10)];
    g->site = r.Below(4) * 4 + (lvl - 3);
    msg_.clear();
    switch (r.Below(4)) {
      case 0:
        msg_.append("request ");
        RandomUuid(&msg_, r);
        msg_.append(" from ");
        RandomIp(&msg_, r);
        Appendf(&msg_, ":%u user=", 1024 + r.Below(64000));
        RandomB64(&msg_, r, 8);
        Appendf(&msg_, " took %u.%03u ms bytes=%u", r.Below(2000), r.Below(1000),
                r.Below(1u << 20));
        break;
      case 1:
        msg_.append("session ");
        RandomB64(&msg_, r, 32);
        msg_.append(" renewed for ");
        RandomHex(&msg_, r, 12);
        Appendf(&msg_, ", expires %" PRIu64, uint64_t(1795608000 + r.Below(1u << 30)));
        break;
      case 2:
        msg_.append("cache miss key=");
        RandomHex(&msg_, r, 32);
        Appendf(&msg_, " shard=%u size=%u ttl=%u from ", r.Below(64), r.Below(1u << 20),
                r.Below(86400));
        RandomIp(&msg_, r);
        break;
      default:
        msg_.append("job ");
        RandomUuid(&msg_, r);
        Appendf(&msg_, " exited rc=%d after %u.%03us, output digest ",
                r.Chance(80) ? 0 : 1 + int(r.Below(2)), r.Below(600), r.Below(1000));
        RandomB64(&msg_, r, 22);
        break;
    }
    ts_.clear();
    Rfc3164Time(&ts_, WallOf(g->ts));
    PutStrArg(args, msg_);
    PutStrArg(args, ts_);
    PutStrArg(args, "");  // hostname: the local form has none
  }

 private:
  mutable std::string msg_, ts_;
};

// ---- one run ------------------------------------------------------------------

struct Codec {
  uint8_t codec;
  int level;
  std::string label;
};

struct Result {
  bool ok = false;
  std::string error;
  uint64_t written = 0, kept = 0, verified = 0;
  double write_ns = NAN, write_cpu_ns = NAN, read_rps = NAN;
  uint64_t blocks_used = 0, bytes_used = 0, entry_bytes = 0, block_size = 0;
  st::WriterStats ws;
};

class CountingReporter : public st::Reporter {
 public:
  void Corruption(uint64_t off, std::string_view reason) override {
    if (problems++ == 0)
      first = "corruption at " + std::to_string(off) + ": " + std::string(reason);
  }
  void Lost(uint64_t n) override {
    if (problems++ == 0) first = "lost " + std::to_string(n) + " records";
  }
  uint64_t problems = 0;
  std::string first;
};

// Compares one record read back with what record `index` was.
bool Same(const Workload &wl, uint64_t seed, uint64_t index, const st::Record &rec,
          const std::vector<uint32_t> &site_ids, const std::vector<st::Source> &srcs,
          std::string *scratch, std::string *why) {
  Gen g;
  scratch->clear();
  wl.Make(seed, index, &g, scratch);
  const SiteDef &sd = wl.sites[g.site];
  const st::Source &src = srcs[g.source];
  const char *bad = nullptr;
  if (rec.kind != st::Record::Kind::kRecord)
    bad = "kind";
  else if (rec.site_id != site_ids[g.site] || !rec.site_known)
    bad = "site id";
  else if (rec.site.fmt != sd.fmt || rec.site.file != sd.file || rec.site.level != sd.level ||
           rec.site.line != sd.line)
    bad = "site";
  else if (rec.args != std::string_view(*scratch))
    bad = "argument bytes";
  else if (rec.ts_ns != g.ts)
    bad = "timestamp";
  else if (rec.tid != g.tid)
    bad = "tid";
  else if (rec.source_id != src.id || rec.pid != src.pid || rec.app != src.app ||
           rec.comm != src.comm)
    bad = "source";
  else if (rec.truncated != 0)
    bad = "truncated";
  if (!bad) return true;
  *why = "record " + std::to_string(index) + " (seq " + std::to_string(rec.seq) + "): " + bad +
         " differs";
  return false;
}

Result RunOnce(const Workload &wl, const Codec &c, const std::string &path, bool verify_all) {
  Result res;
  st::Env *env = st::Env::Default();
  unlink(path.c_str());
  st::WriterOptions o;
  o.file_size = g_cfg.ring_size;
  o.codec = c.codec;
  o.level = c.level;
  std::unique_ptr<st::RingWriter> w;
  st::Status s = st::RingWriter::Open(env, path, o, &w);
  if (!s.ok()) {
    res.error = "open: " + s.ToString();
    return res;
  }
  std::vector<st::Source> srcs;
  for (size_t k = 0; k < wl.sources.size(); k++) {
    const SourceDef &d = wl.sources[k];
    srcs.push_back(st::Source{w->next_source_id() + k, d.pid, uint32_t(getuid()),
                              uint32_t(getgid()), d.app, d.comm});
  }
  std::vector<uint32_t> site_ids;
  for (const SiteDef &d : wl.sites) {
    uint32_t id = w->Intern(st::Site{d.level, d.line, d.fmt, d.file});
    if (id == 0) {
      res.error = "Intern returned 0";
      return res;
    }
    site_ids.push_back(id);
  }
  const uint64_t first_seq = w->next_record_seq();
  const uint64_t lap_end = w->current_block_seq() + w->layout().block_count;  // slot 0 again

  // Write: generate a chunk (untimed), then time its appends; stop once the
  // writer has started the first block of the second lap.
  std::vector<Gen> gens(g_cfg.chunk);
  std::string args;
  uint64_t i = 0, timed_ns = 0, cpu_ns = 0;
  bool lapped = false;
  while (!lapped) {
    args.clear();
    for (size_t j = 0; j < gens.size(); j++) {
      gens[j].off = args.size();
      wl.Make(g_cfg.seed, i + j, &gens[j], &args);
      gens[j].len = args.size() - gens[j].off;
    }
    const uint8_t *base = reinterpret_cast<const uint8_t *>(args.data());
    size_t n = 0;
    const uint64_t c0 = ThreadCpuNs();
    const uint64_t t0 = NowNs();
    for (; n < gens.size();) {
      const Gen &g = gens[n];
      st::RecordIn r;
      r.source = &srcs[g.source];
      r.tid = g.tid;
      r.site_id = site_ids[g.site];
      r.signature = wl.sites[g.site].sig;
      r.ts_ns = g.ts;
      r.args = base + g.off;
      r.args_len = g.len;
      s = w->Append(r);
      if (!s.ok()) break;
      if ((++n & 63) == 0 && w->current_block_seq() >= lap_end) {
        lapped = true;
        break;
      }
    }
    timed_ns += NowNs() - t0;
    cpu_ns += ThreadCpuNs() - c0;
    i += n;
    if (!s.ok()) {
      res.error = "append: " + s.ToString();
      return res;
    }
  }
  res.written = i;
  res.write_ns = double(timed_ns) / double(i);
  res.write_cpu_ns = double(cpu_ns) / double(i);
  s = w->Flush();
  if (!s.ok()) {
    res.error = "flush: " + s.ToString();
    return res;
  }
  res.ws = w->stats();
  if (w->next_record_seq() != first_seq + i) {
    res.error = "the writer counted " + std::to_string(w->next_record_seq() - first_seq) +
                " records, " + std::to_string(i) + " were appended";
    return res;
  }
  w.reset();

  // Read the whole ring, oldest to newest (timed, Open included).
  CountingReporter rep;
  uint64_t count = 0, sink = 0, prev_seq = 0, oldest_seq = 0;
  {
    const uint64_t t0 = NowNs();
    std::unique_ptr<st::RingReader> rd;
    s = st::RingReader::Open(env, path, &rep, &rd);
    st::Record rec;
    while (s.ok() && (s = rd->Next(&rec)).ok()) {
      if (count == 0)
        oldest_seq = rec.seq;
      else if (rec.seq != prev_seq + 1) {
        res.error = "read: seq " + std::to_string(rec.seq) + " after " + std::to_string(prev_seq);
        return res;
      }
      prev_seq = rec.seq;
      sink += rec.args.size() + rec.ts_ns;
      count++;
    }
    const uint64_t dt = NowNs() - t0;
    if (!s.IsNotFound()) {
      res.error = "read: " + s.ToString();
      return res;
    }
    res.read_rps = double(count) / (double(dt) / 1e9);
    benchmark::DoNotOptimize(sink);
  }
  if (rep.problems) {
    res.error =
        "reader reported " + std::to_string(rep.problems) + " problems, first: " + rep.first;
    return res;
  }
  if (count == 0 || prev_seq != first_seq + i - 1) {
    res.error = "read " + std::to_string(count) + " records ending at seq " +
                std::to_string(prev_seq) + ", the last written is " +
                std::to_string(first_seq + i - 1);
    return res;
  }
  res.kept = count;

  // Untimed: sizes (Summarize) and checks against the generator.
  std::unique_ptr<st::RingReader> rd;
  s = st::RingReader::Open(env, path, &rep, &rd);
  st::RingReader::Summary sum;
  if (s.ok()) s = rd->Summarize(&sum);
  if (!s.ok()) {
    res.error = "summarize: " + s.ToString();
    return res;
  }
  if (sum.newest_seq - sum.oldest_seq + 1 != count || sum.oldest_seq != oldest_seq) {
    res.error = "Summarize says " + std::to_string(sum.newest_seq - sum.oldest_seq + 1) +
                " records, reading gave " + std::to_string(count);
    return res;
  }
  res.block_size = rd->layout().block_size;
  res.blocks_used = sum.blocks_used;
  res.bytes_used = sum.bytes_used;
  res.entry_bytes = sum.raw_bytes - sum.blocks_used * LS_BLK_HDR;

  std::string scratch, why;
  auto check_from = [&](bool all) -> bool {
    s = all ? rd->SeekOldest() : rd->SeekLast(g_cfg.verify_last);
    st::Record rec;
    uint64_t n = 0, last = 0;
    while (s.ok() && (s = rd->Next(&rec)).ok()) {
      if (rec.seq < first_seq || rec.seq >= first_seq + i) {
        why = "seq " + std::to_string(rec.seq) + " was never written";
        return false;
      }
      if (!Same(wl, g_cfg.seed, rec.seq - first_seq, rec, site_ids, srcs, &scratch, &why))
        return false;
      last = rec.seq;
      n++;
    }
    if (!s.IsNotFound()) {
      why = "verify read: " + s.ToString();
      return false;
    }
    const uint64_t want = all ? count : std::min<uint64_t>(g_cfg.verify_last, count);
    if (n != want || last != first_seq + i - 1) {
      why = "verify read " + std::to_string(n) + " records (wanted " + std::to_string(want) +
            "), last seq " + std::to_string(last);
      return false;
    }
    res.verified = std::max(res.verified, n);
    return true;
  };
  if (!check_from(false) || (verify_all && !check_from(true))) {
    res.error = "VERIFY FAILED: " + why;
    return res;
  }
  if (rep.problems) {
    res.error =
        "reader reported " + std::to_string(rep.problems) + " problems, first: " + rep.first;
    return res;
  }
  unlink(path.c_str());
  res.ok = true;
  return res;
}

// ---- driver -------------------------------------------------------------------

struct Row {
  std::vector<Result> runs;
  double Med(double Result::*f) const {
    std::vector<double> v;
    for (const Result &r : runs) v.push_back(r.*f);
    return MedianOf(v);
  }
  double MedU(uint64_t Result::*f) const {
    std::vector<double> v;
    for (const Result &r : runs) v.push_back(double(r.*f));
    return MedianOf(v);
  }
  double Min(double Result::*f) const {
    double m = INFINITY;
    for (const Result &r : runs) m = std::min(m, r.*f);
    return m;
  }
  double Max(double Result::*f) const {
    double m = -INFINITY;
    for (const Result &r : runs) m = std::max(m, r.*f);
    return m;
  }
};

void ParseFlags(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--smoke") {
      g_cfg.smoke = true;
    } else if (a.rfind("--reps=", 0) == 0) {
      g_cfg.reps = std::max(1, atoi(a.c_str() + 7));
    } else if (a.rfind("--ring-mib=", 0) == 0) {
      g_cfg.ring_size = std::max<uint64_t>(1, strtoull(a.c_str() + 11, nullptr, 10)) * kMiB;
    } else if (a.rfind("--seed=", 0) == 0) {
      g_cfg.seed = strtoull(a.c_str() + 7, nullptr, 0);
    } else if (a.rfind("--show=", 0) == 0) {
      g_cfg.show = strtoull(a.c_str() + 7, nullptr, 10);
    } else {
      fprintf(stderr,
              "usage: codec_bench [--smoke] [--reps=N] [--ring-mib=N] [--seed=N] [--show=N]\n"
              "unknown argument: %s\n",
              argv[i]);
      exit(2);
    }
  }
  if (g_cfg.smoke) {
    g_cfg.reps = 1;
    g_cfg.ring_size = 1 * kMiB;
  } else {
    g_cfg.reps = std::max(g_cfg.reps, 3);  // a median needs a few
  }
}

// Decodes arguments of signature sig ('s' and 'i' only: what the workloads
// use) into printable pieces; returns the bytes of string arguments.
size_t DecodeArgs(std::string_view sig, std::string_view args, std::vector<std::string> *out) {
  const uint8_t *p = reinterpret_cast<const uint8_t *>(args.data()), *end = p + args.size();
  size_t str_bytes = 0;
  for (char t : sig) {
    uint64_t v = 0;
    size_t n = ls_get_varint(p, end, &v);
    if (n == 0) break;
    p += n;
    if (t == 's') {
      if (v > size_t(end - p)) break;
      out->emplace_back(reinterpret_cast<const char *>(p), size_t(v));
      str_bytes += v;
      p += v;
    } else {
      out->push_back(std::to_string(ls_unzigzag(v)));
    }
  }
  return str_bytes;
}

void Describe(const Workload &wl, uint64_t n) {
  std::string args;
  std::vector<std::string> parts;
  Gen g;
  size_t str_bytes = 0;
  for (uint64_t i = 0; i < n; i++) {
    size_t off = args.size();
    wl.Make(g_cfg.seed, i, &g, &args);
    parts.clear();
    str_bytes += DecodeArgs(wl.sites[g.site].sig, std::string_view(args).substr(off), &parts);
  }
  printf("  %-7s %zu sites, %zu sources; mean argument bytes per record %.1f (strings %.1f)\n",
         wl.name(), wl.sites.size(), wl.sources.size(), double(args.size()) / double(n),
         double(str_bytes) / double(n));
}

void Show(const Workload &wl, uint64_t n) {
  printf("== %s ==\n", wl.name());
  for (uint64_t i = 0; i < n; i++) {
    std::string args;
    std::vector<std::string> parts;
    Gen g;
    wl.Make(g_cfg.seed, i, &g, &args);
    const SiteDef &sd = wl.sites[g.site];
    DecodeArgs(sd.sig, args, &parts);
    printf("%" PRIu64 " ts=%" PRIu64 " tid=%" PRIu64 " app=%s level=%u line=%u fmt=\"%s\":", i,
           g.ts, g.tid, wl.sources[g.source].app.c_str(), sd.level, sd.line, sd.fmt.c_str());
    for (const std::string &a : parts) printf(" [%s]", a.c_str());
    printf("\n");
  }
}

}  // namespace

int main(int argc, char **argv) {
  ParseFlags(argc, argv);
  ScratchDir dir;
  if (!dir.ok()) {
    fprintf(stderr, "codec_bench: cannot create a scratch directory\n");
    return 1;
  }
  const std::string path = dir.File("codec.ring");
  std::vector<std::unique_ptr<Workload>> wls;
  wls.push_back(std::make_unique<SteadyWorkload>());
  wls.push_back(std::make_unique<NativeWorkload>());
  wls.push_back(std::make_unique<TextWorkload>());
  wls.push_back(std::make_unique<SyslogWorkload>());
  const std::vector<Codec> codecs = {{LS_CODEC_NONE, 0, "none"},
                                     {LS_CODEC_LZ4, 0, "lz4"},
                                     {LS_CODEC_ZSTD, 1, "zstd-1"},
                                     {LS_CODEC_ZSTD, 3, "zstd-3"}};

  if (g_cfg.show) {
    for (const auto &wl : wls) Show(*wl, g_cfg.show);
    return 0;
  }
  st::Layout lay;
  st::Layout::Compute(g_cfg.ring_size, LS_BLOCK_SIZE_DEFAULT, 0, &lay);
  printf("codec_bench: %" PRIu64 " MiB ring (%u slots x %u KiB), %d repetition(s), seed %" PRIu64
         "%s; scratch %s\n",
         g_cfg.ring_size / kMiB, lay.block_count, lay.block_size / 1024, g_cfg.reps, g_cfg.seed,
         g_cfg.smoke ? " (smoke)" : "", dir.path().c_str());
  printf(
      "Each row: a fresh ring written until it lapped once, then read whole; verified: every\n"
      "record on the first repetition, the newest %" PRIu64 " on each.\n",
      g_cfg.verify_last);
  for (const auto &wl : wls) Describe(*wl, 20000);
  printf("\n");

  bool failed = false;
  std::map<std::string, Row> rows;  // workload/codec
  auto key = [](const Workload &wl, const Codec &c) {
    return std::string(wl.name()) + "/" + c.label;
  };
  for (int rep = 0; rep < g_cfg.reps && !failed; rep++) {
    for (const auto &wl : wls) {
      for (const Codec &c : codecs) {
        Result r = RunOnce(*wl, c, path, rep == 0);
        const std::string k = key(*wl, c);
        if (!r.ok) {
          printf("%-15s rep %d: FAILED: %s\n", k.c_str(), rep + 1, r.error.c_str());
          failed = true;
          break;
        }
        printf("%-15s rep %d: written %9" PRIu64 ", kept %9" PRIu64
               ", write %6.1f ns/rec (CPU %6.1f), read %8s rec/s, raw/stored %5.2fx, packs %" PRIu64
               " splits %" PRIu64 " blocks %" PRIu64
               ", compressed %.2fx per byte, verified %" PRIu64 "\n",
               k.c_str(), rep + 1, r.written, r.kept, r.write_ns, r.write_cpu_ns,
               Si(r.read_rps).c_str(),
               r.ws.sealed_stored_bytes
                   ? double(r.ws.sealed_raw_bytes) / double(r.ws.sealed_stored_bytes)
                   : NAN,
               r.ws.packs, r.ws.splits, r.ws.blocks_written,
               r.ws.sealed_raw_bytes ? double(r.ws.compressed_bytes) / double(r.ws.sealed_raw_bytes)
                                     : 0.0,
               r.verified);
        fflush(stdout);
        rows[k].runs.push_back(r);
      }
      if (failed) break;
    }
  }
  if (failed) {
    printf("\ncodec_bench: FAILED (see above)\n");
    return 1;
  }

  printf("\n== codec_bench: medians of %d repetition(s); ratios vs codec none of the same run ==\n",
         g_cfg.reps);
  printf(
      "kept = records in the %" PRIu64
      " MiB ring after one lap; B/rec disk = slots in use x %u B\n"
      "/ kept; B/rec entry = the entries' bytes decoded / kept; raw/stored = sealed blocks' entry\n"
      "bytes over their stored payload (writer stats); write = wall time of the Append calls "
      "only,\n"
      "ns per record (range over repetitions), CPU = the same by thread CPU time; read = "
      "RingReader\n"
      "Open + Next over the whole ring, records/s.\n",
      g_cfg.ring_size / kMiB, lay.block_size);
  printf("%-8s %-7s | %10s %8s | %10s %11s %10s | %18s %7s %8s | %10s %8s\n", "workload", "codec",
         "kept", "vs none", "B/rec disk", "B/rec entry", "raw/stored", "write ns/rec", "CPU",
         "vs none", "read rec/s", "vs none");
  std::map<std::string, double> kept_ratio;
  for (const auto &wl : wls) {
    const Row &none = rows[key(*wl, codecs[0])];
    const double none_kept = none.MedU(&Result::kept), none_ns = none.Med(&Result::write_ns),
                 none_read = none.Med(&Result::read_rps);
    for (const Codec &c : codecs) {
      const Row &row = rows[key(*wl, c)];
      const double kept = row.MedU(&Result::kept);
      const Result &r0 = row.runs[0];
      const double disk = double(r0.blocks_used * r0.block_size) / double(r0.kept);
      const double entry = double(r0.entry_bytes) / double(r0.kept);
      const double comp = r0.ws.sealed_stored_bytes
                              ? double(r0.ws.sealed_raw_bytes) / double(r0.ws.sealed_stored_bytes)
                              : NAN;
      const double ns = row.Med(&Result::write_ns), rd = row.Med(&Result::read_rps);
      char nsbuf[40];
      snprintf(nsbuf, sizeof nsbuf, "%.0f (%.0f-%.0f)", ns, row.Min(&Result::write_ns),
               row.Max(&Result::write_ns));
      kept_ratio[key(*wl, c)] = kept / none_kept;
      printf("%-8s %-7s | %10s %8s | %10.1f %11.1f %9.2fx | %18s %7.0f %8s | %10s %8s\n",
             wl->name(), c.label.c_str(), Si(kept).c_str(), Ratio(kept / none_kept).c_str(), disk,
             entry, comp, nsbuf, row.Med(&Result::write_cpu_ns), Ratio(ns / none_ns).c_str(),
             Si(rd).c_str(), Ratio(rd / none_read).c_str());
    }
  }

  printf(
      "\nTargets (records kept in the same ring, zstd level 1 = the default vs none; a MISS "
      "does not fail the run):\n");
  auto target = [&](const char *wl, double goal) {
    const double v = kept_ratio[std::string(wl) + "/zstd-1"];
    printf("  [%s] %s: zstd-1 keeps %s none's records, target >= %.0fx (zstd-3 %s, lz4 %s)\n",
           v >= goal ? "PASS" : "MISS", wl, Ratio(v).c_str(), goal,
           Ratio(kept_ratio[std::string(wl) + "/zstd-3"]).c_str(),
           Ratio(kept_ratio[std::string(wl) + "/lz4"]).c_str());
  };
  target("steady", 8);
  target("text", 5);
  printf("  (no target) native, varied arguments: zstd-1 keeps %s none's records\n",
         Ratio(kept_ratio["native/zstd-1"]).c_str());
  printf("  (no target) syslog: zstd-1 keeps %s none's records\n",
         Ratio(kept_ratio["syslog/zstd-1"]).c_str());
  return 0;
}
