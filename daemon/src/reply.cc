// reply.cc: encodes STATS and REFUSE frames (PROTOCOL.md) and enumerates the
// counters.
#include "reply.h"

#include <cstdint>
#include <string>

#include "logsink/proto/codec.h"
#include "logsink/proto/wire.h"

namespace logsink::daemon {
namespace {

void PutVarint(std::string *out, uint64_t v) {
  uint8_t b[LS_VARINT_MAX];
  out->append(reinterpret_cast<const char *>(b), ls_put_varint(b, v));
}

void PutStr(std::string *out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s);
}

// Writes the frame header for a payload built after `start`.
void FinishFrame(std::string *out, size_t start) {
  uint8_t len[4];
  ls_put_u32(len, uint32_t(out->size() - start - 4));
  out->replace(start, 4, reinterpret_cast<const char *>(len), 4);
}

}  // namespace

void ForEachCounter(const Counters &c, const storage::RingWriter &w,
                    const std::function<void(std::string_view, uint64_t)> &f) {
  const storage::WriterStats &s = w.stats();
  f("records", s.records);
  f("bytes", s.bytes);
  f("blocks_written", s.blocks_written);
  f("wraps", s.wraps);
  f("flushes", s.flushes);
  f("syncs", c.syncs);
  f("sync_errors", c.sync_errors);
  f("write_errors", c.write_errors);
  f("truncated_records", s.truncated_records);
  f("strtab_full", s.strtab_full);
  f("dropped_reported", c.dropped_reported);
  f("next_record_seq", w.next_record_seq());
  f("connections_current", c.connections_current);
  f("connections_total", c.connections_total);
  f("connections_refused", c.connections_refused);
  f("app_truncated", c.app_truncated);
  f("stats_requests", c.stats_requests);
  for (int i = 0; i < int(Err::kCount); i++) f(ErrName(Err(i)), c.err[i]);
}

void AppendStatsFrame(const Counters &c, const storage::RingWriter &w, std::string *out) {
  size_t start = out->size();
  out->append(4, '\0');
  out->push_back(char(LS_F_STATS));
  std::string body;
  uint64_t n = 0;
  ForEachCounter(c, w, [&](std::string_view name, uint64_t v) {
    PutStr(&body, name);
    PutVarint(&body, v);
    n++;
  });
  PutVarint(out, n);
  out->append(body);
  FinishFrame(out, start);
}

void AppendRefuseFrame(uint32_t version, std::string_view reason, std::string *out) {
  size_t start = out->size();
  out->append(4, '\0');
  out->push_back(char(LS_F_REFUSE));
  uint8_t v[4];
  ls_put_u32(v, version);
  out->append(reinterpret_cast<const char *>(v), 4);
  PutStr(out, reason);
  FinishFrame(out, start);
}

}  // namespace logsink::daemon
