// spdlog_sink_app.cc: an spdlog program (C++17) that logs through
// logsink::spdlog_sink_mt, for spdlog_sink_test.
//
//   spdlog_sink_app crash SOCKET APP N
//     a logger from logsink::spdlog_logger_mt with a client of its own on
//     SOCKET named APP, connected first; then N records "crash I" at info
//     (SPDLOG_LOGGER_INFO: with their source line) that stay staged in
//     the client (no timer, batch or level sends them: send_delay_ms 0,
//     flush_interval_ms 60 s, flush_level off, a 1 MiB thread buffer that
//     wakes the sender at 512 KiB, far more than N records of a few dozen
//     bytes), then abort(): only liblogsink's crash handler can send them.
#include <logsink/spdlog_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  if (argc != 5 || std::strcmp(argv[1], "crash") != 0) {
    std::fprintf(stderr, "usage: spdlog_sink_app crash SOCKET APP N\n");
    return 2;
  }
  ls_options o;
  ls_options_init(&o);
  o.send_delay_ms = 0;
  o.flush_interval_ms = 60000;
  o.flush_level = -1;
  o.thread_buffer_bytes = 1u << 20;
  o.batch_bytes = 1u << 19;
  auto lg = logsink::spdlog_logger_mt("crash", argv[2], argv[3], &o);
  auto *sink = static_cast<logsink::spdlog_sink_mt *>(lg->sinks().front().get());
  if (ls_flush(sink->client()) != 0) {  // connected: the crash handler sends only then
    std::fprintf(stderr, "spdlog_sink_app: not connected to %s\n", argv[2]);
    return 1;
  }
  const int n = std::atoi(argv[4]);
  for (int i = 0; i < n; i++) SPDLOG_LOGGER_INFO(lg, "crash {}", i);
  std::abort();
}
