// commands.h: the logctl subcommands; each returns the process exit status.
#pragma once

#include "options.h"

namespace logsink::logctl {

int RunTail(Options &o);    // tail [-n N] [-f] and cat
int RunExport(Options &o);  // export --output FILE
int RunStats(Options &o);
int RunVerify(Options &o);
int RunSend(Options &o);
int RunRun(Options &o);  // run -- CMD ARGS...
int RunSites(Options &o);
int RunLevel(Options &o);  // level [LEVEL|--reset] [--app ...] [--site ...]

}  // namespace logsink::logctl
