// main.cc: logsink-forward's entry point: options (exit 2 on error), the
// destination, then the forwarding loop until SIGTERM/SIGINT.
#include <nats/nats.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "forwarder.h"
#include "nats_sink.h"
#include "options.h"
#include "relp_sink.h"
#include "subject.h"

using namespace logsink::forward;

int main(int argc, char **argv) {
  std::signal(SIGPIPE, SIG_IGN);
  Options o;
  std::string error;
  if (!ParseArgs(argc, argv, &o, &error)) {
    std::fprintf(stderr, "logsink-forward: %s\n%s", error.c_str(), Usage());
    return 2;
  }
  if (o.help) {
    std::fputs(Usage(), stdout);
    return 0;
  }
  if (o.version) {
    std::printf("logsink-forward %s\n", LOGSINK_VERSION);
    return 0;
  }
  if (!Finish(&o, &error)) {
    std::fprintf(stderr, "logsink-forward: %s\n", error.c_str());
    return 2;
  }
  if (o.status) return PrintStatus(o);

  std::unique_ptr<Sink> sink;
  if (o.to.rfind("nats://", 0) == 0) {
    NatsOptions no;
    if (!ParseNatsUrl(o.to, &no.servers, &error)) {
      std::fprintf(stderr, "logsink-forward: --to: %s\n", error.c_str());
      return 2;
    }
    SubjectTemplate t;
    t.Parse(o.subject, &error);  // checked by Finish()
    // The subject, or what captures every one a template makes (to find and
    // create the stream): with a template every message names its own
    // subject, lost notices included; the wildcard is never published on.
    no.subject = t.wildcard();
    no.create_stream = o.create_stream;
    no.window = o.window;
    no.ack_timeout_ms = o.ack_timeout_ms;
    no.compress = o.compress;
    sink = MakeNatsSink(no);
  } else {
    RelpOptions ro;
    if (!ParseRelpUrl(o.to, &ro, &error)) {
      std::fprintf(stderr, "logsink-forward: --to: %s\n", error.c_str());
      return 2;
    }
    sink = MakeRelpSink(ro);
  }

  auto logger = spdlog::stderr_logger_mt("logsink-forward");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e logsink-forward[%P] %l: %v");
  spdlog::set_level(spdlog::level::from_str(o.log_level));
  // logctl finds its ring through the daemon on $LOGSINK_SOCKET; the
  // forwarder reads a file and never talks to logsinkd, so say which.
  if (const char *sock = secure_getenv("LOGSINK_SOCKET"); o.file_default && sock && *sock)
    spdlog::warn(
        "$LOGSINK_SOCKET is set, but logsink-forward reads a ring file, not a daemon: "
        "following {} (give --file or $LOGSINK_FILE for another ring)",
        o.file);
  // SIGTERM/SIGINT: uv_signal handles them whichever thread (cnats' or the
  // loop's) the kernel delivers them to.
  int rc = RunForwarder(o, std::move(sink));
  // Waits (at most 2 s) for cnats' internal threads to end: nats_Close()
  // returns while they may still run, and the process exits next.
  nats_CloseAndWait(2000);
  return rc;
}
