// help.cc: logctl's usage texts: each command's name and --help, the
// options they share, and `logctl --help`.
#include <cstdio>

#include "options.h"

namespace logsink::logctl {

// "logctl" for kLog: the messages of `logctl OPTIONS` say so.
const char *CommandName(Command c) {
  switch (c) {
    case Command::kTail:
      return "tail";
    case Command::kCat:
      return "cat";
    case Command::kStats:
      return "stats";
    case Command::kSend:
      return "send";
    case Command::kVerify:
      return "verify";
    case Command::kExport:
      return "export";
    case Command::kRun:
      return "run";
    case Command::kSites:
      return "sites";
    case Command::kLevel:
      return "level";
    case Command::kLog:
      return "logctl";
  }
  return "?";
}

namespace {

// tail's own options, in tail's and logctl's (no command) help.
#define TAIL_OPTIONS                                                                 \
  "  -n, --lines N    the last N records (counted from the newest; +N is refused)\n" \
  "  -f, --follow     keep printing new records (not through the pager)\n"

// cat's -F, in cat's and logctl's help.
#define FIELD_OPTION                                                                  \
  "  -F, --field FIELD  instead of records, each distinct value of the named field\n" \
  "                   FIELD in the selection, one per line, first seen first (with\n" \
  "                   --json or -o json: one JSON value per line); see FIELD=VALUE\n"

const char *Help(Command c) {
  switch (c) {
    case Command::kTail:
      return "usage: logctl tail [-n N] [-f] [-r] [--file PATH] [FILTERS] [OUTPUT]\n"
             "                   [FIELD=VALUE...]\n"
             "Prints the last N records (default 10) oldest first (-r: newest first); -f keeps\n"
             "printing new ones. With filters, -n counts matching records.\n" TAIL_OPTIONS;
    case Command::kCat:
      return "usage: logctl cat [-r] [-F FIELD] [--file PATH] [FILTERS] [OUTPUT]\n"
             "                  [FIELD=VALUE...]\n"
             "Prints every record in the ring, oldest first (-r: newest first). 'logctl' with\n"
             "no arguments is 'logctl cat'.\n" FIELD_OPTION;
    case Command::kStats:
      return "usage: logctl stats [--file PATH] [--socket PATH] [--json] [--watch[=SECONDS]]\n"
             "Prints the ring's geometry and usage, its top writers and a histogram of its\n"
             "span, and the daemon's uptime and counters if it runs.\n"
             "  --watch[=SECONDS]  then a line every SECONDS (default 1, 0.1..3600) with the\n"
             "                   records and drops since the last one, until SIGINT/SIGTERM\n"
             "       logctl stats --nats URL [--stream NAME] [--host GLOB]...\n"
             "                   [--subject-prefix P] [--json]\n"
             "Per host of a fleet's stream (logctl(1), READING A FLEET): messages, records,\n"
             "err and worse, lost, oldest and newest record, rate and top writers.\n";
    case Command::kSend:
      return "usage: logctl send [-p [FACILITY.]LEVEL] [-t TAG] [--prio-prefix] [--socket PATH]\n"
             "                   [--set NAME=VALUE...] [MESSAGE...]\n"
             "Logs MESSAGE (or one record per line of standard input) through logsinkd and\n"
             "waits until the daemon has stored every line; a MESSAGE with newlines is one\n"
             "record per line.\n"
             "  -p, --priority, --level [FACILITY.]LEVEL   level (default info) and facility\n"
             "                   (default user) as logger(1) takes them: user.err, local3.notice\n"
             "  -t, --tag, --app TAG   the records' application label (default logctl)\n"
             "  --prio-prefix    a line starting with <N> (N = facility * 8 + level, 0-191, or\n"
             "                   just 0-7; no leading zero) has that priority; the prefix is\n"
             "                   not stored\n"
             "  --set NAME=VALUE  a field every line carries (repeatable, at most 32; NAME\n"
             "                   not starting with '_'; match it with 'logctl NAME=VALUE')\n"
             "  --id             accepted for logger(1) compatibility: every record carries the\n"
             "                   sender's pid from the kernel; --id=ID (a claimed pid) is "
             "refused\n";
    case Command::kRun:
      return "usage: logctl run [--app NAME] [--level-stdout L] [--level-stderr L] [-p FACILITY]\n"
             "                  [--prio-prefix] [--socket PATH] -- CMD [ARGS...]\n"
             "Runs CMD with its standard output and standard error captured line by line into\n"
             "the ring, and exits with CMD's status (128 + N when a signal N killed it). The\n"
             "records carry CMD's own pid. Standard input is CMD's. logctl relays CMD's output\n"
             "and keeps CMD running across restarts of logsinkd (it reconnects and resends).\n"
             "Exit 1 without running CMD when the daemon is not running or refuses.\n"
             "  --app NAME       the records' application label (default: CMD's file name)\n"
             "  --level-stdout L, --level-stderr L   levels of the two streams (info, err)\n"
             "  -p, --priority FACILITY   facility of both streams (default user)\n"
             "  --prio-prefix    a line starting with <N> has that priority (as for send)\n";
    case Command::kSites:
      return "usage: logctl sites [-n N] [--json] [--all] [--file PATH] [FILTERS]\n"
             "                   [FIELD=VALUE...]\n"
             "The census of call sites: which lines of which programs wrote the records in the\n"
             "ring (the filters let through), most records first: records, share, records in\n"
             "the last minute, level, app, file:line (or the kind of free text) and format.\n"
             "  -n, --lines N    the first N sites only\n"
             "  --json           one JSON object per site and line\n"
             "  --all            also the call sites of the programs connected to the daemon\n"
             "                   that wrote no record (yet): 0 records, and whether their\n"
             "                   levels let them log now\n";
    case Command::kLevel:
      return "usage: logctl level [--json]\n"
             "       logctl level LEVEL [--app APP] [--pid PID] [--unit UNIT] [--uid UID]\n"
             "                          [--site FILE[:LINE]]\n"
             "       logctl level --reset [--app APP] [--pid PID] [--unit UNIT] [--uid UID]\n"
             "                          [--site FILE[:LINE]]\n"
             "Levels at run time: the daemon pushes level rules to the programs connected to\n"
             "it (liblogsink, the Python package), which then produce only the records at or\n"
             "more severe than them, as $LOGSINK_LEVEL says at their start. Without LEVEL,\n"
             "lists the rules in force and every connected client: its own rules, the rules\n"
             "pushed to it and its default level.\n"
             "  LEVEL            emerg alert crit err warning notice info debug (any case),\n"
             "                   0-7, or off: set the rule of these selectors and site\n"
             "  --app APP, --pid PID, --unit UNIT, --uid UID   the clients the rule applies\n"
             "                   to (all must match; none: every client; -u sshd is\n"
             "                   sshd.service)\n"
             "  --site FILE[:LINE]  the call sites of FILE (a glob as in $LOGSINK_LEVEL: net.c,\n"
             "                   src/*.c), or of that line of it; without: the default level\n"
             "  --reset          remove the rule with exactly these selectors and site\n"
             "  --json           the list as one JSON object\n"
             "root may set any rule; another user only rules for the clients of their own uid\n"
             "(a rule without --uid gets theirs).\n";
    case Command::kVerify:
      return "usage: logctl verify [--file PATH]\n"
             "Checks every superblock, string-table entry and block; exit 1 on corruption.\n";
    case Command::kExport:
      return "usage: logctl export [-o FILE|-] [--format text|json] [--file PATH] [FILTERS]\n"
             "                    [FIELD=VALUE...]\n"
             "Writes the records oldest first, rendered as text or JSON lines, to standard\n"
             "output (the default, or -o -) or to a new FILE.\n";
    case Command::kLog:
      return "usage: logctl [-n N] [-f] [-r] [-F FIELD] [--file PATH] [FILTERS] [OUTPUT]\n"
             "              [FIELD=VALUE...]\n"
             "Without a command, logctl takes journalctl's options: with -n N or -f it is\n"
             "'logctl tail' (-f alone: the last 10 records, then new ones), else 'logctl "
             "cat'.\n" TAIL_OPTIONS FIELD_OPTION;
  }
  return "";
}

const char kFilterHelp[] =
    "Filters:\n"
    "  -p, --level L    records at L or more severe (emerg alert crit err warning notice info\n"
    "                   debug in any case, or 0-7); FROM..TO: records from FROM to TO\n"
    "                   (err..warning; an empty end means emerg or debug: ..warning, err..)\n"
    "  --pid PID, --uid UID, --app NAME   records of that process, user or application\n"
    "  -t, --tag NAME   the same as --app (journalctl's -t, the syslog tag)\n"
    "  -u, --unit UNIT  records of processes in that systemd unit (UNIT.service when\n"
    "                   UNIT has no type suffix: -u sshd is sshd.service)\n"
    "  -b, --boot [ID|OFFSET]  records of one boot: the last one in the ring (no value\n"
    "                   or 0), the one before it (-1) and so on, or counted from the first\n"
    "                   (1); ID is a boot ID (32 hex digits, dashes allowed); all: every\n"
    "                   boot. 'logctl --list-boots' lists them.\n"
    "  -k, --dmesg      kernel messages only (site file \"kernel\"); implies -b\n"
    "  -S, --since T, -U, --until T   \"2026-11-23 10:00:00\", ISO 8601, @EPOCH,\n"
    "                   \"10min ago\", now, today, yesterday\n"
    "  -g, --grep RE    extended regular expression on the rendered message (-i: ignore case)\n"
    "  A repeated --pid, --uid, --app, --unit or --grep matches any of its values\n"
    "  (--app a --app b: a or b); different filters must all match.\n"
    "  FIELD=VALUE      records whose named field FIELD reads VALUE exactly (a bool\n"
    "                   true/false, a number in decimal); a record without FIELD does\n"
    "                   not match. As in journalctl, values of one FIELD match any,\n"
    "                   different FIELDs must all match, and '+' between groups of\n"
    "                   matches lets either group through (user=alice n=5 + user=bob).\n"
    "                   The trusted fields, from the record's source (no program can\n"
    "                   write them): _PID _UID _GID _COMM _SYSTEMD_UNIT _BOOT_ID _TID.\n";

// tail and cat only.
const char kReadHelp[] =
    "Output:\n"
    "  -o, --output MODE  short (the default), short-iso (seconds), short-precise\n"
    "                   (nanoseconds), short-unix (seconds since the epoch), short-monotonic\n"
    "                   ([seconds] since the record's own boot: its CLOCK_MONOTONIC time),\n"
    "                   short-fields (short, then the named fields as name=value),\n"
    "                   cat (message only), verbose (every field), json, json-pretty, raw\n"
    "  --output-fields=LIST  the named fields json, json-pretty, verbose and short-fields\n"
    "                   show (comma-separated names: user,req); the record's own keys stay\n"
    "  --json           -o json    --no-color    --utc (times in UTC)\n"
    "  -r, --reverse    newest first (not with -f)\n"
    "  --list-boots     print the boots in the ring instead of records, oldest first:\n"
    "                   index (0 the last, -1 the one before), boot ID, first and last\n"
    "                   record time, records; with --json a JSON array\n"
    "Pager (tail, cat): on a terminal the output goes through $LOGSINK_PAGER, else $PAGER,\n"
    "else less (with LESS=FRSXMK when LESS is unset); not with -f. Empty or \"cat\": none.\n"
    "Under sudo, pkexec, set-uid or set-gid (or with LOGSINK_PAGERSECURE=1; =0 turns it off\n"
    "but for set-id) the"
    "pager is only less, without a shell and with LESSSECURE=1 (no \"!\" shell escape).\n"
    "  --no-pager       never page\n"
    "  -e, --pager-end  start the pager at the end (less: +G)\n"
    "Cursors (tail, cat):\n"
    "  --show-cursor    print \"-- cursor: C\" after the last record shown\n"
    "  --after-cursor C print the records after cursor C (-n does not apply)\n"
    "  --cursor C       print the records from cursor C on, C's own record first\n"
    "  --cursor-file F  start after the cursor in F if it exists; store the cursor of the\n"
    "                   last record shown in F\n"
    "A fleet (tail, cat): what logsink-forward published into NATS JetStream, every host's\n"
    "records merged by time, each once (logctl(1), READING A FLEET):\n"
    "  --nats URL       read the stream on this NATS server (also $LOGSINK_NATS) instead of\n"
    "                   a ring; subjects logs.HOST (the forwarder's default) name the host\n"
    "  --stream NAME    the JetStream stream (default: the one that captures logs.>)\n"
    "  --host GLOB      that host's records only (a shell glob: web-*); repeatable\n"
    "  --subject-prefix P  subjects P.HOST (default logs)\n"
    "                   -f, --show-cursor, --after-cursor and --cursor-file work (a cursor\n"
    "                   holds each host's position); not with a stream: --cursor, -b, -k,\n"
    "                   --list-boots, FIELD=VALUE, -F, -o verbose/raw/short-fields/\n"
    "                   short-monotonic.\n";

// export only: its -o/--output is the destination, not an output mode.
const char kExportHelp[] =
    "Export:\n"
    "  -o, --output FILE|-   where to write: FILE (created; an existing file is never\n"
    "                   overwritten) or - for standard output, the default (text, so a\n"
    "                   terminal is fine). For export, -o names the destination, not an\n"
    "                   output mode: choose the rendering with --format.\n"
    "  --format text|json    text as 'logctl cat' prints it (the default), or one JSON\n"
    "                   object per line as 'logctl cat -o json' prints it\n"
    "  --output-fields=LIST  the named fields --format json shows in \"fields\"\n"
    "                   (comma-separated names: user,req); the record's own keys stay\n";

}  // namespace

void PrintUsage(FILE *to) {
  std::fputs(
      "usage: logctl COMMAND [OPTIONS]\n"
      "Reads the logsink ring file, and logs to logsinkd (send, run).\n\n"
      "Commands:\n"
      "  tail [-n N] [-f]   last N records (default 10); -f follows new ones\n"
      "  cat                every record, oldest first\n"
      "  stats              ring geometry and usage, daemon counters\n"
      "  send [MESSAGE...]  log a message through logsinkd\n"
      "  run -- CMD [ARGS]  run CMD with its output captured into the ring\n"
      "  verify             check the file's integrity (exit 1 on corruption)\n"
      "  export [-o FILE]   write a chronological, rendered copy (default: standard output)\n"
      "  sites              the census of call sites: which lines fill the ring\n"
      "  level [LEVEL]      list or change the levels the daemon pushes to programs\n"
      "  help [COMMAND]     this text, or a command's options\n\n"
      "'logctl' alone prints the whole log through the pager, like 'logctl cat'.\n"
      "'logctl OPTIONS' takes journalctl's options: with -n N or -f it is 'logctl tail',\n"
      "else 'logctl cat' (logctl -f, logctl -n 50 -p err, logctl -r -t sshd -S today,\n"
      "logctl -b -1, logctl -k); 'logctl help cat' lists them.\n"
      "Records are read by named field as journalctl does: 'logctl user=alice',\n"
      "'logctl _PID=1234 -f', 'logctl -F user' (each value of the field user).\n"
      "Every command takes --socket PATH, --help and --no-pager (only tail and cat\n"
      "page); those that read the ring take --file PATH (default: the ring of the\n"
      "daemon on the socket). 'logctl help COMMAND' prints the same as\n"
      "'logctl COMMAND --help'.\n",
      to);
}

void PrintCommandHelp(Command cmd, FILE *to) {
  const bool reads = cmd == Command::kTail || cmd == Command::kCat || cmd == Command::kLog;
  std::fputs(Help(cmd), to);
  if (cmd != Command::kSend && cmd != Command::kRun && cmd != Command::kLevel)
    std::fputs(
        "  --file PATH      the ring file (default: $LOGSINK_FILE, else the ring the daemon\n"
        "                   on the socket writes, else the system ring)\n",
        to);
  std::fputs(
      "  --socket PATH    the daemon's socket (default: $LOGSINK_SOCKET, else the\n"
      "                   default socket)\n",
      to);
  if (reads || cmd == Command::kExport || cmd == Command::kSites) std::fputs(kFilterHelp, to);
  if (reads) std::fputs(kReadHelp, to);
  if (cmd == Command::kExport) std::fputs(kExportHelp, to);
}

}  // namespace logsink::logctl
