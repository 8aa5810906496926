// compare_latency.cc: how long after a log call a record is visible to a
// reader: sends records through liblogsink (default options) at a steady rate,
// each carrying its CLOCK_REALTIME send time, while `logctl tail -f --json`
// follows the ring; the delta is taken when logctl prints the line.
//
// usage: compare_latency --socket PATH --ring PATH --logctl PATH [--count 2000] [--rate 1000]
//          [--send-delay-ms N]   (ls_options.send_delay_ms; default: the library's)
// prints: count=… received=… p50_ms=… p90_ms=… p99_ms=… max_ms=…
#include <errno.h>
#include <fcntl.h>
#include <logsink/logsink.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

uint64_t RealNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

[[noreturn]] void Usage(const char *why) {
  fprintf(stderr, "compare_latency: %s\nsee bench/compare/compare_latency.cc\n", why);
  exit(2);
}

struct Shared {
  std::mutex mu;
  std::vector<double> ms;    // measured records (index >= 0)
  std::atomic<int> warm{0};  // warm-up records seen
  std::atomic<int> got{0};
};

// Reads logctl's JSON lines; "msg":"lat I sent T" -> delta in ms.
void Reader(int fd, Shared *sh) {
  std::string buf;
  char chunk[65536];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    uint64_t now = RealNs();
    buf.append(chunk, static_cast<size_t>(n));
    size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      const char *p = strstr(buf.c_str() + start, "\"msg\":\"lat ");
      if (p && p < buf.c_str() + nl) {
        long long i = 0;
        unsigned long long t = 0;
        if (sscanf(p + 11, "%lld sent %llu", &i, &t) == 2) {
          if (i < 0) {
            sh->warm++;
          } else {
            std::lock_guard<std::mutex> l(sh->mu);
            sh->ms.push_back(static_cast<double>(static_cast<int64_t>(now - t)) / 1e6);
            sh->got++;
          }
        }
      }
      start = nl + 1;
    }
    buf.erase(0, start);
  }
}

double Pct(std::vector<double> &v, double p) {
  if (v.empty()) return -1;
  size_t k = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

}  // namespace

int main(int argc, char **argv) {
  std::string sock, ring, logctl;
  int count = 2000, rate = 1000, send_delay_ms = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--socket")
      sock = v;
    else if (k == "--ring")
      ring = v;
    else if (k == "--logctl")
      logctl = v;
    else if (k == "--count")
      count = atoi(v.c_str());
    else if (k == "--rate")
      rate = atoi(v.c_str());
    else if (k == "--send-delay-ms")
      send_delay_ms = atoi(v.c_str());
    else
      Usage(("unknown option " + k).c_str());
  }
  if (sock.empty() || ring.empty() || logctl.empty() || count < 1 || rate < 1 || rate > 100000)
    Usage("need --socket, --ring, --logctl");

  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return 2;
  pid_t reader = fork();
  if (reader == 0) {
    dup2(out[1], STDOUT_FILENO);
    execl(logctl.c_str(), logctl.c_str(), "tail", "-f", "--json", "-n", "0", "--file", ring.c_str(),
          static_cast<char *>(nullptr));
    _exit(127);
  }
  close(out[1]);
  Shared sh;
  std::thread rt(Reader, out[0], &sh);

  ls_options o;
  ls_options_init(&o);  // default options, but for --send-delay-ms
  if (send_delay_ms >= 0) o.send_delay_ms = unsigned(send_delay_ms);
  ls_client *c = ls_open(sock.c_str(), "compare_latency", &o);
  int rc = 0;
  if (!c) {
    fprintf(stderr, "compare_latency: ls_open: %s\n", strerror(errno));
    rc = 1;
  }
  // Warm-up: until one record made it through (client connected, logctl following).
  for (int i = 0; c && sh.warm == 0; i++) {
    if (i > 1000) {
      fprintf(stderr, "compare_latency: no warm-up record seen in 10 s\n");
      rc = 1;
      break;
    }
    if (i % 20 == 0)
      LS_LOG(c, LS_INFO, "lat %d sent %llu", -1, static_cast<unsigned long long>(RealNs()));
    usleep(10000);
  }
  if (rc == 0) {
    usleep(300000);  // let the warm-up's flushes settle
    timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    long step = 1000000000L / rate;
    for (int i = 0; i < count; i++) {
      LS_LOG(c, LS_INFO, "lat %d sent %llu", i, static_cast<unsigned long long>(RealNs()));
      next.tv_nsec += step;
      while (next.tv_nsec >= 1000000000L) next.tv_nsec -= 1000000000L, next.tv_sec++;
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) == EINTR) {
      }
    }
    for (int i = 0; i < 500 && sh.got < count; i++) usleep(10000);  // up to 5 s for stragglers
  }
  if (c) ls_close(c);
  kill(reader, SIGTERM);  // our own logctl child, by PID
  waitpid(reader, nullptr, 0);
  rt.join();
  close(out[0]);
  std::vector<double> v;
  {
    std::lock_guard<std::mutex> l(sh.mu);
    v = sh.ms;
  }
  std::sort(v.begin(), v.end());
  printf("count=%d rate_hz=%d received=%zu p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f\n",
         count, rate, v.size(), Pct(v, 50), Pct(v, 90), Pct(v, 99), v.empty() ? -1 : v.back());
  return rc != 0 ? rc : (static_cast<int>(v.size()) == count ? 0 : 1);
}
