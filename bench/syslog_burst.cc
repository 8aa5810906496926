// syslog_burst.cc: a syslog sender that does not block (like
// nginx's syslog output: MSG_DONTWAIT, and a datagram that meets a full
// queue is gone) against logsinkd's syslog socket and, in the same run,
// rsyslogd's imuxsock. Each receiver's socket is made in a private network
// namespace whose net.unix.max_dgram_qlen is the queue length measured (10,
// the kernel's default, and 512, what systemd's sysctl.d sets), so the
// host's setting does not matter. The sender sends N datagrams of an nginx
// access-log line in bursts of B, one burst every P microseconds; counted:
// sent (accepted by the kernel), lost (EAGAIN) and landed (logsinkd's
// syslog_received, rsyslogd's output lines), waited for until all that were
// sent have landed. Optionally (--busy) a native client keeps logsinkd's loop
// busy meanwhile with a frame of 16,000 records every 8 ms (rsyslogd has no
// such clients and runs unloaded: a blocking syslog sender instead would
// keep the short queue full and measure that sender, not the receiver).
// Prints every repetition, the medians and the ratios.
//
// usage: syslog_burst [--datagrams N] [--burst B] [--pause-us P] [--reps R]
//                     [--qlen Q]... [--busy] [--logsinkd PATH]
// Needs root, or unprivileged user namespaces, for the network namespaces.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/netns.h"
#include "daemon/harness.h"

namespace lt = logsink::test;

