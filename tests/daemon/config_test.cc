// config_test.cc: unit tests of the config library: units, the TOML loader's
// checks (file, line and key in every error) and the printer's round trip.
#include "logsink/config/config.h"

#include <gtest/gtest.h>

#include <string>

namespace logsink::test {
namespace {

using namespace logsink::config;

TEST(Units, Sizes) {
  uint64_t n;
  ASSERT_TRUE(ParseSize("4096", &n));
  EXPECT_EQ(n, 4096u);
  ASSERT_TRUE(ParseSize("512KiB", &n));
  EXPECT_EQ(n, 512u << 10);
  ASSERT_TRUE(ParseSize("64MiB", &n));
  EXPECT_EQ(n, 64u << 20);
  ASSERT_TRUE(ParseSize("1GiB", &n));
  EXPECT_EQ(n, 1ull << 30);
  ASSERT_TRUE(ParseSize("8K", &n));
  EXPECT_EQ(n, 8192u);
  EXPECT_FALSE(ParseSize("", &n));
  EXPECT_FALSE(ParseSize("MiB", &n));
  EXPECT_FALSE(ParseSize("12XB", &n));
  ASSERT_TRUE(ParseSize("2G", &n));
  EXPECT_EQ(n, 2ull << 30);
  ASSERT_TRUE(ParseSize("3M", &n));
  EXPECT_EQ(n, 3u << 20);
  ASSERT_TRUE(ParseSize("1T", &n));
  EXPECT_EQ(n, 1ull << 40);
  // Issue 15: decimal-looking or loose units are refused, not taken as binary.
  for (const char *bad : {"1GB", "1gb", "1 G B", "1 G", "1g", "1k", "1KB", "1MB", "512B", " 1G",
                          "1G ", "1Gi", "1GIB", "1.5G", "+1G", "0x10"})
    EXPECT_FALSE(ParseSize(bad, &n)) << bad;
  EXPECT_FALSE(ParseSize("-1", &n));
  EXPECT_FALSE(ParseSize("99999999999999999999", &n));
  EXPECT_FALSE(ParseSize("17179869184GiB", &n));  // overflows 64 bits
  EXPECT_EQ(FormatSize(64u << 20), "64MiB");
  EXPECT_EQ(FormatSize(8192), "8KiB");
  EXPECT_EQ(FormatSize(1000), "1000");
}

TEST(Units, Durations) {
  uint64_t ms;
  ASSERT_TRUE(ParseDuration("100ms", &ms));
  EXPECT_EQ(ms, 100u);
  ASSERT_TRUE(ParseDuration("5s", &ms));
  EXPECT_EQ(ms, 5000u);
  ASSERT_TRUE(ParseDuration("2min", &ms));
  EXPECT_EQ(ms, 120000u);
  EXPECT_FALSE(ParseDuration("100", &ms));  // a unit is required
  ASSERT_TRUE(ParseDuration("1.5s", &ms));  // the grammar logctl reads too
  EXPECT_EQ(ms, 1500u);
  ASSERT_TRUE(ParseDuration("1h 30min", &ms));
  EXPECT_EQ(ms, 5400000u);
  EXPECT_FALSE(ParseDuration("250us", &ms));  // not whole milliseconds
  EXPECT_FALSE(ParseDuration("1s 5", &ms));   // every term needs a unit
  EXPECT_FALSE(ParseDuration("", &ms));
  EXPECT_FALSE(ParseDuration("s", &ms));
  EXPECT_EQ(FormatDuration(100), "100ms");
  EXPECT_EQ(FormatDuration(5000), "5s");
  FsyncPolicy p;
  ASSERT_TRUE(ParseFsync("block", &p, &ms));
  EXPECT_EQ(p, FsyncPolicy::kBlock);
  ASSERT_TRUE(ParseFsync("250ms", &p, &ms));
  EXPECT_EQ(p, FsyncPolicy::kInterval);
  EXPECT_EQ(ms, 250u);
  EXPECT_FALSE(ParseFsync("always", &p, &ms));
  EXPECT_FALSE(ParseFsync("0ms", &p, &ms));
}

TEST(Load, EmptyFileKeepsDefaults) {
  Config c;
  std::string err;
  ASSERT_TRUE(LoadString("", "empty.toml", &c, &err)) << err;
  EXPECT_EQ(c, Config{});
}

TEST(Load, ReadsEveryKey) {
  const char *text = R"(
[daemon]
log_level = "debug"
[socket]
path = "/tmp/x.sock"
mode = 0o660
group = "adm"
[syslog]
socket = "/tmp/x-syslog.sock"
[ring]
file = "/tmp/x.ring"
size = "1GiB"
block_size = 65536
[writer]
flush_interval = "250ms"
flush_min_interval = "20ms"
fsync = "2s"
[limits]
max_frame = "1MiB"
max_connections = 10
max_sites_per_connection = 100
stall_timeout = "3s"
read_budget = "64KiB"
max_app = 32
shutdown_timeout = "1s"
)";
  Config c;
  std::string err;
  ASSERT_TRUE(LoadString(text, "all.toml", &c, &err)) << err;
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.socket_path, "/tmp/x.sock");
  EXPECT_EQ(c.socket_mode, 0660u);
  EXPECT_EQ(c.socket_group, "adm");
  EXPECT_EQ(c.syslog_socket, "/tmp/x-syslog.sock");
  EXPECT_EQ(c.ring_file, "/tmp/x.ring");
  EXPECT_EQ(c.ring_size, 1ull << 30);
  EXPECT_EQ(c.block_size, 65536u);
  EXPECT_EQ(c.flush_interval_ms, 250u);
  EXPECT_EQ(c.flush_min_interval_ms, 20u);
  EXPECT_EQ(c.fsync, FsyncPolicy::kInterval);
  EXPECT_EQ(c.fsync_interval_ms, 2000u);
  EXPECT_EQ(c.max_frame, 1u << 20);
  EXPECT_EQ(c.max_connections, 10u);
  EXPECT_EQ(c.max_sites_per_connection, 100u);
  EXPECT_EQ(c.stall_timeout_ms, 3000u);
  EXPECT_EQ(c.read_budget, 64u << 10);
  EXPECT_EQ(c.max_app, 32u);
  EXPECT_EQ(c.shutdown_timeout_ms, 1000u);
  // and it prints back to the same thing
  Config again;
  ASSERT_TRUE(LoadString(ToToml(c), "printed.toml", &again, &err)) << err;
  EXPECT_EQ(again, c);
}

