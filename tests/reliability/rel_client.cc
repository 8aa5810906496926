// rel_client.cc: the liblogsink load generators of the reliability tests
// (see rel_client.h).
#include "reliability/rel_client.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "logsink/logsink.h"

namespace logsink::test {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Report(ls_client *c, uint64_t calls, Clock::time_point t0, int res_fd) {
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  ls_flush(c);
  ls_stats st{};
  st.size = sizeof st;
  ls_get_stats(c, &st);
  ls_close(c);
  ClientCounts r{calls,     st.logged,   st.sent, st.dropped, st.dropped_reported,
                 st.errors, st.connects, secs};
  if (write(res_fd, &r, sizeof r) != sizeof r) _exit(4);
  _exit(0);
}

}  // namespace

void CrashClientMain(int id, const char *socket, int burst, int pause_us, int stop_fd, int res_fd) {
  ls_options o;
  ls_options_init(&o);
  o.reconnect_min_ms = 5;
  o.reconnect_max_ms = 50;  // come back quickly after each restart
  std::string app = "crash-" + std::to_string(id);
  ls_client *c = ls_open(socket, app.c_str(), &o);
  if (!c) _exit(3);
  auto t0 = Clock::now();
  unsigned long long n = 0;
  for (;;) {
    pollfd p{stop_fd, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) break;  // the parent closed the pipe: stop
    for (int k = 0; k < burst; k++, n++) LS_LOG(c, LS_INFO, LSREL_CRASH_FMT, id, n);
    usleep(unsigned(pause_us));
  }
  Report(c, n, t0, res_fd);
}

void LoadClientMain(int id, const char *socket, int threads, uint64_t cap, int run_ms, int pause_us,
                    int go_fd, int res_fd) {
  std::string app = "load-" + std::to_string(id);
  ls_client *c = ls_open(socket, app.c_str(), nullptr);
  if (!c) _exit(3);
  char b;
  if (read(go_fd, &b, 1) < 0) _exit(5);  // EOF: the parent says go
  auto t0 = Clock::now();
  auto deadline = t0 + std::chrono::milliseconds(run_ms);
  std::atomic<uint64_t> calls{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; t++) {
    ts.emplace_back([&, t] {
      unsigned long long n = 0;
      while (n < cap && Clock::now() < deadline) {
        for (int k = 0; k < 64 && n < cap; k++, n++) LS_LOG(c, LS_INFO, LSREL_LOAD_FMT, id, t, n);
        usleep(unsigned(pause_us));
      }
      calls += n;
    });
  }
  for (auto &t : ts) t.join();
  Report(c, calls.load(), t0, res_fd);
}

}  // namespace logsink::test