namespace {

struct Options {
  int datagrams = 100000, burst = 8, pause_us = 500, reps = 3;
  std::vector<int> qlens;
  bool busy = false;
  std::string logsinkd = lt::BinPath("logsinkd");
};

struct Result {
  int sent = 0, lost = 0;
  uint64_t landed = 0;
  double seconds = 0;        // sending, from the first burst to the last
  double cpu_per_dgram = 0;  // the receiver's CPU (all threads) per datagram landed, seconds
};

sockaddr_un Address(const std::string &path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  return a;
}

std::string Line(int i) {
  return "<190>Nov 26 12:00:00 nginx: 127.0.0.1 - - [26/Nov/2026:12:00:00 +0000] \"GET /item/" +
         std::to_string(i) + " HTTP/1.1\" 200 612 \"-\" \"ApacheBench/2.3\"";
}

// The non-blocking sender; returns sent/lost and the sending time.
Result SendBursts(const std::string &path, const Options &o) {
  Result r;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un a = Address(path);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.datagrams;) {
    for (int k = 0; k < o.burst && i < o.datagrams; k++, i++) {
      std::string m = Line(i);
      if (sendto(fd, m.data(), m.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr *>(&a),
                 sizeof a) == ssize_t(m.size()))
        r.sent++;
      else
        r.lost++;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(o.pause_us));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  close(fd);
  return r;
}

uint64_t StatsValue(const std::string &socket, const std::string &name) {
  lt::Client c(socket);
  return c.Stats()[name];
}

Result RunLogsinkd(int qlen, const Options &o) {
  lt::TempDir dir;
  std::string path = dir / "syslog.sock", sock = dir / "logsink.sock";
  std::string err;
  int dgram = lt::BindDatagramWithQueue(path, qlen, &err);
  int stream = lt::ListenUnix(sock);
  if (dgram < 0 || stream < 0) {
    std::fprintf(stderr, "syslog_burst: %s\n", err.c_str());
    std::exit(1);
  }
  lt::DaemonOptions d;
  d.bin = o.logsinkd;
  d.args = {"--file", dir / "logsink.ring", "--size", "256MiB", "--log-level", "warn"};
  d.stderr_path = dir / "logsinkd.err";
  d.child_setup = lt::SocketActivation({stream, dgram});
  lt::DaemonProcess p;
  if (!p.Start(d, &err)) {
    std::fprintf(stderr, "syslog_burst: logsinkd: %s\n", err.c_str());
    std::exit(1);
  }
  close(stream);
  close(dgram);
  // The native load's CPU is the daemon's too: with --busy the CPU figure
  // is not per datagram and is not printed.
  const double cpu0 = lt::ProcessCpuSeconds(p.pid());
  std::atomic<bool> stop{false};
  std::thread busy;
  if (o.busy)
    busy = std::thread([&] {
      namespace pt = logsink::test;
      int fd = lt::ConnectUnix(sock);
      std::string hello = pt::Hello(1, "native") + pt::Intern(1, 6, 1, "native %d", "n.c");
      send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
      std::vector<pt::Rec> recs;  // one frame, built once and sent again and again
      for (int i = 0; i < 16000; i++) recs.push_back({1, uint64_t(i), {pt::Arg::I(i)}});
      const std::string b = pt::Records(1, recs);
      while (!stop) {
        for (size_t off = 0; off < b.size();) {
          ssize_t n = send(fd, b.data() + off, b.size() - off, MSG_NOSIGNAL);
          if (n <= 0) break;
          off += size_t(n);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(8));
      }
      close(fd);
    });
  Result r = SendBursts(path, o);
  stop = true;
  if (busy.joinable()) busy.join();
  lt::WaitUntil([&] { return StatsValue(sock, "syslog_received") >= uint64_t(r.sent); },
                lt::Ms(60000), lt::Ms(10));
  r.landed = StatsValue(sock, "syslog_received");
  r.cpu_per_dgram =
      (lt::ProcessCpuSeconds(p.pid()) - cpu0) / double(std::max<uint64_t>(r.landed, 1));
  p.Stop();
  return r;
}

Result RunRsyslogd(int qlen, const Options &o) {
  lt::TempDir dir;
  std::string path = dir / "sys.sock", out = dir / "out.log";
  mkdir((dir / "work").c_str(), 0700);
  {
    std::ofstream c(dir / "rsyslog.conf");
    c << "global(workDirectory=\"" << dir / "work"
      << "\")\n"
      << "module(load=\"imuxsock\" SysSock.Use=\"off\")\n"
      << "input(type=\"imuxsock\" Socket=\"" << path << "\" RateLimit.Interval=\"0\")\n"
      << "*.* action(type=\"omfile\" file=\"" << out << "\")\n";
  }
  std::string conf = dir / "rsyslog.conf", pidfile = dir / "rsyslogd.pid",
              errf = dir / "rsyslogd.err";
  pid_t pid = fork();
  if (pid == 0) {
    int e = open(errf.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    dup2(e, 2);
    lt::ClearInheritedEnvironment();
    if (int err = lt::EnterNetworkNamespace(qlen)) {
      std::fprintf(stderr, "network namespace: %s\n", strerror(err));
      _exit(127);
    }
    execlp("rsyslogd", "rsyslogd", "-n", "-f", conf.c_str(), "-i", pidfile.c_str(), nullptr);
    _exit(127);
  }
  if (!lt::WaitUntil([&] { return access(path.c_str(), F_OK) == 0; }, lt::Ms(10000))) {
    std::fprintf(stderr, "syslog_burst: rsyslogd did not make %s\n", path.c_str());
    kill(pid, SIGKILL);
    std::exit(1);
  }
  const double cpu0 = lt::ProcessCpuSeconds(pid);
  Result r = SendBursts(path, o);
  // rsyslogd writes asynchronously: wait until the burst's lines are out.
  auto burst_lines = [&] {
    std::ifstream f(out);
    uint64_t n = 0;
    for (std::string l; std::getline(f, l);)
      if (l.find(" nginx: ") != std::string::npos) n++;
    return n;
  };
  lt::WaitUntil([&] { return burst_lines() >= uint64_t(r.sent); }, lt::Ms(60000), lt::Ms(20));
  r.landed = burst_lines();
  r.cpu_per_dgram = (lt::ProcessCpuSeconds(pid) - cpu0) / double(std::max<uint64_t>(r.landed, 1));
  kill(pid, SIGTERM);
  lt::WaitExit(pid, lt::Ms(10000));
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "syslog_burst: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--datagrams")
      o.datagrams = std::stoi(next());
    else if (a == "--burst")
      o.burst = std::stoi(next());
    else if (a == "--pause-us")
      o.pause_us = std::stoi(next());
    else if (a == "--reps")
      o.reps = std::stoi(next());
    else if (a == "--qlen")
      o.qlens.push_back(std::stoi(next()));
    else if (a == "--busy")
      o.busy = true;
    else if (a == "--logsinkd")
      o.logsinkd = next();
    else {
      std::fprintf(stderr,
                   "usage: syslog_burst [--datagrams N] [--burst B] [--pause-us P] [--reps R] "
                   "[--qlen Q]... [--busy] [--logsinkd PATH]\n");
      return 2;
    }
  }
  if (o.qlens.empty()) o.qlens = {10, 512};
  std::printf("syslog_burst: %d datagrams, bursts of %d every %d us (offered %.0f/s)%s\n",
              o.datagrams, o.burst, o.pause_us, 1e6 * o.burst / o.pause_us,
              o.busy ? ", receiver busy" : "");
  for (int q : o.qlens) {
    std::vector<double> lost[2], rate[2], cpu[2];
    for (int rep = 0; rep < o.reps; rep++)
      for (int w = 0; w < 2; w++) {  // alternate, so drift hits both
        Result r = w == 0 ? RunLogsinkd(q, o) : RunRsyslogd(q, o);
        const char *name = w == 0 ? "logsinkd" : "rsyslogd";
        std::printf(
            "qlen %3d  %-8s  rep %d: sent %d, lost (EAGAIN) %d, landed %llu, offered "
            "%.0f/s, receiver CPU %.2f us/datagram\n",
            q, name, rep + 1, r.sent, r.lost, static_cast<unsigned long long>(r.landed),
            double(r.sent + r.lost) / r.seconds, r.cpu_per_dgram * 1e6);
        lost[w].push_back(r.lost + double(r.sent) - double(r.landed));
        rate[w].push_back(double(r.sent + r.lost) / r.seconds);
        cpu[w].push_back(r.cpu_per_dgram * 1e6);
      }
    std::printf(
        "qlen %3d  median lost of %d: logsinkd %.0f (%.3f %%), rsyslogd %.0f (%.3f %%); "
        "offered %.0f/s and %.0f/s\n",
        q, o.datagrams, Median(lost[0]), 100 * Median(lost[0]) / o.datagrams, Median(lost[1]),
        100 * Median(lost[1]) / o.datagrams, Median(rate[0]), Median(rate[1]));
    if (!o.busy)
      std::printf(
          "qlen %3d  median receiver CPU per datagram: logsinkd %.2f us, rsyslogd %.2f us "
          "(ratio %.2f)\n",
          q, Median(cpu[0]), Median(cpu[1]),
          Median(cpu[1]) > 0 ? Median(cpu[0]) / Median(cpu[1]) : 0);
  }
  return 0;
}