struct BadCase {
  const char *text;
  const char *must_contain[3];
};

TEST(Load, ErrorsNameFileLineAndKey) {
  const BadCase cases[] = {
      {"[ring]\nsize = \"64MiB\"\nsise = \"1GiB\"\n", {"bad.toml:3", "ring.sise", "unknown key"}},
      {"[daemon]\n\n[rings]\nsize = 1\n", {"bad.toml:", "rings", "unknown section"}},
      {"[limits]\nmax_connections = \"many\"\n",
       {"bad.toml:2", "limits.max_connections", "integer"}},
      {"[limits]\n\nmax_frame = \"64MiB\"\n", {"bad.toml:3", "limits.max_frame", "out of range"}},
      {"[ring]\nblock_size = \"12KiB\"\n", {"bad.toml:2", "ring.block_size", "power of two"}},
      {"[writer]\nflush_interval = 100\n", {"bad.toml:2", "writer.flush_interval", "duration"}},
      {"[writer]\nfsync = \"sometimes\"\n", {"bad.toml:2", "writer.fsync", "sometimes"}},
      {"[daemon]\nlog_level = \"loud\"\n", {"bad.toml:2", "daemon.log_level", "loud"}},
      {"[socket]\nmode = 0o1777\n", {"bad.toml:2", "socket.mode", "out of range"}},
      {"[ring]\nsize = \"12 parsecs\"\n", {"bad.toml:2", "ring.size", "not a size"}},
      {"[limits]\nmax_sites_per_connection = 0\n",
       {"bad.toml:2", "limits.max_sites_per_connection", "out of range"}},
      {"[ring\nsize = 1\n", {"bad.toml", "syntax", ""}},
      {"[syslog]\nsocket = 5\n", {"bad.toml:2", "syslog.socket", "expected a string"}},
      {"[syslog]\nsocket = \"/tmp/a.sock\"\n[socket]\npath = \"/tmp/a.sock\"\n",
       {"syslog.socket and socket.path are the same path", "", ""}},
      {"[syslog]\nport = 514\n", {"bad.toml:2", "syslog.port", "unknown key"}},
  };
  for (const BadCase &bc : cases) {
    Config c;
    std::string err;
    EXPECT_FALSE(LoadString(bc.text, "bad.toml", &c, &err)) << bc.text;
    for (const char *want : bc.must_contain)
      EXPECT_NE(err.find(want), std::string::npos)
          << "error '" << err << "' lacks '" << want << "'";
  }
}

