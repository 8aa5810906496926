// client_region_test.cc: liblogsink's side of a region a daemon hands it
// (PROTOCOL.md, "Shared buffers"), against a test that plays the daemon on
// a socket of its own: a region not sealed against shrinking and growing
// is never mapped (whoever owns the socket could shrink it under the
// program: SIGBUS); a thread's first call waits for the first connect at
// most 250 ms, and not at all with LS_BLOCK_NEVER; a call site's first
// call, which writes the site into the region, fits a small thread stack;
// a fork child never unmaps its parent's region (not mapped in the child).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/process.h"
#include "common/temp_dir.h"
#include "common/unix_socket.h"
#include "logsink/logsink.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/frame_encode.h"
#include "logsink/proto/shm.h"

namespace logsink::test {
namespace {

// The geometry handed: slots of the default thread buffer's size, so a
// thread's ring fits one.
constexpr ls_shm_geom kGeom = {4, 256 * 1024, 4096};

// A memfd of g's size; sealed against shrinking, growing and further
// seals when `seal`. -1 on failure.
int Region(bool seal, const ls_shm_geom &g) {
  int fd = memfd_create("client_region_test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  const uint64_t bytes = ls_shm_region_bytes(g.slots, g.slot_bytes, g.sites_bytes);
  if (ftruncate(fd, off_t(bytes)) != 0 ||
      (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)) {
    close(fd);
    return -1;
  }
  return fd;
}

// Answers the HELLO read from fd with WELCOME (version 2, SHM) and the SHM
// frame, region's descriptor with them in one sendmsg, as logsinkd does.
bool HandRegion(int fd, int region, const ls_shm_geom &g) {
  std::vector<uint8_t> buf;
  ls_frame f;
  if (!ReadFrameWithin(fd, &buf, &f) || f.type != LS_F_HELLO) return false;
  uint8_t out[128];
  ls_welcome w = {2, LS_CAP_SHM, "", 0};
  ptrdiff_t n = ls_welcome_encode(out, sizeof out, &w);
  if (n <= 0) return false;
  ptrdiff_t m = ls_shm_encode(out + n, sizeof out - size_t(n), &g);
  if (m <= 0) return false;
  return SendWithFd(fd, out, size_t(n + m), region);
}

// A thread's stack filled with a pattern, and how much of it the thread
// used (the bytes from the low end up to the first one it changed).
struct PaintedStack {
  static constexpr size_t kBytes = 256 * 1024;
  static constexpr uint8_t kPaint = 0xa5;
  std::vector<uint8_t> bytes = std::vector<uint8_t>(kBytes, kPaint);
  size_t Used() const {
    auto it = std::find_if(bytes.begin(), bytes.end(), [](uint8_t b) { return b != kPaint; });
    return size_t(bytes.end() - it);
  }
};

// Runs fn(arg) on a new thread whose stack is st; returns st->Used() (the
// thread's descriptor and TLS, which glibc puts at the top of such a
// stack, included).
size_t OnPaintedStack(void *(*fn)(void *), void *arg, PaintedStack *st) {
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_t t;
  EXPECT_EQ(pthread_attr_setstack(&a, st->bytes.data(), st->bytes.size()), 0);
  EXPECT_EQ(pthread_create(&t, &a, fn, arg), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&a);
  return st->Used();
}

void *Quiet(void *) { return nullptr; }
void *FirstCall(void *c) {
  // A site never called before, on a thread that never logged: the call
  // takes the slow path (the site into the region's log, a slot for the
  // thread's ring).
  LS_LOG(static_cast<ls_client *>(c), LS_INFO, "from a small stack %d %s %f", 1, "two", 3.0);
  return nullptr;
}

struct Handed {
  uint8_t first_records = 0;  // LS_F_RECORDS or LS_F_RECORDS_AT: how the first record came
  int shared = -1;            // ls_stats.shared after it
  uint64_t log_len = 0;       // the site log's published length at the end
};

// Plays the daemon for one client that logs one record and flushes: hands
// it a region of the right size (geometry g), sealed or not, and reports
// how the record came (an unsealed region is refused on its seals alone).
Handed HandAndLog(bool seal, const std::function<void(ls_client *)> &more = nullptr,
                  const ls_shm_geom &g = kGeom) {
  TempDir dir;
  const std::string path = dir / "d.sock";
  int lfd = ListenUnix(path);
  int region = Region(seal, g);
  EXPECT_GE(lfd, 0);
  EXPECT_GE(region, 0);
  Handed h;
  std::thread daemon([&] {
    int fd = AcceptWithin(lfd);
    if (fd < 0) return;
    EXPECT_TRUE(HandRegion(fd, region, g));
    std::vector<uint8_t> buf;
    ls_frame f;
    while (ReadFrameWithin(fd, &buf, &f))
      if (!h.first_records && (f.type == LS_F_RECORDS || f.type == LS_F_RECORDS_AT))
        h.first_records = f.type;
    close(fd);
  });
  ls_options o;
  ls_options_init(&o);
  ls_client *c = ls_open(path.c_str(), "region", &o);
  EXPECT_NE(c, nullptr);
  if (c) {
    LS_LOG(c, LS_INFO, "one record %d", 1);
    EXPECT_EQ(ls_flush(c), 0);
    ls_stats st = {};
    st.size = sizeof st;
    EXPECT_EQ(ls_get_stats(c, &st), 0);
    h.shared = st.shared;
    if (more) more(c);
    ls_close(c);  // EOF: the thread's read loop ends
  }
  daemon.join();
  EXPECT_EQ(pread(region, &h.log_len, sizeof h.log_len, 0), ssize_t(sizeof h.log_len));
  close(region);
  close(lfd);
  return h;
}

TEST(ClientRegion, ASealedRegionIsUsed) {
  Handed h = HandAndLog(true);
  EXPECT_EQ(h.shared, 1);
  EXPECT_EQ(h.first_records, LS_F_RECORDS_AT);
  EXPECT_GT(h.log_len, 0u);  // the site's INTERN, for a daemon that reads it after a kill
}

// A site whose INTERN does not fit what is left of the site log is
// written in place and then not published: the log's length stays where
// it was (a daemon never reads a part of a frame), and the record still
// goes through the region (its INTERN goes on the socket as always).
TEST(ClientRegion, ASiteThatDoesNotFitTheSiteLogIsNotPublished) {
  Handed h = HandAndLog(true, nullptr, ls_shm_geom{4, 256 * 1024, 64});
  EXPECT_EQ(h.shared, 1);
  EXPECT_EQ(h.first_records, LS_F_RECORDS_AT);
  EXPECT_EQ(h.log_len, 0u);
}

TEST(ClientRegion, ARegionThatCanShrinkIsNeverMapped) {
  Handed h = HandAndLog(false);
  EXPECT_EQ(h.shared, 0);
  EXPECT_EQ(h.first_records, LS_F_RECORDS);
}

// A program may run threads on small stacks (PTHREAD_STACK_MIN is 16
// KiB). A site's first call writes the site into the region's log in
// place: it once built the frame on the calling thread's stack (14.4 KB).
TEST(ClientRegion, ASitesFirstCallFitsASmallThreadStack) {
  size_t quiet = 0, logging = 0;
  Handed h = HandAndLog(true, [&](ls_client *c) {
    PaintedStack a, b;
    quiet = OnPaintedStack(Quiet, nullptr, &a);
    logging = OnPaintedStack(FirstCall, c, &b);
    EXPECT_EQ(ls_flush(c), 0);
    ls_stats st = {};
    st.size = sizeof st;
    EXPECT_EQ(ls_get_stats(c, &st), 0);
    EXPECT_EQ(st.shared, 1);  // the call went through the region
  });
  EXPECT_EQ(h.shared, 1);
  // What the call itself used, beyond a thread that does nothing.
  const size_t used = logging - std::min(logging, quiet);
  printf("a thread that does nothing: %zu bytes; the first call of a site: %zu bytes more\n", quiet,
         used);
  // Measured: 1.1 KB (14.3 KB before); under ASan about 1 KB beyond its
  // own thread start.
  EXPECT_GT(used, 0u);
  EXPECT_LT(used, size_t(6144));
}

// Where this process maps the region the test daemon handed (the memfd's
// name in /proc/self/maps), or nullptr.
void *RegionAddress() {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return nullptr;
  char line[512];
  void *at = nullptr;
  while (!at && fgets(line, sizeof line, f))
    if (strstr(line, "memfd:client_region_test"))
      at = reinterpret_cast<void *>(strtoul(line, nullptr, 16));
  fclose(f);
  return at;
}

// A thread logs through a region, the client is closed (the thread's ring
// of it waits in the thread's list for its next call), then the thread
// forks. The child has no mapping at the region's address (MADV_DONTFORK)
// and puts one of its own there; its next call drops the closed client's
// ring, which must not unmap the child's memory.
TEST(ClientRegion, AForkChildNeverUnmapsItsParentsRegion) {
  void *at = nullptr;
  size_t bytes = ls_shm_region_bytes(kGeom.slots, kGeom.slot_bytes, kGeom.sites_bytes);
  bytes = (bytes + 4095) & ~size_t(4095);
  Handed h = HandAndLog(true, [&](ls_client *) { at = RegionAddress(); });
  ASSERT_EQ(h.shared, 1);
  ASSERT_NE(at, nullptr);
  fflush(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    void *mine = mmap(at, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (mine != at) _exit(2);  // the parent's mapping is there: not the case tested
    memset(mine, 0x5a, bytes);
    ls_client *c = ls_open("/nonexistent/logsink.sock", "child", nullptr);
    if (!c) _exit(3);
    LS_LOG(c, LS_INFO, "in the child %d", 1);  // drops the closed client's ring
    const volatile uint8_t *p = static_cast<const uint8_t *>(mine);
    const int intact = p[0] == 0x5a && p[bytes - 1] == 0x5a;  // SIGSEGV if unmapped
    _exit(intact ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// How long a thread's first call takes while the daemon has the
// connection in its backlog and answers nothing.
double FirstCallMs(int blocking) {
  TempDir dir;
  const std::string path = dir / "d.sock";
  int lfd = ListenUnix(path);
  EXPECT_GE(lfd, 0);
  ls_options o;
  ls_options_init(&o);
  o.blocking = blocking;
  o.send_timeout_ms = 1000;  // the sender waits this long for the WELCOME
  ls_client *c = ls_open(path.c_str(), "region", &o);
  EXPECT_NE(c, nullptr);
  double ms = -1;
  if (c) {
    auto t0 = std::chrono::steady_clock::now();
    LS_LOG(c, LS_INFO, "first %d", 1);
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ls_close(c);
  }
  close(lfd);
  return ms;
}

// Behaviour bounds, not performance: the wait is a futex wait with a
// deadline, so it never ends early, and it ends at the cap well before the
// 1 s the sender would wait.
TEST(ClientRegion, AThreadsFirstCallWaitsForTheRegionAtMostAQuarterSecond) {
  double ms = FirstCallMs(LS_BLOCK_WHILE_DRAINING);  // the default
  EXPECT_GE(ms, 249.0);
  EXPECT_LT(ms, 900.0);
}

TEST(ClientRegion, ACallThatNeverBlocksDoesNotWaitForTheRegion) {
  double ms = FirstCallMs(LS_BLOCK_NEVER);
  EXPECT_GE(ms, 0.0);
  EXPECT_LT(ms, 200.0);
}

}  // namespace
}  // namespace logsink::test
