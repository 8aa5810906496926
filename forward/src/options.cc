// options.cc: see options.h. One table of settings (flag, TOML key, kind,
// field) drives the command line and the TOML file; TOML through toml11
// and config/'s duration grammar, like logsinkd's loader.
#include "options.h"

#include <getopt.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <toml.hpp>
#include <variant>
#include <vector>

#include "logsink/config/config.h"
#include "logsink/config/long_options.h"
#include "logsink/proto/paths.h"
#include "logsink/render/filter.h"
#include "subject.h"

namespace logsink::forward {
namespace {

// One setting: its flag (--flag), its key in the file's [forward] table,
// what its value is and where it goes. ParseArgs, the TOML loader and the
// getopt table follow from this list.
enum class Kind : uint8_t {
  kString,    // any string
  kList,      // a string per occurrence (an array of strings in the file)
  kChoice,    // one of `choices`
  kLevel,     // a syslog level name or 0-7 (logctl's --level)
  kInt,       // an integer, min .. max
  kDuration,  // a duration, more than 0
  kSdId,      // an RFC 5424 SD-ID
  kLogLevel,  // trace debug info warn error critical off
};

struct Setting {
  const char *flag;
  const char *key;
  Kind kind;
  std::variant<std::string Options::*, std::vector<std::string> Options::*, int Options::*,
               uint64_t Options::*>
      member;
  long min = 0, max = 0;                 // kInt
  const char *const *choices = nullptr;  // kChoice: nullptr-terminated
};

constexpr const char *kStarts[] = {"oldest", "end", nullptr};
constexpr const char *kCodecs[] = {"none", "lz4", "zstd", nullptr};

constexpr Setting kSettings[] = {
    {"to", "to", Kind::kString, &Options::to},
    {"subject", "subject", Kind::kString, &Options::subject},
    {"create-stream", "create_stream", Kind::kString, &Options::create_stream},
    {"file", "file", Kind::kString, &Options::file},
    {"cursor-file", "cursor_file", Kind::kString, &Options::cursor_file},
    {"start", "start", Kind::kChoice, &Options::start, 0, 0, kStarts},
    {"level", "level", Kind::kLevel, &Options::max_level},
    {"app", "app", Kind::kList, &Options::apps},
    {"window", "window", Kind::kInt, &Options::window, 1, 65536},
    {"refused-retries", "refused_retries", Kind::kInt, &Options::refused_retries, 0, 1000000},
    {"batch", "batch", Kind::kInt, &Options::batch, 1, 65536},
    {"compress", "compress", Kind::kChoice, &Options::compress, 0, 0, kCodecs},
    {"ack-timeout", "ack_timeout", Kind::kDuration, &Options::ack_timeout_ms},
    {"shutdown-timeout", "shutdown_timeout", Kind::kDuration, &Options::shutdown_timeout_ms},
    {"sd-id", "sd_id", Kind::kSdId, &Options::sd_id},
    {"facility", "facility", Kind::kInt, &Options::facility, 0, 23},
    {"log-level", "log_level", Kind::kLogLevel, &Options::log_level},
};
constexpr int kFirst = 256;  // getopt value of kSettings[0]; the others follow

// Command-line-only flags, after the settings.
enum { kConfig = kFirst + int(std::size(kSettings)), kStatus, kHelp, kVersion };

// Applies one setting given as text; "" or what is wrong.
std::string Set(const Setting &s, const std::string &v, Options *o) {
  switch (s.kind) {
    case Kind::kString:
      o->*std::get<std::string Options::*>(s.member) = v;
      return "";
    case Kind::kList:
      (o->*std::get<std::vector<std::string> Options::*>(s.member)).push_back(v);
      return "";
    case Kind::kChoice: {
      std::string all;
      for (size_t i = 0; s.choices[i]; i++) {
        if (v == s.choices[i]) {
          o->*std::get<std::string Options::*>(s.member) = v;
          return "";
        }
        all += i == 0 ? "" : s.choices[i + 1] ? ", " : " or ";
        all += s.choices[i];
      }
      return "must be " + all;
    }
    case Kind::kLevel: {
      int l = render::ParseLevel(v);
      if (l < 0) return "not a level (emerg..debug or 0-7): " + v;
      o->*std::get<int Options::*>(s.member) = l;
      return "";
    }
    case Kind::kInt: {
      char *end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < s.min || n > s.max)
        return "must be " + std::to_string(s.min) + ".." + std::to_string(s.max) + ": " + v;
      o->*std::get<int Options::*>(s.member) = int(n);
      return "";
    }
    case Kind::kDuration: {
      uint64_t ms = 0;
      if (!config::ParseDuration(v, &ms) || ms == 0)
        return "not a duration (like 500ms or 5s): " + v;
      o->*std::get<uint64_t Options::*>(s.member) = ms;
      return "";
    }
    case Kind::kSdId:
      if (v.empty() || v.size() > 32 || v.find_first_of(" =]\"") != std::string::npos)
        return "not an RFC 5424 SD-ID (1..32 printable characters, no space = ] \"): " + v;
      o->*std::get<std::string Options::*>(s.member) = v;
      return "";
    case Kind::kLogLevel:
      if (!config::ValidLogLevel(v))
        return "not a log level (trace debug info warn error critical off): " + v;
      o->*std::get<std::string Options::*>(s.member) = v;
      return "";
  }
  return "";
}

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
      const Setting *k = nullptr;
      for (const Setting &t : kSettings)
        if (name == t.key) k = &t;
      std::string where = path + ":" + std::to_string(v.location().line()) + ": forward." + name;
      if (!k) {
        *error = where + ": unknown key";
        return false;
      }
      std::vector<std::string> values;
      if (k->kind == Kind::kList && v.is_array()) {
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
        std::string why = Set(*k, s, o);
        if (!why.empty()) {
          *error = where + ": " + why;
          return false;
        }
      }
    }
  }
  return true;
}

