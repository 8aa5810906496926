// forward_unit_test.cc: the forwarder's parts that need no server: cursor
// strings and files, RFC 5424 formatting, address and option parsing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "cursor_file.h"
#include "nats_sink.h"
#include "options.h"
#include "relp_sink.h"
#include "rfc5424.h"
#include "subject.h"

namespace logsink::test {
namespace {

using namespace logsink::forward;

TEST(CursorFile, WritesAtomicallyAndReadsBack) {
  TempDir dir;
  std::string err;
  Position p;
  EXPECT_EQ(ReadPosition(dir / "c", &p, &err), 0);
  ASSERT_TRUE(WritePosition(dir / "c", Position{"00ff", 42}, &err)) << err;
  ASSERT_EQ(ReadPosition(dir / "c", &p, &err), 1) << err;
  EXPECT_EQ(p.ring_id, "00ff");
  EXPECT_EQ(p.next_seq, 42u);
  EXPECT_EQ(ReadFile(dir / "c"), "logsink-forward-cursor 1 00ff 42\n");
  WriteFile(dir / "bad", "hello\n");
  EXPECT_EQ(ReadPosition(dir / "bad", &p, &err), -1);
  EXPECT_NE(err.find("not a logsink-forward cursor file"), std::string::npos) << err;
}

mode_t CurrentUmask() {
  mode_t m = umask(0);
  umask(m);
  return m;
}

// In a directory another user can write to (sticky /var/tmp, a shared
// state directory), they create <cursor>.tmp first: a file of theirs, or a
// symlink to a file of root's. Before the fix the root forwarder opened
// that fixed name without O_EXCL and renamed it over the cursor, so the
// cursor became the other user's file. Now the temporary file has a unique
// name (O_EXCL|O_NOFOLLOW) and <cursor>.tmp is never opened.
TEST(CursorFile, NeverWritesThroughAPlantedTempFile) {
  ASSERT_EQ(geteuid(), 0u) << "the test suite runs as root, to act as two users";
  TempDir dir;
  std::string c = dir / "c", planted = c + ".tmp", victim = dir / "victim", err;
  WriteFile(planted, "theirs\n");
  ASSERT_EQ(chown(planted.c_str(), 65534, 65534), 0);
  struct stat pst, st;
  ASSERT_EQ(lstat(planted.c_str(), &pst), 0);
  ASSERT_TRUE(WritePosition(c, Position{"00ff", 7}, &err)) << err;
  ASSERT_EQ(lstat(c.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, geteuid()) << "the cursor is the other user's file";
  EXPECT_NE(st.st_ino, pst.st_ino);
  EXPECT_EQ(st.st_mode & 0777, 0640u & ~CurrentUmask());
  EXPECT_EQ(ReadFile(planted), "theirs\n");
  EXPECT_EQ(ReadFile(c), "logsink-forward-cursor 1 00ff 7\n");

  WriteFile(victim, "precious\n");
  ASSERT_EQ(unlink(planted.c_str()), 0);
  ASSERT_EQ(symlink(victim.c_str(), planted.c_str()), 0);
  ASSERT_TRUE(WritePosition(c, Position{"00ff", 8}, &err)) << err;
  EXPECT_EQ(ReadFile(victim), "precious\n");
  EXPECT_EQ(ReadFile(c), "logsink-forward-cursor 1 00ff 8\n");
  ASSERT_EQ(lstat(planted.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

// ReadPosition in a child that SIGALRM ends if it blocks: 0 when it
// returned -1 with an error containing `want`, 1 otherwise, 128 + signal.
int ReadPositionInChild(const std::string &path, const std::string &want) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(5);
    Position p;
    std::string err;
    int rc = ReadPosition(path, &p, &err);
    if (rc != -1 || err.find(want) == std::string::npos) {
      std::fprintf(stderr, "ReadPosition(%s) = %d: %s\n", path.c_str(), rc, err.c_str());
      _exit(1);
    }
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// A cursor file owned by another user is neither read nor replaced; one that
// is not a regular file (symlink, FIFO, directory) is refused with a clear
// error. Before the fix another user's cursor was used as it was, a FIFO
// blocked the forwarder's start in open(2), and a symlink was replaced.
TEST(CursorFile, RefusesAnotherUsersOrANonRegularCursorFile) {
  ASSERT_EQ(geteuid(), 0u) << "the test suite runs as root, to act as two users";
  TempDir dir;
  std::string c = dir / "c", err;
  ASSERT_TRUE(WritePosition(c, Position{"00ff", 42}, &err)) << err;
  ASSERT_EQ(chown(c.c_str(), 65534, 65534), 0);
  Position p;
  EXPECT_EQ(ReadPosition(c, &p, &err), -1);
  EXPECT_NE(err.find(c), std::string::npos) << err;
  EXPECT_NE(err.find("owned by uid 65534"), std::string::npos) << err;
  err.clear();
  EXPECT_FALSE(WritePosition(c, Position{"00ff", 43}, &err));
  EXPECT_NE(err.find("owned by uid 65534"), std::string::npos) << err;
  struct stat st;
  ASSERT_EQ(lstat(c.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(ReadFile(c), "logsink-forward-cursor 1 00ff 42\n");

  std::string fifo = dir / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ReadPositionInChild(fifo, "not a regular file"), 0);
  err.clear();
  EXPECT_FALSE(WritePosition(fifo, Position{"00ff", 1}, &err));
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;

  std::string real = dir / "real", link = dir / "link";
  ASSERT_TRUE(WritePosition(real, Position{"00ff", 5}, &err)) << err;
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  EXPECT_EQ(ReadPositionInChild(link, "not a regular file"), 0);
  err.clear();
  EXPECT_FALSE(WritePosition(link, Position{"00ff", 6}, &err));
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(ReadFile(real), "logsink-forward-cursor 1 00ff 5\n");

  std::string d = dir / "d";
  ASSERT_EQ(mkdir(d.c_str(), 0700), 0);
  EXPECT_EQ(ReadPositionInChild(d, "not a regular file"), 0);
}

TEST(Rfc5424, FormatsHeaderStructuredDataAndEscapes) {
  SyslogFields f;
  f.facility = 1;
  f.level = 3;
  f.ts_ns = 1700000000123456789ull;
  f.host = "h";
  f.app = "my app\x01";
  f.pid = 7;
  f.uid = 1000;
  f.gid = 100;
  f.tid = 9;
  f.sd_id = "logsink@32473";
  f.cursor = "ab:1";
  f.msg = "disk \"full\" ]";
  EXPECT_EQ(FormatRfc5424(f),
            "<11>1 2023-11-14T22:13:20.123456Z h my_app_ 7 - [logsink@32473 cursor=\"ab:1\" "
            "uid=\"1000\" gid=\"100\" tid=\"9\"] disk \"full\" ]");
  f.app = "";
  EXPECT_NE(FormatRfc5424(f).find(" h - 7 - ["), std::string::npos);
}

TEST(Addresses, ParsesNatsAndRelpUrls) {
  std::vector<std::string> servers;
  std::string err;
  ASSERT_TRUE(ParseNatsUrl("nats://a:1,b:2,nats://c:3", &servers, &err)) << err;
  EXPECT_EQ(servers, (std::vector<std::string>{"nats://a:1", "nats://b:2", "nats://c:3"}));
  for (const char *bad : {"nats://", "nats://a", "nats://a:", "nats://a:x", "relp://a:1", "a:1"})
    EXPECT_FALSE(ParseNatsUrl(bad, &servers, &err)) << bad;
  RelpOptions r;
  ASSERT_TRUE(ParseRelpUrl("relp://[::1]:514", &r, &err)) << err;
  EXPECT_EQ(r.host, "::1");
  EXPECT_EQ(r.port, "514");
  EXPECT_FALSE(ParseRelpUrl("relp://host", &r, &err));
}

// The receiver's RELP frames: complete ones parsed, incomplete ones waited
// for, anything else refused (the session is then ended).
TEST(RelpFrames, ParsesAnswersWaitsForMoreRefusesGarbage) {
  RelpFrame f;
  std::string err;
  const std::string two = "12 rsp 6 200 OK\n0 serverclose 0\n";
  ASSERT_EQ(ParseRelpFrame(two, 100, &f, &err), 16) << err;
  EXPECT_EQ(f.txnr, 12u);
  EXPECT_EQ(f.command, "rsp");
  EXPECT_EQ(f.data, "200 OK");
  ASSERT_EQ(ParseRelpFrame(std::string_view(two).substr(16), 100, &f, &err), 16) << err;
  EXPECT_EQ(f.command, "serverclose");
  EXPECT_EQ(f.data, "");
  const std::string open = "1 rsp 22 200 OK\ncommands=syslog\n";
  ASSERT_EQ(ParseRelpFrame(open, 100, &f, &err), long(open.size())) << err;
  EXPECT_EQ(f.data, "200 OK\ncommands=syslog");
  for (size_t cut = 0; cut < 16; ++cut)
    EXPECT_EQ(ParseRelpFrame(std::string_view(two).substr(0, cut), 100, &f, &err), 0) << cut;
  for (const char *bad : {"x rsp 0\n", "1234567890 rsp 0\n", "1  rsp 0\n", "1 rsp x\n",
                          "1 rsp 3 200X", "1 rsp 0 \n", "1 rsp 1\n", "1 r-p 0\n"}) {
    err.clear();
    EXPECT_EQ(ParseRelpFrame(bad, 100, &f, &err), -1) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
  EXPECT_EQ(ParseRelpFrame("1 rsp 101 ", 100, &f, &err), -1) << "over max_data";
}

// The options args give (parsed and finished), or what is wrong with them.
std::string ParseInto(std::vector<std::string> args, Options *o) {
  std::vector<char *> argv = {const_cast<char *>("logsink-forward")};
  for (auto &a : args) argv.push_back(a.data());
  std::string err;
  if (!ParseArgs(int(argv.size()), argv.data(), o, &err)) return err;
  if (!Finish(o, &err)) return err;
  return "";
}
std::string ParseError(std::vector<std::string> args) {
  Options o;
  return ParseInto(std::move(args), &o);
}

TEST(Options, ChecksCombinationsAndValues) {
  EXPECT_EQ(ParseError({"--to", "nats://h:1", "--subject", "s", "--cursor-file", "c"}), "");
  {  // no --subject: logs.{host}, the layout logctl --nats reads
    Options o;
    EXPECT_EQ(ParseInto({"--to", "nats://h:1", "--cursor-file", "c"}, &o), "");
    EXPECT_EQ(o.subject, "logs.{host}");
    EXPECT_EQ(ParseInto({"--to", "nats://h:1", "--cursor-file", "c", "--batch", "10"}, &o), "");
    std::string host = HostName();  // one token: a '.' of the name becomes '_'
    std::replace(host.begin(), host.end(), '.', '_');
    EXPECT_EQ(o.subject, "logs." + host);
  }
  EXPECT_NE(
      ParseError({"--to", "relp://h:1", "--subject", "s", "--cursor-file", "c"}).find("apply only"),
      std::string::npos);
  EXPECT_NE(ParseError({"--to", "http://h:1", "--cursor-file", "c"}).find("nats:// or relp://"),
            std::string::npos);
  EXPECT_NE(ParseError({"--to", "relp://h:1"}).find("--cursor-file"), std::string::npos);
  EXPECT_NE(
      ParseError({"--to", "relp://h:1", "--cursor-file", "c", "--level", "loud"}).find("--level"),
      std::string::npos);
  EXPECT_NE(
      ParseError({"--to", "relp://h:1", "--cursor-file", "c", "--window", "0"}).find("--window"),
      std::string::npos);
  // Long options are written in full, with the value apart or after '='.
  EXPECT_EQ(ParseError({"--to", "relp://h:1", "--cursor", "c"}),
            "unknown option '--cursor' (options are not abbreviated: --cursor-file?)");
  EXPECT_EQ(ParseError({"--to=relp://h:1", "--cursor-fi=c"}),
            "unknown option '--cursor-fi' (options are not abbreviated: --cursor-file?)");
  EXPECT_EQ(ParseError({"--to=relp://h:1", "--cursor-file=c"}), "");
}

// --batch and subject templates, and how they combine.
TEST(Options, BatchAndSubjectTemplates) {
  EXPECT_EQ(
      ParseError({"--to", "nats://h:1", "--subject", "s", "--cursor-file", "c", "--batch", "1000"}),
      "");
  EXPECT_EQ(ParseError({"--to", "nats://h:1", "--subject", "logs.{host}.{app}.{level}",
                        "--cursor-file", "c"}),
            "");
  for (const char *bad : {"0", "65537", "x", ""})
    EXPECT_NE(
        ParseError({"--to", "nats://h:1", "--subject", "s", "--cursor-file", "c", "--batch", bad})
            .find("--batch: must be 1..65536"),
        std::string::npos)
        << bad;
  EXPECT_NE(ParseError({"--to", "nats://h:1", "--subject", "logs.{app}", "--cursor-file", "c",
                        "--batch", "10"})
                .find("a batch holds the records of one subject"),
            std::string::npos);
  EXPECT_NE(ParseError({"--to", "relp://h:1", "--cursor-file", "c", "--batch", "10"})
                .find("--batch applies only to nats://"),
            std::string::npos);
  // A template naming only {host} is one subject per forwarder: batches
  // take it, rendered once (the stream is found and created on it).
  {
    Options o;
    ASSERT_EQ(ParseInto({"--to", "nats://h:1", "--subject", "logs.{host}.x", "--cursor-file", "c",
                         "--batch", "10"},
                        &o),
              "");
    std::string err;
    SubjectTemplate host;
    ASSERT_TRUE(host.Parse("{host}", &err));
    const std::string name = HostName();
    SubjectFields f;
    f.host = name;
    std::string token;
    host.Render(f, &token);
    EXPECT_EQ(o.subject, "logs." + token + ".x");
  }
  EXPECT_NE(ParseError({"--to", "nats://h:1", "--subject", "logs.{host}.{level}", "--cursor-file",
                        "c", "--batch", "10"})
                .find("a batch holds the records of one subject"),
            std::string::npos);
  // Compression is for batches only, by a known codec.
  EXPECT_EQ(ParseError({"--to", "nats://h:1", "--subject", "s", "--cursor-file", "c", "--batch",
                        "1000", "--compress", "zstd"}),
            "");
  EXPECT_NE(ParseError(
                {"--to", "nats://h:1", "--subject", "s", "--cursor-file", "c", "--compress", "lz4"})
                .find("applies to batches only"),
            std::string::npos);
  EXPECT_NE(ParseError({"--to", "nats://h:1", "--subject", "s", "--cursor-file", "c", "--batch",
                        "10", "--compress", "gzip"})
                .find("--compress: must be none, lz4 or zstd"),
            std::string::npos);
  EXPECT_NE(ParseError({"--to", "nats://h:1", "--subject", "logs.{colour}", "--cursor-file", "c"})
                .find("unknown field {colour}"),
            std::string::npos);
  EXPECT_NE(ParseError({"--to", "nats://h:1", "--subject", "logs.{app", "--cursor-file", "c"})
                .find("unclosed"),
            std::string::npos);
  EXPECT_NE(ParseError({"--to", "nats://h:1", "--subject", "logs.x{app}", "--cursor-file", "c"})
                .find("whole token"),
            std::string::npos);
}

TEST(SubjectTemplate, RendersFieldsAsSafeTokensAndGivesTheStreamsWildcard) {
  SubjectTemplate t;
  std::string err, out;
  ASSERT_TRUE(t.Parse("logs.{host}.{app}.{level}.{uid}", &err)) << err;
  EXPECT_FALSE(t.fixed());
  EXPECT_EQ(t.wildcard(), "logs.*.*.*.*");
  SubjectFields f;
  f.host = "web1.example.com";
  f.app = "nginx";
  f.level = "err";
  f.uid = 33;
  t.Render(f, &out);
  EXPECT_EQ(out, "logs.web1_example_com.nginx.err.33");
  f.app = "";  // an empty value is one '_' token
  f.host = "a b*c>\xc3\xa9";
  t.Render(f, &out);
  EXPECT_EQ(out, "logs.a_b_c___._.err.33");
  ASSERT_TRUE(t.Parse("logs.{comm}", &err)) << err;
  f.comm = "sshd";
  t.Render(f, &out);
  EXPECT_EQ(out, "logs.sshd");
  ASSERT_TRUE(t.Parse("logs.fixed", &err)) << err;
  EXPECT_TRUE(t.fixed());
  EXPECT_EQ(t.wildcard(), "logs.fixed");
  EXPECT_FALSE(t.Parse("logs.}", &err));
}

TEST(Options, DashVAndDashHAreVersionAndHelp) {
  for (const char *a : {"-V", "--version"}) {
    std::vector<char *> argv = {const_cast<char *>("logsink-forward"), const_cast<char *>(a)};
    Options o;
    std::string err;
    ASSERT_TRUE(ParseArgs(int(argv.size()), argv.data(), &o, &err)) << a << ": " << err;
    EXPECT_TRUE(o.version) << a;
  }
  std::vector<char *> argv = {const_cast<char *>("logsink-forward"), const_cast<char *>("-h")};
  Options o;
  std::string err;
  ASSERT_TRUE(ParseArgs(int(argv.size()), argv.data(), &o, &err)) << err;
  EXPECT_TRUE(o.help);
}

TEST(Options, TomlFileAndFlagsOverride) {
  TempDir dir;
  WriteFile(dir / "f.toml",
            "[forward]\nto = \"relp://h:1\"\ncursor_file = \"/x/c\"\napp = [\"a\", \"b\"]\n"
            "window = 7\nack_timeout = \"2s\"\nlevel = \"warning\"\n");
  std::string cfg = dir / "f.toml";
  std::vector<std::string> args = {"--config", cfg, "--window", "9"};
  std::vector<char *> argv = {const_cast<char *>("logsink-forward")};
  for (auto &a : args) argv.push_back(a.data());
  Options o;
  std::string err;
  ASSERT_TRUE(ParseArgs(int(argv.size()), argv.data(), &o, &err)) << err;
  ASSERT_TRUE(Finish(&o, &err)) << err;
  EXPECT_EQ(o.to, "relp://h:1");
  EXPECT_EQ(o.apps, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.window, 9);
  EXPECT_EQ(o.ack_timeout_ms, 2000u);
  EXPECT_EQ(o.max_level, 4);
  WriteFile(dir / "g.toml", "[forward]\ncolour = \"red\"\n");
  Options o2;
  std::string g = dir / "g.toml";
  std::vector<std::string> args2 = {"--config", g};
  std::vector<char *> argv2 = {const_cast<char *>("logsink-forward")};
  for (auto &a : args2) argv2.push_back(a.data());
  EXPECT_FALSE(ParseArgs(int(argv2.size()), argv2.data(), &o2, &err));
  EXPECT_NE(err.find(":2: forward.colour: unknown key"), std::string::npos) << err;
}

// Each setting of the table reads the same from its flag and from its key
// in the file, and the usage text names its flag.
TEST(Options, EverySettingByFlagAndByFile) {
  const std::map<std::string, std::string> values = {
      {"to", "relp://h:1"},   {"subject", "logs.x"},    {"create-stream", "LOGS"},
      {"file", "/x/ring"},    {"cursor-file", "/x/c"},  {"start", "end"},
      {"level", "warning"},   {"app", "nginx"},         {"window", "7"},
      {"batch", "3"},         {"ack-timeout", "2s"},    {"shutdown-timeout", "250ms"},
      {"compress", "lz4"},    {"sd-id", "mine@1"},      {"facility", "3"},
      {"log-level", "debug"}, {"refused-retries", "4"},
  };
  TempDir dir;
  size_t n = 0;
  for (const auto &[flag, key] : SettingNames()) {
    SCOPED_TRACE(flag);
    n++;
    auto it = values.find(flag);
    ASSERT_NE(it, values.end()) << "add a value for --" << flag;
    EXPECT_NE(std::string(Usage()).find("--" + flag + " "), std::string::npos);
    std::string by_flag_arg = "--" + flag + "=" + it->second;
    std::vector<char *> argv = {const_cast<char *>("logsink-forward"), by_flag_arg.data()};
    Options by_flag, by_file, defaults;
    std::string err;
    ASSERT_TRUE(ParseArgs(int(argv.size()), argv.data(), &by_flag, &err)) << err;
    EXPECT_FALSE(by_flag == defaults);
    WriteFile(dir / "f.toml", "[forward]\n" + key + " = \"" + it->second + "\"\n");
    std::string cfg = dir / "f.toml", config_arg = "--config=" + cfg;
    std::vector<char *> argv2 = {const_cast<char *>("logsink-forward"), config_arg.data()};
    ASSERT_TRUE(ParseArgs(int(argv2.size()), argv2.data(), &by_file, &err)) << err;
    by_file.config_file.clear();
    EXPECT_TRUE(by_file == by_flag);
  }
  EXPECT_EQ(n, values.size());
}

}  // namespace
}  // namespace logsink::test
