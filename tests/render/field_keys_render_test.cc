// field_keys_render_test.cc: the block summaries' field keys (proto/FORMAT.md,
// "Block summaries") are of the text the reader compares. For every field
// conversion and edge values, a record written by RingWriter into a ring of
// its own is read back, its field's text taken from the renderer
// (render::RecordFields, AppendFieldText: what `logctl NAME=VALUE`
// compares), and the block's filter must hold the key FORMAT.md spells for
// that text (computed here from the document), or, for a type FORMAT.md
// does not key, the NAME-alone key. The writer computes the text on its
// own (storage sits below render): this keeps the two the same.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/records.h"
#include "common/summary_keys.h"
#include "common/temp_dir.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"
#include "logsink/render/fields.h"
#include "logsink/render/render.h"
#include "logsink/storage/ring.h"
#include "storage/ring_test_util.h"

namespace logsink::test {
namespace {

struct Case {
  const char *field;  // the list after 0x1F
  char sig;           // its argument's type
  bool keyed;         // FORMAT.md gives its values a value key
};

const Case kCases[] = {
    {"v=%d", 'i', true},        {"v=%hhd", 'i', true},     {"v=%hd", 'i', true},
    {"v=%ld", 'i', true},       {"v=%lld", 'i', true},     {"v=%u", 'u', true},
    {"v=%hhu", 'u', true},      {"v=%hu", 'u', true},      {"v=%llu", 'u', true},
    {"v=%x", 'u', true},        {"v=%o", 'u', true},       {"v:bool=%d", 'i', true},
    {"v:bool=%hhd", 'i', true}, {"v:bool=%hu", 'u', true}, {"v:bool=%llu", 'u', true},
    {"v=%s", 's', true},        {"v=%f", 'f', false},      {"v=%c", 'c', false},
    {"v=%p", 'p', false},
};

const int64_t kInts[] = {0,           1,          -1,        127,        128,
                         255,         256,        300,       -129,       32767,
                         32768,       65535,      65536,     2147483647, 2147483648,
                         -2147483649, 4294967296, INT64_MIN, INT64_MAX};

std::string ArgOf(char sig, int64_t v) {
  Args a;
  switch (sig) {
    case 'i':
      a.Int(v);
      break;
    case 'u':
      a.Uint(uint64_t(v));
      break;
    case 'c':
      a.Char(uint32_t(v) & 0x10ffff);
      break;
    case 'p':
      a.Ptr(uint64_t(v));
      break;
    case 'f':
      a.Double(double(v) / 3);
      break;
    default:
      a.Str(v == 0 ? std::string() : "s" + std::to_string(v) + " x=y \"q\"");
  }
  return a.str();
}

TEST(FieldKeysRender, TheWritersKeysAreOfTheReadersText) {
  TempDir dir;
  int checked = 0;
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.field);
    for (int64_t v : kInts) {
      SCOPED_TRACE(v);
      // A ring per record: one block, one field key, never collapsed.
      const std::string path = dir.path() + "/ring" + std::to_string(checked);
      storage::WriterOptions o;
      o.file_size = 64 << 10;
      o.block_size = 4096;
      std::unique_ptr<storage::RingWriter> w;
      ASSERT_TRUE(storage::RingWriter::Open(storage::Env::Default(), path, o, &w).ok());
      const std::string fmt = std::string("m\x1f") + c.field;
      storage::Site site{6, 1, fmt, "k.c"};
      site.flags = LS_ST_F_FIELDS;
      const uint32_t id = w->Intern(site);
      ASSERT_NE(id, 0u);
      storage::Source src{1, 10, 1000, 1000, "app", "app"};
      ASSERT_TRUE(
          AppendRecord(w.get(), src, id, std::string(1, c.sig), ArgOf(c.sig, v), 1000).ok());
      ASSERT_TRUE(w->Flush().ok());
      w.reset();

      std::unique_ptr<storage::RingReader> r;
      ASSERT_TRUE(storage::RingReader::Open(storage::Env::Default(), path, nullptr, &r).ok());
      ASSERT_TRUE(r->SeekOldest().ok());
      storage::Record rec;
      ASSERT_TRUE(r->Next(&rec).ok());
      render::Format f;
      render::Compile(rec.site.fmt, &f, rec.site.flags);
      std::vector<render::FieldValue> fields;
      render::RecordFields(rec, f, &fields);
      ASSERT_EQ(fields.size(), 1u);
      std::string text;
      render::AppendFieldText(fields[0], &text);
      const storage::Layout l = r->layout();
      r.reset();
      const std::string bytes = ReadFile(path);
      const auto *h = reinterpret_cast<const uint8_t *>(bytes.data()) + l.blocks_off;
      ASSERT_TRUE(ls_get_u32(h + LS_BLK_OFF_FLAGS) & LS_BLK_F_FIELD_KEYS);
      const uint8_t *bloom = h + LS_BLK_OFF_BLOOM;
      if (c.keyed) {
        EXPECT_TRUE(FilterHas(bloom, SummaryKey('f', "v=" + text))) << "text '" << text << "'";
        EXPECT_FALSE(FilterHas(bloom, SummaryKey('F', "v")));
      } else {
        EXPECT_TRUE(FilterHas(bloom, SummaryKey('F', "v")));
      }
      checked++;
    }
  }
  EXPECT_EQ(checked, int(std::size(kCases) * std::size(kInts)));
}

}  // namespace
}  // namespace logsink::test
