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
#include "logsink/proto/frame_encode.h"
#include "logsink/proto/wire.h"

namespace logsink::test {
namespace {

TEST(CxxOldDaemon, ADaemonWithoutBracesGetsAPrintfFormatOfTheSameValues) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  const std::string path = dir / "old.sock";
  const int lfd = ListenUnix(path);
  ASSERT_GE(lfd, 0);
  ls_client *c = ls_open(path.c_str(), "cxx", nullptr);
  ASSERT_NE(c, nullptr);
  const int fd = AcceptWithin(lfd);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> buf;
  ls_frame f;
  ASSERT_TRUE(ReadFrameWithin(fd, &buf, &f));
  ASSERT_EQ(f.type, LS_F_HELLO);
  ls_hello h;
  ASSERT_EQ(ls_hello_decode(f.payload, f.len, &h), 0);
  EXPECT_TRUE(h.caps & LS_CAP_BRACES);
  // The previous release's answer: every capability but BRACES.
  uint8_t out[64];
  ls_welcome w = {2, LS_CAP_LEVELS | LS_CAP_CENSUS | LS_CAP_FIELDS, "", 0};
  const ptrdiff_t n = ls_welcome_encode(out, sizeof out, &w);
  ASSERT_GT(n, 0);
  ASSERT_EQ(send(fd, out, size_t(n), MSG_NOSIGNAL), n);

  LS_FMT(c, LS_INFO, "100% {} took {:.3f} s" LS_FIELDS("user={} ok={}"), std::string("GET"), 0.5,
         "alice", true);
  ASSERT_EQ(ls_flush(c), 0);

  std::string fmt;
  bool records = false;
  while (!records && ReadFrameWithin(fd, &buf, &f)) {
    if (f.type == LS_F_INTERN) {
      ls_intern in{};
      ASSERT_EQ(ls_intern_decode(f.payload, f.len, &in), 0);
      fmt.assign(in.fmt, in.fmt_len);
      EXPECT_TRUE(in.fields);
    }
    records = f.type == LS_F_RECORDS;
  }
  ASSERT_TRUE(records);
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
  close(fd);
  close(lfd);
}

}  // namespace
}  // namespace logsink::test
