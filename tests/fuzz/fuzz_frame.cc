// fuzz_frame.cc: fuzz target of the daemon's frame decoders
// (proto/frame.h): the input is one connection's byte stream, cut into frames
// with ls_frame_parse and decoded the way logsinkd does (HELLO, INTERN with
// the printf signature, RECORDS checked against the interned signatures,
// DROPPED, STATS_REQ, RING_REQ), plus the client-side decoders (REFUSE,
// STATS, RING) and those of a read through the daemon (READ_REQ,
// READ_RECORD, READ_LOST, READ_END) on every payload. Checks that every decoded field lies inside
// its frame and that ls_records_args and ls_args_check agree on the argument
// bytes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>

#include "fuzz_check.h"
#include "logsink/proto/args.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/read.h"
#include "logsink/proto/shm.h"

namespace {

bool Inside(const void *s, size_t n, const uint8_t *lo, const uint8_t *hi) {
  auto *b = static_cast<const uint8_t *>(s);
  return b >= lo && b <= hi && n <= static_cast<size_t>(hi - b);
}

// Reads every byte of [p, p + n) so ASan sees an out-of-bounds view.
unsigned Touch(const void *p, size_t n) {
  unsigned sum = 0;
  auto *b = static_cast<const uint8_t *>(p);
  for (size_t i = 0; i < n; i++) sum += b[i];
  return sum;
}

volatile unsigned g_sink;

// The decoders that do not depend on connection state, on any payload.
// The shared buffers' decoders (proto/shm.h): SHM, RECORDS_AT, and the
// staged-record reader over a slot of 4 KiB whose data are the payload's
// bytes after the first 8 (head, the first 8 bytes, taken modulo two
// slots, so a head past the data is tried too).
void DecodeShm(const uint8_t *p, size_t len) {
  ls_shm_geom g;
  if (ls_shm_decode(p, len, &g) == 0)
    FUZZ_CHECK(ls_shm_geom_ok(&g) &&
               ls_shm_region_bytes(g.slots, g.slot_bytes, g.sites_bytes) < (uint64_t(1) << 33));
  uint64_t slot, at_end;
  const uint8_t *rec;
  size_t rec_len;
  if (ls_records_at_decode(p, len, &slot, &at_end, &rec, &rec_len) == 0)
    FUZZ_CHECK(Inside(rec, rec_len, p, p + len));
  if (len < 8) return;
  static uint8_t data[4096];
  std::memset(data, 0, sizeof data);
  std::memcpy(data, p + 8, std::min(len - 8, sizeof data));
  const uint64_t head = ls_get_u64(p) % (2 * sizeof data);
  uint64_t pos = 0;
  ls_record r;
  int k;
  while ((k = ls_shm_next(data, sizeof data, &pos, head, &r)) > 0) {
    FUZZ_CHECK(pos <= head && Inside(r.args, r.args_len, data, data + sizeof data));
    g_sink = Touch(r.args, r.args_len);
  }
  FUZZ_CHECK(k == 0 || k == -EBADMSG);
}

void DecodeAny(const uint8_t *p, size_t len) {
  const uint8_t *end = p + len;
  DecodeShm(p, len);
  ls_hello h;
  int r = ls_hello_decode(p, len, &h);
  if (r == 0) {
    FUZZ_CHECK(h.version >= LS_PROTO_VERSION_MIN && h.version <= LS_PROTO_VERSION &&
               ls_hello_flags_valid(h.flags));
    FUZZ_CHECK(Inside(h.app, h.app_len, p, end));
    FUZZ_CHECK(h.levels_len <= LS_LEVELS_TEXT_MAX);
    FUZZ_CHECK(h.levels_len == 0 || Inside(h.levels, h.levels_len, p, end));
    g_sink = Touch(h.app, h.app_len) + Touch(h.levels, h.levels_len);
  } else {
    FUZZ_CHECK(r == -EBADMSG || r == -EPROTONOSUPPORT);
  }
  ls_level_req lr;
  if (ls_level_req_decode(p, len, &lr) == 0) {
    FUZZ_CHECK(lr.op <= LS_LEVEL_OP_RESET && lr.rule.level >= -1 && lr.rule.level <= 7);
    FUZZ_CHECK(lr.rule.file_len <= 255 && lr.rule.app_len <= LS_APP_MAX);
    g_sink = Touch(lr.rule.file, lr.rule.file_len) + Touch(lr.rule.unit, lr.rule.unit_len);
  }
  ls_census_iter ci;
  ls_census_site cs;
  if (ls_census_decode(p, len, &ci) == 0)
    while (ls_census_next(&ci, &cs) > 0)
      FUZZ_CHECK(cs.level <= 7 && (cs.fmt_len == 0 || Inside(cs.fmt, cs.fmt_len, p, end)));
  ls_census_answer ca;
  ls_census_client cc, cprev;
  if (ls_census_answer_begin(p, len, &ca) == 0) {
    bool first = true;
    while (ls_census_answer_client(&ca, first ? nullptr : &cprev, &cc) > 0) {
      first = false;
      while (ls_census_next(&cc.sites, &cs) > 0) g_sink = Touch(cs.file, cs.file_len);
      if (cc.sites.left) break;
      cprev = cc;
    }
  }
  ls_level_answer la;
  if (ls_level_answer_begin(p, len, &la) == 0) {
    ls_level_sel sel;
    ls_level_client cl;
    int k;
    while ((k = ls_level_answer_rule(&la, &sel)) > 0) FUZZ_CHECK(sel.file_len <= 255);
    if (k == 0)
      while (ls_level_answer_client(&la, &cl) > 0)
        FUZZ_CHECK(Inside(cl.pushed, cl.pushed_len, p, end) || cl.pushed_len == 0);
  }
  ls_dropped d;
  r = ls_dropped_decode(p, len, &d);
  FUZZ_CHECK(r == 0 || r == -EBADMSG);
  r = ls_stats_req_decode(p, len);
  FUZZ_CHECK(r == (len == 0 ? 0 : -EBADMSG));
  r = ls_ring_req_decode(p, len);
  FUZZ_CHECK(r == (len == 0 ? 0 : -EBADMSG));
  ls_ring rg;
  if (ls_ring_decode(p, len, &rg) == 0) {
    FUZZ_CHECK(Inside(rg.ring_id, LS_RING_ID_LEN, p, end));
    FUZZ_CHECK(Inside(rg.path, rg.path_len, p, end));
    FUZZ_CHECK(rg.path_len >= 1 && rg.path_len <= LS_RING_PATH_MAX);
    FUZZ_CHECK(memchr(rg.path, 0, rg.path_len) == nullptr);
    g_sink = Touch(rg.path, rg.path_len);
  }
  // The frames of a read through the daemon (proto/read.h).
  ls_read_req rq;
  if (ls_read_req_decode(p, len, &rq) == 0)
    FUZZ_CHECK(rq.from <= LS_READ_END && (rq.flags & ~uint64_t{LS_READ_FLAGS}) == 0);
  ls_read_record rr;
  if (ls_read_record_decode(p, len, &rr) == 0) {
    FUZZ_CHECK(rr.kind <= LS_READ_KIND_DROPPED && rr.level <= LS_LEVEL_MAX);
    FUZZ_CHECK(Inside(rr.app, rr.app_len, p, end) && Inside(rr.comm, rr.comm_len, p, end) &&
               Inside(rr.unit, rr.unit_len, p, end) && Inside(rr.fmt, rr.fmt_len, p, end) &&
               Inside(rr.file, rr.file_len, p, end) && Inside(rr.args, rr.args_len, p, end) &&
               Inside(rr.boot_id, LS_BOOT_ID_LEN, p, end));
    g_sink = Touch(rr.args, rr.args_len) + Touch(rr.fmt, rr.fmt_len);
  }
  uint64_t lost;
  if (ls_read_lost_decode(p, len, &lost) == 0) FUZZ_CHECK(lost > 0);
  ls_read_end re;
  if (ls_read_end_decode(p, len, &re) == 0) FUZZ_CHECK(Inside(re.ring_id, LS_RING_ID_LEN, p, end));
  ls_refuse rf;
  if (ls_refuse_decode(p, len, &rf) == 0) {
    FUZZ_CHECK(Inside(rf.reason, rf.reason_len, p, end));
    g_sink = Touch(rf.reason, rf.reason_len);
  }
  ls_statsframe_iter st;
  if (ls_statsframe_begin(p, len, &st) == 0) {
    const char *name;
    size_t name_len;
    uint64_t value;
    uint64_t n = st.left, got = 0;
    while ((r = ls_statsframe_next(&st, &name, &name_len, &value)) == 1) {
      FUZZ_CHECK(Inside(name, name_len, p, end) && name_len <= 255);
      g_sink = Touch(name, name_len);
      got++;
    }
    FUZZ_CHECK(r == 0 || r == -EBADMSG);
    if (r == 0) FUZZ_CHECK(got == n);
  }
}

struct Conn {
  bool hello = false;
  std::unordered_map<uint32_t, std::string> sigs;  // site -> signature
  size_t interns = 0;
};

constexpr size_t kMaxSites = 65536;  // logsinkd's default max_sites_per_connection

// Returns false when the daemon would close the connection.
bool OnIntern(Conn *c, const uint8_t *p, size_t len) {
  ls_intern in;
  if (ls_intern_decode(p, len, &in) != 0) return false;
  FUZZ_CHECK(in.site >= 1 && in.site <= LS_SITE_MAX && in.level <= LS_LEVEL_MAX);
  FUZZ_CHECK(in.fmt_len <= LS_INTERN_MAX_FMT && in.file_len <= LS_INTERN_MAX_FILE);
  FUZZ_CHECK(Inside(in.fmt, in.fmt_len, p, p + len) && Inside(in.file, in.file_len, p, p + len));
  g_sink = Touch(in.file, in.file_len);
  // A field list (the daemon takes it with the capability): checked within
  // the format; every field it walks lies inside it.
  if (in.fields) {
    const int k = ls_fields_check(in.fmt, in.fmt_len, 0);
    if (k < 0) return false;
    const size_t msg = ls_fields_message_len(in.fmt, in.fmt_len);
    size_t pos = msg;
    ls_field fl;
    int seen = 0;
    while (ls_field_next(in.fmt, in.fmt_len, msg, &pos, &fl) > 0) {
      FUZZ_CHECK(Inside(fl.name, fl.name_len, p, p + len));
      seen++;
    }
    FUZZ_CHECK(seen == k);
  }
  char sig[LS_FMT_MAX_ARGS + 1];
  int n = ls_fmt_signature(in.fmt, in.fmt_len, sig, sizeof sig);
  if (n < 0) {
    FUZZ_CHECK(n == -EINVAL || n == -E2BIG);
    return false;
  }
  FUZZ_CHECK(n <= LS_FMT_MAX_ARGS && std::strlen(sig) == static_cast<size_t>(n));
  if (++c->interns > kMaxSites) return false;
  c->sigs[in.site] = sig;
  return true;
}

bool OnRecords(Conn *c, const uint8_t *p, size_t len) {
  const uint8_t *end = p + len;
  ls_records it;
  if (ls_records_begin(p, len, &it) != 0) return false;
  ls_record rec;
  int r;
  while ((r = ls_records_next(&it, &rec)) == 1) {
    FUZZ_CHECK(rec.site >= 1 && rec.site <= LS_SITE_MAX);
    FUZZ_CHECK(it.p >= p && it.p <= end);
    auto s = c->sigs.find(rec.site);
    if (s == c->sigs.end()) return false;  // err_unknown_site
    const uint8_t *before = it.p;
    if (ls_records_args(&it, s->second.c_str(), &rec) != 0) {
      // ls_args_span (fast varint skip) and ls_arg_get must agree: the rest
      // of the payload does not start with a whole argument list either.
      FUZZ_CHECK(ls_args_check(s->second.c_str(), before, static_cast<size_t>(end - before)) != 0);
      return false;  // err_bad_record
    }
    FUZZ_CHECK(rec.args == before && Inside(rec.args, rec.args_len, p, end));
    FUZZ_CHECK(it.p == rec.args + rec.args_len);
    // The span the daemon stores is exactly one argument list of the signature.
    FUZZ_CHECK(ls_args_check(s->second.c_str(), rec.args, rec.args_len) == 0);
    // And what logctl will decode from it stays inside it.
    const uint8_t *a = rec.args, *aend = rec.args + rec.args_len;
    for (const char *t = s->second.c_str(); *t; t++) {
      ls_arg arg;
      size_t k = ls_arg_get(*t, a, aend, &arg);
      FUZZ_CHECK(k > 0 && k <= static_cast<size_t>(aend - a));
      if (*t == LS_ARG_STR) {
        FUZZ_CHECK(Inside(arg.s, arg.len, a, aend));
        g_sink = Touch(arg.s, arg.len);
      }
      a += k;
    }
    FUZZ_CHECK(a == aend);
  }
  FUZZ_CHECK(r == 0 || r == -EBADMSG);
  return r == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  // Byte 0 picks the daemon's max_frame: small values reach the E2BIG path.
  static const uint32_t kMax[] = {LS_FRAME_DEFAULT_MAX, 64, 4096, LS_FRAME_MAX, 0xffffffffu};
  uint32_t max_frame = kMax[data[0] % (sizeof kMax / sizeof kMax[0])];
  const uint8_t *p = data + 1, *end = data + size;
  Conn conn;
  while (p < end) {
    size_t avail = static_cast<size_t>(end - p);
    ls_frame f;
    ptrdiff_t n = ls_frame_parse(p, avail, max_frame, &f);
    if (n <= 0) {
      FUZZ_CHECK(n == 0 || n == -EBADMSG || n == -E2BIG);
      if (n == 0) FUZZ_CHECK(avail < 4 || ls_get_u32(p) + 4ull > avail);
      break;
    }
    FUZZ_CHECK(static_cast<size_t>(n) <= avail && static_cast<size_t>(n) == LS_FRAME_HDR + f.len);
    FUZZ_CHECK(f.payload == p + LS_FRAME_HDR && f.len + 1 <= max_frame);
    // Any shorter prefix of the same frame is "need more bytes".
    ls_frame g;
    FUZZ_CHECK(ls_frame_parse(p, static_cast<size_t>(n) - 1, max_frame, &g) == 0);
    DecodeAny(f.payload, f.len);
    bool ok = true;
    if (f.type == LS_F_STATS_REQ) {
      ok = ls_stats_req_decode(f.payload, f.len) == 0;
    } else if (f.type == LS_F_RING_REQ) {
      ok = ls_ring_req_decode(f.payload, f.len) == 0;
    } else if (!conn.hello) {
      ls_hello h;
      ok = f.type == LS_F_HELLO && ls_hello_decode(f.payload, f.len, &h) == 0;
      conn.hello = ok;
    } else {
      switch (f.type) {
        case LS_F_INTERN:
          ok = OnIntern(&conn, f.payload, f.len);
          break;
        case LS_F_RECORDS:
          ok = OnRecords(&conn, f.payload, f.len);
          break;
        case LS_F_DROPPED: {
          ls_dropped d;
          ok = ls_dropped_decode(f.payload, f.len, &d) == 0;
          break;
        }
        default:
          ok = false;  // a second HELLO or an unknown type
      }
    }
    if (!ok) break;  // the daemon closes the connection
    p += n;
  }
  return 0;
}
