// forward_unit_test.cc: the forwarder's parts that need no server: cursor
// strings and files, RFC 5424 formatting, address and option parsing.
#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "cursor_file.h"
#include "nats_sink.h"
#include "options.h"
#include "relp_sink.h"
#include "rfc5424.h"

namespace logsink::test {
namespace {

using namespace logsink::forward;

TEST(CursorFile, WritesAtomicallyAndReadsBack) {
  TempDir dir;
  std::string err;
  Position p;
  EXPECT_EQ(ReadPosition(dir / "c", &p, &err), 0);
  ASSERT_TRUE(WritePosition(dir / "c", Position{"00ff", 42}, &err)) << err;
  ASSERT_EQ(ReadPosition(dir / "c", &p, &err), 1) << err;
  EXPECT_EQ(p.ring_id, "00ff");
  EXPECT_EQ(p.next_seq, 42u);
  EXPECT_EQ(ReadFile(dir / "c"), "logsink-forward-cursor 1 00ff 42\n");
  WriteFile(dir / "bad", "hello\n");
  EXPECT_EQ(ReadPosition(dir / "bad", &p, &err), -1);
  EXPECT_NE(err.find("not a logsink-forward cursor file"), std::string::npos) << err;
}

TEST(Rfc5424, FormatsHeaderStructuredDataAndEscapes) {
  SyslogFields f;
  f.facility = 1;
  f.level = 3;
  f.ts_ns = 1700000000123456789ull;
  f.host = "h";
  f.app = "my app\x01";
  f.pid = 7;
  f.uid = 1000;
  f.gid = 100;
  f.tid = 9;
  f.sd_id = "logsink@32473";
  f.cursor = "ab:1";
  f.msg = "disk \"full\" ]";
  EXPECT_EQ(FormatRfc5424(f),
            "<11>1 2023-11-14T22:13:20.123456Z h my_app_ 7 - [logsink@32473 cursor=\"ab:1\" "
            "uid=\"1000\" gid=\"100\" tid=\"9\"] disk \"full\" ]");
  f.app = "";
  EXPECT_NE(FormatRfc5424(f).find(" h - 7 - ["), std::string::npos);
}

TEST(Addresses, ParsesNatsAndRelpUrls) {
  std::vector<std::string> servers;
  std::string err;
  ASSERT_TRUE(ParseNatsUrl("nats://a:1,b:2,nats://c:3", &servers, &err)) << err;
  EXPECT_EQ(servers, (std::vector<std::string>{"nats://a:1", "nats://b:2", "nats://c:3"}));
  for (const char *bad : {"nats://", "nats://a", "nats://a:", "nats://a:x", "relp://a:1", "a:1"})
    EXPECT_FALSE(ParseNatsUrl(bad, &servers, &err)) << bad;
  RelpOptions r;
  ASSERT_TRUE(ParseRelpUrl("relp://[::1]:514", &r, &err)) << err;
  EXPECT_EQ(r.host, "::1");
  EXPECT_EQ(r.port, "514");
  EXPECT_FALSE(ParseRelpUrl("relp://host", &r, &err));
}

std::string ParseError(std::vector<std::string> args) {
  std::vector<char *> argv = {const_cast<char *>("logsink-forward")};
  for (auto &a : args) argv.push_back(a.data());
  Options o;
  std::string err;
  if (!ParseArgs(int(argv.size()), argv.data(), &o, &err)) return err;
  if (!Finish(&o, &err)) return err;
  return "";
}

TEST(Options, ChecksCombinationsAndValues) {
  EXPECT_EQ(ParseError({"--to", "nats://h:1", "--subject", "s", "--cursor-file", "c"}), "");
  EXPECT_NE(ParseError({"--to", "nats://h:1", "--cursor-file", "c"}).find("--subject"),
            std::string::npos);
  EXPECT_NE(
      ParseError({"--to", "relp://h:1", "--subject", "s", "--cursor-file", "c"}).find("apply only"),
      std::string::npos);
  EXPECT_NE(ParseError({"--to", "http://h:1", "--cursor-file", "c"}).find("nats:// or relp://"),
            std::string::npos);
  EXPECT_NE(ParseError({"--to", "relp://h:1"}).find("--cursor-file"), std::string::npos);
  EXPECT_NE(
      ParseError({"--to", "relp://h:1", "--cursor-file", "c", "--level", "loud"}).find("--level"),
      std::string::npos);
  EXPECT_NE(
      ParseError({"--to", "relp://h:1", "--cursor-file", "c", "--window", "0"}).find("--window"),
      std::string::npos);
}

TEST(Options, TomlFileAndFlagsOverride) {
  TempDir dir;
  WriteFile(dir / "f.toml",
            "[forward]\nto = \"relp://h:1\"\ncursor_file = \"/x/c\"\napp = [\"a\", \"b\"]\n"
            "window = 7\nack_timeout = \"2s\"\nlevel = \"warning\"\n");
  std::string cfg = dir / "f.toml";
  std::vector<std::string> args = {"--config", cfg, "--window", "9"};
  std::vector<char *> argv = {const_cast<char *>("logsink-forward")};
  for (auto &a : args) argv.push_back(a.data());
  Options o;
  std::string err;
  ASSERT_TRUE(ParseArgs(int(argv.size()), argv.data(), &o, &err)) << err;
  ASSERT_TRUE(Finish(&o, &err)) << err;
  EXPECT_EQ(o.to, "relp://h:1");
  EXPECT_EQ(o.apps, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.window, 9);
  EXPECT_EQ(o.ack_timeout_ms, 2000u);
  EXPECT_EQ(o.max_level, 4);
  WriteFile(dir / "g.toml", "[forward]\ncolour = \"red\"\n");
  Options o2;
  std::string g = dir / "g.toml";
  std::vector<std::string> args2 = {"--config", g};
  std::vector<char *> argv2 = {const_cast<char *>("logsink-forward")};
  for (auto &a : args2) argv2.push_back(a.data());
  EXPECT_FALSE(ParseArgs(int(argv2.size()), argv2.data(), &o2, &err));
  EXPECT_NE(err.find(":2: forward.colour: unknown key"), std::string::npos) << err;
}

}  // namespace
}  // namespace logsink::test
