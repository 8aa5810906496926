// cli.cc: logsinkd's command line (see cli.h): one table of the options,
// from which the getopt tables, the checks of the values and --help follow.
#include "cli.h"

#include <getopt.h>

#include <iterator>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "logsink/config/long_options.h"

namespace logsink::daemon {
namespace {

// What an option's value is, and so how it is checked.
enum class Value {
  kNone,        // a flag
  kAny,         // any string (--config)
  kPath,        // a path, not empty (--file)
  kSocketPath,  // a Unix socket path: 1 to 107 bytes
  kRingSize,    // a size in 32KiB..1TiB
  kBlockSize,   // a power of two in 4KiB..1MiB
  kLogLevel,    // trace, debug, info, warn, error, critical or off
};

// Where the option goes in Cli.
using Field = std::variant<std::string Cli::*, std::optional<std::string> Cli::*,
                           std::optional<uint64_t> Cli::*, bool Cli::*>;

// Every option once: its long name, its short letter (0 for none), its
// value and the name --help gives it, its field, whether the synopsis of
// --help breaks the line after it, and its lines of help ("" for none; a
// line past the first is indented by the table's column).
struct CliOption {
  const char *name;
  char letter;
  Value value;
  const char *value_name;  // nullptr for a flag
  Field field;
  bool synopsis_break;
  const char *help;
};

constexpr CliOption kOptions[] = {
    {"config", 0, Value::kAny, "FILE", &Cli::config_file, false,
     "read settings from this TOML file (default: none, embedded\n"
     "defaults; see logsinkd.toml for every key)"},
    {"socket", 0, Value::kSocketPath, "PATH", &Cli::socket, false,
     "listening socket (default: $LOGSINK_SOCKET, else\n"
     "/run/logsink/logsink.sock for root, else a per-user path)"},
    {"syslog-socket", 0, Value::kSocketPath, "PATH", &Cli::syslog_socket, true,
     "also receive syslog datagrams (RFC 3164, RFC 5424) on\n"
     "this Unix datagram socket (default: none; [syslog] socket)"},
    {"file", 0, Value::kPath, "PATH", &Cli::file, false,
     "ring file (default: /var/lib/logsink/logsink.ring for root,\n"
     "else a per-user path)"},
    {"size", 0, Value::kRingSize, "SIZE", &Cli::size, true,
     "ring file size, 32KiB..1TiB (default 64MiB): bytes, or a\n"
     "number with K, M, G, T or KiB, MiB, GiB, TiB, all powers\n"
     "of 1024 (K = KiB = 1024 bytes); 1GB, 1gb or 1 G are refused"},
    {"block-size", 0, Value::kBlockSize, "SIZE", &Cli::block_size, false,
     "block size, a power of two in 4KiB..1MiB (default 8KiB)"},
    {"recreate", 0, Value::kNone, nullptr, &Cli::recreate, false,
     "replace an existing ring file of another size or block size\n"
     "(its records are lost)"},
    {"allow-other-owner", 0, Value::kNone, nullptr, &Cli::allow_other_owner, true,
     "write into a ring file owned by another user (refused\n"
     "by default: its owner can read every record)"},
    {"create-dirs", 0, Value::kNone, nullptr, &Cli::create_dirs, true,
     "create the ring file's missing directories (done without\n"
     "asking only in logsinkd's own state directory)"},
    {"log-level", 0, Value::kLogLevel, "LEVEL", &Cli::log_level, true,
     "trace, debug, info, warn, error, critical or off"},
    {"print-config", 0, Value::kNone, nullptr, &Cli::print_config, false,
     "print the effective configuration as TOML and exit"},
    {"version", 'V', Value::kNone, nullptr, &Cli::version, false, "print the version and exit"},
    {"help", 'h', Value::kNone, nullptr, &Cli::help, false, ""},
};

// getopt_long's value for kOptions[i] (above every letter).
constexpr int kFirstId = 256;

// The synopsis lines after the first start here; the help of an option
// starts at this column, or two spaces after a longer "--name VALUE".
constexpr size_t kSynopsisIndent = 16, kHelpColumn = 21;

std::string Spelt(const CliOption &o) {
  std::string s = std::string("--") + o.name;
  if (o.value_name) s += std::string(" ") + o.value_name;
  return s;
}

std::string MakeUsage() {
  std::string u = "usage: logsinkd";
  for (const CliOption &o : kOptions) {
    u += " [" + Spelt(o) + "]";
    if (o.synopsis_break) u += "\n" + std::string(kSynopsisIndent - 1, ' ');
  }
  u += "\n\n";
  for (const CliOption &o : kOptions) {
    if (!*o.help) continue;
    std::string head = "  " + Spelt(o);
    head.append(head.size() + 2 <= kHelpColumn ? kHelpColumn - head.size() : 2, ' ');
    for (const char *line = o.help; *line;) {
      const char *nl = line;
      while (*nl && *nl != '\n') nl++;
      u += (line == o.help ? head : std::string(kHelpColumn, ' ')) + std::string(line, nl) + "\n";
      line = *nl ? nl + 1 : nl;
    }
  }
  u += "\n"
       "Flags override the configuration file. Exit status: 0 after SIGTERM/SIGINT,\n"
       "1 on a runtime error, 2 on a usage or configuration error.\n";
  return u;
}

// getopt_long's table and short options, from kOptions.
const std::vector<struct option> &LongOptions() {
  static const std::vector<struct option> v = [] {
    std::vector<struct option> opts;
    for (const CliOption &o : kOptions)
      opts.push_back({o.name, o.value == Value::kNone ? no_argument : required_argument, nullptr,
                      kFirstId + int(&o - kOptions)});
    opts.push_back({nullptr, 0, nullptr, 0});
    return opts;
  }();
  return v;
}

// ':' first: a missing value is reported as such.
std::string ShortOptions() {
  std::string s = ":";
  for (const CliOption &o : kOptions) {
    if (!o.letter) continue;
    s += o.letter;
    if (o.value != Value::kNone) s += ':';
  }
  return s;
}

// The option getopt_long returned c for (a long option's id or a letter);
// nullptr for ':', '?' and anything else.
const CliOption *OptionOf(int c) {
  if (c >= kFirstId && c < kFirstId + int(std::size(kOptions))) return &kOptions[c - kFirstId];
  for (const CliOption &o : kOptions)
    if (o.letter && o.letter == c) return &o;
  return nullptr;
}

// Checks arg as o's value; false with a message naming the option.
bool CheckValue(const CliOption &o, const std::string &arg, uint64_t *n, std::string *error) {
  const std::string opt = std::string("--") + o.name;
  switch (o.value) {
    case Value::kNone:
    case Value::kAny:
      return true;
    case Value::kPath:
      if (!arg.empty()) return true;
      *error = opt + ": empty path";
      return false;
    case Value::kSocketPath:
      if (!arg.empty() && arg.size() < 108) return true;
      *error = opt + ": the path must have 1 to 107 bytes";
      return false;
    case Value::kRingSize:
    case Value::kBlockSize:
      if (!config::ParseSize(arg, n)) {
        *error = opt + ": '" + arg + "' is not a size: use " + config::kSizeForms;
        return false;
      }
      if (o.value == Value::kRingSize && (*n < (32u << 10) || *n > (1ull << 40))) {
        *error = opt + ": " + arg + " is outside 32KiB..1TiB";
        return false;
      }
      if (o.value == Value::kBlockSize && !config::ValidBlockSize(*n)) {
        *error = opt + ": '" + arg + "' is not a power of two in 4KiB..1MiB";
        return false;
      }
      return true;
    case Value::kLogLevel:
      if (config::ValidLogLevel(arg)) return true;
      *error = opt + ": '" + arg + "' is not one of trace, debug, info, warn, error, critical, off";
      return false;
  }
  return false;
}

// Stores a checked value (n: the size, for sizes) in o's field of *cli.
void Store(const CliOption &o, const std::string &arg, uint64_t n, Cli *cli) {
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(cli->*member)>;
        if constexpr (std::is_same_v<T, bool>)
          cli->*member = true;
        else if constexpr (std::is_same_v<T, std::optional<uint64_t>>)
          cli->*member = n;
        else
          cli->*member = arg;
      },
      o.field);
}

}  // namespace

