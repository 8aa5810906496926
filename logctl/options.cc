// options.cc: getopt_long-based parsing of logctl's subcommand options
// (the usage texts are help.cc's).
#include "options.h"

#include <getopt.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "logsink/config/long_options.h"
#include "logsink/proto/facility.h"
#include "logsink/proto/fields.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/level_rules.h"
#include "logsink/render/escape.h"
#include "timeparse.h"

namespace logsink::logctl {
namespace {

enum Opt {
  kFile = 1000,
  kSocket,
  kLevel,
  kPid,
  kUid,
  kApp,
  kSince,
  kUntil,
  kGrep,
  kJson,
  kNoColor,
  kUtc,
  kFormat,
  kOutput,
  kLines,
  kFollow,
  kHelp,
  kIgnoreCase,
  kShowCursor,
  kAfterCursor,
  kCursorFile,
  kTag,
  kPrioPrefix,
  kId,
  kLevelStdout,
  kLevelStderr,
  kReverse,
  kNoPager,
  kPagerEnd,
  kUnit,
  kBoot,
  kDmesg,
  kListBoots,
  kCursor,
  kWatch,
  kSite,
  kReset,
  kAllSites,
  kField,
  kOutputFields,
  kSet,
  kNats,
  kStream,
  kHost,
  kSubjectPrefix,
};

// The accepted forms of --level, for its error message.
const char kLevelForms[] =
    "': expected emerg, alert, crit, err, warning, notice, info, debug (any case) or 0-7";
const char kLevelRangeForms[] = ", or a range FROM..TO such as err..warning, ..warning, err..";
const char kFacilityForms[] =
    "kern, user, mail, daemon, auth, syslog, lpr, news, uucp, cron, authpriv, ftp, ntp, audit, "
    "alert, clock, local0-local7";
const char kPriorityForms[] =
    "': expected LEVEL or FACILITY.LEVEL (user.err, local3.notice); levels: emerg, alert, "
    "crit, err, warning, notice, info, debug or 0-7; facilities: ";

// logger(1)'s -p: LEVEL or FACILITY.LEVEL.
bool ParsePriority(const char *arg, int *facility, std::optional<int> *level) {
  const char *dot = std::strrchr(arg, '.');
  int l = render::ParseLevel(dot ? dot + 1 : arg);
  if (l < 0) return false;
  if (dot) {
    int f = ls_facility_parse(arg, size_t(dot - arg));
    if (f < 0) return false;
    *facility = f;
  }
  *level = l;
  return true;
}

bool ParseI64(std::string_view s, int64_t *v) {
  size_t i = s.size() > 1 && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  uint64_t a = 0;
  for (; i < s.size(); i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    if (a > (uint64_t(INT64_MAX) - uint64_t(s[i] - '0')) / 10) return false;
    a = a * 10 + uint64_t(s[i] - '0');
  }
  *v = s[0] == '-' ? -int64_t(a) : int64_t(a);
  return true;
}

bool ParseU64(const char *s, uint64_t *v) {
  if (*s < '0' || *s > '9') return false;  // strtoull takes a sign and leading spaces
  char *end;
  errno = 0;
  unsigned long long x = std::strtoull(s, &end, 10);
  if (errno || *end) return false;
  *v = x;
  return true;
}

constexpr unsigned Bit(Command c) { return 1u << unsigned(c); }
constexpr unsigned kTailCat = Bit(Command::kTail) | Bit(Command::kCat);
constexpr unsigned kReads = kTailCat | Bit(Command::kExport);
constexpr unsigned kWrites = Bit(Command::kSend) | Bit(Command::kRun);
constexpr unsigned kEvery = ~0u;
constexpr unsigned kSites = Bit(Command::kSites);
constexpr unsigned kLevels = Bit(Command::kLevel);

// A parse in progress: what the option handlers read and fill.
struct Parse {
  Parse(Command c, int n, char **v, Options *opts) : cmd(c), argc(n), argv(v), o(opts) {}
  Command cmd;
  int argc;
  char **argv;
  Options *o;
  std::string opt;  // the option being handled as the user spelled it, for messages
  bool lines_given = false;
  std::vector<std::string> greps;  // compiled at the end, when -i is known
  bool ignore_case = false;

