// storm_logger.cc: a program that logs at a steady pace through liblogsink
// (default options) and times every call, so that bench/storm/run.sh can
// tell how long the daemon's other jobs made an application wait. Every
// 100th record is a warning, which the library puts into the socket before
// the call returns (flush_level's default): those calls wait whenever the
// daemon is slow to read, the others only when a thread's buffer is full.
//
// With --send-every-ms N, a second thread sends one line over a text
// stream every N ms, as `logctl send` does (connect, HELLO and the daemon's
// confirmation, the line, EOF, the acknowledgment), and times each from
// connect to acknowledgment: the daemon's part of a `logctl send`, without
// the process start that the storm also slows.
//
// usage: storm_logger --socket PATH [--seconds 5] [--rate 2000] [--send-every-ms N]
// prints: calls=N info_p50_ns= info_p99_ns= info_max_us= warn_p50_ns=
//         warn_p99_ns= warn_max_us= dropped= [sends= send_p50_us= send_max_us=
//         send_failed=] (a failed send is counted, said on stderr, and not
//         timed; the sends go on)
#include <logsink/logsink.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "logctl/text_stream.h"
#include "logsink/proto/frame.h"

namespace {

uint64_t MonoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

[[noreturn]] void Usage(const char *why) {
  std::fprintf(stderr, "storm_logger: %s\nsee bench/storm/storm_logger.cc\n", why);
  std::exit(2);
}

uint64_t Quantile(std::vector<uint64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

}  // namespace

int main(int argc, char **argv) {
  std::string socket;
  double seconds = 5;
  double rate = 2000;
  int send_every_ms = 0;
  for (int i = 1; i < argc; i++) {
    auto value = [&] {
      if (i + 1 >= argc) Usage("missing value");
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--socket")) {
      socket = value();
    } else if (!std::strcmp(argv[i], "--seconds")) {
      seconds = std::atof(value());
    } else if (!std::strcmp(argv[i], "--rate")) {
      rate = std::atof(value());
    } else if (!std::strcmp(argv[i], "--send-every-ms")) {
      send_every_ms = std::atoi(value());
    } else {
      Usage("unknown option");
    }
  }
  if (socket.empty() || seconds <= 0 || rate <= 0) Usage("--socket PATH is needed");
  ls_client *c = ls_open(socket.c_str(), "storm_logger", nullptr);
  if (!c) Usage("ls_open failed");
  const uint64_t step = uint64_t(1e9 / rate), n = uint64_t(seconds * rate);
  std::atomic<bool> done{false};
  std::vector<uint64_t> sends;
  std::string send_error;  // the last failed send's reason
  uint64_t send_failed = 0;
  std::thread sender;
  if (send_every_ms > 0)
    sender = std::thread([&] {
      namespace lc = logsink::logctl;
      const uint32_t flags = ls_hello_text_flags(6, 1, LS_HELLO_STREAM_TEXT, 0);
      for (uint64_t k = 0; !done.load(); k++) {
        std::string why;
        const uint64_t t0 = MonoNs();
        int fd = lc::OpenTextStream(socket, "storm_sender", flags, 10000, &why);
        lc::TextAck ack;
        bool ok = fd >= 0 && lc::WriteText(fd, "root line " + std::to_string(k) + "\n", &why);
        if (ok)
          ok = lc::FinishTextStream(fd, 10000, &ack, &why);  // closes fd
        else if (fd >= 0)
          close(fd);
        if (ok && ack.lines != 1) {
          ok = false;
          why = "the daemon acknowledged " + std::to_string(ack.lines) + " lines of 1";
        }
        if (ok) {
          sends.push_back(MonoNs() - t0);
        } else {  // counted and said; the sends go on
          send_failed++;
          send_error = why;
        }
        timespec pause{time_t(send_every_ms / 1000), long(send_every_ms % 1000) * 1000000};
        nanosleep(&pause, nullptr);
      }
    });
  std::vector<uint64_t> info, warn;
  info.reserve(n);
  uint64_t next = MonoNs();
  for (uint64_t i = 0; i < n; i++) {
    next += step;
    timespec at{time_t(next / 1000000000u), long(next % 1000000000u)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
    const uint64_t t0 = MonoNs();
    if (i % 100 == 99) {
      LS_LOG(c, LS_WARNING, "storm warning %llu of the paced logger", (unsigned long long)i);
      warn.push_back(MonoNs() - t0);
    } else {
      LS_LOG(c, LS_INFO, "storm record %llu port %d", (unsigned long long)i, int(i % 65536));
      info.push_back(MonoNs() - t0);
    }
  }
  done = true;
  if (sender.joinable()) sender.join();
  ls_stats st;
  st.size = sizeof st;
  ls_get_stats(c, &st);
  ls_close(c);
  std::printf(
      "calls=%llu info_p50_ns=%llu info_p99_ns=%llu info_max_us=%llu warn_p50_ns=%llu "
      "warn_p99_ns=%llu warn_max_us=%llu dropped=%llu\n",
      (unsigned long long)n, (unsigned long long)Quantile(info, 0.5),
      (unsigned long long)Quantile(info, 0.99), (unsigned long long)Quantile(info, 1.0) / 1000,
      (unsigned long long)Quantile(warn, 0.5), (unsigned long long)Quantile(warn, 0.99),
      (unsigned long long)Quantile(warn, 1.0) / 1000, (unsigned long long)st.dropped);
  if (send_every_ms > 0)
    std::printf("sends=%zu send_p50_us=%llu send_max_us=%llu send_failed=%llu\n", sends.size(),
                (unsigned long long)Quantile(sends, 0.5) / 1000,
                (unsigned long long)Quantile(sends, 1.0) / 1000, (unsigned long long)send_failed);
  if (send_failed)
    std::fprintf(stderr, "storm_logger: %llu sends failed, the last: %s\n",
                 (unsigned long long)send_failed, send_error.c_str());
  return 0;
}
