// config_test.cc: unit tests of the config library: units, the TOML loader's
// checks (file, line and key in every error) and the printer's round trip.
#include "logsink/config/config.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "logsink/config/settings.h"

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
  // Decimal-looking or loose units are refused, not taken as binary.
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
  EXPECT_EQ(keys, 42);
}

// ---- the table of settings (settings.h) --------------------------------------

// A value other than the default for every setting, as TOML; together they
// pass Validate. A setting added to the table needs one here.
const std::map<std::string, std::string> kOther = {
    {"daemon.log_level", "\"debug\""},
    {"socket.path", "\"/tmp/other.sock\""},
    {"socket.mode", "0o600"},
    {"socket.group", "\"adm\""},
    {"syslog.socket", "\"/tmp/other-syslog.sock\""},
    {"ring.file", "\"/tmp/other.ring\""},
    {"ring.size", "\"1GiB\""},
    {"ring.block_size", "\"64KiB\""},
    {"ring.compression", "\"lz4\""},
    {"ring.compression_level", "3"},
    {"ring.write_queue", "\"1MiB\""},
    {"retention.kept_share", "0.25"},
    {"retention.error_share", "0.0"},
    {"retention.kept_level", "\"warning\""},
    {"retention.error_level", "\"crit\""},
    {"retention.fairness", "false"},
    {"kernel.read", "\"no\""},
    {"kernel.device", "\"/tmp/kmsg\""},
    {"writer.flush_interval", "\"250ms\""},
    {"writer.flush_min_interval", "\"20ms\""},
    {"writer.fsync", "\"2s\""},
    {"limits.max_frame", "\"1MiB\""},
    {"limits.max_connections", "10"},
    {"limits.max_connections_per_uid", "5"},
    {"limits.max_sites_per_connection", "100"},
    {"limits.shm_slots", "3"},
    {"limits.shm_slot_bytes", "\"32KiB\""},
    {"limits.shm_sites_bytes", "\"8KiB\""},
    {"limits.shm_max_memory", "\"100MiB\""},
    {"limits.shm_max_memory_per_uid", "\"10MiB\""},
    {"limits.stall_timeout", "\"3s\""},
    {"limits.read_budget", "\"64KiB\""},
    {"limits.read_slice", "\"5ms\""},
    {"limits.max_app", "32"},
    {"limits.max_memory", "\"128MiB\""},
    {"limits.max_memory_per_uid", "\"1MiB\""},
    {"limits.max_readers", "3"},
    {"limits.max_readers_per_uid", "2"},
    {"limits.read_blocks_per_turn", "2"},
    {"limits.read_chunk", "\"8KiB\""},
    {"limits.shutdown_timeout", "\"1s\""},
    {"levels.rules", "\"app=web debug\""},
};

std::string Assign(const Setting &s, const std::string &value) {
  return std::string("[") + s.section + "]\n" + s.key + " = " + value + "\n";
}

TEST(Settings, TableIsWellFormed) {
  std::set<std::string> names, sections_done;
  std::string_view section;
  for (const Setting &s : Settings()) {
    EXPECT_TRUE(names.insert(SettingName(s)).second) << SettingName(s) << " twice";
    if (section != s.section) {  // each section is one run of rows
      EXPECT_TRUE(sections_done.insert(s.section).second) << s.section << " split";
      section = s.section;
    }
    EXPECT_NE(std::string(s.help), "") << SettingName(s);
    EXPECT_EQ(FindSetting(s.section, s.key), &s);
  }
  EXPECT_EQ(FindSetting("ring", "sise"), nullptr);
  EXPECT_EQ(Sections().size(), sections_done.size());
  EXPECT_EQ(names.size(), 42u);
  // Other settings and their defaults: every field is set by the table.
  Config c;
  EXPECT_FALSE(c.recreate);
  EXPECT_FALSE(c.allow_other_owner);
  EXPECT_TRUE(Changed(c, Config{}).empty());
}

// Every setting reads, prints and reads back; changing one changes only it.
TEST(Settings, EverySettingRoundTrips) {
  std::set<std::string> covered;
  for (const Setting &s : Settings()) {
    const std::string name = SettingName(s);
    auto it = kOther.find(name);
    ASSERT_NE(it, kOther.end()) << name << ": add a value to kOther";
    covered.insert(name);
    Config c;
    std::string err;
    ASSERT_TRUE(LoadString(Assign(s, it->second), "one.toml", &c, &err)) << err;
    std::vector<const Setting *> changed = Changed(Config{}, c);
    ASSERT_EQ(changed.size(), 1u) << name;
    EXPECT_EQ(changed[0], &s);
    EXPECT_EQ(FormatValue(s, c), it->second) << name;
    Config back;
    ASSERT_TRUE(LoadString(ToToml(c), "printed.toml", &back, &err)) << name << ": " << err;
    EXPECT_EQ(back, c) << name;
    // The default prints as a value that reads back to the default too.
    Config d;
    ASSERT_TRUE(LoadString(Assign(s, FormatValue(s, Config{})), "default.toml", &d, &err))
        << name << ": " << err;
    EXPECT_EQ(d, Config{}) << name;
  }
  EXPECT_EQ(covered.size(), kOther.size()) << "kOther names a setting the table does not have";
}

