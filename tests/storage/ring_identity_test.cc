// ring_identity_test.cc: the ring identity (random at creation, kept across
// reopen, assigned to a file that predates it), cursors (format, parse,
// refusal of another ring's) and RingReader::SeekSeq (exact position, lost
// records reported when the cursor was overwritten).
#include <fcntl.h>
#include <unistd.h>

#include <set>

#include "common/temp_dir.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"
#include "logsink/storage/cursor.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

Source Src() { return Source{1, 10, 1000, 100, "app", "comm"}; }

// Appends records i = first .. first + n - 1 ("n=%d").
void AddNumbered(RingWriter *w, uint32_t site, int first, int n) {
  Source src = Src();
  for (int i = first; i < first + n; ++i) {
    RecordIn r;
    r.source = &src;
    r.site_id = site;
    r.signature = Signature("n=%d");
    std::string a = Args().Int(i).str();
    r.args = reinterpret_cast<const uint8_t *>(a.data());
    r.args_len = a.size();
    r.ts_ns = 1000 + uint64_t(i);
    ASSERT_TRUE(w->Append(r).ok());
  }
  ASSERT_TRUE(w->Flush().ok());
}

uint32_t InternN(RingWriter *w) {
  Site s;
  s.fmt = "n=%d";
  s.file = "t.c";
  return w->Intern(s);
}

std::string ReaderRingId(const std::string &path) {
  std::unique_ptr<RingReader> r;
  EXPECT_TRUE(RingReader::Open(Env::Default(), path, nullptr, &r).ok());
  return r ? r->layout().RingIdHex() : "";
}

TEST(RingIdentity, RandomAtCreationAndKeptAcrossReopen) {
  TempDir dir;
  std::set<std::string> ids;
  for (int k = 0; k < 8; ++k) {
    std::string name = "r";  // appends: GCC 12 -O3 warns (falsely) on "r" + std::string
    name += std::to_string(k);
    std::string path = dir / name;
    std::string id;
    {
      auto w = OpenRing(Env::Default(), path, 4);
      ASSERT_TRUE(w);
      id = w->layout().RingIdHex();
      ASSERT_EQ(id.size(), 32u);
      ASSERT_TRUE(w->Flush().ok());
    }
    EXPECT_EQ(ReaderRingId(path), id);
    auto again = OpenRing(Env::Default(), path, 4);  // reopen: same identity
    ASSERT_TRUE(again);
    EXPECT_EQ(again->layout().RingIdHex(), id);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 8u);
}

// A file written before identities existed has zeros there: readers report no
// identity; the next writer assigns one, keeping every record.
TEST(RingIdentity, AFileWithoutOneGetsOneFromTheNextWriter) {
  TempDir dir;
  std::string path = dir / "old";
  {
    auto w = OpenRing(Env::Default(), path, 4);
    ASSERT_TRUE(w);
    AddNumbered(w.get(), InternN(w.get()), 0, 10);
  }
  // Zero the id in both copies and fix their CRCs, as an older writer left them.
  int fd = open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  for (uint64_t copy = 0; copy < 2; ++copy) {
    uint8_t sb[LS_SB_SIZE];
    ASSERT_EQ(pread(fd, sb, sizeof sb, copy * LS_SB_SLOT), ssize_t(sizeof sb));
    std::memset(sb + LS_SB_OFF_RING_ID, 0, LS_RING_ID_LEN);
    ls_put_u32(sb + LS_SB_OFF_CRC, Crc32c(sb + 16, LS_SB_SIZE - 16));
    ASSERT_EQ(pwrite(fd, sb, sizeof sb, copy * LS_SB_SLOT), ssize_t(sizeof sb));
  }
  close(fd);
  EXPECT_EQ(ReaderRingId(path), "");
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(Env::Default(), path, nullptr, &r).ok());
  Cursor c{std::string(32, 'a'), 0};
  Status s = CheckCursor(c, r->layout(), path);
  EXPECT_NE(s.message().find("has no ring identity yet"), std::string::npos) << s.ToString();
  auto w = OpenRing(Env::Default(), path, 4);
  ASSERT_TRUE(w);
  std::string id = w->layout().RingIdHex();
  EXPECT_EQ(id.size(), 32u);
  w.reset();
  EXPECT_EQ(ReaderRingId(path), id);
  EXPECT_EQ(ReadRing(path).size(), 10u);
}

