// cli.h: logsinkd's command line: parsing, usage text, and applying the
// flags over the configuration file's values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "logsink/config/config.h"

namespace logsink::daemon {

struct Cli {
  std::string config_file;  // "" = none (embedded defaults)
  std::optional<std::string> socket, syslog_socket, file, log_level;
  std::optional<uint64_t> size, block_size;
  bool recreate = false;
  bool create_dirs = false;  // --create-dirs: make a missing directory of --file
  bool allow_other_owner = false;
  bool print_config = false;
  bool version = false;
  bool help = false;
};

// Parses argv. Returns false with a message for an unknown flag, a missing
// or bad value.
bool ParseCli(int argc, char **argv, Cli *cli, std::string *error);

// Flags override the file: sets every value given on the command line.
void ApplyCli(const Cli &cli, config::Config *cfg);

const char *Usage();

}  // namespace logsink::daemon