// Just outside each setting's limits is refused, with the file, the line and
// the setting's name.
TEST(Settings, OutOfRangeIsRefusedWithTheName) {
  int checked = 0;
  for (const Setting &s : Settings()) {
    std::vector<std::string> bad;
    switch (s.kind) {
      case Kind::kSize:
      case Kind::kCount:
      case Kind::kMode:
        bad.push_back(std::to_string(s.max + 1));
        if (s.min > 0) bad.push_back(std::to_string(s.min - 1));
        break;
      case Kind::kDuration:
        bad.push_back("\"" + FormatDuration(s.max + 1) + "\"");
        if (s.min > 0) bad.push_back("\"" + FormatDuration(s.min - 1) + "\"");
        break;
      case Kind::kFsync:
        bad.push_back("\"" + FormatDuration(s.max + 1) + "\"");
        break;
      case Kind::kShare:
        bad.push_back(FormatShare(s.max_share + 0.25));
        bad.push_back("-0.25");
        break;
      case Kind::kSocketPath:
        bad.push_back("\"/" + std::string(s.max, 'x') + "\"");
        break;
      default:
        break;
    }
    for (const std::string &value : bad) {
      Config c;
      std::string err;
      EXPECT_FALSE(LoadString("\n" + Assign(s, value), "range.toml", &c, &err))
          << SettingName(s) << " = " << value;
      const std::string want = "range.toml:3: " + SettingName(s) + ": ";
      EXPECT_EQ(err.rfind(want, 0), 0u) << err;
      const bool said = err.find("out of range") != std::string::npos ||
                        err.find("too long") != std::string::npos;
      EXPECT_TRUE(said) << err;
      checked++;
    }
  }
  EXPECT_GE(checked, 30);
}

// A SIGHUP reload (Server::ApplyLive) copies exactly the live settings:
// [daemon] log_level, [writer] and [limits], as logsinkd.toml says; the
// others differ afterwards and are the ones reported.
TEST(Settings, ReloadCopiesExactlyTheLiveSettings) {
  std::string all;
  std::string_view section;
  for (const Setting &s : Settings()) {
    if (section != s.section) all += std::string("[") + (section = s.section).data() + "]\n";
    all += std::string(s.key) + " = " + kOther.at(SettingName(s)) + "\n";
  }
  Config next;
  std::string err;
  ASSERT_TRUE(LoadString(all, "all.toml", &next, &err)) << err;
  ASSERT_EQ(Changed(Config{}, next).size(), Settings().size());
  Config running;
  CopyLive(next, &running);
  std::set<std::string> reported;
  for (const Setting *s : Changed(running, next)) reported.insert(SettingName(*s));
  for (const Setting &s : Settings()) {
    const std::string section = s.section;
    const bool live = SettingName(s) == "daemon.log_level" || section == "writer" ||
                      section == "limits" || section == "levels";
    EXPECT_EQ(s.live, live) << SettingName(s);
    EXPECT_EQ(SameValue(s, running, next), live) << SettingName(s);
    EXPECT_EQ(SameValue(s, running, Config{}), !live) << SettingName(s);
    EXPECT_EQ(reported.count(SettingName(s)), live ? 0u : 1u) << SettingName(s);
  }
}

// logsinkd.toml documents every setting of the table, in its section, with
// the table's default (a path resolved at start: the system instance's),
// and nothing else.
TEST(Settings, ShippedFileDocumentsTheTable) {
  std::string shipped;
  {
    FILE *f = fopen(LOGSINK_SOURCE_DIR "/config/logsinkd.toml", "r");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) shipped.append(buf, n);
    fclose(f);
  }
  std::map<std::string, std::string> documented;  // "section.key" -> value
  std::string section;
  size_t pos = 0;
  while (pos < shipped.size()) {
    size_t eol = shipped.find('\n', pos);
    if (eol == std::string::npos) eol = shipped.size();
    std::string line = shipped.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.size() > 2 && line[0] == '[' && line.back() == ']') {
      section = line.substr(1, line.size() - 2);
      continue;
    }
    // "#key = value": a documented setting ("# prose" has a space).
    size_t eq = line.find(" = ");
    if (line.empty() || line[0] != '#' || eq == std::string::npos) continue;
    std::string key = line.substr(1, eq - 1);
    if (key.empty() || key.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos)
      continue;
    EXPECT_TRUE(documented.emplace(section + "." + key, line.substr(eq + 3)).second)
        << section << "." << key << " twice";
  }
  for (const Setting &s : Settings()) {
    auto it = documented.find(SettingName(s));
    if (it == documented.end()) {
      ADD_FAILURE() << SettingName(s) << " is not in logsinkd.toml";
      continue;
    }
    std::string want =
        s.documented ? "\"" + std::string(s.documented) + "\"" : FormatValue(s, Config{});
    EXPECT_EQ(it->second, want) << SettingName(s);
    documented.erase(it);
  }
  for (const auto &[name, value] : documented)
    ADD_FAILURE() << "logsinkd.toml documents " << name << ", which is not a setting";
}

}  // namespace
}  // namespace logsink::test
