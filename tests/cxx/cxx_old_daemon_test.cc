// cxx_old_daemon_test.cc: LS_FMT against a daemon that does not take brace
// formats (its WELCOME without BRACES: a release before them), played by the
// test: the site is interned as a printf format of the same signature (its
// text with '%' doubled, then one conversion per value, PROTOCOL.md "Brace
// formats"), which that daemon accepts, and the record's arguments decode
// by it to the values logged, so nothing is lost.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <logsink/logsink.hpp>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/temp_dir.h"
#include "common/unix_socket.h"
#include "logsink/proto/args.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/frame_encode.h"
#include "logsink/proto/wire.h"

namespace logsink::test {
namespace {

// The previous release's daemon on `path`, played by the test: accepts
// the client's connection, reads its HELLO (which offers BRACES) and
// answers with every capability but BRACES.
struct OldDaemon {
  int lfd = -1, fd = -1;
  std::vector<uint8_t> buf;
  ls_frame f{};
  ~OldDaemon() {
    if (fd >= 0) close(fd);
    if (lfd >= 0) close(lfd);
  }
  void Welcome() {
    fd = AcceptWithin(lfd);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(ReadFrameWithin(fd, &buf, &f));
    ASSERT_EQ(f.type, LS_F_HELLO);
    ls_hello h;
    ASSERT_EQ(ls_hello_decode(f.payload, f.len, &h), 0);
    EXPECT_TRUE(h.caps & LS_CAP_BRACES);
    uint8_t out[64];
    ls_welcome w = {2, LS_CAP_LEVELS | LS_CAP_CENSUS | LS_CAP_FIELDS, "", 0};
    const ptrdiff_t n = ls_welcome_encode(out, sizeof out, &w);
    ASSERT_GT(n, 0);
    ASSERT_EQ(send(fd, out, size_t(n), MSG_NOSIGNAL), n);
  }
  // Reads up to the first RECORDS frame (left in f); *fmt gets the last
  // INTERN's format.
  void NextRecords(std::string *fmt, bool *fields) {
    bool records = false;
    while (!records && ReadFrameWithin(fd, &buf, &f)) {
      if (f.type == LS_F_INTERN) {
        ls_intern in{};
        ASSERT_EQ(ls_intern_decode(f.payload, f.len, &in), 0);
        fmt->assign(in.fmt, in.fmt_len);
        *fields = in.fields;
      }
      records = f.type == LS_F_RECORDS;
    }
    ASSERT_TRUE(records);
  }
};

TEST(CxxOldDaemon, ADaemonWithoutBracesGetsAPrintfFormatOfTheSameValues) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  const std::string path = dir / "old.sock";
  OldDaemon d;
  d.lfd = ListenUnix(path);
  ASSERT_GE(d.lfd, 0);
  ls_client *c = ls_open(path.c_str(), "cxx", nullptr);
  ASSERT_NE(c, nullptr);
  ASSERT_NO_FATAL_FAILURE(d.Welcome());

  LS_FMT(c, LS_INFO, "100% {} took {:.3f} s" LS_FIELDS("user={} ok={}"), std::string("GET"), 0.5,
         "alice", true);
  ASSERT_EQ(ls_flush(c), 0);

  std::string fmt;
  bool fields = false;
  ASSERT_NO_FATAL_FAILURE(d.NextRecords(&fmt, &fields));
  EXPECT_TRUE(fields);
  const ls_frame &f = d.f;
  EXPECT_EQ(fmt, std::string("100%% {} took {:.3f} s %s %g\x1f") + "user=%s ok:bool=%llu");
  // The record's arguments, after tid, site and time, by that format's
  // signature: the values as logged.
  char sig[LS_FMT_MAX_ARGS + 1];
  ASSERT_EQ(ls_fmt_signature(fmt.data(), fmt.size(), sig, sizeof sig), 4);
  EXPECT_STREQ(sig, "sfsu");
  const uint8_t *p = f.payload, *end = f.payload + f.len;
  uint64_t v;
  for (int k = 0; k < 3; k++) {  // tid, site << 1 | trunc, ts delta
    const size_t used = ls_get_varint(p, end, &v);
    ASSERT_GT(used, 0u);
    p += used;
  }
  ls_arg a[4];
  for (int k = 0; k < 4; k++) {
    const size_t used = ls_arg_get(sig[k], p, end, &a[k]);
    ASSERT_GT(used, 0u) << k;
    p += used;
  }
  EXPECT_EQ(p, end);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(a[0].s), a[0].len), "GET");
  EXPECT_EQ(a[1].f, 0.5);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(a[2].s), a[2].len), "alice");
  EXPECT_EQ(a[3].u, 1u);
  ls_close(c);
}

