// client_encode_test.cc: liblogsink's argument encoder without a daemon:
// every row of formats.h is encoded as a call would encode it, decoded with
// proto/args.h and rendered, and must equal snprintf of the same format and
// arguments; plus truncation, precision on unterminated arrays, refused formats
// and the default of ls_options.blocking.
#include <errno.h>
#include <gtest/gtest.h>
#include <locale.h>
#include <logsink/logsink.h>

#include <cstdarg>
#include <string>

#include "formats.h"
#include "render_ref.h"
#include "testing.h"

namespace logsink::test {
namespace {

struct Encoded {
  int rc = 0;
  std::string bytes;
  uint64_t trunc = 0;
};

Encoded EncodeCap(size_t cap, int saved_errno, const char *fmt, ...) {
  Encoded e;
  std::string buf(cap, '\0');
  size_t len = 0;
  va_list ap;
  va_start(ap, fmt);
  e.rc = ls__test_encode(fmt, saved_errno, reinterpret_cast<uint8_t *>(buf.data()), cap, &len,
                         &e.trunc, ap);
  va_end(ap);
  e.bytes = buf.substr(0, len);
  return e;
}

#define ENCODE(fmt, ...) EncodeCap(65536, ENOENT, fmt, __VA_ARGS__)

class EncodeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(setlocale(LC_ALL, "C.UTF-8"), nullptr); }
};

TEST_F(EncodeTest, EveryFormatRendersLikeSnprintf) {
  int rows = 0;
#define ROW(fmt, ...)                                               \
  do {                                                              \
    SCOPED_TRACE(fmt);                                              \
    Encoded e = ENCODE(fmt, __VA_ARGS__);                           \
    ASSERT_EQ(e.rc, 0);                                             \
    EXPECT_EQ(e.trunc, 0u);                                         \
    auto args = DecodeArgs(fmt, e.bytes);                           \
    ASSERT_TRUE(args.has_value()) << "argument bytes do not parse"; \
    auto got = Render(fmt, *args);                                  \
    ASSERT_TRUE(got.has_value());                                   \
    errno = ENOENT;                                                 \
    EXPECT_EQ(*got, Snprintf(fmt, __VA_ARGS__));                    \
    rows++;                                                         \
  } while (0);
  LS_TEST_FORMATS_BEGIN
  LS_TEST_FORMATS(ROW)
  LS_TEST_FORMATS_END
#undef ROW
  EXPECT_GE(rows, 25);
}

TEST_F(EncodeTest, IntegersUseTheModifiersCType) {
  // %hhd of 300 is (signed char)300 = 44; %hu of 70000 is 4464; zigzag varints.
  Encoded e = ENCODE("%hhd %hu %d %llu", 300, 70000, -1, 300ULL);
  ASSERT_EQ(e.rc, 0);
  const std::string want = std::string("\x58", 1) + "\xf0\x22" + "\x01" + "\xac\x02";
  EXPECT_EQ(e.bytes, want);
}

TEST_F(EncodeTest, NullStringIsSentAsNullText) {
  Encoded e = ENCODE("%s", kNullStr);
  EXPECT_EQ(e.bytes, std::string("\x06(null)"));
}

TEST_F(EncodeTest, PrecisionReadsNoFurtherThanItAllows) {
  const char raw[3] = {'a', 'b', 'c'};  // not NUL-terminated: valid with %.3s
  Encoded e = ENCODE("%.3s|%.*s", raw, 2, raw);
  ASSERT_EQ(e.rc, 0);
  EXPECT_EQ(e.bytes, std::string("\x03"
                                 "abc"
                                 "\x04"
                                 "\x02"
                                 "ab",
                                 8));
}

TEST_F(EncodeTest, ErrnoIsTheOneCapturedAtTheCall) {
  Encoded e = EncodeCap(1024, EACCES, "%m", 0);
  auto args = DecodeArgs("%m", e.bytes);
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(std::string(reinterpret_cast<const char *>((*args)[0].s), (*args)[0].len),
            strerror(EACCES));
}

TEST_F(EncodeTest, LongStringsAreCutToTheBudgetAtACharacterBoundary) {
  std::string s = "ab";
  for (int i = 0; i < 100; i++) s += "\u00e9";  // 2-byte characters
  Encoded e = EncodeCap(64, 0, "%d %s %d", 1, s.c_str(), 2);
  ASSERT_EQ(e.rc, 0);
  EXPECT_LE(e.bytes.size(), 64u);
  auto args = DecodeArgs("%d %s %d", e.bytes);
  ASSERT_TRUE(args.has_value());
  const ls_arg &a = (*args)[1];
  EXPECT_EQ(a.len + e.trunc, s.size());
  EXPECT_GT(e.trunc, 0u);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(a.s), a.len), s.substr(0, a.len));
  EXPECT_NE(static_cast<uint8_t>(s[a.len]) & 0xC0, 0x80) << "cut inside a UTF-8 sequence";
  EXPECT_EQ(int64_t((*args)[2].u), 2);

  // Wide strings too: whole characters only.
  std::wstring w(100, L'\u00e9');
  Encoded we = EncodeCap(40, 0, "%ls", w.c_str());
  auto wargs = DecodeArgs("%ls", we.bytes);
  ASSERT_TRUE(wargs.has_value());
  EXPECT_EQ((*wargs)[0].len % 2, 0u);
  EXPECT_EQ((*wargs)[0].len + we.trunc, 200u);
}

TEST_F(EncodeTest, RefusedFormatsAreErrors) {
  int n = 0;
  EXPECT_EQ(EncodeCap(64, 0, "%1$d", 1).rc, -EINVAL);
  EXPECT_EQ(EncodeCap(64, 0, "%k", 1).rc, -EINVAL);
  EXPECT_EQ(EncodeCap(64, 0, "trailing %", 1).rc, -EINVAL);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
  EXPECT_EQ(EncodeCap(64, 0, "%n", &n).rc, -EINVAL);
#pragma GCC diagnostic pop
  EXPECT_EQ(n, 0);
}

// logsink.h's opening paragraph and ls_options: by default a call whose
// buffer is full waits for space while the daemon reads (it does not drop),
// for at most block_timeout_ms.
TEST(Options, DefaultWaitsWhileTheDaemonDrains) {
  ls_options o;
  ls_options_init(&o);
  EXPECT_EQ(o.blocking, LS_BLOCK_WHILE_DRAINING);
  EXPECT_EQ(o.block_timeout_ms, 1000u);
}

}  // namespace
}  // namespace logsink::test
