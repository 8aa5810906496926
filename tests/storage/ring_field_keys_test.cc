// ring_field_keys_test.cc: field keys in block summaries (FORMAT.md, "Block
// summaries"): a filtered read by FIELD=VALUE passes over the blocks whose
// summary proves the value absent and never over one that holds it; a name
// of many values gives way to its NAME-alone key without costing the other
// names their keys; a block holding a format-5 "%.0s" record claims no
// field keys; the keys are the ones FORMAT.md spells (computed here from the
// text alone); and Verify reports a FIELD_KEYS claim its records break.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/records.h"
#include "common/seed.h"
#include "common/summary_keys.h"
#include "fault_env.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"
#include "logsink/storage/ring.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

const std::string kPath = "/ring";
constexpr uint32_t kBs = 8192;
constexpr uint64_t kFile = 2ull << 20;
constexpr const char *kRareUser = "zed";
const std::vector<std::string> kUsers = {"alice", "bob", "carol", "dave", "erin"};

WriterOptions Options() {
  WriterOptions o;
  o.file_size = kFile;
  o.block_size = kBs;
  o.codec = LS_CODEC_ZSTD;
  o.dictionary_train_bytes = 0;
  return o;
}

struct Fixture {
  FaultEnv env;
  std::unique_ptr<RingWriter> w;
  uint32_t site = 0, plain = 0;
  uint64_t ts = 1000, req = 0;
  Source src{1, 100, 1000, 1000, "app", "app"};

  void Open() {
    ASSERT_TRUE(RingWriter::Open(&env, kPath, Options(), &w).ok());
    // "done" with two fields: user (few values) and req (one per record).
    Site s{6, 1, "done\x1fuser=%s req=%llu", "f.c"};
    s.flags = LS_ST_F_FIELDS;
    site = w->Intern(s);
    plain = w->Intern(Site{6, 2, "%s", "f.c"});
    ASSERT_NE(site, 0u);
    ASSERT_NE(plain, 0u);
  }
  void Add(const std::string &user) {
    const std::string args = Args().Str(user).Uint(++req).str();
    ASSERT_TRUE(AppendRecord(w.get(), src, site, "sU", args, ts++).ok());
  }
};

std::vector<OwnedRecord> Read(FaultEnv *env, const RecordFilter *f, uint64_t *skipped) {
  RecordingReporter rep;
  std::unique_ptr<RingReader> r = OpenReader(env, kPath, &rep);
  std::vector<OwnedRecord> out = ReadRecords(r.get(), f);
  *skipped = r ? r->blocks_skipped() + r->blocks_skipped_by_index() : 0;
  return out;
}

RecordFilter UserIs(const std::string &user) {
  RecordFilter f;
  f.field_groups = {{{"user", {user}}}};
  return f;
}

// The user field of a record of the fixture's site (its first argument).
std::string UserOf(const OwnedRecord &r) {
  uint64_t n = 0;
  const auto *p = reinterpret_cast<const uint8_t *>(r.args.data());
  const size_t k = ls_get_varint(p, p + r.args.size(), &n);
  return k ? r.args.substr(k, n) : std::string();
}

