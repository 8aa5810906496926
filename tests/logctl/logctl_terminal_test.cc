// logctl_terminal_test.cc: the real logctl binary against rings written with
// storage's RingWriter (cli_fixture.h): logctl on a terminal: the progress line, colour and the
// pager (and its secure mode).
#include "cli_fixture.h"
#include "common/staged_binary.h"

namespace logsink::test {
namespace {

// A progress line on standard error when it is a terminal and the
// records go elsewhere; never in a pipe, never over records on the terminal.
TEST_F(LogctlTest, ProgressOnlyOnATerminalAndNotOverTheRecords) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 9000);
  ring.Close();
  std::string out = dir_.File("x.txt");
  std::string screen =
      RunOnTerminal({"export", "-o", out, "--file", f}, true, {{"LOGSINK_PROGRESS", "1"}});
  EXPECT_EQ(screen.rfind("\rlogctl: export: 0% (1 of 9000 records)\x1b[K", 0), 0u) << screen;
  EXPECT_GE(screen.size(), 4u);
  EXPECT_EQ(screen.substr(screen.size() - 4), "\r\x1b[K") << "erased at the end: " << screen;
  EXPECT_EQ(ReadFile(out), RunLogctl({"cat", "--file", f}).out);
  // Without the variable it waits 0.5 s, longer than this export takes.
  ASSERT_EQ(unlink(out.c_str()), 0);
  EXPECT_EQ(RunOnTerminal({"export", "-o", out, "--file", f}, true), "");
  // Standard error in a pipe: never.
  SpawnOptions env;
  env.env = {{"LOGSINK_PROGRESS", "1"}};
  Result r = RunLogctl({"cat", "--file", f}, env);
  EXPECT_EQ(r.err, "");
  // The records on the terminal: they are the progress.
  screen = RunOnTerminal({"cat", "--no-pager", "--file", f}, true, {{"LOGSINK_PROGRESS", "1"}});
  EXPECT_NE(screen.find("n=8999"), std::string::npos);
  EXPECT_EQ(screen.find("logctl: cat:"), std::string::npos);
  // cat into a file and verify (whose stdout lists problems) count too.
  const std::string cat_out = dir_.File("cat.txt");
  screen = RunOnTerminal({"cat", "--file", f}, true, {{"LOGSINK_PROGRESS", "1"}}, cat_out);
  EXPECT_EQ(screen.rfind("\rlogctl: cat: 0% (1 of 9000 records)\x1b[K", 0), 0u) << screen;
  EXPECT_EQ(ReadFile(cat_out), RunLogctl({"cat", "--file", f}).out);
  screen = RunOnTerminal({"verify", "--file", f}, true, {{"LOGSINK_PROGRESS", "1"}}, cat_out);
  EXPECT_EQ(screen.rfind("\rlogctl: verify: ", 0), 0u) << screen;
  EXPECT_NE(screen.find(" slots)\x1b[K"), std::string::npos) << screen;
  EXPECT_EQ(screen.substr(screen.size() - 4), "\r\x1b[K") << screen;
  EXPECT_NE(ReadFile(cat_out).find(": OK: 9000 records"), std::string::npos);
}

TEST_F(LogctlTest, ColourOnlyOnATerminalAndNotWithNoColor) {
  TestRing ring(dir_.File("r.ring"));
  uint32_t site = ring.Intern(3, "failed");
  ring.Add(site, "", "", kT0);
  ring.Close();
  std::vector<std::string> args{"cat", "--file", dir_.File("r.ring")};
  EXPECT_NE(RunOnTerminal(args, false).find("<err> \x1b[31mfailed\x1b[0m"), std::string::npos);
  EXPECT_EQ(RunOnTerminal(args, true).find('\x1b'), std::string::npos);
  args.push_back("--no-color");
  EXPECT_EQ(RunOnTerminal(args, false).find('\x1b'), std::string::npos);
  EXPECT_EQ(RunLogctl({"cat", "--file", dir_.File("r.ring")}).out.find('\x1b'), std::string::npos);
}

// A fake pager that records its arguments, $LESS and its input.
std::string FakePager(const TempDir &dir) {
  std::string path = dir.File("pager.sh");
  WriteFile(path,
            "#!/bin/sh\nprintf '%s' \"$*\" > \"$0.args\"\nprintf '%s' \"$LESS\" > \"$0.less\"\n"
            "cat > \"$0.in\"\n");
  chmod(path.c_str(), 0755);
  return path;
}

