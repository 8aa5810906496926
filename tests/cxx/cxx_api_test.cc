// cxx_api_test.cc: LS_FMT (client/include/logsink/logsink.hpp) through the
// real logsinkd, read back by the real logctl: every record's message is
// what fmt::format prints for the same format and values, fields come
// typed, a type with arg_traits logs as what it converts to, a string past
// max_record_bytes is cut as LS_LOG cuts it, a burst lands whole and in
// order, and a call below the client's level produces nothing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <logsink/logsink.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client/client_harness.h"
#include "common/process.h"

namespace geo {
struct Point {
  int x, y;
};
enum class Color : uint8_t { red = 1, green = 2 };
}  // namespace geo

template <>
struct logsink::arg_traits<geo::Point> {
  static std::string convert(const geo::Point &p) { return fmt::format("({}, {})", p.x, p.y); }
};

namespace logsink::test {
namespace {

using json = nlohmann::json;

std::vector<json> ReadJson(const std::string &ring, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--file", ring, "-o", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  ProcResult r = RunProcess(BinPath("logctl"), args);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<json> out;
  for (const std::string &line : Lines(r.out)) out.push_back(json::parse(line));
  return out;
}

TEST(CxxApi, RecordsRenderAsFmtPrintsThem) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  ClientDaemon daemon(dir);
  ASSERT_TRUE(daemon.Start()) << daemon.Stderr();
  ls_options o;
  ls_options_init(&o);
  o.level = LS_INFO;  // LS_DEBUG calls produce nothing
  ls_client *c = ls_open(daemon.socket.c_str(), "cxx", &o);
  ASSERT_NE(c, nullptr);

  const std::string user = "alice";
  const std::string_view path = "/index.html";
  const char *host = "example.org";
  const int neg = -42;
  const unsigned long long big = 18446744073709551615ull;
  int local = 0;
  std::vector<std::string> want;
  const int first_line = __LINE__ + 1;
  LS_FMT(c, LS_INFO, "GET {} took {:.3f} s", path, 0.0125);
  want.push_back(fmt::format("GET {} took {:.3f} s", path, 0.0125));
  LS_FMT(c, LS_WARNING, "{:>8}|{:<6}|{:^7}|{:+}|{:#x}|{:08.2f}", neg, user, true, 5, big, -3.5);
  want.push_back(
      fmt::format("{:>8}|{:<6}|{:^7}|{:+}|{:#x}|{:08.2f}", neg, user, true, 5, big, -3.5));
  LS_FMT(c, LS_ERR, "{1} before {0}, {2} {3} {4}", host, 'c', 0.1f, 1e300, 0.1);
  want.push_back(fmt::format("{1} before {0}, {2} {3} {4}", host, 'c', 0.1f, 1e300, 0.1));
  LS_FMT(c, LS_INFO, "point {} color {} width {:{}}|", geo::Point{3, -4}, geo::Color::green, 7, 5);
  want.push_back(fmt::format("point {} color {} width {:{}}|", "(3, -4)", 2, 7, 5));
  LS_FMT(c, LS_INFO, "ptr {} null {}", static_cast<void *>(&local), nullptr);
  want.push_back(fmt::format("ptr {} null {}", static_cast<const void *>(&local),
                             static_cast<const void *>(nullptr)));
  LS_FMT(c, LS_NOTICE, "no arguments, {{braces}} and 100%");
  want.push_back("no arguments, {braces} and 100%");
  LS_FMT(c, LS_INFO, "disk {} full" LS_FIELDS("user={} req={} ok={} ratio={}"), "sda", user,
         uint64_t(7), true, 0.5);
  want.push_back("disk sda full");
  LS_FMT(c, LS_DEBUG, "below the level: never logged");
  ASSERT_EQ(ls_flush(c), 0);
  ls_close(c);