TEST(RingFieldKeys, ARareValueSkipsBlocksAndNeverHidesOne) {
  Fixture fx;
  fx.Open();
  std::mt19937_64 rng(TestSeed(45));
  for (int i = 0; i < 150000; i++)
    fx.Add(i % 20011 == 300 ? kRareUser : kUsers[rng() % kUsers.size()]);
  ASSERT_TRUE(fx.w->Flush().ok());

  uint64_t skipped_all = 0, skipped = 0;
  const std::vector<OwnedRecord> all = Read(&fx.env, nullptr, &skipped_all);
  std::set<uint64_t> rare, blocks;
  for (const OwnedRecord &r : all) {
    blocks.insert(r.block_seq);
    if (UserOf(r) == kRareUser) rare.insert(r.seq);
  }
  ASSERT_GE(rare.size(), 5u);
  const RecordFilter f = UserIs(kRareUser);
  const std::vector<OwnedRecord> got = Read(&fx.env, &f, &skipped);
  std::set<uint64_t> got_seqs, got_blocks;
  for (const OwnedRecord &r : got) {
    got_seqs.insert(r.seq);
    got_blocks.insert(r.block_seq);
  }
  for (uint64_t s : rare) EXPECT_TRUE(got_seqs.count(s)) << "record " << s << " hidden";
  // req has a value per record: its values gave way to "F" req; user kept
  // its keys, so only the blocks with zed (and false positives) are read.
  EXPECT_GT(skipped, blocks.size() / 2) << "of " << blocks.size() << " blocks";
  EXPECT_LE(got_blocks.size(), rare.size() + blocks.size() / 10);

  // A value of the collapsed name skips nothing: it may be in any block.
  RecordFilter req;
  req.field_groups = {{{"req", {"77"}}}};
  Read(&fx.env, &req, &skipped);
  EXPECT_EQ(skipped, 0u);
  // Groups: zed OR nobody = zed's blocks; zed AND req=77 is no more than zed's.
  RecordFilter either;
  either.field_groups = {{{"user", {kRareUser}}}, {{"user", {"nobody"}}}};
  EXPECT_EQ(Read(&fx.env, &either, &skipped).size(), got.size());
  RecordFilter both;
  both.field_groups = {{{"user", {kRareUser}}, {"req", {"77"}}}};
  EXPECT_EQ(Read(&fx.env, &both, &skipped).size(), got.size());
  // A name no record has: every block with FIELD_KEYS passes.
  RecordFilter none;
  none.field_groups = {{{"host", {"x"}}}};
  const std::vector<OwnedRecord> nothing = Read(&fx.env, &none, &skipped);
  EXPECT_LT(nothing.size(), all.size() / 10);

  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&fx.env, kPath, nullptr, &r).ok());
  Status s = r->Verify();
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// Every sealed block says FIELD_KEYS (header flag 2, index byte 6), holds
// user's value keys as FORMAT.md spells them and req's NAME-alone key.
TEST(RingFieldKeys, TheKeysAreTheOnesFormatMdSpells) {
  Fixture fx;
  fx.Open();
  for (int i = 0; i < 20000; i++) fx.Add(kUsers[i % 3]);
  ASSERT_TRUE(fx.w->Flush().ok());
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&fx.env, kPath, nullptr, &r).ok());
  const Layout l = r->layout();
  const std::vector<uint8_t> &f = fx.env.Data(kPath);
  int sealed = 0;
  for (uint64_t i = 0; i < l.block_count; i++) {
    const uint8_t *h = f.data() + l.blocks_off + i * kBs;
    if (ls_get_u32(h) != LS_BLK_MAGIC) continue;
    const uint32_t flags = ls_get_u32(h + LS_BLK_OFF_FLAGS);
    EXPECT_TRUE(flags & LS_BLK_F_FIELD_KEYS) << "block in slot " << i;
    const uint8_t *bloom = h + LS_BLK_OFF_BLOOM;
    for (int u = 0; u < 3; u++) EXPECT_TRUE(FilterHas(bloom, SummaryKey('f', "user=" + kUsers[u])));
    EXPECT_TRUE(FilterHas(bloom, SummaryKey('F', "req")));
    EXPECT_FALSE(FilterHas(bloom, SummaryKey('F', "user")));
    if (!(flags & LS_BLK_F_SEALED)) continue;
    sealed++;
    const uint8_t *e = f.data() + l.index_off + i * LS_IDX_ENTRY;
    EXPECT_EQ(e[LS_IDX_OFF_FLAGS], LS_IDX_F_FIELD_KEYS);
  }
  EXPECT_GT(sealed, 2);
}

