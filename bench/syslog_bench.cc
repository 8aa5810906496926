// syslog_bench.cc: the syslog socket against the native path, in
// the same run. The same message, "user N logged in from port P request R",
// N records each way into a fresh logsinkd (ring large enough that nothing
// is overwritten):
//   syslog: one sender thread sends the bytes glibc's syslog(3) sends
//           ("<14>Nov 25 12:00:00 bench[PID]: user ...") as blocking
//           datagrams to the syslog socket;
//   native: LS_LOG(c, LS_INFO, "user %d logged in from port %d request %d",
//           ...) through liblogsink (default options: a full buffer waits while
//           the daemon drains, nothing dropped).
// Each timed from the first send until the ring file holds all N records
// (polled every ms; the daemon's 100 ms flush timer is included), plus the
// daemon's CPU per record and the bytes per record in the ring. Prints every
// repetition, the medians and the ratios.
//
// usage: syslog_bench [--records N] [--reps R] [--bin-dir DIR]
#include <logsink/logsink.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/daemon_process.h"
#include "common/temp_dir.h"
#include "logsink/storage/ring.h"

namespace st = logsink::storage;

namespace {

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty()      ? 0
         : v.size() % 2 ? v[v.size() / 2]
                        : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Result {
  double records_per_s = 0, bytes_per_record = 0, daemon_cpu_ns = 0;
  uint64_t landed = 0;
};

uint64_t RingRecordsNow(st::RingReader *r) {
  st::Record rec;
  if (!r->SeekLast(1).ok() || !r->Next(&rec).ok()) return 0;
  return rec.seq + 1;
}

// Waits until the ring holds n records (or 10 s without progress).
uint64_t WaitRing(const std::string &ring, uint64_t n) {
  std::unique_ptr<st::RingReader> reader;
  if (!st::RingReader::Open(st::Env::Default(), ring, nullptr, &reader).ok()) return NowNs();
  uint64_t last = 0, last_change = NowNs();
  for (;;) {
    uint64_t got = RingRecordsNow(reader.get()), now = NowNs();
    if (got >= n) return now;
    if (got != last) last = got, last_change = now;
    if (now - last_change > 10000000000ull) return last_change;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

bool Summarize(const std::string &ring, Result *r) {
  std::unique_ptr<st::RingReader> reader;
  st::RingReader::Summary sum;
  if (!st::RingReader::Open(st::Env::Default(), ring, nullptr, &reader).ok() ||
      !reader->Summarize(&sum).ok())
    return false;
  r->landed = sum.newest_seq - sum.oldest_seq + 1;
  r->bytes_per_record = double(sum.bytes_used) / double(r->landed);
  return true;
}

std::string g_bin;

bool Start(logsink::test::DaemonProcess *d, const logsink::test::TempDir &dir, bool syslog) {
  logsink::test::DaemonOptions o;
  o.bin = g_bin + "/logsinkd";
  o.args = {"--socket", dir / "n.sock", "--file",      dir / "r.ring",
            "--size",   "256MiB",       "--log-level", "warn"};
  if (syslog) {
    o.args.push_back("--syslog-socket");
    o.args.push_back(dir / "s.sock");
  }
  std::string err;
  if (!d->Start(o, &err)) {
    fprintf(stderr, "syslog_bench: logsinkd: %s\n", err.c_str());
    return false;
  }
  return true;
}

bool RunSyslog(uint64_t n, Result *r) {
  logsink::test::TempDir dir;
  logsink::test::DaemonProcess d;
  if (!Start(&d, dir, true)) return false;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s", (dir / "s.sock").c_str());
  if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
    perror("syslog_bench: connect");
    return false;
  }
  char buf[256];
  int pid = int(getpid());
  double cpu0 = logsink::test::ProcessCpuSeconds(d.pid());
  uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < n; i++) {
    int len = snprintf(buf, sizeof buf,
                       "<14>Nov 25 12:00:00 bench[%d]: user %d logged in from port %d request %d",
                       pid, int(i % 100000), int(1024 + i % 60000), int(i));
    while (send(fd, buf, size_t(len), 0) < 0 && errno == EINTR) {
    }
  }
  uint64_t t_end = WaitRing(dir / "r.ring", n);
  r->daemon_cpu_ns = (logsink::test::ProcessCpuSeconds(d.pid()) - cpu0) * 1e9 / double(n);
  close(fd);
  d.Stop();
  r->records_per_s = double(n) / (double(t_end - t0) / 1e9);
  return Summarize(dir / "r.ring", r);
}

bool RunNative(uint64_t n, Result *r) {
  logsink::test::TempDir dir;
  logsink::test::DaemonProcess d;
  if (!Start(&d, dir, false)) return false;
  ls_client *c = ls_open((dir / "n.sock").c_str(), "bench", nullptr);  // default options
  if (!c) {
    fprintf(stderr, "syslog_bench: ls_open failed\n");
    return false;
  }
  double cpu0 = logsink::test::ProcessCpuSeconds(d.pid());
  uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < n; i++)
    LS_LOG(c, LS_INFO, "user %d logged in from port %d request %d", int(i % 100000),
           int(1024 + i % 60000), int(i));
  ls_flush(c);
  uint64_t t_end = WaitRing(dir / "r.ring", n);
  r->daemon_cpu_ns = (logsink::test::ProcessCpuSeconds(d.pid()) - cpu0) * 1e9 / double(n);
  ls_close(c);
  d.Stop();
  r->records_per_s = double(n) / (double(t_end - t0) / 1e9);
  return Summarize(dir / "r.ring", r);
}

}  // namespace

