// long_options.h: one rule for the long options of logsinkd, logctl and
// logsink-forward: a long option is written out in full. getopt_long(3)
// accepts any unambiguous prefix ("--cursor" for "--cursor-file"), so a
// misspelt or shortened option silently became another one; with this check
// it is an error that names the option it would have been.
#pragma once

#include <getopt.h>

#include <string>

namespace logsink::config {

// Call right after getopt_long returned the long option opts[index], with
// getopt's optind and optarg as they are then. True when argv spelt it in
// full ("--name" or "--name=value"); else false with *error, for example
// "unknown option '--cursor' (options are not abbreviated: --cursor-file?)".
bool LongOptionInFull(char *const argv[], int optind, const char *optarg, const struct option *opts,
                      int index, std::string *error);

}  // namespace logsink::config
