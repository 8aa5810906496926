// conformance_test.cc: one suite every client runs (README.md). Each test
// is one scenario, instantiated once per client: the harness starts the
// real logsinkd, runs the client's driver as a child that answers commands
// on its stdin, and reads the ring back with the real logctl -o json. Every
// client must leave the same records: the catalogue's messages and levels
// exactly, levels at the source and pushed at run time, typed named
// fields, a burst whole and in order, nothing lost across a daemon restart.
// A new language is a driver and one line in Clients() below.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/daemon_process.h"
#include "common/process.h"
#include "common/temp_dir.h"

namespace logsink::test {
namespace {

using json = nlohmann::ordered_json;  // field order is part of a record

struct Client {
  std::string name;               // the test's suffix and the driver's app label
  std::vector<std::string> argv;  // the driver: program and its first arguments
};

void PrintTo(const Client &c, std::ostream *os) { *os << c.name; }

std::vector<Client> Clients() {
  return {
      {"c", {CONFORMANCE_DRIVER_C}},
      {"cxx", {CONFORMANCE_DRIVER_CXX}},
      {"python", {CONFORMANCE_PYTHON, LOGSINK_SOURCE_DIR "/tests/conformance/driver.py"}},
  };
}

// A driver as a child process, one command at a time (README.md, "The
// driver protocol").
class Driver {
 public:
  Driver(const Client &client, const std::string &socket, const std::string &app,
         std::vector<std::string> extra = {}, std::string level_env = "")
      : proc_(client.argv[0], Args(client, socket, app, std::move(extra)),
              Options(std::move(level_env))) {}

  // The answer to one command ("" when the driver said nothing within
  // kHang: then it is finished, reported once, and later commands get "").
  std::string Do(const std::string &command) {
    std::string line;
    if (dead_) return "";
    if (!proc_.WriteLine(command) || !proc_.ReadLine(&line, kHang)) {
      dead_ = true;
      ProcResult r = proc_.Finish(Ms(1000));
      ADD_FAILURE() << "driver gave no answer to `" << command << "`: status " << r.status
                    << ", stderr: " << r.err;
      return "";
    }
    return line;
  }
  // A command whose answer must be "ok".
  void Ok(const std::string &command) { EXPECT_EQ(Do(command), "ok") << command; }

  // "close", then the driver's exit status (0 expected).
  int Close() {
    Ok("close");
    if (dead_) return -1;
    ProcResult r = proc_.Finish(kHang);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.status;
  }
  pid_t pid() const { return proc_.pid(); }

 private:
  static std::vector<std::string> Args(const Client &client, const std::string &socket,
                                       const std::string &app, std::vector<std::string> extra) {
    std::vector<std::string> a(client.argv.begin() + 1, client.argv.end());
    for (const std::string &s : {std::string("--socket"), socket, std::string("--app"), app})
      a.push_back(s);
    for (auto &s : extra) a.push_back(std::move(s));
    return a;
  }
  static SubprocessOptions Options(std::string level_env) {
    SubprocessOptions o;
    o.keep_stdin = true;
    o.child_setup = [level_env] {
      setenv("PYTHONPATH", LOGSINK_SOURCE_DIR "/python", 1);
      setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
      if (!level_env.empty()) setenv("LOGSINK_LEVEL", level_env.c_str(), 1);
    };
    return o;
  }
  Subprocess proc_;
  bool dead_ = false;
};

struct Rec {
  int level;
  std::string msg;
  bool operator==(const Rec &o) const { return level == o.level && msg == o.msg; }
};
std::ostream &operator<<(std::ostream &os, const Rec &r) {
  return os << "<" << r.level << "> " << json(r.msg).dump();
}

// JSON says a level by its name (render/RENDERING.md): 0..7, -1 for another.
int LevelOf(const json &name) {
  static const char *const names[] = {"emerg",   "alert",  "crit", "err",
                                      "warning", "notice", "info", "debug"};
  for (int i = 0; i < 8; i++)
    if (name == names[i]) return i;
  return -1;
}

Rec Of(const json &j) { return {LevelOf(j["level"]), j["msg"].get<std::string>()}; }

std::vector<Rec> Numbered(const std::string &tag, int n) {
  std::vector<Rec> v;
  for (int i = 0; i < n; i++) v.push_back({6, tag + " " + std::to_string(i)});
  return v;
}

std::vector<Rec> Levels(int through) {
  std::vector<Rec> v;
  for (int i = 0; i <= through; i++) v.push_back({i, "level " + std::to_string(i)});
  return v;
}

class Conformance : public ::testing::TestWithParam<Client> {
 protected:
  void SetUp() override { ASSERT_TRUE(daemon_.Start()) << daemon_.Stderr(); }

