// options.h: logsink-forward's settings: embedded defaults, then the TOML
// file (--config), then the command line. Errors are values: a message
// naming the flag, or FILE:LINE and the key.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace logsink::forward {

struct Options {
  // [forward]
  std::string to;                 // to: nats://H:P[,H:P...] or relp://H:P
  std::string subject;            // subject (NATS only)
  std::string create_stream;      // create_stream (NATS only; "" = never)
  std::string file;               // file: the ring; "" = $LOGSINK_FILE, else the system ring
  bool file_default = false;      // neither --file nor $LOGSINK_FILE named it
  std::string cursor_file;        // cursor_file (required)
  std::string start = "oldest";   // start: where to begin without a cursor: oldest | end
  int max_level = 7;              // level: ship records at this level or more severe
  std::vector<std::string> apps;  // app: ship only these app labels (any of them)
  int window = 0;                 // window: unacknowledged messages at most (0 = the default, 1024)
  // refused_retries: a message the receiver refuses (RELP: an answer other
  // than 200) this many times more is replaced by a notice (0: never; -1
  // = the default, 10).
  int refused_retries = -1;
  int batch = 1;                   // batch: records per NATS message at most (1 = one per message)
  std::string compress = "none";   // compress: a batch's body as none | lz4 | zstd (NATS, --batch)
  uint64_t ack_timeout_ms = 5000;  // ack_timeout
  uint64_t shutdown_timeout_ms = 5000;  // shutdown_timeout
  uint64_t poll_interval_ms = 100;      // poll_interval: ring check besides inotify
  std::string sd_id = "logsink@32473";  // sd_id (RELP structured data)
  int facility = 1;                     // facility (RELP PRI), 0..23, default user
  std::string log_level = "info";       // log_level

  // command line only
  std::string config_file;
  bool status = false, help = false, version = false;

  bool operator==(const Options &) const = default;
};

const char *Usage();
// Every setting's flag (without "--") and key in the [forward] table, in the
// order of the table of settings (options.cc).
std::vector<std::pair<std::string, std::string>> SettingNames();
// Parses argv; loads --config first, so flags override the file.
// False with *error (exit 2).
bool ParseArgs(int argc, char **argv, Options *o, std::string *error);
// Fills defaults that depend on others; checks the combination.
bool Finish(Options *o, std::string *error);

}  // namespace logsink::forward
