// options.cc: see options.h. TOML through toml11 and config/'s size and
// duration grammar, like logsinkd's loader.
#include "options.h"

#include <getopt.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <toml.hpp>

#include "filter.h"
#include "logsink/config/config.h"
#include "logsink/config/long_options.h"
#include "logsink/proto/paths.h"
#include "subject.h"

namespace logsink::forward {
namespace {

enum {
  kTo = 256,
  kSubject,
  kCreateStream,
  kFile,
  kCursorFile,
  kStart,
  kLevel,
  kApp,
  kWindow,
  kBatch,
  kAckTimeout,
  kShutdownTimeout,
  kSdId,
  kFacility,
  kLogLevel,
  kConfig,
  kStatus,
  kHelp,
  kVersion,
};

// Applies one setting given as text; "" or what is wrong.
std::string Set(int key, const std::string &v, Options *o) {
  uint64_t ms = 0;
  switch (key) {
    case kTo:
      o->to = v;
      break;
    case kSubject:
      o->subject = v;
      break;
    case kCreateStream:
      o->create_stream = v;
      break;
    case kFile:
      o->file = v;
      break;
    case kCursorFile:
      o->cursor_file = v;
      break;
    case kStart:
      if (v != "oldest" && v != "end") return "must be oldest or end";
      o->start = v;
      break;
    case kLevel: {
      int l = logctl::ParseLevel(v);
      if (l < 0) return "not a level (emerg..debug or 0-7): " + v;
      o->max_level = l;
      break;
    }
    case kApp:
      o->apps.push_back(v);
      break;
    case kWindow: {
      char *end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 65536) return "must be 1..65536: " + v;
      o->window = int(n);
      break;
    }
    case kBatch: {
      char *end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 65536) return "must be 1..65536: " + v;
      o->batch = int(n);
      break;
    }
    case kAckTimeout:
    case kShutdownTimeout:
      if (!config::ParseDuration(v, &ms) || ms == 0)
        return "not a duration (like 500ms or 5s): " + v;
      (key == kAckTimeout ? o->ack_timeout_ms : o->shutdown_timeout_ms) = ms;
      break;
    case kSdId:
      if (v.empty() || v.size() > 32 || v.find_first_of(" =]\"") != std::string::npos)
        return "not an RFC 5424 SD-ID (1..32 printable characters, no space = ] \"): " + v;
      o->sd_id = v;
      break;
    case kFacility: {
      char *end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 0 || n > 23) return "must be 0..23: " + v;
      o->facility = int(n);
      break;
    }
    case kLogLevel:
      if (!config::ValidLogLevel(v))
        return "not a log level (trace debug info warn error critical off): " + v;
      o->log_level = v;
      break;
  }
  return "";
}

struct TomlKey {
  const char *name;
  int key;
};
constexpr TomlKey kTomlKeys[] = {
    {"to", kTo},
    {"subject", kSubject},
    {"create_stream", kCreateStream},
    {"file", kFile},
    {"cursor_file", kCursorFile},
    {"start", kStart},
    {"level", kLevel},
    {"app", kApp},
    {"window", kWindow},
    {"batch", kBatch},
    {"ack_timeout", kAckTimeout},
    {"shutdown_timeout", kShutdownTimeout},
    {"sd_id", kSdId},
    {"facility", kFacility},
    {"log_level", kLogLevel},
};

bool LoadToml(const std::string &path, Options *o, std::string *error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open the configuration file";
    return false;
  }
  toml::value root;
  try {
    root = toml::parse(in, path);
  } catch (const std::exception &e) {
    *error = path + ": TOML syntax error: " + e.what();
    return false;
  }
  if (!root.is_table()) return true;
  for (const auto &[section, table] : root.as_table()) {
    if (section != "forward" || !table.is_table()) {
      *error = path + ": " + section + ": unknown section (known: forward)";
      return false;
    }
    for (const auto &[name, v] : table.as_table()) {
      const TomlKey *k = nullptr;
      for (const TomlKey &t : kTomlKeys)
        if (name == t.name) k = &t;
      std::string where = path + ":" + std::to_string(v.location().line()) + ": forward." + name;
      if (!k) {
        *error = where + ": unknown key";
        return false;
      }
      std::vector<std::string> values;
      if (k->key == kApp && v.is_array()) {
        for (const auto &e : v.as_array()) {
          if (!e.is_string()) {
            *error = where + ": expected an array of strings";
            return false;
          }
          values.push_back(e.as_string().str);
        }
      } else if (v.is_string()) {
        values.push_back(v.as_string().str);
      } else if (v.is_integer()) {
        values.push_back(std::to_string(v.as_integer()));
      } else {
        *error = where + ": expected a string";
        return false;
      }
      for (const std::string &s : values) {
        std::string why = Set(k->key, s, o);
        if (!why.empty()) {
          *error = where + ": " + why;
          return false;
        }
      }
    }
  }
  return true;
}

const option kLong[] = {
    {"to", required_argument, nullptr, kTo},
    {"subject", required_argument, nullptr, kSubject},
    {"create-stream", required_argument, nullptr, kCreateStream},
    {"file", required_argument, nullptr, kFile},
    {"cursor-file", required_argument, nullptr, kCursorFile},
    {"start", required_argument, nullptr, kStart},
    {"level", required_argument, nullptr, kLevel},
    {"app", required_argument, nullptr, kApp},
    {"window", required_argument, nullptr, kWindow},
    {"batch", required_argument, nullptr, kBatch},
    {"ack-timeout", required_argument, nullptr, kAckTimeout},
    {"shutdown-timeout", required_argument, nullptr, kShutdownTimeout},
    {"sd-id", required_argument, nullptr, kSdId},
    {"facility", required_argument, nullptr, kFacility},
    {"log-level", required_argument, nullptr, kLogLevel},
    {"config", required_argument, nullptr, kConfig},
    {"status", no_argument, nullptr, kStatus},
    {"help", no_argument, nullptr, kHelp},
    {"version", no_argument, nullptr, kVersion},
    {nullptr, 0, nullptr, 0},
};

}  // namespace

