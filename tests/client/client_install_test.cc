// client_install_test.cc: installs liblogsink (cmake --install of the build's
// client/ directory) into a temp prefix, builds client/examples/hello.c
// against the INSTALLED library with pkg-config and with find_package(logsink),
// runs both against the real logsinkd and reads their records back.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "client_harness.h"

namespace logsink::test {
namespace {

// Runs a shell command; returns its exit status and output (stdout + stderr).
int Sh(const std::string &cmd, std::string *out) {
  std::string full = "( " + cmd + " ) 2>&1";
  FILE *p = popen(full.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

std::string Q(const std::string &s) { return "'" + s + "'"; }

class ClientInstallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start());
    std::string out;
    ASSERT_EQ(Sh(std::string(LOGSINK_CMAKE) + " --install " +
                     Q(std::string(LOGSINK_BUILD_DIR) + "/client") + " --prefix " + Q(prefix_),
                 &out),
              0)
        << out;
    // The libdir GNUInstallDirs picked (lib, lib64 or lib/<multiarch>).
    ASSERT_EQ(Sh("dirname \"$(find " + Q(prefix_) + " -name logsink.pc)\"", &out), 0);
    pcdir_ = out.substr(0, out.find('\n'));
    libdir_ = pcdir_.substr(0, pcdir_.rfind('/'));
  }
  std::string Example() const {
    return std::string(LOGSINK_SOURCE_DIR) + "/client/examples/hello.c";
  }

  TempDir dir_;
  ClientDaemon daemon_{dir_};
  std::string prefix_ = dir_ / "prefix";
  std::string pcdir_, libdir_;
};

TEST_F(ClientInstallTest, ExampleBuildsWithPkgConfigAndRuns) {
  std::string out;
  std::string env = "PKG_CONFIG_PATH=" + Q(pcdir_) + " ";
  ASSERT_EQ(Sh(env + "pkg-config --cflags --libs logsink", &out), 0) << out;
  EXPECT_NE(out.find("-I" + prefix_ + "/include"), std::string::npos) << out;
  EXPECT_NE(out.find("-llogsink"), std::string::npos) << out;
  std::string bin = dir_ / "hello";
  const std::string flags = std::string(LOGSINK_C_FLAGS) + " " + LOGSINK_LD_FLAGS;
  ASSERT_EQ(
      Sh(std::string(LOGSINK_CC) + " -std=c11 -Wall -Wextra -Werror " + flags + " " + Q(Example()) +
             " -o " + Q(bin) + " $(" + env + "pkg-config --cflags --libs logsink)",
         &out),
      0)
      << out;
  // The binary must use the installed shared library.
  ASSERT_EQ(Sh("LD_LIBRARY_PATH=" + Q(libdir_) + " ldd " + Q(bin), &out), 0);
  EXPECT_NE(out.find(libdir_ + "/liblogsink.so"), std::string::npos) << out;
  ASSERT_EQ(Sh("LD_LIBRARY_PATH=" + Q(libdir_) + " " + Q(bin) + " " + Q(daemon_.socket), &out), 0)
      << out;
  EXPECT_NE(out.find("flush ok, 5 sent, 0 dropped"), std::string::npos) << out;
  auto v = WaitRing(daemon_.ring, [](const std::vector<OwnedRecord> &r) { return r.size() >= 5; });
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].fmt, "hello %d from %s");
  EXPECT_EQ(v[0].app, "hello");
  EXPECT_EQ(v[3].fmt, "pi is about %.3f");
  EXPECT_EQ(v[4].fmt, "%s");
}

TEST_F(ClientInstallTest, ExampleBuildsWithFindPackage) {
  std::string proj = dir_ / "proj";
  std::string out;
  ASSERT_EQ(mkdir(proj.c_str(), 0755), 0);
  std::ofstream(proj + "/CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.25)\n"
         "project(uses_logsink C)\n"
         "find_package(logsink 0.1 REQUIRED)\n"
         "add_executable(hello \""  // quoted: the checkout's path may hold spaces
      << Example()
      << "\")\n"
         "target_link_libraries(hello PRIVATE logsink::logsink)\n"
         "add_executable(hello_static \""
      << Example()
      << "\")\n"
         "target_link_libraries(hello_static PRIVATE logsink::logsink_static)\n";
  ASSERT_EQ(Sh(std::string(LOGSINK_CMAKE) + " -S " + Q(proj) + " -B " + Q(proj + "/b") + " -G " +
                   Q(LOGSINK_GENERATOR) + " -DCMAKE_C_COMPILER=" + Q(LOGSINK_CC) +
                   " -DCMAKE_PREFIX_PATH=" + Q(prefix_) + " -DCMAKE_C_FLAGS=" + Q(LOGSINK_C_FLAGS) +
                   " -DCMAKE_EXE_LINKER_FLAGS=" + Q(LOGSINK_LD_FLAGS) + " && " + LOGSINK_CMAKE +
                   " --build " + Q(proj + "/b"),
               &out),
            0)
      << out;
  // The CMake target carries the installed library's path (RPATH in the build tree).
  ASSERT_EQ(Sh(Q(proj + "/b/hello") + " " + Q(daemon_.socket), &out), 0) << out;
  EXPECT_NE(out.find("flush ok, 5 sent"), std::string::npos) << out;
  ASSERT_EQ(Sh(Q(proj + "/b/hello_static") + " " + Q(daemon_.socket), &out), 0) << out;
  EXPECT_NE(out.find("flush ok, 5 sent"), std::string::npos) << out;
  auto v = WaitRing(daemon_.ring, [](const std::vector<OwnedRecord> &r) { return r.size() >= 10; });
  EXPECT_EQ(v.size(), 10u);
}

}  // namespace
}  // namespace logsink::test
