// logctl_usage_test.cc: the real logctl binary against rings written with
// storage's RingWriter (cli_fixture.h): the command line: errors and exit status, help,
// journalctl's options without a command, a named socket without a daemon, --version.
#include <fstream>

#include "cli_fixture.h"

namespace logsink::test {
namespace {

TEST_F(LogctlTest, ErrorMessagesAndExitStatus) {
  std::string missing = dir_.File("missing.ring");
  Result r = RunLogctl({"tail", "--file", missing});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + missing + ": No such file or directory\n");
  EXPECT_EQ(r.out, "");

  std::string junk = dir_.File("junk");
  {
    std::ofstream o(junk);
    o << std::string(100000, 'j');
  }
  for (const char *cmd : {"tail", "cat", "stats", "verify"}) {
    r = RunLogctl({cmd, "--file", junk});
    EXPECT_EQ(r.status, 1) << cmd;
    // Said once, not "PATH: not a logsink ring file (PATH is not ...)".
    EXPECT_EQ(r.err, "logctl: " + junk + ": not a logsink ring file (no LSRING superblock)\n")
        << cmd;
  }

  r = RunLogctl({"cat", "--file", dir_.path()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + dir_.path() + ": not a regular file\n");

  std::string ring_path = dir_.File("r.ring");
  {
    TestRing ring(ring_path);
    ring.Close();
  }
  ASSERT_EQ(chmod(ring_path.c_str(), 0), 0);
  SpawnOptions nobody;
  nobody.as_nobody = true;
  r = RunLogctl({"cat", "--file", ring_path}, nobody);
  EXPECT_EQ(r.status, 1);
  // With a hint at who may read it.
  EXPECT_EQ(r.err, "logctl: " + ring_path +
                       ": Permission denied (members of the logsink group can read the system "
                       "ring: see logsinkd(8))\n");
  // Readable by its group (as the system ring is by logsink), not by us: the
  // hint names that group. 0040: the owner may not read it either; 0711: the
  // directory is searchable, so only the file's own mode refuses.
  ASSERT_EQ(chmod(ring_path.c_str(), 0040), 0);
  ASSERT_EQ(chmod(dir_.path().c_str(), 0711), 0);
  struct stat st;
  ASSERT_EQ(stat(ring_path.c_str(), &st), 0);
  struct group *g = getgrgid(st.st_gid);
  std::string group = g ? std::string(g->gr_name) : std::to_string(st.st_gid);
  r = RunLogctl({"tail", "--file", ring_path}, nobody);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + ring_path + ": Permission denied (members of the group " + group +
                       ", which owns it, can read it: see logsinkd(8))\n");
  ASSERT_EQ(chmod(dir_.path().c_str(), 0700), 0);
  ASSERT_EQ(chmod(ring_path.c_str(), 0644), 0);

