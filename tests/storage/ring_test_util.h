// ring_test_util.h: helpers shared by the ring tests: argument builders (the
// codec.h encoding), a Reporter that records everything, owned copies of read
// records, and a writer driver that keeps a model of what it appended.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "logsink/proto/codec.h"
#include "logsink/proto/printf.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::test {

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

class Collector : public Reporter {
 public:
  struct Bad {
    uint64_t off;
    std::string why;
  };
  std::vector<Bad> bad;
  uint64_t lost = 0;
  int lost_events = 0;
  void Corruption(uint64_t off, std::string_view why) override {
    bad.push_back(Bad{off, std::string(why)});
  }
  void Lost(uint64_t n) override {
    lost += n;
    lost_events++;
  }
  std::string Dump() const {
    std::string s;
    for (const auto &b : bad) s += std::to_string(b.off) + ": " + b.why + "\n";
    return s;
  }
};

// A record read back, with its views copied.
struct Got {
  Record::Kind kind;
  uint64_t seq, block_seq, ts, tid, source_id;
  uint32_t pid, uid, gid;
  std::string app, comm;
  uint32_t site_id;
  bool site_known;
  uint8_t level;
  uint32_t line;
  std::string fmt, file, args;
  uint64_t truncated, dropped_count, dropped_since;
};

inline Got Copy(const Record &r) {
  return Got{r.kind,
             r.seq,
             r.block_seq,
             r.ts_ns,
             r.tid,
             r.source_id,
             r.pid,
             r.uid,
             r.gid,
             std::string(r.app),
             std::string(r.comm),
             r.site_id,
             r.site_known,
             r.site.level,
             r.site.line,
             std::string(r.site.fmt),
             std::string(r.site.file),
             std::string(r.args),
             r.truncated,
             r.dropped_count,
             r.dropped_since_ns};
}

// Reads until NotFound; fails the test on any other status.
inline std::vector<Got> ReadAll(RingReader *r) {
  std::vector<Got> out;
  Record rec;
  for (;;) {
    Status s = r->Next(&rec);
    if (s.IsNotFound()) break;
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) break;
    out.push_back(Copy(rec));
  }
  return out;
}

// What the test appended: enough to compare with what is read back.
struct Model {
  uint64_t seq, block;
  uint64_t source, tid, ts;
  std::string args;  // one string argument, "%s"-style records
};

// Small ring geometry used by most tests: 4 KiB blocks.
inline uint64_t RingSize(uint32_t blocks, uint32_t block_size = 4096) {
  return 8192 + 4096 + uint64_t(blocks) * block_size;
}

}  // namespace logsink::storage::test