const char *Usage() {
  return "usage: logsink-forward --to nats://HOST:PORT[,HOST:PORT...] --subject SUBJECT\n"
         "                       --cursor-file PATH [options]\n"
         "       logsink-forward --to relp://HOST:PORT --cursor-file PATH [options]\n"
         "       logsink-forward --status --cursor-file PATH [--file RING]\n"
         "Follows a logsink ring file and ships every record to NATS JetStream or to\n"
         "rsyslog over RELP; the cursor file advances only after the destination\n"
         "acknowledged everything before it.\n"
         "  --to URL               destination (nats://… or relp://…)\n"
         "  --subject SUBJECT      NATS subject to publish to; a template with fields\n"
         "                         {host} {app} {comm} {level} {uid} routes each record\n"
         "                         (logs.{host}.{app}.{level}: one record per message)\n"
         "  --create-stream NAME   create the JetStream stream NAME for SUBJECT if missing\n"
         "  --file PATH            the ring (default $LOGSINK_FILE, else " LS_SYSTEM_RING
         ")\n"
         "  --cursor-file PATH     where the position is kept (required)\n"
         "  --start oldest|end     where to begin when there is no cursor (default oldest)\n"
         "  --level L              ship records at L or more severe (emerg..debug, 0-7)\n"
         "  --app NAME             ship only records of app NAME (repeatable: any of them)\n"
         "  --window N             unacknowledged messages at most (default 1024)\n"
         "  --batch N              NATS: up to N records per message as JSON lines, exactly\n"
         "                         once as well (default 1: one record per message)\n"
         "  --ack-timeout D        resend a NATS publish not acknowledged within D (default 5s)\n"
         "  --shutdown-timeout D   on SIGTERM, wait up to D for outstanding acks (default 5s)\n"
         "  --sd-id ID             RFC 5424 SD-ID for RELP (default logsink@32473)\n"
         "  --facility N           syslog facility for RELP's PRI (default 1, user)\n"
         "  --log-level L          trace debug info warn error critical off (default info)\n"
         "  --config FILE          TOML file with a [forward] table of the same settings\n"
         "  --status               print the running instance's status (from CURSOR.status)\n"
         "  --help, --version\n";
}

bool ParseArgs(int argc, char **argv, Options *o, std::string *error) {
  // First pass: --config, so that flags override the file.
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--config" && i + 1 < argc) o->config_file = argv[i + 1];
    if (a.rfind("--config=", 0) == 0) o->config_file = a.substr(9);
  }
  if (!o->config_file.empty() && !LoadToml(o->config_file, o, error)) return false;
  optind = 1;
  opterr = 0;
  bool apps_from_cli = false;
  for (;;) {
    int li = -1;
    int c = getopt_long(argc, argv, "hV", kLong, &li);
    if (c == -1) break;
    if (c == 'V') c = kVersion;
    if (c == 'h') c = kHelp;
    if (c == '?') {
      *error = std::string("unknown option or missing value: ") + argv[optind - 1];
      return false;
    }
    if (!config::LongOptionInFull(argv, optind, optarg, kLong, li, error)) return false;
    switch (c) {
      case kConfig:
        break;
      case kStatus:
        o->status = true;
        break;
      case kHelp:
        o->help = true;
        break;
      case kVersion:
        o->version = true;
        break;
      default: {
        if (c == kApp && !apps_from_cli) {  // the command line replaces the file's list
          o->apps.clear();
          apps_from_cli = true;
        }
        std::string why = Set(c, optarg, o);
        if (!why.empty()) {
          *error = std::string("--") + kLong[c - kTo].name + ": " + why;
          return false;
        }
      }
    }
  }
  if (optind < argc) {
    *error = std::string("unexpected argument: ") + argv[optind];
    return false;
  }
  return true;
}

bool Finish(Options *o, std::string *error) {
  if (o->file.empty()) {
    const char *env = secure_getenv("LOGSINK_FILE");
    o->file = env && *env ? env : LS_SYSTEM_RING;
    o->file_default = !(env && *env);
  }
  if (o->cursor_file.empty()) {
    *error = "--cursor-file is required";
    return false;
  }
  if (o->status) return true;
  bool nats = o->to.rfind("nats://", 0) == 0, relp = o->to.rfind("relp://", 0) == 0;
  if (!nats && !relp) {
    *error = o->to.empty() ? "--to is required (nats://HOST:PORT or relp://HOST:PORT)"
                           : "--to must start with nats:// or relp://, got " + o->to;
    return false;
  }
  if (nats && o->subject.empty()) {
    *error = "--subject is required with a nats:// destination";
    return false;
  }
  if (relp && (!o->subject.empty() || !o->create_stream.empty())) {
    *error = "--subject and --create-stream apply only to nats:// destinations";
    return false;
  }
  if (nats) {
    SubjectTemplate t;
    if (!t.Parse(o->subject, error)) {
      *error = "--subject: " + *error;
      return false;
    }
    if (!t.fixed() && o->batch > 1) {
      *error = "--subject " + o->subject +
               " names record fields: each record is then its own message; a batch holds the "
               "records of one subject (drop --batch, or use a fixed subject)";
      return false;
    }
  } else if (o->batch > 1) {
    *error = "--batch applies only to nats:// destinations (RELP carries one record per message)";
    return false;
  }
  if (o->window == 0) o->window = 1024;
  return true;
}

}  // namespace logsink::forward