int main(int argc, char **argv) {
  uint64_t n = 1000000;
  int reps = 3;
  g_bin = LOGSINK_BIN_DIR;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--records" && i + 1 < argc) {
      n = std::stoull(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::stoi(argv[++i]);
    } else if (a == "--bin-dir" && i + 1 < argc) {
      g_bin = argv[++i];
    } else {
      fprintf(stderr, "usage: syslog_bench [--records N] [--reps R] [--bin-dir DIR]\n");
      return 2;
    }
  }
  printf(
      "# syslog_bench: %llu records per run, %d repetitions, message \"user %%d logged in "
      "from port %%d request %%d\"\n",
      static_cast<unsigned long long>(n), reps);
  printf("%-7s %4s %14s %12s %16s %10s\n", "path", "rep", "records/s", "bytes/rec", "daemon ns/rec",
         "landed");
  std::vector<double> s_rate, s_bytes, s_cpu, n_rate, n_bytes, n_cpu;
  for (int rep = 0; rep < reps; rep++) {
    Result s, nat;
    if (!RunSyslog(n, &s) || !RunNative(n, &nat)) return 1;
    printf("%-7s %4d %14.0f %12.2f %16.1f %10llu\n", "syslog", rep, s.records_per_s,
           s.bytes_per_record, s.daemon_cpu_ns, static_cast<unsigned long long>(s.landed));
    printf("%-7s %4d %14.0f %12.2f %16.1f %10llu\n", "native", rep, nat.records_per_s,
           nat.bytes_per_record, nat.daemon_cpu_ns, static_cast<unsigned long long>(nat.landed));
    s_rate.push_back(s.records_per_s);
    s_bytes.push_back(s.bytes_per_record);
    s_cpu.push_back(s.daemon_cpu_ns);
    n_rate.push_back(nat.records_per_s);
    n_bytes.push_back(nat.bytes_per_record);
    n_cpu.push_back(nat.daemon_cpu_ns);
  }
  printf("\nmedians        %14s %12s %16s\n", "records/s", "bytes/rec", "daemon ns/rec");
  printf("syslog         %14.0f %12.2f %16.1f\n", Median(s_rate), Median(s_bytes), Median(s_cpu));
  printf("native         %14.0f %12.2f %16.1f\n", Median(n_rate), Median(n_bytes), Median(n_cpu));
  printf("native/syslog  %13.1fx %11.2fx %15.2fx\n", Median(n_rate) / Median(s_rate),
         Median(s_bytes) / Median(n_bytes), Median(s_cpu) / Median(n_cpu));
  printf("(records/s: native over syslog; bytes and CPU per record: syslog over native)\n");
  return 0;
}