  std::string App() const { return "conf-" + GetParam().name; }
  Driver Start(std::vector<std::string> extra = {}, std::string level_env = "") {
    return Driver(GetParam(), daemon_.socket, App(), std::move(extra), std::move(level_env));
  }

  // logctl ARGS..., its standard output.
  std::string Logctl(std::vector<std::string> args) {
    ProcResult r = RunProcess(BinPath("logctl"), args);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  }
  // The records of the driver's app as logctl -o json prints them, once
  // there are n (the daemon writes partial blocks on a timer). A record is
  // one line of JSON: lines are counted while waiting, parsed once.
  std::vector<json> Records(size_t n) {
    const std::vector<std::string> args = {"--file", daemon_.ring, "--app", App(), "-o", "json"};
    std::string out;
    EXPECT_TRUE(WaitUntil([&] { return Lines(out = Logctl(args)).size() >= n; }, kHang, Ms(20)))
        << Lines(out).size() << " of " << n << " records";
    std::vector<json> v;
    for (const std::string &l : Lines(out)) v.push_back(json::parse(l));
    return v;
  }
  std::vector<Rec> Recs(size_t n) {
    std::vector<Rec> v;
    for (const json &j : Records(n)) v.push_back(Of(j));
    return v;
  }

  TempDir dir_;
  Daemon daemon_{dir_, {"--size", "64MiB"}};
};

// The catalogue (README.md): integers of every width and base, floats with
// precisions and exponents, strings with UTF-8, padding and precision, a
// character and %%, an empty string, control characters, a long argument
// and no argument, each at its level, read back exactly, app and pid the
// driver's.
TEST_P(Conformance, TheCatalogueReadsBackExactly) {
  Driver d = Start();
  d.Ok("catalogue");
  d.Ok("flush");
  const pid_t pid = d.pid();
  EXPECT_EQ(d.Close(), 0);
  const std::vector<json> got = Records(8);
  const std::vector<Rec> want = {
      {6, "integers -42 42 18446744073709551615 ff 755 -9223372036854775808"},
      {5, "floats 3.142 1e+06 -0.5 2.5e-07 1.234568e+04"},
      {4, "strings [h\xc3\xa9llo w\xc3\xb6rld] [   right] [left    ] [tru]"},
      {3, "char x and percent 100%"},
      {7, "empty []"},
      {2, "lines first\nsecond\ttab"},
      {6, "long " + std::string(1000, 'x')},
      {1, "no arguments"},
  };
  std::vector<Rec> recs;
  for (const json &j : got) {
    recs.push_back(Of(j));
    EXPECT_EQ(j["app"], App());
    EXPECT_EQ(j["pid"], pid);
    EXPECT_FALSE(j.contains("fields")) << j.dump();
  }
  EXPECT_EQ(recs, want);
}

// Levels: $LOGSINK_LEVEL=warning keeps levels 0..4 at the source; a rule
// pushed with `logctl level --app APP debug` reaches the running client
// (a debug probe is produced: the driver's `logged` counter says so) and
// lets all eight through; `--reset` takes it back to 0..4.
TEST_P(Conformance, LevelsAtTheSourceAndPushedAtRunTimeBehaveAlike) {
  Driver d = Start({}, "warning");
  d.Ok("levels");
  d.Ok("flush");
  EXPECT_EQ(d.Do("probe 7"), "ok 0");
  EXPECT_EQ(d.Do("probe 4"), "ok 1");
  Logctl({"level", "--socket", daemon_.socket, "--app", App(), "debug"});
  int produced = 1;
  auto probe_says = [&](const char *want) {
    return WaitUntil([&] {
      const std::string a = d.Do("probe 7");
      produced += a == "ok 1";
      return a == want;
    });
  };
  EXPECT_TRUE(probe_says("ok 1")) << "the pushed rule never reached the client";
  d.Ok("levels");
  Logctl({"level", "--socket", daemon_.socket, "--reset", "--app", App()});
  EXPECT_TRUE(probe_says("ok 0")) << "the reset never reached the client";
  d.Ok("levels");
  d.Ok("flush");
  EXPECT_EQ(d.Close(), 0);

  std::vector<Rec> want = Levels(4), levels;
  for (const Rec &r : Levels(7)) want.push_back(r);
  for (const Rec &r : Levels(4)) want.push_back(r);
  int probes = 0;
  for (const Rec &r : Recs(want.size() + size_t(produced))) {
    if (r.msg == "probe")
      probes++;
    else
      levels.push_back(r);
  }
  EXPECT_EQ(levels, want);
  EXPECT_EQ(probes, produced);
}

// Named fields: typed (strings, a negative integer, an unsigned 64-bit
// integer, a bool, a double), in their order, apart from the message, and
// matched by `logctl NAME=VALUE`.
TEST_P(Conformance, NamedFieldsAreTypedAndMatched) {
  Driver d = Start();
  d.Ok("fields");
  d.Ok("catalogue");  // records without fields, which the match must leave out
  d.Ok("flush");
  EXPECT_EQ(d.Close(), 0);
  const std::vector<json> got = Records(9);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(Of(got[0]), (Rec{6, "login alice"}));
  // As text: JSON numbers compare by value (-7 == -7.0), the text does not.
  EXPECT_EQ(got[0]["fields"].dump(),
            R"({"logger":"conformance","user":"alice","n":-7,"big":18446744073709551615,)"
            R"("ok":true,"ratio":0.5})");
  // The arguments' types: logctl gives integers (and bools) as strings in
  // args_str, a double as a number.
  EXPECT_EQ(got[0]["args_str"].dump(),
            R"(["alice","conformance","alice","-7","18446744073709551615","1",0.5])");
  for (const char *match : {"user=alice", "n=-7", "big=18446744073709551615", "ok=true"}) {
    const std::vector<std::string> lines =
        Lines(Logctl({"--file", daemon_.ring, "--app", App(), "-o", "cat", match}));
    EXPECT_EQ(lines, std::vector<std::string>{"login alice"}) << match;
  }
}

// A burst of 100,000 records lands whole and in order, none dropped (the
// client waits for room, as its default policy says).
TEST_P(Conformance, ABurstLandsWholeAndInOrder) {
  constexpr int kN = 100000;
  Driver d = Start();
  d.Ok("burst burst " + std::to_string(kN));
  d.Ok("flush");
  EXPECT_EQ(d.Do("stats"), "ok " + std::to_string(kN) + " 0 0");  // logged, dropped, lost
  EXPECT_EQ(d.Close(), 0);
  EXPECT_EQ(Recs(kN), Numbered("burst", kN));
}

// logsinkd stopped and started again while the client logs: what was
// logged before, while it was down and after it came back lands, once and
// in order. The daemon starts again only once the client has counted the
// lost connection (the records logged while it was down met a closed
// socket). The driver's block_timeout (how long it keeps records for a
// restarting daemon) is 60 s, so the restart's pace does not decide.
TEST_P(Conformance, ADaemonRestartLosesNothing) {
  Driver d = Start({"--block-timeout-ms", "60000"});
  d.Ok("burst a 1000");
  d.Ok("flush");
  ASSERT_EQ(daemon_.Stop(), 0) << daemon_.Stderr();
  d.Ok("burst b 1000");
  EXPECT_TRUE(WaitUntil([&] { return d.Do("stats") == "ok 2000 0 1"; }))
      << "the client never counted the lost connection: " << d.Do("stats");
  ASSERT_TRUE(daemon_.Start()) << daemon_.Stderr();
  d.Ok("burst c 1000");
  EXPECT_TRUE(WaitUntil([&] { return d.Do("flush") == "ok"; })) << "never flushed";
  EXPECT_EQ(d.Do("stats"), "ok 3000 0 1");
  EXPECT_EQ(d.Close(), 0);
  std::vector<Rec> want = Numbered("a", 1000);
  for (const char *tag : {"b", "c"})
    for (const Rec &r : Numbered(tag, 1000)) want.push_back(r);
  EXPECT_EQ(Recs(want.size()), want);
}

INSTANTIATE_TEST_SUITE_P(Clients, Conformance, ::testing::ValuesIn(Clients()),
                         [](const ::testing::TestParamInfo<Client> &i) { return i.param.name; });

}  // namespace
}  // namespace logsink::test