  struct {
    std::vector<std::string> args;
    std::string err;
  } usage[] = {
      {{"tail", "--bogus"}, "logctl: tail: unknown option '--bogus'\n"},
      // Long options are not abbreviated: --cursor is not --cursor-file.
      {{"cat", "--cursor-f", "x"},
       "logctl: cat: unknown option '--cursor-f' (options are not abbreviated: --cursor-file?)\n"},
      {{"cat", "--fil=x"},
       "logctl: cat: unknown option '--fil' (options are not abbreviated: --file?)\n"},
      {{"tail", "-x"}, "logctl: tail: unknown option '-x'\n"},
      {{"tail", "-n"}, "logctl: tail: option '-n' needs an argument\n"},
      {{"tail", "-n", "abc"}, "logctl: tail: bad number of lines 'abc'\n"},
      // tail(1)'s +N (from the start) is not taken as N.
      {{"tail", "-n+2"},
       "logctl: tail: bad number of lines '+2' (-n counts from the newest record; to start at "
       "the oldest, use 'logctl cat' or --cursor)\n"},
      {{"cat", "--cursor", "x", "--after-cursor", "y"},
       "logctl: cat: only one of --cursor, --after-cursor and --cursor-file may be given\n"},
      {{"cat", "--level", "loud"},
       "logctl: cat: bad level 'loud': expected emerg, alert, crit, err, warning, notice, info, "
       "debug (any case) or 0-7, or a range FROM..TO such as err..warning, ..warning, err..\n"},
      {{"cat", "--pid", "-1"}, "logctl: cat: bad number '-1' for --pid\n"},
      {{"cat", "-f"}, "logctl: cat: option '-f' does not apply here\n"},
      {{"cat", "--output", "xml"},
       "logctl: cat: bad output mode 'xml' (short, short-iso, short-precise, short-unix, "
       "short-monotonic, short-fields, cat, verbose, json, json-pretty or raw)\n"},
      {{"cat", "extra"}, "logctl: cat: unexpected argument 'extra'\n"},
      {{"cat", "--grep", "("}, ""},
      {{"cat", "--since", "soonish"}, ""},
      {{"tail", "-r", "-f"}, "logctl: tail: --reverse and --follow cannot be combined\n"},
      {{"export", "-r"}, "logctl: export: option '-r' does not apply here\n"},
      {{"stats", "--utc"}, "logctl: stats: option '--utc' does not apply here\n"},
      {{"stats", "--watch", "--json"},
       "logctl: stats: --watch prints text lines; it cannot be combined with --json\n"},
      {{"stats", "--watch=0.01"},
       "logctl: stats: bad interval '0.01' for --watch (0.1 to 3600 seconds)\n"},
      {{"export", "--output", "x", "--format", "yaml"},
       "logctl: export: bad format 'yaml' (text or json)\n"},
      {{"frobnicate"},
       "logctl: frobnicate: unknown command (tail, cat, stats, send, run, verify, "
       "export, sites, level, help)\n"},
  };
  for (auto &u : usage) {
    r = RunLogctl(u.args);
    EXPECT_EQ(r.status, 2) << u.args[0] << " " << r.err;
    if (!u.err.empty()) {
      EXPECT_EQ(r.err.substr(0, r.err.find('\n') + 1), u.err);
    } else {
      EXPECT_EQ(r.err.rfind("logctl: " + u.args[0] + ": bad ", 0), 0u) << r.err;
    }
    EXPECT_EQ(r.out, "");
  }
  r = RunLogctl({"tail", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: logctl tail", 0), 0u);
}

// `logctl help CMD` prints CMD's usage (it printed the general
// one), the same as `logctl CMD --help`.
TEST_F(LogctlTest, HelpCommandPrintsThatCommandsUsage) {
  for (const char *cmd : {"tail", "cat", "stats", "send", "run", "verify", "export"}) {
    Result h = RunLogctl({"help", cmd});
    Result o = RunLogctl({cmd, "--help"});
    EXPECT_EQ(h.status, 0) << cmd << h.err;
    EXPECT_EQ(o.status, 0) << cmd << o.err;
    EXPECT_EQ(h.out.rfind(std::string("usage: logctl ") + cmd + " ", 0), 0u) << h.out;
    EXPECT_EQ(h.out, o.out) << cmd;
    EXPECT_EQ(h.err, "") << cmd;
    Result s = RunLogctl({cmd, "-h"});
    EXPECT_EQ(s.out, o.out) << cmd;
  }
  Result r = RunLogctl({"help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: logctl COMMAND [OPTIONS]\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("'logctl help COMMAND'"), std::string::npos) << r.out;
  EXPECT_EQ(RunLogctl({"--help"}).out, r.out);
  r = RunLogctl({"help", "frobnicate"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "logctl: frobnicate: unknown command (tail, cat, stats, send, run, verify, export, "
            "sites, level, help)\n");
  r = RunLogctl({"help", "tail", "extra"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "logctl: help: unexpected argument 'extra'\n");
}

// u64 fields beyond 2^53 (which jq rounds) have exact string
// copies: seq_str, ts_ns_str, dropped_since_ns_str always, args_str when an
// integer argument is beyond +-2^53; the numeric fields stay as they were.
// journalctl's options work without a command: -n/-f make it
// tail, anything else is cat; -S/-U, -t, --cursor; usage errors name no
// command.
TEST_F(LogctlTest, TopLevelOptionsAreJournalctls) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 25);
  ring.Close();
  auto same = [&](std::vector<std::string> top, std::vector<std::string> cmd) {
    top.insert(top.end(), {"--file", f});
    cmd.insert(cmd.end(), {"--file", f});
    Result a = RunLogctl(top), b = RunLogctl(cmd);
    EXPECT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(a.err, "");
    EXPECT_FALSE(a.out.empty()) << top[0];
    EXPECT_EQ(a.out, b.out) << top[0];
    return a.out;
  };
  EXPECT_EQ(Lines(same({"-n", "3"}, {"tail", "-n", "3"})).size(), 3u);
  EXPECT_EQ(Lines(same({"-r"}, {"cat", "-r"})).size(), 25u);
  EXPECT_EQ(Lines(same({"-r", "-n", "2"}, {"tail", "-r", "-n", "2"}))[0],
            Line(24, "testapp(testcomm)[4242]: <info> n=24"));
  // -S/-U are --since/--until; -t is the app label (journalctl's tag).
  std::string out =
      same({"-S", "2025-11-23 10:00:00.010", "-U", "2025-11-23 10:00:00.012"},
           {"cat", "--since", "2025-11-23 10:00:00.010", "--until", "2025-11-23 10:00:00.012"});
  EXPECT_EQ(Lines(out).size(), 3u) << out;
  EXPECT_EQ(
      Lines(same({"-t", "testapp", "-n", "4"}, {"tail", "--app", "testapp", "-n", "4"})).size(),
      4u);
  Result r = RunLogctl({"-t", "other", "--file", f});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(RunLogctl({"cat", "--tag", "other", "--file", f}).out, "");
  // --cursor starts at the record, --after-cursor after it.
  r = RunLogctl({"-n", "1", "-U", "2025-11-23 10:00:00.023", "--show-cursor", "--file", f});
  ASSERT_EQ(Lines(r.out).size(), 2u) << r.out << r.err;
  std::string cur23 = Lines(r.out).back().substr(std::string("-- cursor: ").size());
  r = RunLogctl({"--cursor", cur23, "--file", f});
  EXPECT_EQ(r.out, Line(23, "testapp(testcomm)[4242]: <info> n=23\n") +
                       Line(24, "testapp(testcomm)[4242]: <info> n=24\n"))
      << r.err;
  r = RunLogctl({"--after-cursor", cur23, "--file", f});
  EXPECT_EQ(r.out, Line(24, "testapp(testcomm)[4242]: <info> n=24\n")) << r.err;
  r = RunLogctl({"-n", "+2", "--file", f});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "logctl: bad number of lines '+2' (-n counts from the newest record; to start at the "
            "oldest, use 'logctl cat' or --cursor)\nTry 'logctl --help'.\n");
  r = RunLogctl({"-x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "logctl: unknown option '-x'\nTry 'logctl --help'.\n");
}

// As journalctl: --no-pager is taken by every command, and changes nothing
// where nothing pages (stats, verify, export, send, run).
TEST_F(LogctlTest, NoPagerIsTakenByEveryCommand) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 5);
  ring.Close();
  const std::string none = dir_.File("none.sock");
  for (std::vector<std::string> args : {std::vector<std::string>{"tail"},
                                        {"cat"},
                                        {"stats"},
                                        {"stats", "--json"},
                                        {"verify"},
                                        {"export"},
                                        {"export", "--format", "json"},
                                        {"-n", "2"}}) {
    args.insert(args.end(), {"--file", f, "--socket", none});
    Result without = RunLogctl(args);
    ASSERT_EQ(without.status, 0) << args[0] << ": " << without.err;
    args.push_back("--no-pager");
    Result with = RunLogctl(args);
    EXPECT_EQ(with.status, 0) << args[0] << ": " << with.err;
    EXPECT_EQ(with.err, without.err) << args[0];
    EXPECT_EQ(with.out, without.out) << args[0];
  }
  // send and run go on to the daemon, which is not there: exit 1, not a
  // usage error.
  Result r = RunLogctl({"send", "--no-pager", "--socket", none, "x"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "logctl: send: daemon not running (socket " + none + ")\n");
  r = RunLogctl({"run", "--no-pager", "--socket", none, "--", "true"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "logctl: run: daemon not running (socket " + none + ")\n");
}

// A socket the user named, with no daemon on it, is an error that
// names it: never a silent read of another ring.
TEST_F(LogctlTest, ANamedSocketWithoutADaemonIsAnError) {
  std::string sock = dir_.File("none.sock");
  std::string want =
      "logctl: " + sock + ": no daemon listens on this socket (No such file or directory), which ";
  for (const char *cmd : {"tail", "cat", "stats", "verify", "export"}) {
    Result r = RunLogctl({cmd, "--socket", sock});
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_EQ(r.err, want +
                         "--socket names; to read a ring file without its daemon, give "
                         "--file PATH\n")
        << cmd;
    EXPECT_EQ(r.out, "");
    SpawnOptions env;
    env.env = {{"LOGSINK_SOCKET", sock}};
    r = RunLogctl({cmd}, env);
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_EQ(r.err, want +
                         "$LOGSINK_SOCKET names; to read a ring file without its daemon, "
                         "give --file PATH\n")
        << cmd;
  }
}

TEST(LogctlVersion, DashVAndVersion) {
  for (const char *a : {"-V", "--version"}) {
    Result r = RunLogctl({a});
    EXPECT_EQ(r.status, 0) << a << ": " << r.err;
    EXPECT_EQ(r.out.rfind("logctl ", 0), 0u) << a << ": " << r.out;
  }
}

}  // namespace
}  // namespace logsink::test
