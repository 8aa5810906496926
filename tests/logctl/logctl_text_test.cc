// logctl_text_test.cc: the ways in for programs that do not link liblogsink,
// against the real logsinkd: `logctl send` as logger(1) users write it (-p
// FACILITY.LEVEL, -t TAG, <N> prefixes, --id) and `logctl run -- CMD`, whose
// records carry CMD's own pid, its output's exact text and its exit status.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "cli_util.h"
#include "common/asan.h"
#include "common/daemon_process.h"
#include "daemon/harness.h"

namespace logsink::test {
namespace {

// `logctl cat --json` until it prints at least n records.
std::vector<json> JsonUntil(const std::string &ring, size_t n) {
  std::vector<json> out;
  WaitUntil(
      [&] {
        out.clear();
        for (const std::string &l : Lines(RunLogctl({"cat", "--json", "--file", ring}).out))
          out.push_back(ParseJson(l));
        return out.size() >= n;
      },
      kHang, Ms(20));
  return out;
}

// logctl send's stderr says one line was cut (by the daemon's 8192-byte
// bound or by the block's).
void ExpectOneLineSaidCut(const std::string &err) {
  EXPECT_NE(err.find("1 line(s) were cut to 8192 bytes or to what a block holds"),
            std::string::npos)
      << err;
}

class LogctlTextTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(d_.Start()) << d_.Stderr(); }
  TempDir dir_;
  Daemon d_{dir_};
};