// The longest brace format the client takes (4 bytes of room per
// argument), its text all '%' (each doubled in the printf form) and its
// one argument unsigned (" %llu", 5 bytes): the printf form is cut to fit
// an INTERN, and the value still arrives (an outside review found the
// form written past its buffer here).
TEST(CxxOldDaemon, TheLongestBraceFormatsPrintfFormFitsAnIntern) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  const std::string path = dir / "old.sock";
  OldDaemon d;
  d.lfd = ListenUnix(path);
  ASSERT_GE(d.lfd, 0);
  ls_client *c = ls_open(path.c_str(), "cxx", nullptr);
  ASSERT_NE(c, nullptr);
  ASSERT_NO_FATAL_FAILURE(d.Welcome());
  const std::string head = "\x1eu\x1e", tail = "{}";
  const std::string big =
      head + std::string(LS_INTERN_MAX_FMT - 4 - head.size() - tail.size(), '%') + tail;
  ASSERT_EQ(big.size() + 4, size_t(LS_INTERN_MAX_FMT));
  const std::string too_big = "\x1eu\x1e%" + big.substr(head.size());
  ls_stats st{};
  st.size = sizeof st;
  ASSERT_EQ(ls_get_stats(c, &st), 0);
  const uint64_t errors = st.errors;
  EXPECT_EQ(ls_log(c, LS_INFO, too_big.c_str(), 1ULL), -EINVAL);  // refused
  ASSERT_EQ(ls_get_stats(c, &st), 0);
  EXPECT_EQ(st.errors, errors + 1);
  EXPECT_EQ(ls_log(c, LS_INFO, big.c_str(), 4242ULL), 0);
  ASSERT_EQ(ls_flush(c), 0);
  std::string fmt;
  bool fields = true;
  ASSERT_NO_FATAL_FAILURE(d.NextRecords(&fmt, &fields));
  EXPECT_FALSE(fields);
  EXPECT_LE(fmt.size(), size_t(LS_INTERN_MAX_FMT));
  EXPECT_GT(fmt.size(), size_t(LS_INTERN_MAX_FMT) - 8);
  // The text cut (its '%'s doubled, whole), then the conversion.
  ASSERT_GE(fmt.size(), 5u);
  EXPECT_EQ(fmt.substr(fmt.size() - 5), " %llu");
  const std::string text = fmt.substr(0, fmt.size() - 5);
  EXPECT_EQ(text.find_first_not_of('%'), std::string::npos);
  EXPECT_EQ(text.size() % 2, 0u);
  char sig[LS_FMT_MAX_ARGS + 1];
  ASSERT_EQ(ls_fmt_signature(fmt.data(), fmt.size(), sig, sizeof sig), 1);
  EXPECT_STREQ(sig, "u");
  // The record: tid, site, time, then the value.
  const uint8_t *p = d.f.payload, *end = d.f.payload + d.f.len;
  uint64_t v = 0;
  for (int k = 0; k < 4; k++) {
    const size_t used = ls_get_varint(p, end, &v);
    ASSERT_GT(used, 0u);
    p += used;
  }
  EXPECT_EQ(v, 4242u);
  EXPECT_EQ(p, end);
  ls_close(c);
}

}  // namespace
}  // namespace logsink::test