// getopt's table: every setting (a value each), then the command line's own.
const std::vector<option> &LongOptions() {
  static const std::vector<option> opts = [] {
    std::vector<option> v;
    for (const Setting &s : kSettings)
      v.push_back({s.flag, required_argument, nullptr, kFirst + int(&s - kSettings)});
    v.push_back({"config", required_argument, nullptr, kConfig});
    v.push_back({"status", no_argument, nullptr, kStatus});
    v.push_back({"help", no_argument, nullptr, kHelp});
    v.push_back({"version", no_argument, nullptr, kVersion});
    v.push_back({nullptr, 0, nullptr, 0});
    return v;
  }();
  return opts;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SettingNames() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Setting &s : kSettings) out.emplace_back(s.flag, s.key);
  return out;
}

const char *Usage() {
  return "usage: logsink-forward --to nats://HOST:PORT[,HOST:PORT...] [--subject SUBJECT]\n"
         "                       --cursor-file PATH [options]\n"
         "       logsink-forward --to relp://HOST:PORT --cursor-file PATH [options]\n"
         "       logsink-forward --status --cursor-file PATH [--file RING]\n"
         "Follows a logsink ring file and ships every record to NATS JetStream or to\n"
         "rsyslog over RELP; the cursor file advances only after the destination\n"
         "acknowledged everything before it.\n"
         "  --to URL               destination (nats://… or relp://…)\n"
         "  --subject SUBJECT      NATS subject to publish to; a template with fields\n"
         "                         {host} {app} {comm} {level} {uid} routes each record\n"
         "                         (logs.{host}.{app}.{level}: one record per message);\n"
         "                         default logs.{host}, the layout logctl --nats reads\n"
         "  --create-stream NAME   create the JetStream stream NAME for SUBJECT if missing\n"
         "  --file PATH            the ring (default $LOGSINK_FILE, else " LS_SYSTEM_RING
         ")\n"
         "  --cursor-file PATH     where the position is kept (required)\n"
         "  --start oldest|end     where to begin when there is no cursor (default oldest)\n"
         "  --level L              ship records at L or more severe (emerg..debug, 0-7)\n"
         "  --app NAME             ship only records of app NAME (repeatable: any of them)\n"
         "  --window N             unacknowledged messages at most (default 1024)\n"
         "  --refused-retries N    RELP: a message the receiver refuses N times more is\n"
         "                         sent as a notice in its place (default 10; 0: never)\n"
         "  --batch N              NATS: up to N records per message as JSON lines, exactly\n"
         "                         once as well (default 1: one record per message)\n"
         "  --compress none|lz4|zstd  NATS, --batch: compress each batch's body (header\n"
         "                         Logsink-Encoding; default none)\n"
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
  const std::vector<option> &kLong = LongOptions();
  optind = 1;
  opterr = 0;
  bool apps_from_cli = false;
  for (;;) {
    int li = -1;
    int c = getopt_long(argc, argv, "hV", kLong.data(), &li);
    if (c == -1) break;
    if (c == 'V') c = kVersion;
    if (c == 'h') c = kHelp;
    if (c == '?') {
      *error = std::string("unknown option or missing value: ") + argv[optind - 1];
      return false;
    }
    if (!config::LongOptionInFull(argv, optind, optarg, kLong.data(), li, error)) return false;
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
        if (c < kFirst || c >= kConfig) {
          *error = std::string("unknown option: ") + argv[optind - 1];
          return false;
        }
        const Setting &s = kSettings[c - kFirst];
        if (s.kind == Kind::kList && !apps_from_cli) {  // the command line replaces the file's list
          (o->*std::get<std::vector<std::string> Options::*>(s.member)).clear();
          apps_from_cli = true;
        }
        std::string why = Set(s, optarg, o);
        if (!why.empty()) {
          *error = std::string("--") + s.flag + ": " + why;
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
  // The layout `logctl --nats` reads: one subject per host.
  if (nats && o->subject.empty()) o->subject = "logs.{host}";
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
      if (!t.host_only()) {
        *error = "--subject " + o->subject +
                 " names record fields: each record is then its own message; a batch holds the "
                 "records of one subject (drop --batch, or use a fixed subject or one naming "
                 "only {host})";
        return false;
      }
      // {host} is the same for every record of this forwarder: the subject
      // is rendered once, and batches use it as a fixed one.
      const std::string host = HostName();
      SubjectFields f;
      f.host = host;
      t.Render(f, &o->subject);
    }
  } else if (o->batch > 1) {
    *error = "--batch applies only to nats:// destinations (RELP carries one record per message)";
    return false;
  }
  if (o->compress != "none" && o->batch <= 1) {
    *error = "--compress " + o->compress +
             " applies to batches only (--batch 2 or more; a single record stays plain JSON)";
    return false;
  }
  if (o->window == 0) o->window = 1024;
  if (o->refused_retries < 0) o->refused_retries = 10;
  return true;
}

}  // namespace logsink::forward