// On a terminal, tail and cat go through $LOGSINK_PAGER, else
// $PAGER, with LESS=FRSXMK unless LESS is set; -e starts it at the end
// (+G); --no-pager, a pipe or -f: no pager.
TEST_F(LogctlTest, PagerOnATerminal) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 3);
  ring.Close();
  const std::string pager = FakePager(dir_);
  auto reset = [&] {
    for (const char *ext : {".args", ".less", ".in"}) unlink((pager + ext).c_str());
  };
  std::string screen =
      RunOnTerminal({"cat", "-o", "cat", "--file", f}, true, {{"LOGSINK_PAGER", pager}});
  EXPECT_EQ(screen, "");
  EXPECT_EQ(ReadFile(pager + ".in"), "n=0\nn=1\nn=2\n");
  EXPECT_EQ(ReadFile(pager + ".args"), "");
  EXPECT_EQ(ReadFile(pager + ".less"), "FRSXMK");
  reset();
  RunOnTerminal({"tail", "-e", "-n", "1", "-o", "cat", "--file", f}, true,
                {{"LOGSINK_PAGER", pager}, {"LESS", "X"}});
  EXPECT_EQ(ReadFile(pager + ".in"), "n=2\n");
  EXPECT_EQ(ReadFile(pager + ".args"), "+G");
  EXPECT_EQ(ReadFile(pager + ".less"), "X");
  reset();
  // $PAGER when $LOGSINK_PAGER is unset; colours still follow the terminal.
  RunOnTerminal({"cat", "--file", f, "-p", "info"}, false,
                {{"-LOGSINK_PAGER", ""}, {"PAGER", pager}});
  EXPECT_NE(ReadFile(pager + ".in").find("<info> n=2"), std::string::npos);
  reset();
  // --no-pager, or an empty pager: straight to the terminal.
  screen = RunOnTerminal({"cat", "--no-pager", "-o", "cat", "--file", f}, true,
                         {{"LOGSINK_PAGER", pager}});
  EXPECT_NE(screen.find("n=2"), std::string::npos) << screen;
  EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0);
  screen = RunOnTerminal({"cat", "-o", "cat", "--file", f}, true, {{"LOGSINK_PAGER", "cat"}});
  EXPECT_NE(screen.find("n=2"), std::string::npos) << screen;
  EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0);
  // Not a terminal: no pager.
  SpawnOptions env;
  env.env = {{"LOGSINK_PAGER", pager}};
  Result r = RunLogctl({"cat", "-o", "cat", "--file", f}, env);
  EXPECT_EQ(r.out, "n=0\nn=1\nn=2\n");
  EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0);
  // -f: no pager, even on a terminal (the record shows on the terminal).
  int master;
  const std::string logctl = LogctlPath();
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    setenv("LOGSINK_PAGER", pager.c_str(), 1);
    execl(logctl.c_str(), logctl.c_str(), "tail", "-f", "-n", "1", "-o", "cat", "--file", f.c_str(),
          static_cast<char *>(nullptr));
    _exit(127);
  }
  std::string seen;
  auto deadline = Clock::now() + kHang;
  while (Clock::now() < deadline && seen.find("n=2") == std::string::npos) {
    struct pollfd p = {master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char b[256];
    ssize_t n = read(master, b, sizeof b);
    if (n <= 0) break;
    seen.append(b, size_t(n));
  }
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  close(master);
  EXPECT_NE(seen.find("n=2"), std::string::npos) << seen;
  EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0);
}

