// wire_encoder.h: a small encoder of wire-protocol frames for tests, written
// from proto/PROTOCOL.md independently of the daemon (uses only proto/codec.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "logsink/proto/codec.h"
#include "logsink/proto/wire.h"

namespace logsink::test {

inline void PutVarint(std::string *out, uint64_t v) {
  uint8_t b[LS_VARINT_MAX];
  out->append(reinterpret_cast<const char *>(b), ls_put_varint(b, v));
}
inline void PutU32(std::string *out, uint32_t v) {
  uint8_t b[4];
  ls_put_u32(b, v);
  out->append(reinterpret_cast<const char *>(b), 4);
}
inline void PutStr(std::string *out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s);
}

// u32 len | u8 type | payload
inline std::string Frame(uint8_t type, std::string_view payload) {
  std::string f;
  PutU32(&f, uint32_t(payload.size() + 1));
  f.push_back(char(type));
  f.append(payload);
  return f;
}

inline std::string Hello(uint32_t version, std::string_view app, uint32_t flags = 0) {
  std::string p;
  PutU32(&p, version);
  PutU32(&p, flags);
  PutStr(&p, app);
  return Frame(LS_F_HELLO, p);
}

// Version 2's HELLO: version 1's fields, then u32 caps | str levels.
inline std::string Hello2(std::string_view app, uint32_t caps, std::string_view levels) {
  std::string p;
  PutU32(&p, 2);
  PutU32(&p, 0);
  PutStr(&p, app);
  PutU32(&p, caps);
  PutStr(&p, levels);
  return Frame(LS_F_HELLO, p);
}

inline std::string Welcome(uint32_t version, uint32_t caps, std::string_view levels) {
  std::string p;
  PutU32(&p, version);
  PutU32(&p, caps);
  PutStr(&p, levels);
  return Frame(LS_F_WELCOME, p);
}

inline std::string Levels(std::string_view levels) {
  std::string p;
  PutStr(&p, levels);
  return Frame(LS_F_LEVELS, p);
}

// A rule of LEVEL_REQ / LEVEL_ANSWER ("Levels at run time"): level 0..7, or
// 255 for off.
struct WireRule {
  uint8_t which = 0;
  std::string app;
  uint64_t pid = 0;
  std::string unit;
  uint64_t uid = 0;
  std::string file;
  uint64_t line = 0;
  uint8_t level = 0;
};

inline void PutRule(std::string *p, const WireRule &r) {
  p->push_back(char(r.which));
  PutStr(p, r.app);
  PutVarint(p, r.pid);
  PutStr(p, r.unit);
  PutVarint(p, r.uid);
  PutStr(p, r.file);
  PutVarint(p, r.line);
  p->push_back(char(r.level));
}

inline std::string LevelReq(uint8_t op, const WireRule &r) {
  std::string p(1, char(op));
  PutRule(&p, r);
  return Frame(LS_F_LEVEL_REQ, p);
}

inline std::string Intern(uint64_t site, uint8_t level, uint64_t line, std::string_view fmt,
                          std::string_view file) {
  std::string p;
  PutVarint(&p, site);
  p.push_back(char(level));
  PutVarint(&p, line);
  PutStr(&p, fmt);
  PutStr(&p, file);
  return Frame(LS_F_INTERN, p);
}

// One argument, encoded by its signature type (PROTOCOL.md "Arguments").
struct Arg {
  char type = 'i';
  uint64_t u = 0;
  double f = 0;
  std::string s;
  static Arg I(int64_t v) { return Arg{'i', uint64_t(v), 0, {}}; }
  static Arg U(uint64_t v) { return Arg{'u', v, 0, {}}; }
  static Arg F(double v) { return Arg{'f', 0, v, {}}; }
  static Arg C(uint32_t v) { return Arg{'c', v, 0, {}}; }
  static Arg S(std::string v) { return Arg{'s', 0, 0, std::move(v)}; }
  static Arg P(uint64_t v) { return Arg{'p', v, 0, {}}; }
};

inline std::string EncodeArgs(const std::vector<Arg> &args) {
  std::string out;
  for (const Arg &a : args) {
    switch (a.type) {
      case 'i':
        PutVarint(&out, ls_zigzag(int64_t(a.u)));
        break;
      case 'f': {
        char b[8];
        std::memcpy(b, &a.f, 8);
        out.append(b, 8);
        break;
      }
      case 's':
        PutStr(&out, a.s);
        break;
      default:  // u c p
        PutVarint(&out, a.u);
    }
  }
  return out;
}

struct Rec {
  uint64_t site = 1;
  uint64_t ts_ns = 0;  // absolute; the encoder writes deltas
  std::vector<Arg> args;
  bool trunc = false;
  uint64_t truncated = 0;
  std::string raw_args;  // used instead of args when non-empty
  Rec(uint64_t s, uint64_t ts, std::vector<Arg> a = {}, bool tr = false, uint64_t cut = 0,
      std::string raw = {})
      : site(s),
        ts_ns(ts),
        args(std::move(a)),
        trunc(tr),
        truncated(cut),
        raw_args(std::move(raw)) {}
};

inline std::string RecordsPayload(uint64_t tid, const std::vector<Rec> &recs) {
  std::string p;
  PutVarint(&p, tid);
  uint64_t prev = 0;
  for (const Rec &r : recs) {
    PutVarint(&p, (r.site << 1) | (r.trunc ? 1 : 0));
    if (r.trunc) PutVarint(&p, r.truncated);
    PutVarint(&p, ls_zigzag(int64_t(r.ts_ns - prev)));
    prev = r.ts_ns;
    p += r.raw_args.empty() ? EncodeArgs(r.args) : r.raw_args;
  }
  return p;
}

inline std::string Records(uint64_t tid, const std::vector<Rec> &recs) {
  return Frame(LS_F_RECORDS, RecordsPayload(tid, recs));
}

inline std::string Dropped(uint64_t count, uint64_t since_ns, uint64_t now_ns) {
  std::string p;
  PutVarint(&p, count);
  PutVarint(&p, since_ns);
  PutVarint(&p, now_ns);
  return Frame(LS_F_DROPPED, p);
}

inline std::string StatsReq() { return Frame(LS_F_STATS_REQ, ""); }

inline std::string RingReq() { return Frame(LS_F_RING_REQ, ""); }

// RING: the 16 identity bytes as they are, dev, ino, then str path.
inline std::string Ring(std::string_view ring_id, uint64_t dev, uint64_t ino,
                        std::string_view path) {
  std::string p(ring_id);
  PutVarint(&p, dev);
  PutVarint(&p, ino);
  PutStr(&p, path);
  return Frame(LS_F_RING, p);
}

inline std::string Refuse(uint32_t version, std::string_view reason) {
  std::string p;
  PutU32(&p, version);
  PutStr(&p, reason);
  return Frame(LS_F_REFUSE, p);
}

inline std::string Stats(const std::vector<std::pair<std::string, uint64_t>> &counters) {
  std::string p;
  PutVarint(&p, counters.size());
  for (const auto &[name, v] : counters) {
    PutStr(&p, name);
    PutVarint(&p, v);
  }
  return Frame(LS_F_STATS, p);
}

inline std::string ToHex(std::string_view b) {
  static const char *d = "0123456789abcdef";
  std::string h;
  for (unsigned char c : b) {
    h.push_back(d[c >> 4]);
    h.push_back(d[c & 15]);
  }
  return h;
}

}  // namespace logsink::test
