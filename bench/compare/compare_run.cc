// compare_run.cc: one measurement of the comparison: K sender processes log N
// records in total to one system, and the parent times how fast they were
// accepted and how long until all of them were on disk, counts what landed
// and the daemon's CPU time, and prints one line of key=value pairs.
//
// usage: compare_run --system logsink|logsink-nb|syslog|spdlog --n N --clients K
//          [--threads T] [--socket PATH] [--ring PATH] [--out PATH]
//          [--daemon-pid PID] [--timeout SEC] [--stable SEC] [--send-delay-ms N]
//   logsink     liblogsink with default options (waits for buffer space while
//               the daemon drains, like syslog(3) on a full socket)
//   logsink-nb  liblogsink with LS_BLOCK_NEVER, the previous default (drops
//               and counts when a thread's buffer is full)
//   syslog      RFC 3164 datagrams on --socket; --out is the daemon's output file
//   spdlog      in-process async logger; --out is a prefix, each process writes OUT.k
// --threads T: each of the K processes logs its share from T threads (one
// client, connection or logger per process, as an application would).
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "landed.h"
#include "senders.h"

namespace logsink::compare {
namespace {

constexpr const char *kMarker = "logged in from port";

struct Args {
  std::string system, socket, ring, out;
  uint64_t n = 0;
  int clients = 1, threads = 1;
  pid_t daemon_pid = 0;
  double timeout_s = 600, stable_s = 3;
  int send_delay_ms = -1;  // logsink: ls_options.send_delay_ms (-1: the default)
};

[[noreturn]] void Usage(const char *why) {
  fprintf(stderr, "compare_run: %s\nsee the comment at the top of bench/compare/compare_run.cc\n",
          why);
  exit(2);
}

Args Parse(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; i++) {
    std::string k = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + k).c_str());
    std::string v = argv[++i];
    if (k == "--system")
      a.system = v;
    else if (k == "--socket")
      a.socket = v;
    else if (k == "--ring")
      a.ring = v;
    else if (k == "--out")
      a.out = v;
    else if (k == "--n")
      a.n = strtoull(v.c_str(), nullptr, 10);
    else if (k == "--clients")
      a.clients = atoi(v.c_str());
    else if (k == "--threads")
      a.threads = atoi(v.c_str());
    else if (k == "--daemon-pid")
      a.daemon_pid = atoi(v.c_str());
    else if (k == "--timeout")
      a.timeout_s = atof(v.c_str());
    else if (k == "--stable")
      a.stable_s = atof(v.c_str());
    else if (k == "--send-delay-ms")
      a.send_delay_ms = atoi(v.c_str());
    else
      Usage(("unknown option " + k).c_str());
  }
  if (a.n == 0 || a.clients < 1 || a.clients > 64) Usage("need --n > 0 and --clients 1..64");
  if (a.threads < 1 || a.threads > 64) Usage("need --threads 1..64");
  return a;
}