  std::vector<json> got;
  WaitUntil(
      [&] {
        got = ReadJson(daemon.ring);
        return got.size() >= want.size();
      },
      kHang, Ms(10));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) EXPECT_EQ(got[i]["msg"], want[i]) << got[i].dump();
  EXPECT_EQ(got[0]["fmt"], "GET {} took {:.3f} s");
  EXPECT_EQ(got[0]["priority"], LS_INFO);
  EXPECT_EQ(got[0]["line"], first_line);
  EXPECT_EQ(got.back()["fields"], json::parse(R"({"user":"alice","req":7,"ok":true,"ratio":0.5})"))
      << got.back().dump();
  // Matched by field, as any record.
  std::vector<json> by_field = ReadJson(daemon.ring, {"user=alice"});
  ASSERT_EQ(by_field.size(), 1u);
  EXPECT_EQ(by_field[0]["msg"], "disk sda full");
}

TEST(CxxApi, ALongStringIsCutAsLsLogCutsIt) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  ClientDaemon daemon(dir);
  ASSERT_TRUE(daemon.Start()) << daemon.Stderr();
  ls_options o;
  ls_options_init(&o);
  o.max_record_bytes = 1024;
  ls_client *c = ls_open(daemon.socket.c_str(), "cxx", &o);
  ASSERT_NE(c, nullptr);
  const std::string big(5000, 'x');
  LS_FMT(c, LS_INFO, "{} and {}", big, 12345);
  ASSERT_EQ(ls_flush(c), 0);
  ls_stats st;
  st.size = sizeof st;
  ASSERT_EQ(ls_get_stats(c, &st), 0);
  EXPECT_EQ(st.truncated, 1u);
  ls_close(c);
  std::vector<json> got;
  WaitUntil(
      [&] {
        got = ReadJson(daemon.ring);
        return !got.empty();
      },
      kHang, Ms(10));
  ASSERT_EQ(got.size(), 1u);
  const std::string msg = got[0]["msg"];
  // The string keeps what fits 1024 bytes with the integer after it.
  const size_t kept = msg.find(" and 12345");
  ASSERT_NE(kept, std::string::npos) << msg;
  EXPECT_GT(kept, 1000u);
  EXPECT_LT(kept, 1024u);
  EXPECT_EQ(msg.substr(0, kept), std::string(kept, 'x'));
  EXPECT_EQ(got[0]["truncated"], 5000 - kept) << got[0].dump();
}

TEST(CxxApi, ABurstLandsWholeAndInOrder) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  ClientDaemon daemon(dir);
  ASSERT_TRUE(daemon.Start()) << daemon.Stderr();
  ls_client *c = ls_open(daemon.socket.c_str(), "cxx", nullptr);
  ASSERT_NE(c, nullptr);
  constexpr int kN = 100000;
  for (int i = 0; i < kN; i++) LS_FMT(c, LS_INFO, "burst {} of {}", i, kN);
  ASSERT_EQ(ls_flush(c), 0);
  ls_stats st;
  st.size = sizeof st;
  ASSERT_EQ(ls_get_stats(c, &st), 0);
  EXPECT_EQ(st.dropped, 0u);
  ls_close(c);
  std::vector<OwnedRecord> v = WaitRing(daemon.ring, [&](const std::vector<OwnedRecord> &r) {
    return CountFmt(r,
                    "\x1e"
                    "ii\x1e"
                    "burst {} of {}") >= size_t(kN);
  });
  ASSERT_EQ(CountFmt(v,
                     "\x1e"
                     "ii\x1e"
                     "burst {} of {}"),
            size_t(kN));
  ProcResult r = RunProcess(BinPath("logctl"), {"--file", daemon.ring, "-o", "cat"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), size_t(kN));
  for (int i = 0; i < kN; i += 997) EXPECT_EQ(lines[i], fmt::format("burst {} of {}", i, kN));
  EXPECT_EQ(lines.back(), fmt::format("burst {} of {}", kN - 1, kN));
}

}  // namespace
}  // namespace logsink::test
