// daemon_cli_test.cc: logsinkd's command line and configuration handling,
// run as a real process: config errors (exit 2, file/line/key named, ring
// untouched), --print-config round trip, geometry mismatch and --recreate.
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/staged_binary.h"
#include "daemon/harness.h"
#include "logsink/config/config.h"

namespace logsink::test {
namespace {

struct ConfigCase {
  const char *toml;
  int line;
  const char *key;
};

TEST(DaemonCli, ConfigErrorsExit2NamingFileLineKeyAndTouchNothing) {
  const ConfigCase cases[] = {
      {"[ring]\nsize = \"2MiB\"\nsise = \"1GiB\"\n", 3, "ring.sise"},
      {"[limits]\nmax_connections = \"lots\"\n", 2, "limits.max_connections"},
      {"[writer]\n# comment\n\nflush_interval = \"2h\"\n", 4, "writer.flush_interval"},
      {"[limits]\nmax_frame = \"32MiB\"\n", 2, "limits.max_frame"},
  };
  for (const ConfigCase &cc : cases) {
    SCOPED_TRACE(cc.toml);
    TempDir dir;
    std::string cfg = dir / "bad.toml", ring = dir / "logsink.ring", sock = dir / "s.sock";
    WriteFile(cfg, cc.toml);
    WriteFile(ring, "not a ring file; must stay as it is");
    auto r = RunDaemon(dir, {"--config", cfg, "--socket", sock, "--file", ring});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(cfg + ":" + std::to_string(cc.line)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(cc.key), std::string::npos) << r.err;
    EXPECT_EQ(ReadFile(ring), "not a ring file; must stay as it is");
    EXPECT_NE(access(sock.c_str(), F_OK), 0) << "no socket may be created";
  }
}

TEST(DaemonCli, BadFlagsExit2) {
  TempDir dir;
  for (std::vector<std::string> args : {std::vector<std::string>{"--bogus"},
                                        {"--size", "12 parsecs"},
                                        {"--block-size", "12KiB"},
                                        {"--log-level", "loud"},
                                        {"--size"},
                                        {"extra"}}) {
    auto r = RunDaemon(dir, args);
    EXPECT_EQ(r.status, 2) << args[0];
    EXPECT_NE(r.err.find("usage"), std::string::npos) << r.err;
  }
  // Long options are not abbreviated (getopt_long would take --sock for --socket).
  auto a = RunDaemon(dir, {"--sock", dir / "s.sock", "--print-config"});
  EXPECT_EQ(a.status, 2);
  EXPECT_NE(a.err.find("unknown option '--sock' (options are not abbreviated: --socket?)"),
            std::string::npos)
      << a.err;
  auto v = RunDaemon(dir, {"--version"});
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.out.find("logsinkd "), std::string::npos);
  auto vv = RunDaemon(dir, {"-V"});
  EXPECT_EQ(vv.status, 0);
  EXPECT_EQ(vv.out, v.out);
  // The example the package installs answers --version and --help without
  // logging anything.
  for (const char *a : {"-V", "--version", "--help"}) {
    ProcResult h = RunProcess(BinPath("logsink_hello"), {a});
    EXPECT_EQ(h.status, 0) << a;
    EXPECT_EQ(
        h.out.rfind(std::string(a) == "--help" ? "usage: logsink_hello" : "logsink_hello (", 0), 0u)
        << a << ": " << h.out;
  }
  auto h = RunDaemon(dir, {"--help"});
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("--print-config"), std::string::npos);
}

