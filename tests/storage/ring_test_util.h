// ring_test_util.h: helpers shared by the ring tests: argument builders (the
// codec.h encoding), signatures, the model of what a test appended and the
// small ring geometry. Read-back (owned records, the recording Reporter) is
// tests/common's.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/ring_check.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/printf.h"
#include "logsink/storage/ring.h"

namespace logsink::test {

using namespace ::logsink::storage;  // the ring tests name storage types unqualified

// Builds argument bytes in the order of a signature.
class Args {
 public:
  Args &Int(int64_t v) { return Var(ls_zigzag(v)); }
  Args &Uint(uint64_t v) { return Var(v); }
  Args &Char(uint32_t v) { return Var(v); }
  Args &Ptr(uint64_t v) { return Var(v); }
  Args &Double(double d) {
    uint8_t b[8];
    std::memcpy(b, &d, 8);
    s_.append(reinterpret_cast<char *>(b), 8);
    return *this;
  }
  Args &Str(std::string_view v) {
    Var(v.size());
    s_.append(v);
    return *this;
  }
  const std::string &str() const { return s_; }

 private:
  Args &Var(uint64_t v) {
    uint8_t b[LS_VARINT_MAX];
    s_.append(reinterpret_cast<char *>(b), ls_put_varint(b, v));
    return *this;
  }
  std::string s_;
};

inline std::string Signature(std::string_view fmt) {
  char sig[LS_FMT_MAX_ARGS + 1];
  int n = ls_fmt_signature(fmt.data(), fmt.size(), sig, sizeof sig);
  EXPECT_GE(n, 0) << fmt;
  return n >= 0 ? std::string(sig, n) : std::string();
}

// What the test appended: enough to compare with what is read back.
struct Model {
  uint64_t seq, block;
  uint64_t source, tid, ts;
  std::string args;  // one string argument, "%s"-style records
};

// A source of uid (gid the same) labelled app, its pid 100 + id: the
// retention tests' writers, each source apart by id.
inline Source TestSource(uint64_t id, uint32_t uid, const char *app) {
  Source s;
  s.id = id;
  s.pid = uint32_t(100 + id);
  s.uid = s.gid = uid;
  s.app = app;
  s.comm = app;
  return s;
}

// Small ring geometry used by most tests: 4 KiB blocks.
inline uint64_t RingSize(uint32_t blocks, uint32_t block_size = 4096) {
  return 8192 + 4096 + uint64_t(blocks) * block_size;
}

// A writer on a fresh ring of `blocks` blocks of bs bytes at path in env
// (null, with a test failure, when it cannot open).
// codec: none by default, the block layout as it is (compression:
// ring_compress_test).
inline std::unique_ptr<RingWriter> OpenRing(Env *env, const std::string &path, uint32_t blocks,
                                            uint32_t bs = 4096, uint8_t codec = LS_CODEC_NONE) {
  WriterOptions o;
  o.codec = codec;
  o.file_size = RingSize(blocks, bs);
  o.block_size = bs;
  std::unique_ptr<RingWriter> w;
  Status s = RingWriter::Open(env, path, o, &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return w;
}

// A reader of the ring at path in env, reporting to rep, with no CRC
// retries (nothing races in these tests); null, with a test failure, when it
// cannot open.
inline std::unique_ptr<RingReader> OpenReader(Env *env, const std::string &path, Reporter *rep) {
  std::unique_ptr<RingReader> r;
  ReaderOptions ro;
  ro.crc_retries = 0;
  Status s = RingReader::Open(env, path, rep, ro, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return r;
}

// Every record r reads, oldest first, skipping the blocks filter rules out
// (none: every block; use_index: see RingReader::SetFilter); none when r is
// null.
inline std::vector<OwnedRecord> ReadRecords(RingReader *r, const RecordFilter *filter = nullptr,
                                            bool use_index = true) {
  std::vector<OwnedRecord> out;
  if (!r) return out;
  r->SetFilter(filter, use_index);
  EXPECT_TRUE(ReadAllRecords(r, &out).ok());
  return out;
}

}  // namespace logsink::test
