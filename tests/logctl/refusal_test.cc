// refusal_test.cc: a daemon past its connection limits answers a new
// connection with REFUSE and closes it before reading anything (PROTOCOL.md,
// "Errors"), so a client's request may meet a closed socket (EPIPE) with the
// REFUSE already waiting. Every client of logctl's (stats' query, the ring
// query, a read through the daemon, send's and run's text streams) must
// still give the daemon's reason, however the race between its request and
// the daemon's close falls. A peer of the test's refuses many connections
// in a row, as logsinkd does.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>
#include <thread>

#include "common/temp_dir.h"
#include "common/unix_socket.h"
#include "logctl/daemon_read.h"
#include "logctl/daemon_stats.h"
#include "logctl/text_stream.h"
#include "logsink/proto/frame.h"
#include "proto/wire_encoder.h"

namespace logsink::test {
namespace {

constexpr int kRounds = 60;
const char kReason[] = "uid 1000 holds max_connections_per_uid (64)";

class Refusing : public ::testing::Test {
 protected:
  void SetUp() override {
    lfd_ = ListenUnix(path_, 64);
    ASSERT_GE(lfd_, 0);
  }
  void TearDown() override {
    if (lfd_ >= 0) close(lfd_);
  }
  // Runs client kRounds times against a peer that, like logsinkd past a
  // limit, writes REFUSE at once and closes without reading; client
  // returns the reason it gives. Expects the daemon's reason every time.
  void ExpectReasonEveryTime(const std::string &want, const std::function<std::string()> &client) {
    std::thread peer([this] {
      const std::string refuse = Refuse(LS_PROTO_VERSION, kReason);
      for (int i = 0; i < kRounds; i++) {
        int fd = accept(lfd_, nullptr, nullptr);
        if (fd < 0) return;
        (void)!send(fd, refuse.data(), refuse.size(), MSG_NOSIGNAL);
        close(fd);
      }
    });
    int wrong = 0;
    std::string example;
    for (int i = 0; i < kRounds; i++) {
      std::string got = client();
      if (got != want) {
        wrong++;
        example = got;
      }
    }
    peer.join();
    EXPECT_EQ(wrong, 0) << "of " << kRounds << " refused connections, for example: " << example;
  }
  TempDir dir_{"logsink-refuse"};
  std::string path_ = dir_.File("sock");
  int lfd_ = -1;
};

TEST_F(Refusing, StatsQuerySaysWhy) {
  ExpectReasonEveryTime(std::string("the daemon refused: ") + kReason, [&] {
    logctl::StatList stats;
    logctl::DaemonRing ring;
    std::string why;
    int rc = logctl::QueryDaemonStatsAndRing(path_, 5000, &stats, &ring, &why);
    return rc == -EPROTO ? why : "rc " + std::to_string(rc) + ": " + why;
  });
}

TEST_F(Refusing, RingQuerySaysWhy) {
  ExpectReasonEveryTime(std::string("the daemon refused: ") + kReason, [&] {
    logctl::DaemonRing ring;
    std::string why;
    int rc = logctl::QueryDaemonRing(path_, 5000, &ring, &why);
    return rc == -EPROTO ? why : "rc " + std::to_string(rc) + ": " + why;
  });
}

TEST_F(Refusing, ReadThroughTheDaemonSaysWhy) {
  ExpectReasonEveryTime(std::string("IOError: the daemon refused the read: ") + kReason, [&] {
    logctl::DaemonSource src(path_, {}, false, nullptr);
    storage::Record rec;
    storage::Status s = src.SeekOldest();
    if (s.ok()) s = src.Next(&rec);
    return s.ToString();
  });
}

TEST_F(Refusing, TextStreamSaysWhy) {
  ExpectReasonEveryTime(std::string("the daemon refused: ") + kReason, [&] {
    std::string why;
    int fd = logctl::OpenTextStream(path_, "t", ls_hello_text_flags(6, 1, LS_HELLO_STREAM_TEXT, 0),
                                    5000, &why);
    if (fd >= 0) close(fd);
    return why;
  });
}

}  // namespace
}  // namespace logsink::test
