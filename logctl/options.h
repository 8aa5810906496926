// options.h: command-line parsing for every logctl subcommand (getopt_long,
// with logctl's own error messages; options.cc) and the usage texts
// (help.cc).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "field_match.h"
#include "logsink/render/filter.h"
#include "logsink/render/printer.h"
#include "logsink/storage/record_filter.h"

namespace logsink::logctl {

// kLog is `logctl OPTIONS` without a command, as journalctl takes them: it
// takes tail's and cat's options and becomes kTail when -n or -f is given
// (journalctl -f shows the last 10 records, then follows), else kCat.
enum class Command { kTail, kCat, kStats, kSend, kVerify, kExport, kRun, kSites, kLevel, kLog };

// -b/--boot's value, as journalctl takes it: which boot of the ring to show
// (resolved against RingReader::ListBoots when the ring is read).
struct BootSpec {
  enum class Kind { kOffset, kId, kAll };
  Kind kind = Kind::kOffset;
  // kOffset: 0 the last boot in the ring, -1 the one before it, ...; 1 the
  // first (oldest) boot, 2 the one after it, ...
  int64_t offset = 0;
  render::BootId id{};  // kId
};
// Parses OFFSET (an integer, optionally signed), ID (see ParseBootId) or
// "all". False for anything else.
bool ParseBootSpec(std::string_view s, BootSpec *out);

// `logctl level`'s rule: LEVEL (or --reset) and the selectors, checked as
// the protocol takes them (LEVEL_REQ, proto/frame.h). No LEVEL and no
// --reset: the list.
struct LevelArgs {
  enum class Op { kList, kSet, kReset };
  Op op = Op::kList;
  int level = 0;                    // kSet: -1 (off) .. 7
  std::optional<std::string> app;   // --app
  std::optional<uint32_t> pid;      // --pid (not 0)
  std::optional<std::string> unit;  // --unit, as -u takes it (UNIT.service for a bare name)
  std::optional<uint32_t> uid;      // --uid
  std::optional<std::string> file;  // --site FILE[:LINE]'s FILE glob
  uint32_t line = 0;                // --site's LINE (0: every line of FILE)
  bool any_selector() const { return app || pid || unit || uid || file; }
};

struct Options {
  Command cmd = Command::kTail;
  std::string file;          // --file (empty: default)
  std::string socket;        // --socket
  uint64_t lines = 10;       // -n
  bool lines_given = false;  // -n was given (sites: the top N, else every site)
  bool follow = false;       // -f
  render::OutputMode mode = render::OutputMode::kShort;
  bool json = false;              // --json (stats too)
  bool no_color = false;          // --no-color
  bool utc = false;               // --utc
  std::string export_path;        // export -o/--output FILE ("-": standard output)
  bool export_json = false;       // export --format json
  std::optional<int> send_level;  // send -p/--level (the LEVEL of FACILITY.LEVEL)
  int send_facility = 1;          // send -p FACILITY.LEVEL, run -p FACILITY (default user)
  bool prio_prefix = false;       // send/run --prio-prefix: lines may start with <N>
  std::string send_app;           // send/run --app, -t/--tag
  // send --set NAME=VALUE: the fields every line carries, in order.
  std::vector<std::pair<std::string, std::string>> send_fields;
  int level_stdout = 6;            // run --level-stdout (info)
  int level_stderr = 3;            // run --level-stderr (err)
  std::vector<std::string> words;  // send MESSAGE..., run CMD ARGS...
  bool show_cursor = false;        // --show-cursor (tail, cat)
  std::string after_cursor;        // --after-cursor C (tail, cat)
  std::string cursor;              // --cursor C (tail, cat): from the record C on
  std::string cursor_file;         // --cursor-file F (tail, cat)
  bool reverse = false;            // -r/--reverse (tail, cat): newest first
  bool no_pager = false;           // --no-pager (every command; only tail and cat page)
  bool pager_end = false;          // -e/--pager-end (tail, cat): the pager starts at the end
  bool list_boots = false;         // --list-boots (tail, cat): list the boots, nothing else
  std::optional<BootSpec> boot;    // -b/--boot (tail, cat, export; -k implies 0)
  uint64_t watch_ms = 0;           // stats --watch[=SECONDS]: a line per interval (0: off)
  LevelArgs level;                 // level LEVEL|--reset [--app ...] [--site ...]
  bool all_sites = false;          // sites --all: the connected programs' silent sites too
  // Which records tail, cat and export show: their fields (a reader skips
  // the blocks it rules out), and --grep on the rendered message.
  storage::RecordFilter filter;
  render::MessageMatcher grep;
  // FIELD=VALUE words (tail, cat, export, sites; field_match.h).
  FieldMatcher matches;
  // -F FIELD (cat): list the field's distinct values instead of records.
  std::optional<std::string> list_field;
  // --output-fields=LIST (tail, cat, export): the named fields json,
  // json-pretty and verbose show, each once (empty: every one).
  std::vector<std::string> output_fields;
  // --nats URL (or $LOGSINK_NATS), --stream NAME, --host GLOB,
  // --subject-prefix PREFIX (tail, cat):
  // read what logsink-forward published into a JetStream stream instead of
  // a ring (nats_read.h).
  std::string nats_url;
  std::string nats_stream;
  std::string nats_prefix = "logs";  // --subject-prefix: subjects PREFIX.HOST[.MORE]
  std::vector<std::string> hosts;
  bool prefix_given = false;
};

// Parses argv (argv[0] is the subcommand name). Returns -1 to go on, or an
// exit code: kExitOk after --help, kExitUsage after a usage error (already
// printed).
int ParseOptions(Command cmd, int argc, char **argv, Options *o);

// The command's name as logctl's messages say it ("tail", ...; "logctl"
// for kLog). help.cc, with the usage texts below.
const char *CommandName(Command c);
// The top-level usage text.
void PrintUsage(FILE *to);
// One command's usage and options (`logctl CMD --help`, `logctl help CMD`).
void PrintCommandHelp(Command cmd, FILE *to);

}  // namespace logsink::logctl
