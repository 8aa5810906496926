// client_fields_test.cc: named, typed fields from a C program (LS_FIELDS,
// PROTOCOL.md "Fields") through the real logsinkd into a ring the daemon
// upgraded in place from format 5, 6 or 7 (FORMAT.md, "Versions"), read
// back by the real logctl: the old records render exactly as the release
// that wrote them showed them (tests/data/format5, format6 and format7: the
// ring and that logctl's output), in order before the new ones, whose
// fields come typed; the old typed fields still match by field, in blocks
// with field keys (format 7) and without; a trusted name is refused by the
// library.
#include <gtest/gtest.h>
#include <stdbool.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client_harness.h"
#include "client_stats.h"
#include "logsink/logsink.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"

namespace logsink::test {
namespace {

using json = nlohmann::json;

uint32_t SuperblockVersion(const std::string &ring, int copy) {
  const std::string b = ReadFile(ring);
  const size_t at = size_t(copy) * LS_SB_SLOT + LS_SB_OFF_VERSION;
  return b.size() >= at + 4 ? ls_get_u32(reinterpret_cast<const uint8_t *>(b.data()) + at) : 0;
}

// The blocks of ring (block_size bytes each) whose header has the flag
// FIELD_KEYS (FORMAT.md, "Block summaries").
int KeyedBlocks(const std::string &ring, size_t block_size) {
  const std::string b = ReadFile(ring);
  const auto *p = reinterpret_cast<const uint8_t *>(b.data());
  int keyed = 0;
  for (size_t at = 0; at + LS_BLK_HDR <= b.size(); at += block_size)
    if (ls_get_u32(p + at + LS_BLK_OFF_MAGIC) == LS_BLK_MAGIC &&
        (ls_get_u32(p + at + LS_BLK_OFF_FLAGS) & LS_BLK_F_FIELD_KEYS))
      keyed++;
  return keyed;
}

ProcResult Logctl(const std::string &ring, std::vector<std::string> args) {
  args.insert(args.begin(), {"--file", ring});
  return RunProcess(BinPath("logctl"), args);
}

// An older release's ring, tests/data/FIXTURE (its README: how it was made),
// in daemon's place: the current logctl shows it exactly as that release's
// logctl did (the fixture's expected.*, the JSON into *json), and then the
// current logsinkd, started on it, makes both superblock copies the current version in
// place.
void ReadThenUpgrade(Daemon &daemon, const std::string &fixture, uint32_t version,
                     std::string *json) {
  const std::string data = std::string(LOGSINK_SOURCE_DIR) + "/tests/data/" + fixture + "/";
  WriteFile(daemon.ring, ReadFile(data + "ring"));
  ASSERT_EQ(SuperblockVersion(daemon.ring, 0), version);
  ASSERT_EQ(SuperblockVersion(daemon.ring, 1), version);
  *json = ReadFile(data + "expected.json");
  ProcResult r = Logctl(daemon.ring, {"-o", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, *json);
  r = Logctl(daemon.ring, {"--utc", "-o", "short-precise"});
  EXPECT_EQ(r.out, ReadFile(data + "expected.short"));
  r = Logctl(daemon.ring, {"-o", "verbose"});
  EXPECT_EQ(r.out, ReadFile(data + "expected.verbose"));

  ASSERT_TRUE(daemon.Start()) << daemon.Stderr();
  EXPECT_NE(
      daemon.Stderr().find("a ring of format version " + std::to_string(version) +
                           ", now version " + std::to_string(LS_FORMAT_VERSION) + " in place"),
      std::string::npos)
      << daemon.Stderr();
  EXPECT_EQ(SuperblockVersion(daemon.ring, 0), LS_FORMAT_VERSION);
  EXPECT_EQ(SuperblockVersion(daemon.ring, 1), LS_FORMAT_VERSION);
}

TEST(Fields, AnUpgradedRingKeepsItsRecordsAndTakesTypedFields) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  // The release before fields; its verbose output, from the release that
  // added them, lists the Python record's %.0s fields (RENDERING.md).
  Daemon daemon(dir, {"--size", "32KiB", "--block-size", "4KiB"});
  std::string json5;
  ASSERT_NO_FATAL_FAILURE(ReadThenUpgrade(daemon, "format5", 5, &json5));

  ls_client *c = ls_open(daemon.socket.c_str(), "fielder", nullptr);
  ASSERT_NE(c, nullptr);
  const bool ok = true;
  LS_LOG(c, LS_INFO, "disk %s full" LS_FIELDS("user=%s req=%llu ok:bool=%d ratio=%f delta=%d"),
         "sda", "alice", 7ULL, ok, 0.5, -3);
  ls_log(c, LS_WARNING, "run-time %d" LS_FIELDS("user=%s"), 1, "bob");
  const uint64_t errors = Stats(c).errors;
  LS_LOG(c, LS_INFO, "trusted" LS_FIELDS("_PID=%d"), 1);  // refused, never sent
  EXPECT_EQ(Stats(c).errors, errors + 1);
  ASSERT_EQ(ls_flush(c), 0);
  ls_close(c);
  ASSERT_EQ(daemon.Stop(), 0);

  ProcResult r = Logctl(daemon.ring, {"-o", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  // The old records first, exactly as before, then the new ones.
  ASSERT_EQ(r.out.compare(0, json5.size(), json5), 0) << r.out;
  std::vector<std::string> added = Lines(r.out.substr(json5.size()));
  ASSERT_EQ(added.size(), 2u) << r.out;
  const json a = json::parse(added[0]), b = json::parse(added[1]);
  EXPECT_EQ(a["msg"], "disk sda full");
  EXPECT_EQ(a["fmt"], "disk %s full");
  EXPECT_EQ(a["fields"],
            json::parse(R"({"user":"alice","req":7,"ok":true,"ratio":0.5,"delta":-3})"))
      << added[0];
  EXPECT_EQ(b["msg"], "run-time 1");
  EXPECT_EQ(b["fields"], json::parse(R"({"user":"bob"})")) << added[1];
  // Read back as the storage library gives it: the flag is the site's.
  const std::vector<OwnedRecord> v = ReadRing(daemon.ring);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.back().site_flags, LS_ST_F_FIELDS);
  EXPECT_EQ(v.back().fmt, std::string("run-time %d\x1fuser=%s"));
}

TEST(Fields, AVersion6RingKeepsItsTypedFieldsAndMatchesThemAfterTheUpgrade) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  // The release with fields: typed C and Python fields, free text and
  // syslog, in blocks whose summaries key no field values.
  Daemon daemon(dir, {"--size", "32KiB", "--block-size", "4KiB"});
  std::string json6;
  ASSERT_NO_FATAL_FAILURE(ReadThenUpgrade(daemon, "format6", 6, &json6));
  const std::vector<std::string> old = Lines(json6);
  ASSERT_EQ(old.size(), 9u);

  ls_client *c = ls_open(daemon.socket.c_str(), "fielder", nullptr);
  ASSERT_NE(c, nullptr);
  LS_LOG(c, LS_INFO, "after the upgrade %d" LS_FIELDS("user=%s"), 7, "carol");
  ASSERT_EQ(ls_flush(c), 0);
  ls_close(c);
  ASSERT_EQ(daemon.Stop(), 0);

  ProcResult r = Logctl(daemon.ring, {"-o", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  // The old records first, exactly as before, then the new one.
  ASSERT_EQ(r.out.compare(0, json6.size(), json6), 0) << r.out;
  const std::vector<std::string> added = Lines(r.out.substr(json6.size()));
  ASSERT_EQ(added.size(), 1u) << r.out;
  EXPECT_EQ(json::parse(added[0])["fields"], json::parse(R"({"user":"carol"})")) << added[0];
  // By field: the old C record's typed user (a block of version 6, without
  // field keys) as the old logctl showed it, and the new one; the old
  // Python record's extra= user; no record for a value nobody logged.
  r = Logctl(daemon.ring, {"-o", "json", "user=carol"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, old[0] + "\n" + added[0] + "\n");
  r = Logctl(daemon.ring, {"-o", "json", "user=dave"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, old[5] + "\n");
  r = Logctl(daemon.ring, {"-o", "json", "user=erin"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(Fields, AVersion7RingKeepsItsKeyedFieldsAndMatchesThemAfterTheUpgrade) {
  unsetenv("LOGSINK_LEVEL");
  TempDir dir;
  // The last release of format 7: the mix of format6, in blocks whose
  // summaries key the records' fields (FIELD_KEYS), by which a read that
  // matches a field passes over a block.
  const std::string data = std::string(LOGSINK_SOURCE_DIR) + "/tests/data/format7/";
  ASSERT_GE(KeyedBlocks(data + "ring", 4096), 1);
  Daemon daemon(dir, {"--size", "32KiB", "--block-size", "4KiB"});
  std::string json7;
  ASSERT_NO_FATAL_FAILURE(ReadThenUpgrade(daemon, "format7", 7, &json7));
  const std::vector<std::string> old = Lines(json7);
  ASSERT_EQ(old.size(), 9u);

  ls_client *c = ls_open(daemon.socket.c_str(), "fielder", nullptr);
  ASSERT_NE(c, nullptr);
  LS_LOG(c, LS_INFO, "after the upgrade %d" LS_FIELDS("user=%s job=%s"), 8, "carol", "restore");
  ASSERT_EQ(ls_flush(c), 0);
  ls_close(c);
  ASSERT_EQ(daemon.Stop(), 0);

  ProcResult r = Logctl(daemon.ring, {"-o", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  // The old records first, exactly as before, then the new one.
  ASSERT_EQ(r.out.compare(0, json7.size(), json7), 0) << r.out;
  const std::vector<std::string> added = Lines(r.out.substr(json7.size()));
  ASSERT_EQ(added.size(), 1u) << r.out;
  EXPECT_EQ(json::parse(added[0])["fields"], json::parse(R"({"user":"carol","job":"restore"})"))
      << added[0];
  // By field: the old C record's typed user (a block of version 7 with
  // field keys) as the old logctl showed it, and the new one; the old
  // Python record's extra= user; the old run-time site's job, its bool and
  // the C record's unsigned and negative values by their text; the old
  // RFC 5424 record's SD-PARAM; no record for a value nobody logged.
  r = Logctl(daemon.ring, {"-o", "json", "user=carol"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, old[0] + "\n" + added[0] + "\n");
  r = Logctl(daemon.ring, {"-o", "json", "user=dave"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, old[5] + "\n");
  r = Logctl(daemon.ring, {"-o", "json", "job=backup"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, old[2] + "\n");
  r = Logctl(daemon.ring, {"-o", "json", "failed=false"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, old[2] + "\n");
  r = Logctl(daemon.ring, {"-o", "json", "uid=1000", "attempts=-2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, old[0] + "\n");
  r = Logctl(daemon.ring, {"-o", "json", "exampleSDID@32473.eventSource=Application"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, old[7] + "\n");
  r = Logctl(daemon.ring, {"-o", "json", "user=erin"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace logsink::test
