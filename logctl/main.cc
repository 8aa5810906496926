// main.cc: logctl's entry point: dispatches the subcommand; no exception
// escapes (an unexpected one is reported as an error line).
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "commands.h"
#include "common.h"

using namespace logsink::logctl;

namespace {

const struct {
  const char *name;
  Command cmd;
} kCommands[] = {
    {"tail", Command::kTail}, {"cat", Command::kCat},       {"stats", Command::kStats},
    {"send", Command::kSend}, {"verify", Command::kVerify}, {"export", Command::kExport},
    {"run", Command::kRun},   {"sites", Command::kSites},   {"level", Command::kLevel}};
const char kUnknownCommand[] =
    "unknown command (tail, cat, stats, send, run, verify, export, sites, level, help)";

// `logctl help [COMMAND]`.
int HelpCommand(int argc, char **argv) {
  if (argc < 3) {
    PrintUsage(stdout);
    return kExitOk;
  }
  if (argc > 3) {
    Error("help", std::string("unexpected argument '") + argv[3] + "'");
    return kExitUsage;
  }
  for (const auto &k : kCommands) {
    if (std::strcmp(argv[2], k.name) != 0) continue;
    PrintCommandHelp(k.cmd, stdout);
    return kExitOk;
  }
  Error(argv[2], kUnknownCommand);
  return kExitUsage;
}

int Main(int argc, char **argv) {
  if (argc < 2) {  // like journalctl: the whole log, through the pager
    Options o;
    int rc = ParseOptions(Command::kCat, 1, argv, &o);
    return rc >= 0 ? rc : RunTail(o);
  }
  const char *c = argv[1];
  if (!std::strcmp(c, "help")) return HelpCommand(argc, argv);
  if (!std::strcmp(c, "--help") || !std::strcmp(c, "-h")) {
    PrintUsage(stdout);
    return kExitOk;
  }
  if (!std::strcmp(c, "--version") || !std::strcmp(c, "-V")) {
    std::puts("logctl " LOGSINK_VERSION);
    return kExitOk;
  }
  // Like journalctl: logctl -f, logctl -n 50 -p err, logctl -b -1, and its
  // matches: logctl _PID=1, logctl user=alice + user=bob (no command has a
  // '=' in its name).
  if ((c[0] == '-' && c[1]) || std::strchr(c, '=') || !std::strcmp(c, "+")) {
    Options o;
    int rc = ParseOptions(Command::kLog, argc, argv, &o);
    return rc >= 0 ? rc : RunTail(o);
  }
  for (const auto &k : kCommands) {
    if (std::strcmp(c, k.name) != 0) continue;
    Options o;
    int rc = ParseOptions(k.cmd, argc - 1, argv + 1, &o);
    if (rc >= 0) return rc;
    switch (k.cmd) {
      case Command::kTail:
      case Command::kCat:
      case Command::kLog:
        return RunTail(o);
      case Command::kStats:
        return RunStats(o);
      case Command::kSend:
        return RunSend(o);
      case Command::kVerify:
        return RunVerify(o);
      case Command::kExport:
        return RunExport(o);
      case Command::kRun:
        return RunRun(o);
      case Command::kSites:
        return RunSites(o);
      case Command::kLevel:
        return RunLevel(o);
    }
  }
  Error(c, kUnknownCommand);
  return kExitUsage;
}

}  // namespace

int main(int argc, char **argv) {
  // A closed pipe (logctl cat | head) is an EPIPE we handle, not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return Main(argc, argv);
  } catch (const std::bad_alloc &) {
    Error("error", "out of memory");
  } catch (const std::exception &e) {
    Error("error", e.what());
  } catch (...) {
    Error("error", "unexpected exception");
  }
  return kExitError;
}