const char *Usage() {
  static const std::string usage = MakeUsage();
  return usage.c_str();
}

bool ParseCli(int argc, char **argv, Cli *cli, std::string *error) {
  const struct option *long_options = LongOptions().data();
  const std::string short_options = ShortOptions();
  opterr = 0;
  optind = 1;
  int c, li = -1;
  while ((li = -1, c = getopt_long(argc, argv, short_options.c_str(), long_options, &li)) != -1) {
    if (!config::LongOptionInFull(argv, optind, optarg, long_options, li, error)) return false;
    const CliOption *o = OptionOf(c);
    if (!o) {
      *error = std::string(c == ':' ? "option " : "unknown option ") + argv[optind - 1] +
               (c == ':' ? " needs a value" : "");
      return false;
    }
    const std::string arg = optarg ? optarg : "";
    uint64_t n = 0;
    if (!CheckValue(*o, arg, &n, error)) return false;
    Store(*o, arg, n, cli);
  }
  if (optind < argc) {
    *error = std::string("unexpected argument '") + argv[optind] + "'";
    return false;
  }
  return true;
}

void ApplyCli(const Cli &cli, config::Config *cfg) {
  if (cli.socket) cfg->socket_path = *cli.socket;
  if (cli.syslog_socket) cfg->syslog_socket = *cli.syslog_socket;
  if (cli.file) cfg->ring_file = *cli.file;
  if (cli.size) cfg->ring_size = *cli.size;
  if (cli.block_size) cfg->block_size = uint32_t(*cli.block_size);
  if (cli.log_level) cfg->log_level = *cli.log_level;
  cfg->recreate = cli.recreate;
  cfg->allow_other_owner = cli.allow_other_owner;
}

}  // namespace logsink::daemon