TEST_F(LogctlTextTest, SendTakesLoggersPriorityAndTag) {
  Result r = RunLogctl({"send", "--socket", d_.socket, "-p", "local3.err", "-t", "backup", "--id",
                        "disk", "91%", "full"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunLogctl({"send", "--socket", d_.socket, "-p", "WARNING", "--tag", "t2", "plain"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto v = JsonUntil(d_.ring, 2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0]["msg"], "disk 91% full");
  EXPECT_EQ(v[0]["fmt"], "%s") << "free text is never a format";
  EXPECT_EQ(v[0]["priority"], 3);
  EXPECT_EQ(v[0]["app"], "backup");
  EXPECT_EQ(v[0]["file"], "text");
  EXPECT_EQ(v[0]["line"], 19) << "the facility (local3)";
  EXPECT_EQ(v[0]["comm"], "logctl");
  EXPECT_EQ(v[1]["priority"], 4);
  EXPECT_EQ(v[1]["line"], 1) << "user, the default facility";

  r = RunLogctl({"send", "--socket", d_.socket, "--id=4242", "x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("logctl: send: --id=4242 would claim another process's id", 0), 0u)
      << r.err;
  r = RunLogctl({"send", "--socket", d_.socket, "-p", "nosuch.err", "x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("logctl: send: bad level 'nosuch.err': expected LEVEL or FACILITY", 0), 0u)
      << r.err;
}

TEST_F(LogctlTextTest, PrioPrefixesSetEachLinesPriority) {
  SpawnOptions in;
  // <11> = user.err; <3> = err, facility from -p; <191> = local7.debug;
  // <192>, <x> and <> are not prefixes and stay in the text. The last line
  // has no newline.
  in.stdin_data = "<11>a\n<3>b\n<191>c\n<192>d\n<x>e\n<>f\nplain\n<0>last";
  Result r = RunLogctl({"send", "--socket", d_.socket, "--prio-prefix", "-p", "daemon.notice"}, in);
  ASSERT_EQ(r.status, 0) << r.err;
  auto v = JsonUntil(d_.ring, 8);
  ASSERT_EQ(v.size(), 8u);
  struct Want {
    const char *msg;
    int priority, facility;
  } want[] = {{"a", 3, 1},    {"b", 3, 3},   {"c", 7, 23},    {"<192>d", 5, 3},
              {"<x>e", 5, 3}, {"<>f", 5, 3}, {"plain", 5, 3}, {"last", 0, 3}};
  for (size_t i = 0; i < 8; i++) {
    EXPECT_EQ(v[i]["msg"], want[i].msg) << i;
    EXPECT_EQ(v[i]["priority"], want[i].priority) << i;
    EXPECT_EQ(v[i]["line"], want[i].facility) << i;
  }
  // Without --prio-prefix a prefix is text.
  in.stdin_data = "<11>kept\n";
  ASSERT_EQ(RunLogctl({"send", "--socket", d_.socket}, in).status, 0);
  v = JsonUntil(d_.ring, 9);
  ASSERT_EQ(v.size(), 9u);
  EXPECT_EQ(v[8]["msg"], "<11>kept");
  EXPECT_EQ(v[8]["priority"], 6);
}

TEST_F(LogctlTextTest, LongLinesAreCutAndCounted) {
  SpawnOptions in;
  in.stdin_data = std::string(20000, 'x') + "\nshort\n";
  Result r = RunLogctl({"send", "--socket", d_.socket}, in);
  ASSERT_EQ(r.status, 0) << r.err;
  ExpectOneLineSaidCut(r.err);
  auto v = JsonUntil(d_.ring, 2);
  ASSERT_EQ(v.size(), 2u);
  // The daemon keeps 8192 bytes of the line; the record must also fit an
  // 8 KiB block as it is (after the block's header, with its own entry
  // overhead), so the writer cuts a little more. Every cut byte is counted.
  std::string kept = v[0]["args"][0].get<std::string>();
  EXPECT_GT(kept.size(), 8192u - LS_BLK_HDR - 100);
  EXPECT_LE(kept.size(), 8192u);
  EXPECT_EQ(kept.find_first_not_of('x'), std::string::npos);
  EXPECT_EQ(v[0]["truncated"].get<uint64_t>() + kept.size(), 20000u);
  EXPECT_EQ(v[1]["msg"], "short");
  EXPECT_FALSE(v[1].contains("truncated"));
  r = RunLogctl({"stats", "--file", d_.ring, "--socket", d_.socket, "--json"});
  json s = ParseJson(Lines(r.out)[0]);
  EXPECT_EQ(s["daemon"]["counters"]["text_lines_cut"], 1) << r.out;
  EXPECT_EQ(s["daemon"]["counters"]["text_lines"], 2) << r.out;
}

// A line within 8192 bytes that does not fit an 8 KiB block as it is, and
// a short line whose --set fields do not, are cut by the ring's rule
// (strings longest first) before they are stored, and counted as cut in
// the acknowledgment and the daemon's counter, so logctl send says so
// (before, only the record's TRUNC count showed it: lines_cut 0, no word).
TEST_F(LogctlTextTest, LinesCutOnlyToFitABlockAreCountedAndSaid) {
  SpawnOptions in;
  in.stdin_data = std::string(8100, 'y') + "\n";
  Result r = RunLogctl({"send", "--socket", d_.socket}, in);
  ASSERT_EQ(r.status, 0) << r.err;
  ExpectOneLineSaidCut(r.err);
  std::vector<std::string> args = {"send", "--socket", d_.socket};
  for (int i = 0; i < 10; i++)
    args.push_back("--set=f" + std::to_string(i) + "=" + std::string(1000, char('a' + i)));
  in.stdin_data = "short\n";
  r = RunLogctl(args, in);
  ASSERT_EQ(r.status, 0) << r.err;
  ExpectOneLineSaidCut(r.err);
  auto v = JsonUntil(d_.ring, 2);
  ASSERT_EQ(v.size(), 2u);
  std::string kept = v[0]["args"][0].get<std::string>();
  EXPECT_LT(kept.size(), 8100u);
  EXPECT_EQ(v[0]["truncated"].get<uint64_t>() + kept.size(), 8100u);
  // The fields' values were cut to a common length; the short message kept.
  EXPECT_EQ(v[1]["args"][0], "short");
  ASSERT_TRUE(v[1].contains("truncated")) << v[1].dump();
  uint64_t kept_fields = 0;
  for (size_t i = 1; i < v[1]["args"].size(); i++)
    kept_fields += v[1]["args"][i].get<std::string>().size();
  EXPECT_EQ(v[1]["truncated"].get<uint64_t>() + kept_fields, 10000u) << v[1].dump();
  r = RunLogctl({"stats", "--file", d_.ring, "--socket", d_.socket, "--json"});
  json s = ParseJson(Lines(r.out)[0]);
  EXPECT_EQ(s["daemon"]["counters"]["text_lines_cut"], 2) << r.out;
}

// A line that never ends (100 MB without a newline on stdin) costs `logctl
// send` a chunk of memory, not the line's length (before: about three
// copies of it, ~300 MB here): it is sent as it comes, the daemon keeps
// the first 8192 bytes, and the cut is counted and said.
TEST_F(LogctlTextTest, ALineWithoutEndCostsSendAChunkNotItsLength) {
  const char *kFeed = R"(import resource, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
chunk = b"a" * (1 << 20)
for _ in range(100):
    p.stdin.write(chunk)
p.stdin.close()
err = p.stderr.read().decode()
print(p.wait(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stderr.write(err)
)";
  ProcResult r = RunProcess("/usr/bin/python3",
                            {"-c", kFeed, BinPath("logctl"), "send", "--socket", d_.socket});
  ASSERT_EQ(r.status, 0) << r.err;
  unsigned status = 0, max_rss_kib = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "%u %u", &status, &max_rss_kib), 2) << r.out;
  EXPECT_EQ(status, 0u) << r.err;
  ExpectOneLineSaidCut(r.err);
  if (!kAsanBuild) {  // ASan's quarantine keeps freed chunks
    EXPECT_LT(max_rss_kib, 32u * 1024) << "logctl send's peak RSS in KiB";
  }
  auto v = JsonUntil(d_.ring, 1);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]["truncated"].get<uint64_t>() + v[0]["args"][0].get<std::string>().size(),
            100u << 20);
}

TEST_F(LogctlTextTest, RunCapturesBothStreamsWithTheCommandsPid) {
  // The command prints its own pid: the records must carry it, not logctl's.
  // The daemon reads the process name (comm) when it accepts a connection,
  // and a process that is gone by then has none (logctl.1): the command
  // waits on a FIFO until its first three lines, so both connections, have
  // reached the ring.
  const std::string gate = dir_ / "gate";
  ASSERT_EQ(mkfifo(gate.c_str(), 0600), 0);
  Proc run({"run", "--socket", d_.socket, "--", "sh", "-c",
            "echo $$; echo out; echo 'err  two' >&2; read x < '" + gate +
                "'; printf 'no newline'; exit 3"});
  ASSERT_EQ(JsonUntil(d_.ring, 3).size(), 3u);
  { std::ofstream(gate) << "go\n"; }
  Result r = run.Finish();
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, "") << "the output went to the ring";
  EXPECT_EQ(r.err, "");
  auto v = JsonUntil(d_.ring, 4);
  ASSERT_EQ(v.size(), 4u);
  // Lines of one stream keep their order; the two streams are two
  // connections, read in whatever order the daemon finds them readable.
  std::string pid;
  std::map<std::string, json> by_msg;
  for (const json &j : v) {
    by_msg[j["msg"]] = j;
    const std::string m = j["msg"];
    if (!m.empty() && m.find_first_not_of("0123456789") == std::string::npos) pid = m;
  }
  ASSERT_FALSE(pid.empty());
  for (const char *m : {"out", "err  two", "no newline"}) {
    ASSERT_EQ(by_msg.count(m), 1u) << m;
    const json &j = by_msg[m];
    EXPECT_EQ(std::to_string(j["pid"].get<uint64_t>()), pid) << m;
    EXPECT_EQ(j["app"], "sh") << m;
    EXPECT_EQ(j["comm"], "sh") << m;
  }
  EXPECT_EQ(by_msg["out"]["priority"], 6);
  EXPECT_EQ(by_msg["out"]["file"], "stdout");
  EXPECT_EQ(by_msg["err  two"]["priority"], 3);
  EXPECT_EQ(by_msg["err  two"]["file"], "stderr");
  EXPECT_EQ(by_msg["no newline"]["priority"], 6) << "a partial last line is kept";
}

TEST_F(LogctlTextTest, RunTakesLevelsAppAndFacility) {
  Result r =
      RunLogctl({"run", "--socket", d_.socket, "--app", "job", "--level-stdout", "notice",
                 "--level-stderr", "crit", "-p", "local0", "--", "sh", "-c", "echo o; echo e >&2"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto v = JsonUntil(d_.ring, 2);
  ASSERT_EQ(v.size(), 2u);
  std::map<std::string, json> by_msg;
  for (const json &j : v) by_msg[j["msg"]] = j;
  EXPECT_EQ(by_msg["o"]["priority"], 5);
  EXPECT_EQ(by_msg["e"]["priority"], 2);
  EXPECT_EQ(by_msg["o"]["app"], "job");
  EXPECT_EQ(by_msg["o"]["line"], 16);
}

// Levels at the source: $LOGSINK_LEVEL's level leaves out the lines of send
// and run below it, by the stream's level or, with --prio-prefix, each
// line's own "<N>"; one that does not parse is said and ignored.
TEST_F(LogctlTextTest, SendAndRunLeaveOutLinesBelowLogsinkLevel) {
  SpawnOptions notice;
  notice.env = {{"LOGSINK_LEVEL", "notice"}};
  Result r = RunLogctl({"send", "--socket", d_.socket, "-p", "info", "quiet"}, notice);
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunLogctl({"send", "--socket", d_.socket, "-p", "err", "loud"}, notice);
  ASSERT_EQ(r.status, 0) << r.err;
  SpawnOptions lines = notice;
  lines.stdin_data = "<7>debug line\n<3>err line\nplain line\n<191>local7 debug\n<03>not a pri\n";
  r = RunLogctl({"send", "--socket", d_.socket, "-p", "notice", "--prio-prefix"}, lines);
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunLogctl({"run", "--socket", d_.socket, "--prio-prefix", "--level-stdout", "notice",
                 "--level-stderr", "debug", "--", "sh", "-c",
                 "echo '<7>d'; echo '<4>w'; echo o; echo e >&2; printf '<2>no newline'"},
                notice);
  ASSERT_EQ(r.status, 0) << r.err;
  SpawnOptions bad;
  bad.env = {{"LOGSINK_LEVEL", "inof"}};
  r = RunLogctl({"send", "--socket", d_.socket, "-p", "debug", "said"}, bad);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err,
            "logctl: warning: LOGSINK_LEVEL=\"inof\" ignored: \"inof\" is not a level (emerg "
            ".. debug, 0..7 or off)\n");
  // An empty one is as if unset: everything goes, nothing is said.
  SpawnOptions empty;
  empty.env = {{"LOGSINK_LEVEL", ""}};
  r = RunLogctl({"send", "--socket", d_.socket, "-p", "debug", "unset"}, empty);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto v = JsonUntil(d_.ring, 9);
  std::vector<std::string> msgs;
  for (const json &j : v) msgs.push_back(j["msg"]);
  EXPECT_EQ(msgs, (std::vector<std::string>{"loud", "err line", "plain line", "<03>not a pri", "w",
                                            "o", "no newline", "said", "unset"}));
}

// A label longer than 64 bytes (LS_APP_MAX) is cut as the daemon cuts one
// (PROTOCOL.md, HELLO): on a UTF-8 character boundary, never inside a
// character; one of exactly 64 bytes is kept whole.
TEST_F(LogctlTextTest, LongLabelsAreCutOnACharacterBoundary) {
  const std::string e_acute = "\xc3\xa9", euro = "\xe2\x82\xac";
  const std::string two = std::string(63, 'a') + e_acute;  // 65 bytes: 64 is inside é
  const std::string three = std::string(62, 'b') + euro;   // 65 bytes: 63 and 64 inside €
  const std::string whole = std::string(61, 'c') + euro;   // 64 bytes
  ASSERT_EQ(RunLogctl({"send", "--socket", d_.socket, "-t", two, "one"}).status, 0);
  Result r = RunLogctl({"run", "--socket", d_.socket, "--app", three, "--", "echo", "two"});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(RunLogctl({"send", "--socket", d_.socket, "--app", whole, "three"}).status, 0);
  auto v = JsonUntil(d_.ring, 3);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0]["app"], std::string(63, 'a'));
  EXPECT_EQ(v[1]["app"], std::string(62, 'b'));
  EXPECT_EQ(v[2]["app"], whole);
}

TEST_F(LogctlTextTest, RunReportsSignalsAndCommandsThatCannotRun) {
  Result r = RunLogctl({"run", "--socket", d_.socket, "--", "sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.status, 128 + SIGTERM) << r.err;
  r = RunLogctl({"run", "--socket", d_.socket, "--", dir_.File("no-such-command")});
  EXPECT_EQ(r.status, 127);
  EXPECT_EQ(r.err,
            "logctl: run: " + dir_.File("no-such-command") + ": No such file or directory\n");
  WriteFile(dir_.File("not-executable"), "#!/bin/sh\n");
  r = RunLogctl({"run", "--socket", d_.socket, "--", dir_.File("not-executable")});
  EXPECT_EQ(r.status, 126);
  r = RunLogctl({"run", "--socket", d_.socket});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("logctl: run: a command to run is required\n", 0), 0u) << r.err;
}

// Under nohup (SIGHUP ignored) CMD keeps SIGHUP ignored, as it would
// without logctl; a CMD started with standard output closed still gets its
// stream on descriptor 1.
TEST_F(LogctlTextTest, RunKeepsIgnoredSignalsAndFillsClosedDescriptors) {
  SubprocessOptions o;
  o.child_setup = [] { signal(SIGHUP, SIG_IGN); };
  ProcResult r = RunProcess(
      LogctlPath(),
      {"run", "--socket", d_.socket, "--", "sh", "-c", "kill -HUP $$; echo survived the hangup"}, o,
      kHang);
  EXPECT_EQ(r.status, 0) << r.err;
  o.child_setup = [] { close(STDOUT_FILENO); };
  r = RunProcess(LogctlPath(),
                 {"run", "--socket", d_.socket, "--", "sh", "-c", "echo stdout was closed"}, o,
                 kHang);
  EXPECT_EQ(r.status, 0) << r.err;
  auto v = JsonUntil(d_.ring, 2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0]["msg"], "survived the hangup");
  EXPECT_EQ(v[1]["msg"], "stdout was closed");
  EXPECT_EQ(v[1]["file"], "stdout");
}

TEST(LogctlTextNoDaemon, RunAndSendFailWithoutRunningTheCommand) {
  TempDir dir;
  std::string sock = dir.File("nobody.sock");
  std::string marker = dir.File("ran");
  Result r = RunLogctl({"run", "--socket", sock, "--", "touch", marker});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: run: daemon not running (socket " + sock + ")\n");
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "the command ran without its log";
  r = RunLogctl({"send", "--socket", sock, "x"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: send: daemon not running (socket " + sock + ")\n");
}

// A daemon at its connection limit refuses the streams with its reason
// (REFUSE): `logctl run` says why and does not start the command; `logctl
// send` says why. Both exit 1.
TEST(LogctlTextRefused, RunAndSendSayWhyTheDaemonRefused) {
  TempDir dir;
  Daemon d(dir, {}, "[limits]\nmax_connections = 2\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  Client a(d.socket), b(d.socket);  // both answered: both hold a slot
  ASSERT_FALSE(a.Stats().empty());
  ASSERT_FALSE(b.Stats().empty());
  std::string marker = dir.File("ran");
  Result r = RunLogctl({"run", "--socket", d.socket, "--", "touch", marker});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: run: the daemon refused: max_connections (2) reached\n");
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "the command ran without its log";
  r = RunLogctl({"send", "--socket", d.socket, "x"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: send: the daemon refused: max_connections (2) reached\n");
  EXPECT_EQ(a.Stats()["connections_refused"], 2u);
}

// Past max_connections_per_uid (here 2: one `logctl run` holds
// both), the next `logctl run` of that uid prints the daemon's reason,
// exits 1 and does not start its command (before, the command started and
// died of SIGPIPE, exit 141, with nothing on stderr).
TEST(LogctlTextRefused, RunPastThePerUidLimitSaysWhyAndDoesNotStart) {
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  const std::string open_dir = dir.File("open");
  ASSERT_EQ(mkdir(open_dir.c_str(), 0777), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  Daemon d(dir, {}, "[limits]\nmax_connections_per_uid = 2\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  SpawnOptions nobody;
  nobody.as_nobody = true;
  Proc first({"run", "--socket", d.socket, "--", "sh", "-c", "echo up; exec sleep 60"}, nobody);
  ASSERT_EQ(JsonUntil(d.ring, 1).size(), 1u) << "the first run holds its two streams";
  const std::string marker = open_dir + "/ran";
  Result r = RunLogctl({"run", "--socket", d.socket, "--", "touch", marker}, nobody);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "logctl: run: the daemon refused: uid 65534 holds max_connections_per_uid (2)\n");
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "the command ran without its log";
  first.Signal(SIGTERM);  // passed on to sleep
  EXPECT_EQ(first.Finish().status, 128 + SIGTERM);
  Client q(d.socket);
  EXPECT_EQ(q.Stats()["err_uid_connections"], 1u);
}

}  // namespace
}  // namespace logsink::test
