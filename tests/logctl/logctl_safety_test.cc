// logctl_safety_test.cc: logctl never blocks on a FIFO at
// the ring path (not even one swapped in after the path was checked: the
// ring is opened once and read through that descriptor), and `export` never
// writes through a symlink, never overwrites a file, and creates its copy no
// more readable than the ring.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "cli_util.h"
#include "common/unix_socket.h"
#include "proto/wire_encoder.h"

namespace logsink::test {
namespace {

mode_t CurrentUmask() {
  mode_t m = umask(0);
  umask(m);
  return m;
}

class LogctlSafetyTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

// Before the fix `cat` waited in open(2) for a writer that never came.
TEST_F(LogctlSafetyTest, AFifoAtTheRingPathIsRefusedAtOnce) {
  std::string fifo = dir_.File("ring");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const char *cmd : {"cat", "tail", "export"}) {
    std::vector<std::string> args = {cmd, "--file", fifo};
    if (std::string(cmd) == "export") {
      args.push_back("--output");
      args.push_back(dir_.File("out"));
    }
    Proc p(args);
    Result r = p.Finish(5000);  // a hang fails the test here instead of blocking it
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_EQ(r.err, "logctl: " + fifo + ": not a regular file\n") << cmd;
  }
}

// A stand-in for logsinkd on a socket: answers every RING_REQ with a RING
// frame naming `ring` (what a daemon, or whatever listens there, says).
class RingAnswerer {
 public:
  RingAnswerer(const std::string &socket, const std::string &ring) {
    lfd_ = ListenUnix(socket);
    EXPECT_GE(lfd_, 0);
    reply_ = Ring(std::string(16, '\x01'), 0, 0, ring);
    thread_ = std::thread([this] {
      while (!stop_) {
        struct pollfd p = {lfd_, POLLIN, 0};
        if (poll(&p, 1, 20) <= 0) continue;
        int fd = accept4(lfd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        char req[64];
        (void)!read(fd, req, sizeof req);
        (void)!write(fd, reply_.data(), reply_.size());
        close(fd);
      }
    });
  }
  ~RingAnswerer() {
    stop_ = true;
    thread_.join();
    if (lfd_ >= 0) close(lfd_);
  }

 private:
  int lfd_ = -1;
  std::string reply_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The ring path the daemon names is swapped between a ring file and a FIFO
// all the time. Before the fix logctl checked the path (open, fstat: a
// regular file), closed it and opened the path again for reading: when the
// FIFO came in between, that second open(2) waited for a writer forever.
// Now every run either reads the ring or refuses the FIFO, at once.
TEST_F(LogctlSafetyTest, ARingPathSwappedForAFifoAfterTheCheckNeverHangs) {
  std::string real = dir_.File("ring.real"), fifo = dir_.File("fifo.real");
  std::string path = dir_.File("ring"), sock = dir_.File("sock");
  {
    TestRing ring(real);
    ring.Add(ring.Intern(6, "hello"), "", "", kT0);
    ring.Close();
  }
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(link(real.c_str(), path.c_str()), 0);
  RingAnswerer daemon(sock, path);
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    std::string a = dir_.File("a"), b = dir_.File("b");
    while (!stop) {
      (void)!link(fifo.c_str(), a.c_str());
      (void)!rename(a.c_str(), path.c_str());
      (void)!link(real.c_str(), b.c_str());
      (void)!rename(b.c_str(), path.c_str());
    }
  });
  int read_ring = 0, refused = 0, hung = 0;
  for (int i = 0; i < 200 && hung == 0; i++) {
    Proc p({"cat", "--socket", sock});
    Result r = p.Finish(3000);
    if (r.status == -1) {
      ++hung;
    } else if (r.status == 0) {
      ++read_ring;
      EXPECT_NE(r.out.find("hello"), std::string::npos) << r.out;
    } else {
      ++refused;
      EXPECT_EQ(r.status, 1);
      EXPECT_EQ(r.err, "logctl: " + path + ": not a regular file\n");
    }
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(hung, 0) << "logctl hung on the FIFO (after " << read_ring << " reads and " << refused
                     << " refusals)";
  std::printf("[figures] %d runs read the ring, %d refused the FIFO, %d hung\n", read_ring, refused,
              hung);
}

// The ring file is opened once: the descriptor that was checked (fstat) is
// the one read. inotify counts the opens of the file (with the closes
// watched too, so that two opens are not coalesced into one event).
TEST_F(LogctlSafetyTest, TheRingFileIsOpenedOnce) {
  TestRing ring(dir_.File("r.ring"));
  ring.Add(ring.Intern(6, "hello"), "", "", kT0);
  ring.Close();
  int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(in, 0);
  ASSERT_GE(inotify_add_watch(in, ring.path().c_str(), IN_OPEN | IN_CLOSE_NOWRITE), 0);
  for (const char *cmd : {"cat", "verify"}) {
    Result r = RunLogctl({cmd, "--file", ring.path()});
    EXPECT_EQ(r.status, 0) << r.err;
    int opens = 0;
    alignas(struct inotify_event) char buf[4096];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
      for (char *p = buf; p < buf + n;) {
        auto *e = reinterpret_cast<struct inotify_event *>(p);
        if (e->mask & IN_OPEN) ++opens;
        p += sizeof *e + e->len;
      }
    EXPECT_EQ(opens, 1) << cmd;
  }
  close(in);
}

TEST_F(LogctlSafetyTest, ExportNeverWritesThroughASymlink) {
  TestRing ring(dir_.File("r.ring"));
  ring.Add(ring.Intern(6, "hello"), "", "", kT0);
  ring.Close();
  std::string victim = dir_.File("victim"), link = dir_.File("out.txt");
  {
    std::ofstream v(victim);
    v << "precious\n";
  }
  ASSERT_EQ(chmod(victim.c_str(), 0600), 0);
  ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);
  Result r = RunLogctl({"export", "--output", link, "--file", ring.path()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + link + ": exists; refusing to overwrite it\n");
  EXPECT_EQ(ReadFile(victim), "precious\n");
  // A dangling link is not followed either (O_EXCL): nothing is created.
  std::string dangling = dir_.File("dangling"), target = dir_.File("created-through-link");
  ASSERT_EQ(symlink(target.c_str(), dangling.c_str()), 0);
  r = RunLogctl({"export", "--output", dangling, "--file", ring.path()});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(access(target.c_str(), F_OK), 0);
}

TEST_F(LogctlSafetyTest, ExportRefusesAnExistingFileAndTakesTheRingsMode) {
  TestRing ring(dir_.File("r.ring"));
  ring.Add(ring.Intern(6, "hello"), "", "", kT0);
  ring.Close();
  ASSERT_EQ(chmod(ring.path().c_str(), 0640), 0);
  std::string out = dir_.File("out.txt");
  Result r = RunLogctl({"export", "--output", out, "--file", ring.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  struct stat st;
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u & ~CurrentUmask());
  EXPECT_NE(ReadFile(out).find("hello"), std::string::npos);
  // A second export to the same name would truncate the first: refused.
  r = RunLogctl({"export", "--output", out, "--file", ring.path()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "logctl: " + out + ": exists; refusing to overwrite it\n");
}

}  // namespace
}  // namespace logsink::test