// utime + stime of a process in seconds, from /proc/<pid>/stat; -1 if gone.
double CpuSeconds(pid_t pid) {
  if (pid <= 0) return -1;
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE *f = fopen(path, "re");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *p = strrchr(buf, ')');  // comm may hold spaces
  if (!p) return -1;
  unsigned long long ut = 0, st = 0;
  // After ")": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(14)
  // stime(15)
  if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
    return -1;
  return static_cast<double>(ut + st) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

uint64_t FileSize(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// The child: open, say ready, wait for the start, log its share, report.
[[noreturn]] void Child(const Args &a, const Target &t, uint64_t first, uint64_t count, int ready_w,
                        int start_r, int result_w) {
  SenderResult r;
  int err = 0;
  std::unique_ptr<Sender> s(OpenSender(t, &err));
  r.error = err;
  char c = s ? 'r' : 'e';
  (void)!write(ready_w, &c, 1);
  if (s) {
    char b;
    while (read(start_r, &b, 1) < 0 && errno == EINTR) {
    }
    if (a.threads == 1) {
      s->Run(first, count);
    } else {
      std::vector<std::thread> th;
      for (int i = 0; i < a.threads; i++) {
        uint64_t lo = count * static_cast<uint64_t>(i) / static_cast<uint64_t>(a.threads);
        uint64_t hi = count * static_cast<uint64_t>(i + 1) / static_cast<uint64_t>(a.threads);
        th.emplace_back([&s, first, lo, hi] { s->Run(first + lo, hi - lo); });
      }
      for (auto &x : th) x.join();
    }
    r.loop_end_ns = MonoNs();
    s->Finish(&r);
    r.done_ns = MonoNs();
  }
  (void)!write(result_w, &r, sizeof r);  // < PIPE_BUF: atomic
  _exit(0);
}

int Main(int argc, char **argv) {
  Args a = Parse(argc, argv);
  System sys;
  if (a.system == "logsink")
    sys = System::kLogsink;
  else if (a.system == "logsink-nb")
    sys = System::kLogsinkNonBlocking;
  else if (a.system == "syslog")
    sys = System::kSyslog;
  else if (a.system == "spdlog")
    sys = System::kSpdlog;
  else
    Usage("unknown --system");
  bool is_logsink = sys == System::kLogsink || sys == System::kLogsinkNonBlocking;
  if (is_logsink && (a.socket.empty() || a.ring.empty()))
    Usage("logsink needs --socket and --ring");
  if (sys == System::kSyslog && (a.socket.empty() || a.out.empty()))
    Usage("syslog needs --socket and --out");
  if (sys == System::kSpdlog && a.out.empty()) Usage("spdlog needs --out");

  int ready[2], start[2], result[2];
  if (pipe2(ready, O_CLOEXEC) || pipe2(start, O_CLOEXEC) || pipe2(result, O_CLOEXEC)) {
    perror("compare_run: pipe");
    return 2;
  }
  std::vector<pid_t> kids;
  std::vector<std::string> spd_files;
  for (int k = 0; k < a.clients; k++) {
    uint64_t first = a.n * static_cast<uint64_t>(k) / static_cast<uint64_t>(a.clients);
    uint64_t last = a.n * static_cast<uint64_t>(k + 1) / static_cast<uint64_t>(a.clients);
    Target t;
    t.system = sys;
    t.socket = a.socket;
    t.send_delay_ms = a.send_delay_ms;
    t.out_file = a.out + "." + std::to_string(k);
    if (sys == System::kSpdlog) spd_files.push_back(t.out_file);
    pid_t p = fork();
    if (p < 0) {
      perror("compare_run: fork");
      return 2;
    }
    if (p == 0) {
      close(ready[0]);
      close(start[1]);
      close(result[0]);
      Child(a, t, first, last - first, ready[1], start[0], result[1]);
    }
    kids.push_back(p);
  }
  close(ready[1]);
  close(start[0]);
  close(result[1]);

  // Every sender has connected (or failed) before the clock starts.
  int ready_ok = 0, ready_bad = 0;
  while (ready_ok + ready_bad < a.clients) {
    char c;
    ssize_t r = read(ready[0], &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    (c == 'r' ? ready_ok : ready_bad)++;
  }
  double cpu0 = CpuSeconds(a.daemon_pid);
  int64_t t0 = MonoNs();
  close(start[1]);  // EOF releases every child at once

  std::unique_ptr<LineCounter> lines;
  if (sys == System::kSyslog) lines = std::make_unique<LineCounter>(a.out, kMarker);
  std::vector<SenderResult> results;
  int live = a.clients;
  uint64_t seen = 0;
  int64_t last_change = t0, t_e2e = 0, all_done = 0;
  bool timeout = false;
  int errors_died = 0;
  for (;;) {
    // Collect the children that finished.
    pollfd pfd{result[0], POLLIN, 0};
    while (live > 0 && poll(&pfd, 1, 0) == 1) {
      SenderResult r;
      ssize_t n = read(result[0], &r, sizeof r);
      if (n != sizeof r) break;
      results.push_back(r);
      if (--live == 0) all_done = MonoNs();
    }
    // A child that died without reporting must not hold the wait open.
    int reaped = 0;
    for (pid_t &p : kids) {
      if (p > 0 && waitpid(p, nullptr, WNOHANG) == p) p = -p;
      if (p < 0) reaped++;
    }
    if (live > 0 && reaped == a.clients && poll(&pfd, 1, 0) == 0) {
      errors_died = live;
      live = 0;
      all_done = MonoNs();
    }
    uint64_t now_count = seen;
    if (is_logsink) {
      int64_t v = RingNextSeq(a.ring);
      if (v > 0) now_count = static_cast<uint64_t>(v);
    } else if (lines) {
      now_count = lines->Count();
    } else if (live == 0) {  // spdlog: on disk when every process finished its shutdown
      t_e2e = 0;
      for (auto &r : results) t_e2e = std::max(t_e2e, r.done_ns);
      break;
    }
    int64_t now = MonoNs();
    if (now_count != seen) seen = now_count, last_change = now;
    if (seen >= a.n) {
      t_e2e = now;
      break;
    }
    if (live == 0 &&
        now - std::max(last_change, all_done) > static_cast<int64_t>(a.stable_s * 1e9)) {
      t_e2e = last_change;  // it stopped growing short of N
      break;
    }
    if (now - t0 > static_cast<int64_t>(a.timeout_s * 1e9)) {
      timeout = true;
      t_e2e = last_change;
      break;
    }
    usleep(1000);  // a poll: RingNextSeq costs a few header reads
  }
  double cpu1 = CpuSeconds(a.daemon_pid);
  // Senders still running after a timeout are stopped (our own children only).
  for (pid_t p : kids) {
    if (p <= 0) continue;
    if (timeout) kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
  // Reports of children that finished after the last record landed.
  for (pollfd pfd{result[0], POLLIN, 0}; live > 0 && poll(&pfd, 1, 0) == 1; live--) {
    SenderResult r;
    if (read(result[0], &r, sizeof r) != sizeof r) break;
    results.push_back(r);
  }
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  double sender_cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                      static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;

  uint64_t sent = 0, dropped = 0, dropped_reported = 0;
  int64_t loop_end = t0;
  int errors = ready_bad + errors_died;
  for (auto &r : results) {
    sent += r.sent;
    dropped += r.dropped;
    dropped_reported += r.dropped_reported;
    loop_end = std::max(loop_end, r.loop_end_ns);
    if (r.error) errors++;
  }
  // What is on disk now, counted record by record / line by line.
  uint64_t landed = 0, disk_bytes = 0, disk_records = 0;
  std::string note = "-";
  if (is_logsink) {
    RingCount c = CountRing(a.ring);
    if (!c.ok) note = "ring:" + c.error;
    // Records the ring wrapped over were counted by sequence number; a fresh
    // ring holds only this run's records and DROPPED entries.
    landed = c.overwritten + c.in_ring;
    disk_bytes = c.block_bytes;
    disk_records = c.in_ring + c.dropped_entries;
    if (c.overwritten)
      note =
          "ring wrapped: " + std::to_string(c.overwritten) + " oldest overwritten (counted by seq)";
  } else if (lines) {
    landed = lines->Count();
    disk_bytes = FileSize(a.out);
    disk_records = landed;
  } else {
    for (auto &f : spd_files) {
      LineCounter lc(f, kMarker);
      landed += lc.Count();
      disk_bytes += FileSize(f);
    }
    disk_records = landed;
  }
  for (auto &ch : note)
    if (ch == ' ') ch = '_';
  double acc_s = static_cast<double>(loop_end - t0) / 1e9;
  double e2e_s = static_cast<double>(t_e2e - t0) / 1e9;
  printf(
      "system=%s n=%llu clients=%d threads=%d sent=%llu client_dropped=%llu dropped_reported=%llu "
      "landed=%llu lost=%lld accepted_s=%.3f accepted_rps=%.0f e2e_s=%.3f e2e_rps=%.0f "
      "bytes_per_rec=%.1f daemon_cpu_s=%.2f sender_cpu_s=%.2f errors=%d timeout=%d note=%s\n",
      a.system.c_str(), static_cast<unsigned long long>(a.n), a.clients, a.threads,
      static_cast<unsigned long long>(sent), static_cast<unsigned long long>(dropped),
      static_cast<unsigned long long>(dropped_reported), static_cast<unsigned long long>(landed),
      static_cast<long long>(a.n) - static_cast<long long>(landed), acc_s,
      acc_s > 0 ? static_cast<double>(sent) / acc_s : 0, e2e_s,
      e2e_s > 0 ? static_cast<double>(landed) / e2e_s : 0,
      disk_records ? static_cast<double>(disk_bytes) / static_cast<double>(disk_records) : 0,
      cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1, sender_cpu, errors, timeout ? 1 : 0, note.c_str());
  return errors ? 1 : 0;
}

}  // namespace
}  // namespace logsink::compare

int main(int argc, char **argv) { return logsink::compare::Main(argc, argv); }