  // Prints the usage error and returns kExitUsage.
  int Usage(const std::string &why) const {
    if (cmd == Command::kLog) {
      std::fprintf(stderr, "logctl: %s\nTry 'logctl --help'.\n", why.c_str());
    } else {
      Error(CommandName(cmd), why);
      std::fprintf(stderr, "Try 'logctl %s --help'.\n", CommandName(cmd));
    }
    return kExitUsage;
  }
};

// An option's handler: takes its value (nullptr when it has none) into
// p.o; returns kGoOn, or an exit code (kExitOk after --help, p.Usage's).
constexpr int kGoOn = -1;
using Handler = int (*)(Parse &p, const char *arg);

// A switch: sets the member M.
template <bool Options::*M>
int Set(Parse &p, const char *) {
  p.o->*M = true;
  return kGoOn;
}

// A string value: stored in the member M.
template <std::string Options::*M>
int Store(Parse &p, const char *arg) {
  p.o->*M = arg;
  return kGoOn;
}

int OnHelp(Parse &p, const char *) {
  PrintCommandHelp(p.cmd, stdout);
  return kExitOk;
}

// -p: a level (or a range) to filter on; send's [FACILITY.]LEVEL; run's FACILITY.
int OnLevel(Parse &p, const char *arg) {
  std::string why("bad level '");
  why.append(arg);
  Options *o = p.o;
  if (p.cmd == Command::kSend) {
    if (!ParsePriority(arg, &o->send_facility, &o->send_level))
      return p.Usage(why.append(kPriorityForms).append(kFacilityForms));
  } else if (p.cmd == Command::kRun) {
    int f = ls_facility_parse(arg, std::strlen(arg));
    if (f < 0)
      return p.Usage("bad facility '" + std::string(arg) + "': expected " + kFacilityForms);
    o->send_facility = f;
  } else if (int lo, hi; render::ParseLevelRange(arg, &lo, &hi)) {
    o->filter.levels = storage::RecordFilter::LevelRange(lo, hi);
  } else {
    return p.Usage(why.append(kLevelForms).append(kLevelRangeForms));
  }
  return kGoOn;
}

// --pid, --uid: a 32-bit number.
int AddId(Parse &p, const char *arg, std::vector<uint32_t> *to) {
  uint64_t v;
  if (!ParseU64(arg, &v) || v > UINT32_MAX)
    return p.Usage("bad number '" + std::string(arg) + "' for " + p.opt);
  to->push_back(static_cast<uint32_t>(v));
  return kGoOn;
}

// level's selectors: at most one of each (all of a rule's selectors must
// match a client, so two values of one could never both match).
template <typename T>
int LevelSelector(Parse &p, std::optional<T> *to, T v) {
  if (*to)
    return p.Usage(p.opt + " is given twice: a rule has one of each selector, and all must match");
  *to = std::move(v);
  return kGoOn;
}

// --pid, --uid of level: a 32-bit number (a pid is not 0).
int LevelId(Parse &p, const char *arg, std::optional<uint32_t> *to, bool zero_ok) {
  uint64_t v;
  if (!ParseU64(arg, &v) || v > UINT32_MAX || (v == 0 && !zero_ok))
    return p.Usage("bad number '" + std::string(arg) + "' for " + p.opt);
  return LevelSelector(p, to, static_cast<uint32_t>(v));
}

int OnPid(Parse &p, const char *arg) {
  if (p.cmd == Command::kLevel) return LevelId(p, arg, &p.o->level.pid, false);
  return AddId(p, arg, &p.o->filter.pids);
}

int OnUid(Parse &p, const char *arg) {
  if (p.cmd == Command::kLevel) return LevelId(p, arg, &p.o->level.uid, true);
  return AddId(p, arg, &p.o->filter.uids);
}

// --app, -t: the label to send with (send, run), level's selector, else one
// to filter on.
int OnApp(Parse &p, const char *arg) {
  if (p.cmd == Command::kSend || p.cmd == Command::kRun) {
    p.o->send_app = arg;
  } else if (p.cmd == Command::kLevel) {
    // The daemon cuts a longer label to LS_APP_MAX: no client has one.
    if (!*arg || std::strlen(arg) > LS_APP_MAX)
      return p.Usage("bad app '" + std::string(arg) + "' for " + p.opt + ": 1 to " +
                     std::to_string(LS_APP_MAX) + " bytes");
    return LevelSelector(p, &p.o->level.app, std::string(arg));
  } else {
    p.o->filter.apps.emplace_back(arg);
  }
  return kGoOn;
}

int OnId(Parse &p, const char *arg) {
  if (arg)
    return p.Usage("--id=" + std::string(arg) +
                   " would claim another process's id; every record carries the sender's "
                   "pid from the kernel (--id without a value is accepted)");
  return kGoOn;
}

// --level-stdout, --level-stderr.
int StreamLevel(Parse &p, const char *arg, int *to) {
  int l = render::ParseLevel(arg);
  if (l < 0) return p.Usage(std::string("bad level '").append(arg).append(kLevelForms));
  *to = l;
  return kGoOn;
}

// --since, --until.
int TimeBound(Parse &p, const char *arg, std::optional<uint64_t> *to) {
  uint64_t t;
  std::string why;
  if (!ParseTime(arg, NowNs(), &t, &why))
    return p.Usage("bad time '" + std::string(arg) + "': " + why);
  *to = t;
  return kGoOn;
}

// --grep's patterns wait for Finish, which knows whether -i was given.
int OnGrep(Parse &p, const char *arg) {
  p.greps.emplace_back(arg);
  return kGoOn;
}

int OnIgnoreCase(Parse &p, const char *) {
  p.ignore_case = true;
  return kGoOn;
}

int OnDmesg(Parse &p, const char *) {
  p.o->filter.kernel_only = true;
  return kGoOn;
}

int OnJson(Parse &p, const char *) {
  p.o->json = true;
  p.o->mode = render::OutputMode::kJson;
  return kGoOn;
}

int OnFormat(Parse &p, const char *arg) {
  if (std::strcmp(arg, "json") == 0)
    p.o->export_json = true;
  else if (std::strcmp(arg, "text") == 0)
    p.o->export_json = false;
  else
    return p.Usage("bad format '" + std::string(arg) + "' (text or json)");
  return kGoOn;
}

// -o: export's destination, else the output mode.
int OnOutput(Parse &p, const char *arg) {
  if (p.cmd == Command::kExport) {
    // `export -o json` meant the rendering (as -o does for cat) far
    // more often than a file named json: say so, and how to get either.
    if (render::OutputMode m; render::ParseOutputMode(arg, &m))
      return p.Usage("-o names the file to write, and '" + std::string(arg) +
                     "' is an output mode: for that rendering use --format (text or "
                     "json); for a file of that name, -o ./" +
                     arg);
    p.o->export_path = arg;
  } else if (!render::ParseOutputMode(arg, &p.o->mode)) {
    return p.Usage("bad output mode '" + std::string(arg) + "' (" + render::kOutputModeNames + ")");
  }
  return kGoOn;
}

int OnLines(Parse &p, const char *arg) {
  if (!ParseU64(arg, &p.o->lines))
    return p.Usage("bad number of lines '" + std::string(arg) + "'" +
                   (arg[0] == '+' ? " (-n counts from the newest record; to start at the "
                                    "oldest, use 'logctl cat' or --cursor)"
                                  : ""));
  p.lines_given = true;
  p.o->lines_given = true;
  return kGoOn;
}

// --watch[=SECONDS]: a decimal number, 0.1 .. 3600 (default 1).
int OnWatch(Parse &p, const char *arg) {
  double secs = 1;
  if (arg) {
    char *end = nullptr;
    errno = 0;
    secs = std::strtod(arg, &end);
    if (errno || end == arg || *end || !(secs >= 0.1 && secs <= 3600))
      return p.Usage("bad interval '" + std::string(arg) + "' for --watch (0.1 to 3600 seconds)");
  }
  p.o->watch_ms = uint64_t(secs * 1000 + 0.5);
  return kGoOn;
}

int OnUnit(Parse &p, const char *arg) {
  if (!*arg) return p.Usage("an empty unit name for " + p.opt);
  std::string unit = render::UnitName(arg);
  if (p.cmd != Command::kLevel) {
    p.o->filter.units.push_back(std::move(unit));
    return kGoOn;
  }
  if (unit.size() > LS_LEVEL_UNIT_MAX)
    return p.Usage("a unit name of more than " + std::to_string(LS_LEVEL_UNIT_MAX) + " bytes for " +
                   p.opt);
  return LevelSelector(p, &p.o->level.unit, std::move(unit));
}

// level --site FILE[:LINE], read as a FILE[:LINE]=LEVEL rule of
// $LOGSINK_LEVEL reads it (level_rules.h): the last ':' followed by digits
// only starts the line. The daemon sends the rule to clients as such a
// piece of rules text, so FILE must be one a client would parse back the
// same: no ',' or '=', no space or tab at either end.
int OnSite(Parse &p, const char *arg) {
  const std::string_view s(arg);
  const std::string quoted = "bad site '" + std::string(arg) + "' for " + p.opt + ": ";
  size_t end = s.size(), digits = s.size();
  while (digits > 0 && s[digits - 1] >= '0' && s[digits - 1] <= '9') digits--;
  uint32_t line = 0;
  if (digits < end && digits > 0 && s[digits - 1] == ':') {
    uint64_t v = 0;
    for (size_t i = digits; i < end && v <= LS_LEVEL_LINE_MAX; i++)
      v = v * 10 + uint64_t(s[i] - '0');
    if (v == 0 || v > LS_LEVEL_LINE_MAX)
      return p.Usage(quoted + "the line must be 1.." + std::to_string(LS_LEVEL_LINE_MAX));
    line = uint32_t(v);
    end = digits - 1;
  }
  const std::string_view file = s.substr(0, end);
  if (file.empty()) return p.Usage(quoted + "expected FILE or FILE:LINE");
  if (file.size() > LS_LEVEL_FILE_MAX)
    return p.Usage(quoted + "a FILE of more than " + std::to_string(LS_LEVEL_FILE_MAX) + " bytes");
  if (file.find_first_of(",=") != std::string_view::npos)
    return p.Usage(quoted + "FILE must not hold ',' or '='");
  if (file.front() == ' ' || file.front() == '\t' || file.back() == ' ' || file.back() == '\t')
    return p.Usage(quoted + "FILE must not start or end with a space or tab");
  if (int rc = LevelSelector(p, &p.o->level.file, std::string(file)); rc != kGoOn) return rc;
  p.o->level.line = line;
  return kGoOn;
}

int OnReset(Parse &p, const char *) {
  p.o->level.op = LevelArgs::Op::kReset;
  return kGoOn;
}

int OnAllSites(Parse &p, const char *) {
  p.o->all_sites = true;
  return kGoOn;
}

// -F FIELD: a field name (field_match.h), trusted ones included.
int OnField(Parse &p, const char *arg) {
  std::string why;
  if (!CheckFieldName(arg, &why)) return p.Usage("bad field for " + p.opt + ": " + why);
  p.o->list_field = arg;
  return kGoOn;
}

// send --set NAME=VALUE: a field every line carries. NAME a field name a
// client may set (no '_': those are the daemon's own), once; at most 32,
// values of at most 1024 bytes (PROTOCOL.md, "Text streams").
int OnSet(Parse &p, const char *arg) {
  const std::string_view a(arg);
  const size_t eq = a.find('=');
  std::string shown;
  render::AppendTerminalSafe(&shown, a.substr(0, eq));
  if (eq == std::string_view::npos)
    return p.Usage("bad " + p.opt + " '" + shown + "': expected NAME=VALUE");
  const std::string_view name = a.substr(0, eq), value = a.substr(eq + 1);
  if (!name.empty() && name[0] == '_')
    return p.Usage("bad field for " + p.opt + ": '" + shown +
                   "' starts with '_': such fields are the daemon's own, never a sender's");
  if (!ls_field_name_ok(name.data(), name.size(), 0))
    return p.Usage("bad field for " + p.opt + ": '" + shown + "' is not a field name (1 to " +
                   std::to_string(LS_FIELD_NAME_MAX) +
                   " letters, digits, '_', '.', '@' or '-', not starting with '.', '@' or '-')");
  auto &v = p.o->send_fields;
  for (const auto &e : v)
    if (e.first == name) return p.Usage("field '" + shown + "' set twice with " + p.opt);
  if (v.size() >= LS_TEXT_FIELDS_MAX)
    return p.Usage("more than " + std::to_string(LS_TEXT_FIELDS_MAX) + " fields with " + p.opt);
  if (value.size() > LS_TEXT_FIELD_VALUE_MAX)
    return p.Usage("the value of field '" + shown + "' is longer than " +
                   std::to_string(LS_TEXT_FIELD_VALUE_MAX) + " bytes");
  v.emplace_back(name, value);
  return kGoOn;
}

// --output-fields=LIST: comma-separated field names (field_match.h's, as
// -F takes them), added to those of an earlier --output-fields.
int OnOutputFields(Parse &p, const char *arg) {
  std::string_view rest(arg);
  for (;;) {
    const size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    std::string why;
    if (!CheckFieldName(name, &why)) {
      std::string shown;
      render::AppendTerminalSafe(&shown, arg);
      return p.Usage("bad field list '" + shown + "' for " + p.opt + ": " + why);
    }
    std::vector<std::string> &v = p.o->output_fields;
    if (std::find(v.begin(), v.end(), name) == v.end()) v.emplace_back(name);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return kGoOn;
}

// --host GLOB (with --nats): a host name or a shell glob of them, as
// fnmatch(3) takes it.
int OnHost(Parse &p, const char *arg) {
  if (!*arg) return p.Usage("an empty host for " + p.opt);
  p.o->hosts.emplace_back(arg);
  return kGoOn;
}

// --subject-prefix PREFIX: one or more NATS subject tokens (no wildcard).
int OnSubjectPrefix(Parse &p, const char *arg) {
  const std::string_view v(arg);
  bool ok =
      !v.empty() && v.front() != '.' && v.back() != '.' && v.find("..") == std::string_view::npos;
  for (char c : v) ok = ok && c > 0x20 && c < 0x7f && c != '*' && c != '>';
  if (!ok)
    return p.Usage("bad " + p.opt + " '" + std::string(arg) +
                   "': NATS subject tokens separated by '.', without '*', '>' or spaces");
  p.o->nats_prefix = arg;
  p.o->prefix_given = true;
  return kGoOn;
}

// -b [ID|OFFSET|all].
int OnBoot(Parse &p, const char *arg) {
  BootSpec b;
  if (arg) {
    if (!ParseBootSpec(arg, &b))
      return p.Usage("bad boot '" + std::string(arg) +
                     "': expected an offset (0 the last boot, -1 the one before, 1 the "
                     "first), a boot ID (32 hex digits) or all");
  } else if (optind < p.argc && ParseBootSpec(p.argv[optind], &b)) {
    // As journalctl: "-b -1", "-b 1", "-b ID": the next word is the
    // value when it reads as one (getopt has no separate optional value).
    optind++;
  }
  p.o->boot = b;
  return kGoOn;
}

// Every option once: its long name (a second row gives an alias), its short
// letter (0 for none), whether it takes a value, the commands that take it
// and its handler. getopt_long's table, the short-option string, the "does
// not apply here" check and what each option does all come from this one
// list.
struct Spec {
  int id;
  const char *name;
  char letter;
  int has_arg;
  unsigned commands;
  Handler handle;
};

constexpr Spec kSpecs[] = {
    {kFile, "file", 0, required_argument, kEvery & ~kWrites & ~kLevels, Store<&Options::file>},
    {kSocket, "socket", 0, required_argument, kEvery, Store<&Options::socket>},
    {kLevel, "level", 'p', required_argument, kReads | kWrites | kSites, OnLevel},
    {kLevel, "priority", 0, required_argument, kReads | kWrites | kSites, OnLevel},
    {kPid, "pid", 0, required_argument, kReads | kSites | kLevels, OnPid},
    {kUid, "uid", 0, required_argument, kReads | kSites | kLevels, OnUid},
    {kApp, "app", 0, required_argument, kReads | kWrites | kSites | kLevels, OnApp},
    {kSince, "since", 'S', required_argument, kReads | kSites,
     [](Parse &p, const char *arg) { return TimeBound(p, arg, &p.o->filter.since_ns); }},
    {kUntil, "until", 'U', required_argument, kReads | kSites,
     [](Parse &p, const char *arg) { return TimeBound(p, arg, &p.o->filter.until_ns); }},
    {kGrep, "grep", 'g', required_argument, kReads | kSites, OnGrep},
    {kIgnoreCase, "ignore-case", 'i', no_argument, kReads | kSites, OnIgnoreCase},
    {kJson, "json", 0, no_argument, kTailCat | Bit(Command::kStats) | kSites | kLevels, OnJson},
    {kNoColor, "no-color", 0, no_argument, kTailCat, Set<&Options::no_color>},
    {kUtc, "utc", 0, no_argument, kTailCat, Set<&Options::utc>},
    {kFormat, "format", 0, required_argument, Bit(Command::kExport), OnFormat},
    {kOutput, "output", 'o', required_argument, kReads, OnOutput},
    {kLines, "lines", 'n', required_argument, Bit(Command::kTail) | kSites, OnLines},
    {kFollow, "follow", 'f', no_argument, Bit(Command::kTail), Set<&Options::follow>},
    {kHelp, "help", 'h', no_argument, kEvery, OnHelp},
    {kShowCursor, "show-cursor", 0, no_argument, kTailCat, Set<&Options::show_cursor>},
    {kAfterCursor, "after-cursor", 0, required_argument, kTailCat, Store<&Options::after_cursor>},
    {kCursor, "cursor", 0, required_argument, kTailCat, Store<&Options::cursor>},
    {kWatch, "watch", 0, optional_argument, Bit(Command::kStats), OnWatch},
    {kCursorFile, "cursor-file", 0, required_argument, kTailCat, Store<&Options::cursor_file>},
    {kTag, "tag", 't', required_argument, kReads | Bit(Command::kSend) | kSites, OnApp},
    {kPrioPrefix, "prio-prefix", 0, no_argument, kWrites, Set<&Options::prio_prefix>},
    {kId, "id", 0, optional_argument, Bit(Command::kSend), OnId},
    {kLevelStdout, "level-stdout", 0, required_argument, Bit(Command::kRun),
     [](Parse &p, const char *arg) { return StreamLevel(p, arg, &p.o->level_stdout); }},
    {kLevelStderr, "level-stderr", 0, required_argument, Bit(Command::kRun),
     [](Parse &p, const char *arg) { return StreamLevel(p, arg, &p.o->level_stderr); }},
    {kReverse, "reverse", 'r', no_argument, kTailCat, Set<&Options::reverse>},
    {kNoPager, "no-pager", 0, no_argument, kEvery, Set<&Options::no_pager>},
    {kPagerEnd, "pager-end", 'e', no_argument, kTailCat, Set<&Options::pager_end>},
    {kUnit, "unit", 'u', required_argument, kReads | kSites | kLevels, OnUnit},
    {kBoot, "boot", 'b', optional_argument, kReads | kSites, OnBoot},
    {kDmesg, "dmesg", 'k', no_argument, kReads | kSites, OnDmesg},
    {kListBoots, "list-boots", 0, no_argument, kTailCat, Set<&Options::list_boots>},
    {kSite, "site", 0, required_argument, kLevels, OnSite},
    {kReset, "reset", 0, no_argument, kLevels, OnReset},
    {kAllSites, "all", 0, no_argument, kSites, OnAllSites},
    {kField, "field", 'F', required_argument, Bit(Command::kCat), OnField},
    {kOutputFields, "output-fields", 0, required_argument, kReads, OnOutputFields},
    {kSet, "set", 0, required_argument, Bit(Command::kSend), OnSet},
    {kNats, "nats", 0, required_argument, kTailCat | Bit(Command::kStats),
     Store<&Options::nats_url>},
    {kStream, "stream", 0, required_argument, kTailCat | Bit(Command::kStats),
     Store<&Options::nats_stream>},
    {kHost, "host", 0, required_argument, kTailCat | Bit(Command::kStats), OnHost},
    {kSubjectPrefix, "subject-prefix", 0, required_argument, kTailCat | Bit(Command::kStats),
     OnSubjectPrefix},
};

bool Allowed(Command c, int opt) {
  // logctl with options and no command: tail's and cat's.
  const unsigned want = c == Command::kLog ? kTailCat : Bit(c);
  for (const Spec &s : kSpecs)
    if (s.id == opt) return (s.commands & want) != 0;
  return false;
}

// getopt_long's table, from kSpecs.
const std::vector<struct option> &LongOptions() {
  static const std::vector<struct option> v = [] {
    std::vector<struct option> o;
    for (const Spec &s : kSpecs) o.push_back({s.name, s.has_arg, nullptr, s.id});
    o.push_back({nullptr, 0, nullptr, 0});
    return o;
  }();
  return v;
}

// getopt's short options for cmd. ':' first: a missing value is reported as
// such. send and run stop at the first word ('+': a message may start with
// '-' after "--", and run's command keeps its own options) and take only
// their own letters; the others take every letter, so a letter of another
// command is refused by Allowed with "does not apply here".
std::string ShortOptions(Command cmd) {
  const bool writes = (Bit(cmd) & kWrites) != 0;
  std::string s = writes ? "+:" : ":";
  for (const Spec &spec : kSpecs) {
    if (!spec.letter || (writes && !(spec.commands & Bit(cmd)))) continue;
    s += spec.letter;
    if (spec.has_arg == required_argument) s += ':';
    if (spec.has_arg == optional_argument) s += "::";
  }
  return s;
}

// The row of a short letter (nullptr: none).
const Spec *RowOfLetter(int letter) {
  for (const Spec &s : kSpecs)
    if (s.letter && s.letter == letter) return &s;
  return nullptr;
}

// The option getopt_long returned (c, and li for a long one), as the user
// spelled it, for messages.
std::string Spelled(int c, int li, int argc, char **argv) {
  if (c == '?' || c == ':') {
    return optopt > 0 && optopt < 128     ? std::string("-") + char(optopt)
           : optind > 0 && optind <= argc ? argv[optind - 1]
                                          : "";
  }
  return li >= 0            ? std::string("--") + kSpecs[li].name
         : c > 0 && c < 128 ? std::string("-") + char(c)
                            : "";
}

// level's words: LEVEL (set), or none (with --reset: reset; else the list).
int FinishLevel(Parse &p) {
  LevelArgs &l = p.o->level;
  std::vector<std::string> &words = p.o->words;
  if (words.size() > 1) return p.Usage("unexpected argument '" + words[1] + "'");
  if (!words.empty()) {
    if (l.op == LevelArgs::Op::kReset)
      return p.Usage("--reset removes a rule and takes no LEVEL (got '" + words[0] + "')");
    l.level = ls_level_rules_level(words[0].data(), words[0].size());
    if (l.level == -2)
      return p.Usage("bad level '" + words[0] +
                     "': expected emerg, alert, crit, err, warning, notice, info, debug (any "
                     "case), 0-7 or off");
    l.op = LevelArgs::Op::kSet;
    words.clear();
  }
  if (l.op == LevelArgs::Op::kList && l.any_selector())
    return p.Usage(
        "--app, --pid, --unit, --uid and --site name a rule to set (with a LEVEL) or to "
        "remove (with --reset); 'logctl level' alone lists every rule");
  if (l.op != LevelArgs::Op::kList && p.o->json)
    return p.Usage("--json applies to the list ('logctl level --json'), not to a change");
  return kGoOn;
}

// The words of the commands that read records: FIELD=VALUE matches, "+"
// between groups of them (journalctl's). Any other word is refused, as it
// was before matches (the same message); so is a FIELD that is not a field
// name.
int FinishMatches(Parse &p) {
  Options *o = p.o;
  std::string why;
  for (const std::string &w : o->words) {
    std::string shown;
    render::AppendTerminalSafe(&shown, w);
    if (w == "+") {
      if (!o->matches.NewGroup(&why)) return p.Usage(why);
    } else if (w.find('=') == std::string::npos) {
      return p.Usage("unexpected argument '" + shown + "'");
    } else if (!o->matches.Add(w, &why)) {
      return p.Usage("bad match '" + shown + "': " + why);
    }
  }
  if (!o->matches.Finish(&why)) return p.Usage(why);
  o->filter.field_groups = o->matches.groups();  // for the block summaries
  o->words.clear();
  return kGoOn;
}

// --nats (or $LOGSINK_NATS when no --file or --socket names a local
// source): a stream of records forwarded from many hosts (nats_read.h).
// What only a ring has (boots, named fields, --cursor's one record) is
// refused, saying so.
int FinishNats(Parse &p) {
  Options *o = p.o;
  // $LOGSINK_NATS: for the commands that read records (stats reports the
  // local daemon and ring unless --nats is given).
  const bool reads = o->cmd == Command::kTail || o->cmd == Command::kCat;
  if (reads && o->nats_url.empty() && o->file.empty() && o->socket.empty())
    if (const char *env = std::getenv("LOGSINK_NATS"); env && *env) o->nats_url = env;
  if (o->nats_url.empty()) {
    if (!o->nats_stream.empty() || !o->hosts.empty() || o->prefix_given)
      return p.Usage(
          "--stream, --host and --subject-prefix read a NATS stream: they need --nats URL");
    return kGoOn;
  }
  if (o->cmd == Command::kStats && o->watch_ms)
    return p.Usage("--watch reports a local daemon; it does not apply with --nats");
  if (!o->cursor.empty())
    return p.Usage(
        "--cursor does not apply to a NATS stream (--nats): a stream's cursor names where each "
        "host's read stopped; resume after it with --after-cursor or --cursor-file");
  const char *ring_only = o->boot                        ? (o->filter.kernel_only ? "-k" : "-b")
                          : o->list_boots                ? "--list-boots"
                          : !o->matches.groups().empty() ? "FIELD=VALUE"
                          : o->list_field                ? "-F"
                          : !o->file.empty()             ? "--file"
                          : !o->socket.empty()           ? "--socket"
                                                         : nullptr;
  if (ring_only)
    return p.Usage(std::string(ring_only) +
                   " does not apply to a NATS stream (--nats): it reads a ring, locally or "
                   "through logsinkd");
  return kGoOn;
}

// The checks once every option is in: the command words, options that
// exclude each other, --grep's patterns (compiled now that -i is known).
int Finish(Parse &p) {
  Options *o = p.o;
  const Command cmd = p.cmd;
  if (cmd == Command::kLog) o->cmd = p.lines_given || o->follow ? Command::kTail : Command::kCat;
  if (o->filter.kernel_only && !o->boot) o->boot = BootSpec();  // -k: the last boot
  for (int i = optind; i < p.argc; i++) o->words.emplace_back(p.argv[i]);
  if (cmd == Command::kLevel) return FinishLevel(p);
  if (cmd == Command::kLog || (Bit(cmd) & (kReads | kSites))) {
    if (int rc = FinishMatches(p); rc != kGoOn) return rc;
  }
  if (cmd != Command::kSend && cmd != Command::kRun && !o->words.empty())
    return p.Usage("unexpected argument '" + o->words[0] + "'");
  if (cmd == Command::kRun && o->words.empty()) return p.Usage("a command to run is required");
  if (cmd == Command::kExport && o->export_path.empty()) o->export_path = "-";
  if (o->reverse && o->follow) return p.Usage("--reverse and --follow cannot be combined");
  if (int rc = FinishNats(p); rc != kGoOn) return rc;
  if (o->list_field) {
    if (p.lines_given || o->follow)
      return p.Usage("-F lists the values of the whole selection: it takes no -n or -f");
    if (o->reverse) return p.Usage("-F lists values in the order they are first seen: no -r");
    if (o->list_boots) return p.Usage("--list-boots and -F cannot be combined");
    if (o->show_cursor || !o->cursor_file.empty())
      return p.Usage(
          "-F shows no records, so no cursor: --show-cursor and --cursor-file do "
          "not apply");
  }
  if (o->watch_ms && o->json)
    return p.Usage("--watch prints text lines; it cannot be combined with --json");
  for (const std::string &grep : p.greps) {
    std::string why;
    if (!o->grep.Add(grep, p.ignore_case, !ReadSwitchesFromEnv().plain, &why))
      return p.Usage("bad regular expression '" + grep + "': " + why);
  }
  if (o->filter.since_ns && o->filter.until_ns && *o->filter.since_ns > *o->filter.until_ns)
    return p.Usage("--since is after --until");
  if (int(!o->after_cursor.empty()) + int(!o->cursor.empty()) + int(!o->cursor_file.empty()) > 1)
    return p.Usage("only one of --cursor, --after-cursor and --cursor-file may be given");
  return kGoOn;
}

}  // namespace

bool ParseBootSpec(std::string_view s, BootSpec *out) {
  BootSpec b;
  if (s == "all") {
    b.kind = BootSpec::Kind::kAll;
  } else if (render::ParseBootId(s, &b.id)) {  // before the number: an ID may be all digits
    b.kind = BootSpec::Kind::kId;
  } else if (!ParseI64(s, &b.offset)) {
    return false;
  }
  *out = b;
  return true;
}

int ParseOptions(Command cmd, int argc, char **argv, Options *o) {
  const struct option *longs = LongOptions().data();
  const std::string shorts = ShortOptions(cmd);
  Parse p(cmd, argc, argv, o);
  o->cmd = cmd;
  opterr = 0;
  optind = 1;
  int c, li;
  while ((li = -1, c = getopt_long(argc, argv, shorts.c_str(), longs, &li)) != -1) {
    p.opt = Spelled(c, li, argc, argv);
    if (c == ':') return p.Usage("option '" + p.opt + "' needs an argument");
    if (c == '?') return p.Usage("unknown option '" + p.opt + "'");
    const Spec *row = li >= 0 ? &kSpecs[li] : RowOfLetter(c);
    if (std::string why; !config::LongOptionInFull(argv, optind, optarg, longs, li, &why))
      return p.Usage(why);
    if (!row || !Allowed(cmd, row->id))
      return p.Usage("option '" + p.opt + "' does not apply here");
    if (int rc = row->handle(p, optarg); rc != kGoOn) return rc;
  }
  return Finish(p);
}

}  // namespace logsink::logctl