// The shortest gap between partial-block writes cannot exceed the longest.
TEST(Load, FlushMinIntervalIsAtMostFlushInterval) {
  Config c;
  std::string err;
  // LoadString validates too.
  EXPECT_FALSE(LoadString("[writer]\nflush_interval = \"10ms\"\nflush_min_interval = \"20ms\"\n",
                          "w.toml", &c, &err));
  EXPECT_EQ(err, "writer.flush_min_interval (20ms) is longer than writer.flush_interval (10ms)");
  c.flush_interval_ms = 10;
  c.flush_min_interval_ms = 20;
  EXPECT_FALSE(Validate(c, &err));
  c.flush_min_interval_ms = 10;
  EXPECT_TRUE(Validate(c, &err)) << err;
}

// [retention]: shares, levels by name, fairness; the tiers together leave
// tier 0 at least a quarter; --print-config reads back equal.
TEST(Load, RetentionSection) {
  Config c;
  std::string err;
  ASSERT_TRUE(
      LoadString("[retention]\nkept_share = 0.2\nerror_share = 0\nkept_level = \"warning\"\n"
                 "error_level = \"crit\"\nfairness = false\n",
                 "r.toml", &c, &err))
      << err;
  EXPECT_EQ(c.kept_share, 0.2);
  EXPECT_EQ(c.error_share, 0.0);
  EXPECT_EQ(c.kept_level, "warning");
  EXPECT_EQ(c.error_level, "crit");
  EXPECT_FALSE(c.fairness);
  Config back;
  ASSERT_TRUE(LoadString(ToToml(c), "printed", &back, &err)) << err;
  EXPECT_EQ(back, c);
  Config d;
  EXPECT_FALSE(LoadString("[retention]\nkept_share = 0.6\n", "r.toml", &d, &err));
  EXPECT_NE(err.find("retention.kept_share: out of range"), std::string::npos) << err;
  EXPECT_FALSE(LoadString("[retention]\nkept_level = \"loud\"\n", "r.toml", &d, &err));
  EXPECT_NE(err.find("\"loud\" is not a level"), std::string::npos) << err;
  EXPECT_FALSE(
      LoadString("[retention]\nkept_share = 0.5\nerror_share = 0.5\n", "r.toml", &d, &err));
  EXPECT_NE(err.find("more than 0.75"), std::string::npos) << err;
  EXPECT_FALSE(LoadString("[retention]\nfairness = 1\n", "r.toml", &d, &err));
  EXPECT_NE(err.find("expected true or false"), std::string::npos) << err;
}

TEST(Load, MissingFileIsAnError) {
  Config c;
  std::string err;
  EXPECT_FALSE(LoadFile("/nonexistent/logsinkd.toml", &c, &err));
  EXPECT_NE(err.find("/nonexistent/logsinkd.toml"), std::string::npos);
}

TEST(Load, ShippedFileIsValidAndAllDefaults) {
  Config c;
  std::string err;
  ASSERT_TRUE(LoadFile(LOGSINK_SOURCE_DIR "/config/logsinkd.toml", &c, &err)) << err;
  EXPECT_EQ(c, Config{});
}

TEST(Load, ShippedFileDocumentsEveryPrintedKey) {
  // Every key --print-config prints appears (commented) in logsinkd.toml.
  std::string printed = ToToml(Config{});
  std::string shipped;
  {
    FILE *f = fopen(LOGSINK_SOURCE_DIR "/config/logsinkd.toml", "r");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) shipped.append(buf, n);
    fclose(f);
  }
  size_t pos = 0;
  int keys = 0;
  while (pos < printed.size()) {
    size_t eol = printed.find('\n', pos);
    std::string line = printed.substr(pos, eol - pos);
    pos = eol + 1;
    size_t eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    keys++;
    // Built by appends: GCC 12 at -O3 reports a false -Wrestrict inside
    // operator+(const char*, std::string&&) for "#" + line.substr(...).
    std::string key = "#";
    key.append(line, 0, eq);
    key += " = ";
    EXPECT_NE(shipped.find(key), std::string::npos) << key;
  }
  EXPECT_EQ(keys, 30);
}

}  // namespace
}  // namespace logsink::test