// A format-5 record ("%.0s" NAME=VALUE strings, which the writer does not
// key) takes FIELD_KEYS from its block, so a field read reads that block;
// forging the flag back is what Verify reports.
TEST(RingFieldKeys, AnUnkeyedRecordTakesTheClaimAwayAndVerifyCatchesAForgedOne) {
  Fixture fx;
  fx.Open();
  const uint32_t old = fx.w->Intern(Site{6, 3, "hi%.0s", "py.c"});
  ASSERT_NE(old, 0u);
  for (int i = 0; i < 50; i++) fx.Add("alice");
  ASSERT_TRUE(
      AppendRecord(fx.w.get(), fx.src, old, "s", Args().Str("user=zed").str(), fx.ts++).ok());
  ASSERT_TRUE(fx.w->Flush().ok());
  uint64_t skipped = 0;
  const RecordFilter f = UserIs(kRareUser);
  const std::vector<OwnedRecord> got = Read(&fx.env, &f, &skipped);
  EXPECT_EQ(got.size(), 51u);  // the block is read: the reader matches "user=zed" itself
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&fx.env, kPath, nullptr, &r).ok());
  const Layout l = r->layout();
  r.reset();
  std::vector<uint8_t> &file = fx.env.Data(kPath);
  uint8_t *h = file.data() + l.blocks_off;
  ASSERT_EQ(ls_get_u32(h), LS_BLK_MAGIC);
  ASSERT_FALSE(ls_get_u32(h + LS_BLK_OFF_FLAGS) & LS_BLK_F_FIELD_KEYS);
  ls_put_u32(h + LS_BLK_OFF_FLAGS, ls_get_u32(h + LS_BLK_OFF_FLAGS) | LS_BLK_F_FIELD_KEYS);
  const uint32_t used = ls_get_u32(h + LS_BLK_OFF_USED);
  ls_put_u32(h + LS_BLK_OFF_CRC, Crc32c(h + 8, used - 8));
  RecordingReporter rep;
  ASSERT_TRUE(RingReader::Open(&fx.env, kPath, &rep, &r).ok());
  EXPECT_FALSE(r->Verify().ok());
  EXPECT_NE(rep.Dump().find("summary's field keys does not cover"), std::string::npos)
      << rep.Dump();
}

// An index entry saying FIELD_KEYS over a block that holds a "%.0s" record
// (forged: its CRC made right) is what Verify reports, as an entry; and a
// FIELD_KEYS entry over a header without the flag but whose filter covers
// the records (a power loss kept the sealed block's entry, not the block)
// is not.
TEST(RingFieldKeys, VerifyJudgesAnEntrysFieldKeysByTheRecords) {
  Fixture fx;
  fx.Open();
  const uint32_t old = fx.w->Intern(Site{6, 3, "hi%.0s", "py.c"});
  ASSERT_TRUE(
      AppendRecord(fx.w.get(), fx.src, old, "s", Args().Str("user=zed").str(), fx.ts++).ok());
  for (int i = 0; i < 20000; i++) fx.Add(kUsers[i % 3]);
  ASSERT_TRUE(fx.w->Flush().ok());
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&fx.env, kPath, nullptr, &r).ok());
  const Layout l = r->layout();
  r.reset();
  std::vector<uint8_t> &file = fx.env.Data(kPath);
  auto entry_with_keys = [&](uint64_t slot) {
    uint8_t *e = file.data() + l.index_off + slot * LS_IDX_ENTRY;
    EXPECT_NE(ls_get_u32(e), 0u) << "slot " << slot << " has no entry";
    e[LS_IDX_OFF_FLAGS] = LS_IDX_F_FIELD_KEYS;
    ls_put_u32(e, Crc32c(e + 4, LS_IDX_ENTRY - 4));
  };
  auto verify = [&] {
    RecordingReporter rep;
    std::unique_ptr<RingReader> v;
    EXPECT_TRUE(RingReader::Open(&fx.env, kPath, &rep, &v).ok());
    (void)v->Verify();
    return rep.Dump();
  };
  ASSERT_EQ(verify(), "");
  // Slot 1's block has only keyed records: its header's flag taken away
  // (as an older image of it would be), the entry's claim still holds.
  uint8_t *h1 = file.data() + l.blocks_off + kBs;
  ASSERT_TRUE(ls_get_u32(h1 + LS_BLK_OFF_FLAGS) & LS_BLK_F_FIELD_KEYS);
  ls_put_u32(h1 + LS_BLK_OFF_FLAGS, ls_get_u32(h1 + LS_BLK_OFF_FLAGS) & ~LS_BLK_F_FIELD_KEYS);
  ls_put_u32(h1 + LS_BLK_OFF_CRC, Crc32c(h1 + 8, ls_get_u32(h1 + LS_BLK_OFF_USED) - 8));
  EXPECT_EQ(verify(), "");
  // Slot 0's block holds the "%.0s" record: an entry claiming FIELD_KEYS lies.
  ASSERT_FALSE(ls_get_u32(file.data() + l.blocks_off + LS_BLK_OFF_FLAGS) & LS_BLK_F_FIELD_KEYS);
  entry_with_keys(0);
  const std::string dump = verify();
  EXPECT_NE(dump.find("summary index entry of block 0: FIELD_KEYS, but its filter lacks"),
            std::string::npos)
      << dump;
}

}  // namespace
}  // namespace logsink::test
