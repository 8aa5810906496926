// logctl_export_test.cc: the real logctl binary against rings written with
// storage's RingWriter (cli_fixture.h): `logctl export`: a rendered chronological copy, to a file
// or standard output, never a partial file.
#include <fstream>

#include "cli_fixture.h"

namespace logsink::test {
namespace {

// An export cut short (here a file size limit standing in for a
// full disk) fails and leaves no partial file; `export -o json` is refused
// with what to write instead.
TEST_F(LogctlTest, ExportCutShortLeavesNoFileAndOutputModesAreNotFileNames) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 5000);
  ring.Close();
  std::string out = dir_.File("cut.txt");
  // SIGXFSZ ignored: the write fails with EFBIG instead of killing logctl.
  ProcResult r = RunProcess("/bin/bash", {"-c", "ulimit -f 8; trap '' XFSZ; exec \"$0\" \"$@\"",
                                          LogctlPath(), "export", "-o", out, "--file", f});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err,
            "logctl: " + out + ": File too large\nlogctl: " + out + ": removed (incomplete)\n");
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "a partial copy was left";

  Result j = RunLogctl({"export", "-o", "json", "--file", f});
  EXPECT_EQ(j.status, 2);
  EXPECT_EQ(j.err.substr(0, j.err.find('\n')),
            "logctl: export: -o names the file to write, and 'json' is an output mode: for that "
            "rendering use --format (text or json); for a file of that name, -o ./json");
  EXPECT_NE(access("json", F_OK), 0);
}

TEST_F(LogctlTest, ExportWritesAChronologicalRenderedCopy) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 5000);  // wraps: the file is not physically chronological
  ring.Close();
  Result cat = RunLogctl({"cat", "--file", f});
  std::string out = dir_.File("export.txt");
  Result r = RunLogctl({"export", "--output", out, "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(out), cat.out);
  std::string outj = dir_.File("export.json");
  r = RunLogctl({"export", "--output", outj, "--format", "json", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream inj(outj);
  std::string line;
  uint64_t prev = 0, n = 0;
  while (std::getline(inj, line)) {
    json v = ParseJson(line);
    ASSERT_FALSE(v.is_discarded()) << line;
    if (n++) {
      EXPECT_EQ(v["seq"].get<uint64_t>(), prev + 1);
    }
    prev = v["seq"].get<uint64_t>();
  }
  EXPECT_EQ(n, Lines(cat.out).size());
  r = RunLogctl({"export", "--output", f, "--file", f});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("is the ring file itself"), std::string::npos);
  r = RunLogctl({"export", "--output", dir_.File("no/such/dir"), "--file", f});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + dir_.File("no/such/dir") + ": No such file or directory\n");
}

// `export -o -` writes to standard output (it used to create a
// file named "-"); export's -o is the destination, as its --help says.
TEST_F(LogctlTest, ExportToStandardOutput) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 50);
  ring.Close();
  Result cat = RunLogctl({"cat", "--file", f});
  ASSERT_EQ(Lines(cat.out).size(), 50u);
  // Run in dir_, so a file named "-" would appear there.
  SubprocessOptions so;
  const std::string dir = dir_.path();
  so.child_setup = [dir] {
    setenv("TZ", "UTC", 1);
    if (chdir(dir.c_str()) != 0) _exit(126);
  };
  Subprocess p(LogctlPath(), {"export", "--output", "-", "--file", f}, so);
  Result r = p.Finish(Ms(30000));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, cat.out);
  EXPECT_EQ(r.err, "");
  struct stat st;
  EXPECT_NE(stat(dir_.File("-").c_str(), &st), 0) << "export -o - created a file named '-'";
  // Without -o, export writes to standard output too.
  r = RunLogctl({"export", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, cat.out);
  // -o - with filters and JSON.
  r = RunLogctl({"export", "-o", "-", "--format", "json", "-g", "n=4[0-9]$", "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 10u) << r.out;
  for (auto &l : lines) EXPECT_FALSE(ParseJson(l).is_discarded()) << l;
  EXPECT_EQ(ParseJson(lines[0])["msg"].get<std::string>(), "n=40");
  // A path that merely ends in "-" is a file, as before.
  r = RunLogctl({"export", "-o", dir_.File("-"), "--file", f});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(stat(dir_.File("-").c_str(), &st), 0);
  // export's help names -o as the destination, not as an output mode.
  r = RunLogctl({"export", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: logctl export [-o FILE|-] ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  -o, --output FILE|-   where to write"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("short|json|raw"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--show-cursor"), std::string::npos) << r.out;
  // tail and cat keep -o as the output mode.
  r = RunLogctl({"cat", "--help"});
  EXPECT_NE(r.out.find("-o, --output MODE  short (the default)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace logsink::test