// K/M/G/T and KiB/MiB/GiB/TiB are powers of 1024; anything else is
// refused in one sentence, on the command line and in the file.
TEST(DaemonCli, SizesTakeBinaryUnitsAndRefuseEverythingElse) {
  TempDir dir;
  for (const char *ok : {"2097152", "2048K", "2048KiB", "2M", "2MiB"}) {
    auto r = RunDaemon(dir, {"--socket", dir / "s.sock", "--file", dir / "r.ring", "--size", ok,
                             "--print-config"});
    EXPECT_EQ(r.status, 0) << ok << ": " << r.err;
    EXPECT_NE(r.out.find("size = \"2MiB\""), std::string::npos) << ok << ": " << r.out;
  }
  for (const char *bad : {"1GB", "1gb", "1 G B", "1 G", "1g", "512B", "1.5G"}) {
    auto r = RunDaemon(dir, {"--size", bad, "--print-config"});
    EXPECT_EQ(r.status, 2) << bad;
    std::string first = r.err.substr(0, r.err.find('\n') + 1);
    EXPECT_EQ(first, std::string("logsinkd: --size: '") + bad + "' is not a size: use " +
                         config::kSizeForms + "\n")
        << r.err;
    r = RunDaemon(dir, {"--block-size", bad, "--print-config"});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find(std::string("--block-size: '") + bad + "' is not a size: use "),
              std::string::npos)
        << r.err;
    std::string cfg = dir / "sizes.toml";
    WriteFile(cfg, std::string("[ring]\nsize = \"") + bad + "\"\n");
    r = RunDaemon(dir, {"--config", cfg, "--print-config"});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find(std::string("\"") + bad + "\" is not a size: use " + config::kSizeForms),
              std::string::npos)
        << r.err;
  }
  auto r = RunDaemon(dir, {"--size", "2T", "--print-config"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("logsinkd: --size: 2T is outside 32KiB..1TiB\n"), std::string::npos)
      << r.err;
}