// Under sudo (SUDO_UID set), or with LOGSINK_PAGERSECURE=1, the pager is
// less in secure mode: LESSSECURE=1, run without a shell, and a pager the
// environment names is not run (under `sudo logctl` it could be anything);
// LOGSINK_PAGERSECURE=0 turns secure mode off.
TEST_F(LogctlTest, PagerIsSecureUnderSudo) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 3);
  ring.Close();
  const std::string pager = FakePager(dir_);
  // A "less" first in PATH that records $LESSSECURE, its arguments and input.
  const std::string bin = dir_.File("bin");
  mkdir(bin.c_str(), 0755);
  WriteFile(bin + "/less",
            "#!/bin/sh\nprintf '%s|%s' \"$LESSSECURE\" \"$*\" > \"$0.secure\"\ncat > \"$0.in\"\n");
  chmod((bin + "/less").c_str(), 0755);
  const std::string path =
      bin + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  auto reset = [&] {
    for (const std::string &p : {pager + ".in", bin + "/less.secure", bin + "/less.in"})
      unlink(p.c_str());
  };
  for (auto env : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"SUDO_UID", "1000"}}, {{"LOGSINK_PAGERSECURE", "1"}}, {{"PKEXEC_UID", "1000"}}}) {
    reset();
    env.push_back({"LOGSINK_PAGER", pager});
    env.push_back({"PATH", path});
    RunOnTerminal({"tail", "-e", "-n", "2", "-o", "cat", "--file", f}, true, env);
    EXPECT_EQ(ReadFile(bin + "/less.secure"), "1|+G") << env[0].first;
    EXPECT_EQ(ReadFile(bin + "/less.in"), "n=1\nn=2\n") << env[0].first;
    EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0) << env[0].first;  // not run
  }
  // Explicitly off: the named pager runs, as without sudo.
  reset();
  RunOnTerminal({"cat", "-o", "cat", "--file", f}, true,
                {{"SUDO_UID", "1000"},
                 {"LOGSINK_PAGERSECURE", "0"},
                 {"LOGSINK_PAGER", pager},
                 {"PATH", path}});
  EXPECT_EQ(ReadFile(pager + ".in"), "n=0\nn=1\nn=2\n");
  EXPECT_NE(access((bin + "/less.in").c_str(), F_OK), 0);
  // Secure mode still lets the user turn the pager off.
  reset();
  std::string screen = RunOnTerminal({"cat", "-o", "cat", "--file", f}, true,
                                     {{"SUDO_UID", "1000"}, {"LOGSINK_PAGER", ""}, {"PATH", path}});
  EXPECT_NE(screen.find("n=2"), std::string::npos) << screen;
  EXPECT_NE(access((bin + "/less.in").c_str(), F_OK), 0);
}

// A set-gid (or set-uid) logctl, such as one given the logsink group so that
// users can read the ring, runs the pager in secure mode whatever the
// caller's environment says, and takes less from the system's directories,
// never from the caller's PATH: there a "less" of the caller's would run
// with the program's privileges.
TEST_F(LogctlTest, PagerIsSecureInASetIdLogctl) {
  if (geteuid() != 0) GTEST_FAIL() << "making a set-gid copy needs root";
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 3);
  ring.Close();
  StagedBinary copy(LogctlPath());
  ASSERT_TRUE(copy.ok()) << copy.error();
  ASSERT_EQ(chown(copy.path().c_str(), 0, 65534), 0);
  ASSERT_EQ(chmod(copy.path().c_str(), 02755), 0);  // egid 65534, gid 0
  const std::string pager = FakePager(dir_);
  const std::string bin = dir_.File("bin");
  mkdir(bin.c_str(), 0755);
  WriteFile(bin + "/less", "#!/bin/sh\ncat > \"$0.in\"\n");
  chmod((bin + "/less").c_str(), 0755);
  const std::string path =
      bin + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  // The system's less shows the 3 lines and quits (LESS=FRSXMK: F).
  std::string screen = RunOnTerminal(
      {"cat", "-o", "cat", "--file", f}, true,
      {{"LOGSINK_PAGER", pager}, {"LOGSINK_PAGERSECURE", "0"}, {"PATH", path}, {"TERM", "xterm"}},
      "", copy.path());
  EXPECT_NE(access((pager + ".in").c_str(), F_OK), 0) << "the named pager ran";
  EXPECT_NE(access((bin + "/less.in").c_str(), F_OK), 0) << "the caller's less ran";
  EXPECT_NE(screen.find("n=2"), std::string::npos) << screen;
  // Secure mode asked for: still not the caller's less.
  screen = RunOnTerminal({"cat", "-o", "cat", "--file", f}, true,
                         {{"-LOGSINK_PAGER", ""},
                          {"-PAGER", ""},
                          {"LOGSINK_PAGERSECURE", "1"},
                          {"PATH", path},
                          {"TERM", "xterm"}},
                         "", copy.path());
  EXPECT_NE(access((bin + "/less.in").c_str(), F_OK), 0) << "the caller's less ran";
  EXPECT_NE(screen.find("n=2"), std::string::npos) << screen;
}

// `logctl` alone is `logctl cat` through the pager.
TEST_F(LogctlTest, NoArgumentsIsTheWholeLogThroughThePager) {
  std::string f = dir_.File("r.ring");
  TestRing ring(f);
  WriteNumbered(&ring, 12);
  ring.Close();
  SpawnOptions env;
  env.env = {{"LOGSINK_FILE", f}};
  Result r = RunLogctl({}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, RunLogctl({"cat", "--file", f}).out);
  EXPECT_EQ(Lines(r.out).size(), 12u);
  const std::string pager = FakePager(dir_);
  std::string screen = RunOnTerminal({}, true, {{"LOGSINK_PAGER", pager}, {"LOGSINK_FILE", f}});
  EXPECT_EQ(screen, "");
  EXPECT_EQ(ReadFile(pager + ".in"), r.out);
}

}  // namespace
}  // namespace logsink::test
