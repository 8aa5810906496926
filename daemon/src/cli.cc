// cli.cc: logsinkd's command line (see cli.h).
#include "cli.h"

#include <getopt.h>

#include <string>

#include "logsink/config/long_options.h"

namespace logsink::daemon {

const char *Usage() {
  return "usage: logsinkd [--config FILE] [--socket PATH] [--syslog-socket PATH]\n"
         "                [--file PATH] [--size SIZE]\n"
         "                [--block-size SIZE] [--recreate] [--allow-other-owner]\n"
         "                [--create-dirs]\n"
         "                [--log-level LEVEL]\n"
         "                [--print-config] [--version] [--help]\n"
         "\n"
         "  --config FILE      read settings from this TOML file (default: none, embedded\n"
         "                     defaults; see logsinkd.toml for every key)\n"
         "  --socket PATH      listening socket (default: $LOGSINK_SOCKET, else\n"
         "                     /run/logsink/logsink.sock for root, else a per-user path)\n"
         "  --syslog-socket PATH  also receive syslog datagrams (RFC 3164, RFC 5424) on\n"
         "                     this Unix datagram socket (default: none; [syslog] socket)\n"
         "  --file PATH        ring file (default: /var/lib/logsink/logsink.ring for root,\n"
         "                     else a per-user path)\n"
         "  --size SIZE        ring file size, 32KiB..1TiB (default 64MiB): bytes, or a\n"
         "                     number with K, M, G, T or KiB, MiB, GiB, TiB, all powers\n"
         "                     of 1024 (K = KiB = 1024 bytes); 1GB, 1gb or 1 G are refused\n"
         "  --block-size SIZE  block size, a power of two in 4KiB..1MiB (default 8KiB)\n"
         "  --recreate         replace an existing ring file of another size or block size\n"
         "                     (its records are lost)\n"
         "  --allow-other-owner  write into a ring file owned by another user (refused\n"
         "                     by default: its owner can read every record)\n"
         "  --create-dirs      create the ring file's missing directories (done without\n"
         "                     asking only in logsinkd's own state directory)\n"
         "  --log-level LEVEL  trace, debug, info, warn, error, critical or off\n"
         "  --print-config     print the effective configuration as TOML and exit\n"
         "  --version          print the version and exit\n"
         "\n"
         "Flags override the configuration file. Exit status: 0 after SIGTERM/SIGINT,\n"
         "1 on a runtime error, 2 on a usage or configuration error.\n";
}

bool ParseCli(int argc, char **argv, Cli *cli, std::string *error) {
  enum {
    kConfig = 256,
    kSocket,
    kSyslogSocket,
    kFile,
    kSize,
    kBlockSize,
    kRecreate,
    kAllowOtherOwner,
    kCreateDirs,
    kLogLevel,
    kPrint,
    kVersion,
    kHelp
  };
  static const option kOpts[] = {{"config", required_argument, nullptr, kConfig},
                                 {"socket", required_argument, nullptr, kSocket},
                                 {"syslog-socket", required_argument, nullptr, kSyslogSocket},
                                 {"file", required_argument, nullptr, kFile},
                                 {"size", required_argument, nullptr, kSize},
                                 {"block-size", required_argument, nullptr, kBlockSize},
                                 {"recreate", no_argument, nullptr, kRecreate},
                                 {"allow-other-owner", no_argument, nullptr, kAllowOtherOwner},
                                 {"create-dirs", no_argument, nullptr, kCreateDirs},
                                 {"log-level", required_argument, nullptr, kLogLevel},
                                 {"print-config", no_argument, nullptr, kPrint},
                                 {"version", no_argument, nullptr, kVersion},
                                 {"help", no_argument, nullptr, kHelp},
                                 {nullptr, 0, nullptr, 0}};
  opterr = 0;
  optind = 1;
  int c;
  int li = -1;
  while ((li = -1, c = getopt_long(argc, argv, ":hV", kOpts, &li)) != -1) {
    if (c == 'V') c = kVersion;
    if (!config::LongOptionInFull(argv, optind, optarg, kOpts, li, error)) return false;
    std::string arg = optarg ? optarg : "";
    uint64_t n;
    switch (c) {
      case kConfig:
        cli->config_file = arg;
        break;
      case kSocket:
        if (arg.empty() || arg.size() >= 108) {
          *error = "--socket: the path must have 1 to 107 bytes";
          return false;
        }
        cli->socket = arg;
        break;
      case kSyslogSocket:
        if (arg.empty() || arg.size() >= 108) {
          *error = "--syslog-socket: the path must have 1 to 107 bytes";
          return false;
        }
        cli->syslog_socket = arg;
        break;
      case kFile:
        if (arg.empty()) {
          *error = "--file: empty path";
          return false;
        }
        cli->file = arg;
        break;
      case kSize:
        if (!config::ParseSize(arg, &n)) {
          *error = std::string("--size: '") + arg + "' is not a size: use " + config::kSizeForms;
          return false;
        }
        if (n < (32u << 10) || n > (1ull << 40)) {
          *error = std::string("--size: ") + arg + " is outside 32KiB..1TiB";
          return false;
        }
        cli->size = n;
        break;
      case kBlockSize:
        if (!config::ParseSize(arg, &n)) {
          *error =
              std::string("--block-size: '") + arg + "' is not a size: use " + config::kSizeForms;
          return false;
        }
        if (!config::ValidBlockSize(n)) {
          *error = "--block-size: '" + arg + "' is not a power of two in 4KiB..1MiB";
          return false;
        }
        cli->block_size = n;
        break;
      case kRecreate:
        cli->recreate = true;
        break;
      case kAllowOtherOwner:
        cli->allow_other_owner = true;
        break;
      case kCreateDirs:
        cli->create_dirs = true;
        break;
      case kLogLevel:
        if (!config::ValidLogLevel(arg)) {
          *error = "--log-level: '" + arg +
                   "' is not one of trace, debug, info, warn, error, critical, off";
          return false;
        }
        cli->log_level = arg;
        break;
      case kPrint:
        cli->print_config = true;
        break;
      case kVersion:
        cli->version = true;
        break;
      case 'h':
      case kHelp:
        cli->help = true;
        break;
      case ':':
        *error = std::string("option ") + argv[optind - 1] + " needs a value";
        return false;
      default:
        *error = std::string("unknown option ") + argv[optind - 1];
        return false;
    }
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