// A file that is not a ring: one sentence, no internal status name.
TEST(DaemonCli, NotARingFileIsOneClearSentence) {
  TempDir dir;
  std::string ring = dir / "hostname";
  WriteFile(ring, std::string(65536, 'x'));
  auto r = RunDaemon(dir, {"--socket", dir / "s.sock", "--file", ring, "--size", "1MiB"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(ring + " is not a logsink ring file, and logsinkd never overwrites such a "
                              "file: remove it or choose another --file\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("NotOurs"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(ring), std::string(65536, 'x'));
}

// A ring another user owns (the quick start's, made by root, then
// the service as logsink) is refused with whose it is and what to run.
TEST(DaemonCli, ARingOfAnotherUserSaysWhoseItIsAndWhatToRun) {
  ASSERT_EQ(geteuid(), 0u) << "the tests run as root (README)";
  TempDir dir;
  std::string ring = dir / "r.ring";
  {
    Daemon d(dir, {"--file", ring});  // root's ring, 0640 root:root
    ASSERT_TRUE(d.Start()) << d.Stderr();
    ASSERT_EQ(d.Stop(), 0) << d.Stderr();
  }
  std::string nob = dir / "nobody";
  ASSERT_EQ(mkdir(nob.c_str(), 0700), 0);
  ASSERT_EQ(chown(nob.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chmod(dir.path().c_str(), 0711), 0);
  StagedBinary bin(BinPath("logsinkd"));
  ASSERT_TRUE(bin.ok()) << bin.error();
  SubprocessOptions o;
  o.child_setup = [&bin] {
    bin.SetLibraryPath();
    if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(126);
  };
  ProcResult r = RunProcess(bin.path(), {"--socket", nob + "/s.sock", "--file", ring}, o, kHang);
  EXPECT_EQ(r.status, 1);
  struct passwd *pw = getpwuid(65534);
  const std::string me = pw ? pw->pw_name : "65534";
  EXPECT_NE(r.err.find("cannot open the ring file " + ring +
                       ": Permission denied; it belongs to "
                       "root and logsinkd runs as " +
                       me + ": as root, run 'chown " + me + ": " + ring + "' to give it to " + me +
                       ", or remove it (its records are lost)\n"),
            std::string::npos)
      << r.err;
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
}

// --file in a missing directory outside the state directory is refused
// (nothing created) unless --create-dirs asks for it.
TEST(DaemonCli, MissingRingDirectoryNeedsCreateDirs) {
  TempDir dir;
  std::string missing = dir / "no/such";
  std::string ring = missing + "/r.ring";
  auto r = RunDaemon(dir, {"--socket", dir / "s.sock", "--file", ring, "--size", "1MiB"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("the directory " + missing +
                       " of the ring file does not exist; create it, or start logsinkd with "
                       "--create-dirs\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(access((dir / "no").c_str(), F_OK), 0) << "nothing may be created";
  EXPECT_NE(access((dir / "s.sock").c_str(), F_OK), 0) << "no socket may be created";

  Daemon d(dir, {"--file", ring, "--create-dirs"});
  ASSERT_TRUE(d.Start()) << d.Stderr();
  EXPECT_EQ(access(ring.c_str(), F_OK), 0);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

TEST(DaemonCli, TooSmallRingIsAConfigError) {
  TempDir dir;
  auto r = RunDaemon(dir, {"--socket", dir / "s.sock", "--file", dir / "r.ring", "--size", "32KiB",
                           "--block-size", "16KiB"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("configuration error"), std::string::npos) << r.err;
  EXPECT_NE(access((dir / "r.ring").c_str(), F_OK), 0);
}

TEST(DaemonCli, PrintConfigRoundTrips) {
  TempDir dir;
  auto first =
      RunDaemon(dir, {"--socket", dir / "s.sock", "--file", dir / "r.ring", "--size", "2MiB",
                      "--block-size", "16KiB", "--log-level", "debug", "--print-config"});
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.out.find("size = \"2MiB\""), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("block_size = \"16KiB\""), std::string::npos);
  EXPECT_NE(first.out.find("path = \"" + (dir / "s.sock") + "\""), std::string::npos);
  std::string cfg = dir / "printed.toml";
  WriteFile(cfg, first.out);
  auto second = RunDaemon(dir, {"--config", cfg, "--print-config"});
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(second.out, first.out);
  // and the library reads it back to the same values
  logsink::config::Config c;
  std::string err;
  ASSERT_TRUE(logsink::config::LoadString(first.out, "printed", &c, &err)) << err;
  EXPECT_EQ(c.ring_size, 2u << 20);
  EXPECT_EQ(c.block_size, 16384u);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_NE(access((dir / "r.ring").c_str(), F_OK), 0) << "--print-config touches nothing";
}

TEST(DaemonCli, FlagsOverrideTheFile) {
  TempDir dir;
  std::string cfg = dir / "c.toml";
  WriteFile(cfg,
            "[ring]\nsize = \"4MiB\"\nblock_size = \"32KiB\"\n[daemon]\nlog_level = \"warn\"\n");
  auto r = RunDaemon(dir, {"--config", cfg, "--size", "2MiB", "--socket", dir / "s", "--file",
                           dir / "r", "--print-config"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("size = \"2MiB\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("block_size = \"32KiB\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("log_level = \"warn\""), std::string::npos) << r.out;
}

TEST(DaemonCli, LogsinkSocketOverridesTheDefaultAndFlagsOverrideIt) {
  TempDir dir;
  auto env = [&] { setenv("LOGSINK_SOCKET", (dir / "from-env.sock").c_str(), 1); };
  auto r = RunDaemon(dir, {"--file", dir / "r", "--print-config"}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("path = \"" + (dir / "from-env.sock") + "\""), std::string::npos) << r.out;
  std::string cfg = dir / "c.toml";
  WriteFile(cfg, "[socket]\npath = \"" + (dir / "from-file.sock") + "\"\n");
  r = RunDaemon(dir, {"--config", cfg, "--file", dir / "r", "--print-config"}, env);
  EXPECT_NE(r.out.find("path = \"" + (dir / "from-file.sock") + "\""), std::string::npos) << r.out;
  r = RunDaemon(
      dir, {"--config", cfg, "--socket", dir / "flag.sock", "--file", dir / "r", "--print-config"},
      env);
  EXPECT_NE(r.out.find("path = \"" + (dir / "flag.sock") + "\""), std::string::npos) << r.out;
}

TEST(DaemonCli, OtherGeometryNeedsRecreate) {
  TempDir dir;
  {
    Daemon d(dir);
    ASSERT_TRUE(d.Start()) << d.Stderr();
    Client c(d.socket);
    ASSERT_TRUE(c.Send(Hello(1, "geo") + Intern(1, 6, 1, "x", "f") + Records(1, {{1, 5, {}}})));
    ASSERT_FALSE(c.Stats().empty());
    ASSERT_EQ(d.Stop(), 0);
  }
  std::string before = ReadFile(dir / "logsink.ring");
  auto r = RunDaemon(
      dir, {"--socket", dir / "logsink.sock", "--file", dir / "logsink.ring", "--size", "2MiB"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--recreate"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(dir / "logsink.ring"), before);
  EXPECT_EQ(ReadRing(dir / "logsink.ring").size(), 1u);

  Daemon again(dir, {"--size", "2MiB", "--recreate"});
  ASSERT_TRUE(again.Start()) << again.Stderr();
  EXPECT_EQ(again.Stop(), 0);
  struct stat st;
  ASSERT_EQ(stat((dir / "logsink.ring").c_str(), &st), 0);
  EXPECT_EQ(uint64_t(st.st_size), 2u << 20);
  EXPECT_EQ(ReadRing(dir / "logsink.ring").size(), 0u);
}

}  // namespace
}  // namespace logsink::test