TEST(Cursor, FormatParseAndRefusal) {
  std::string id = "0123456789abcdef0123456789abcdef";
  EXPECT_EQ(FormatCursor(id, 0), "ls1-" + id + "-0");
  EXPECT_EQ(FormatCursor(id, 0x1f4), "ls1-" + id + "-1f4");
  Cursor c;
  std::string why;
  ASSERT_TRUE(ParseCursor(FormatCursor(id, ~0ull), &c, &why)) << why;
  EXPECT_EQ(c.ring_id, id);
  EXPECT_EQ(c.seq, ~0ull);
  for (std::string bad : {std::string(""), std::string("ls1-"), "ls2-" + id + "-1",
                          "ls1-" + id + "-", "ls1-" + id + "-12345678901234567",
                          "ls1-" + id.substr(1) + "-1", "ls1-" + id + "-1G", "ls1-" + id + "1"}) {
    EXPECT_FALSE(ParseCursor(bad, &c, &why)) << bad;
    EXPECT_NE(why.find("is not a logsink cursor"), std::string::npos) << why;
  }
  Layout l;
  l.ring_id[0] = 0x01;
  Cursor other{std::string(32, 'f'), 1};
  Status s = CheckCursor(other, l, "r");
  EXPECT_NE(s.message().find("belongs to another ring"), std::string::npos) << s.ToString();
  EXPECT_TRUE(CheckCursor(Cursor{l.RingIdHex(), 1}, l, "r").ok());
}

class SeekSeqTest : public ::testing::Test {
 protected:
  std::vector<int64_t> From(uint64_t seq, RecordingReporter *rep) {
    std::unique_ptr<RingReader> r;
    EXPECT_TRUE(RingReader::Open(Env::Default(), path_, rep, &r).ok());
    EXPECT_TRUE(r->SeekSeq(seq).ok());
    std::vector<int64_t> out;
    Record rec;
    while (r->Next(&rec).ok()) {
      uint64_t v = 0;
      ls_get_varint(reinterpret_cast<const uint8_t *>(rec.args.data()),
                    reinterpret_cast<const uint8_t *>(rec.args.data()) + rec.args.size(), &v);
      out.push_back(int64_t(rec.seq) * 1000000 + ls_unzigzag(v));
    }
    return out;
  }
  TempDir dir_;
  std::string path_ = dir_ / "r";
};

TEST_F(SeekSeqTest, EveryPositionOfALappedRing) {
  auto w = OpenRing(Env::Default(), path_, 6);
  ASSERT_TRUE(w);
  AddNumbered(w.get(), InternN(w.get()), 0, 12000);  // laps the 6-block ring
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(Env::Default(), path_, nullptr, &r).ok());
  RingReader::Summary sum;
  ASSERT_TRUE(r->Summarize(&sum).ok());
  ASSERT_GT(sum.oldest_seq, 0u);
  ASSERT_EQ(sum.newest_seq, 11999u);
  for (uint64_t seq = sum.oldest_seq; seq <= 12000; seq += 7) {
    RecordingReporter rep;
    std::vector<int64_t> got = From(seq, &rep);
    ASSERT_EQ(got.size(), 12000 - seq) << seq;
    for (size_t k = 0; k < got.size(); ++k)  // record seq+k holds the number seq+k
      ASSERT_EQ(got[k], int64_t(seq + k) * 1000000 + int64_t(seq + k));
    EXPECT_EQ(rep.lost, 0u);
  }
  // An overwritten position: everything present, the gap reported as lost.
  RecordingReporter rep;
  std::vector<int64_t> got = From(5, &rep);
  EXPECT_EQ(got.size(), 12000 - sum.oldest_seq);
  EXPECT_EQ(rep.lost, sum.oldest_seq - 5);
}

}  // namespace
}  // namespace logsink::test
