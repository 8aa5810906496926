// reply.cc: encodes STATS, RING and REFUSE frames (PROTOCOL.md) with proto's
// encoders and enumerates the counters.
#include "reply.h"

#include <time.h>

#include <cstdint>
#include <string>

#include "logsink/proto/frame_encode.h"
#include "logsink/proto/read.h"

namespace logsink::daemon {
namespace {

// Runs a proto encoder into `cap` bytes appended to *out and keeps what it
// wrote. The capacities below are exact upper bounds, so a failure is a bug.
template <typename F>
void Append(std::string *out, size_t cap, F encode) {
  size_t start = out->size();
  out->resize(start + cap);
  ptrdiff_t n = encode(reinterpret_cast<uint8_t *>(out->data() + start), cap);
  out->resize(n > 0 ? start + size_t(n) : start);
}

}  // namespace

void ForEachCounter(const Counters &c, const storage::RingWriter &w, const CounterFn &f) {
  const storage::WriterStats &s = w.stats();
  f("records", s.records);
  f("bytes", s.bytes);
  f("blocks_written", s.blocks_written);
  f("wraps", s.wraps);
  f("kept_tier1", s.kept[1]);
  f("kept_tier2", s.kept[2]);
  f("evicted_err", s.evicted[0]);
  f("evicted_warning", s.evicted[1]);
  f("evicted_info", s.evicted[2]);
  f("rescued", s.rescued);
  f("evicted_for_rescue", s.evicted_for_rescue);
  f("flushes", s.flushes);
  f("sealed_raw_bytes", s.sealed_raw_bytes);
  f("sealed_stored_bytes", s.sealed_stored_bytes);
  f("compressed_bytes", s.compressed_bytes);
  f("write_queue_batches", s.queue_batches);
  f("write_queue_waits", s.queue_waits);
  f("write_queue_wait_us", s.queue_wait_ns / 1000);
  f("write_queue_drains", s.queue_drains);
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
  f("sites_cut", c.sites_cut);
  f("sites_renamed", c.sites_renamed);
  f("stats_requests", c.stats_requests);
  f("ring_requests", c.ring_requests);
  f("level_requests", c.level_requests);
  f("level_refused", c.level_refused);
  f("level_pushes", c.level_pushes);
  f("census_requests", c.census_requests);
  f("census_dropped", c.census_dropped);
  f("memory_used", c.memory_used);
  f("accept_emfile", c.accept_emfile);
  f("text_streams", c.text_streams);
  f("text_lines", c.text_lines);
  f("text_lines_cut", c.text_lines_cut);
  f("text_partial_lines", c.text_partial_lines);
  f("relay_streams", c.relay_streams);
  f("relay_pid_refused", c.relay_pid_refused);
  f("text_field_sites", c.text_field_sites);
  f("text_fields_fallback", c.text_fields_fallback);
  f("text_field_names_refused", c.text_field_names_refused);
  f("text_fields_refused", c.text_fields_refused);
  f("syslog_received", c.syslog_received);
  f("syslog_bytes", c.syslog_bytes);
  f("syslog_rfc3164", c.syslog_rfc3164);
  f("syslog_rfc5424", c.syslog_rfc5424);
  f("syslog_malformed", c.syslog_malformed);
  f("syslog_malformed_pri", c.syslog_malformed_pri);
  f("syslog_malformed_rfc3164", c.syslog_malformed_rfc3164);
  f("syslog_malformed_rfc5424", c.syslog_malformed_rfc5424);
  f("syslog_truncated", c.syslog_truncated);
  f("syslog_no_credentials", c.syslog_no_credentials);
  f("syslog_sources", c.syslog_sources);
  f("syslog_sources_evicted", c.syslog_sources_evicted);
  f("kern_refused", c.kern_refused);
  f("kmsg_records", c.kmsg_records);
  f("kmsg_skipped", c.kmsg_skipped);
  f("kmsg_lost", c.kmsg_lost);
  f("kmsg_malformed", c.kmsg_malformed);
  f("kmsg_read_errors", c.kmsg_read_errors);
  f("syslog_budget_yields", c.syslog_budget_yields);
  f("syslog_queue_full", c.syslog_queue_full);
  f("syslog_read_errors", c.syslog_read_errors);
  f("readers_current", c.readers_current);
  f("readers_total", c.readers_total);
  f("readers_refused", c.readers_refused);
  f("read_records", c.read_records);
  f("read_bytes", c.read_bytes);
  f("read_lost", c.read_lost);
  f("read_budget_yields", c.read_budget_yields);
  f("conn_slice_yields", c.conn_slice_yields);
  f("read_socket_waits", c.read_socket_waits);
  f("read_blocks_skipped", c.read_blocks_skipped);
  f("read_errors", c.read_errors);
  f("shm_regions", c.shm_regions);
  f("shm_refused", c.shm_refused);
  f("shm_memory_used", c.shm_memory_used);
  f("shm_drains", c.shm_drains);
  f("shm_kept", c.shm_kept);
  f("shm_records", c.shm_records);
  f("shm_head_backwards", c.shm_head_backwards);
  f("shm_head_lapped", c.shm_head_lapped);
  f("shm_torn", c.shm_torn);
  f("shm_log_bad", c.shm_log_bad);
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const uint64_t now_ns = uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
  f("uptime_ms", now_ns > c.started_mono_ns ? (now_ns - c.started_mono_ns) / 1000000 : 0);
  f("loop_turn_max_us", c.loop_turn_max_us);
  f("loop_turn_max_cpu_us", c.loop_turn_max_cpu_us);
  f("notify_dropped", c.notify_dropped);
  for (int i = 0; i < int(Err::kCount); i++) f(ErrName(Err(i)), c.err[i]);
}

void AppendCountersFrame(const std::function<void(const CounterFn &)> &each, std::string *out) {
  uint64_t n = 0;
  each([&](std::string_view, uint64_t) { n++; });
  Append(out, LS_FRAME_HDR + LS_VARINT_MAX + n * LS_STATSFRAME_ENTRY_MAX,
         [&](uint8_t *buf, size_t cap) -> ptrdiff_t {
           ptrdiff_t at = ls_statsframe_open(buf, cap, n);
           each([&](std::string_view name, uint64_t v) {
             if (at >= 0) {
               ptrdiff_t k =
                   ls_statsframe_add(buf + at, cap - size_t(at), name.data(), name.size(), v);
               at = k < 0 ? k : at + k;
             }
           });
           return at < 0 ? at : ls_frame_close(buf, buf + at);
         });
}

void AppendStatsFrame(const Counters &c, const storage::RingWriter &w, std::string *out) {
  AppendCountersFrame([&](const CounterFn &f) { ForEachCounter(c, w, f); }, out);
}

void AppendRingFrame(const std::array<uint8_t, 16> &ring_id, uint64_t dev, uint64_t ino,
                     std::string_view path, std::string *out) {
  ls_ring r = {ring_id.data(), dev, ino, path.data(), path.size()};
  Append(out, LS_RING_FRAME_MAX,
         [&](uint8_t *buf, size_t cap) { return ls_ring_encode(buf, cap, &r); });
}

void AppendWelcomeFrame(uint32_t version, uint32_t caps, std::string_view levels,
                        std::string *out) {
  const ls_welcome w = {version, caps, levels.data(), levels.size()};
  Append(out, LS_FRAME_HDR + 8 + LS_VARINT_MAX + levels.size(),
         [&](uint8_t *b, size_t cap) { return ls_welcome_encode(b, cap, &w); });
}

void AppendShmFrame(const ls_shm_geom &g, std::string *out) {
  Append(out, LS_FRAME_HDR + 12, [&](uint8_t *b, size_t cap) { return ls_shm_encode(b, cap, &g); });
}

void AppendLevelsFrame(std::string_view levels, std::string *out) {
  Append(out, LS_FRAME_HDR + LS_VARINT_MAX + levels.size(), [&](uint8_t *b, size_t cap) {
    return ls_levels_encode(b, cap, levels.data(), levels.size());
  });
}

void AppendRefuseFrame(uint32_t version, std::string_view reason, std::string *out) {
  ls_refuse r = {version, reason.data(), reason.size()};
  Append(out, LS_FRAME_HDR + 4 + LS_VARINT_MAX + reason.size(),
         [&](uint8_t *buf, size_t cap) { return ls_refuse_encode(buf, cap, &r); });
}

size_t AppendReadRecord(const storage::Record &rec, bool fields, std::string *out) {
  ls_read_record r{};
  r.kind = rec.kind == storage::Record::Kind::kDropped ? LS_READ_KIND_DROPPED : LS_READ_KIND_RECORD;
  r.level = rec.site.level <= LS_LEVEL_MAX ? rec.site.level : LS_LEVEL_MAX;
  r.site_known = rec.site_known ? 1 : 0;
  r.fields = fields && (rec.site.flags & LS_ST_F_FIELDS) ? 1 : 0;
  r.seq = rec.seq;
  r.block_seq = rec.block_seq;
  r.ts_ns = rec.ts_ns;
  r.tid = rec.tid;
  r.source_id = rec.source_id;
  r.pid = rec.pid;
  r.uid = rec.uid;
  r.gid = rec.gid;
  r.site_id = rec.site_id;
  r.line = rec.site.line;
  r.app = rec.app.data();
  r.app_len = rec.app.size();
  r.comm = rec.comm.data();
  r.comm_len = rec.comm.size();
  r.unit = rec.unit.data();
  r.unit_len = rec.unit.size();
  r.fmt = rec.site.fmt.data();
  r.fmt_len = rec.site.fmt.size();
  r.file = rec.site.file.data();
  r.file_len = rec.site.file.size();
  r.args = rec.args.data();
  r.args_len = rec.args.size();
  r.truncated = rec.truncated;
  r.dropped_count = rec.dropped_count;
  r.dropped_since_ns = rec.dropped_since_ns;
  r.block_opened_ns = rec.block_opened_ns;
  r.boot_id = rec.boot_id.data();
  r.block_open_mono_ns = rec.block_open_mono_ns;
  r.block_open_real_ns = rec.block_open_real_ns;
  const size_t before = out->size();
  Append(out, ls_read_record_max(&r),
         [&](uint8_t *buf, size_t cap) { return ls_read_record_encode(buf, cap, &r); });
  return out->size() - before;
}

void AppendReadLost(uint64_t n, std::string *out) {
  Append(out, LS_FRAME_HDR + LS_VARINT_MAX,
         [&](uint8_t *buf, size_t cap) { return ls_read_lost_encode(buf, cap, n); });
}

void AppendReadEnd(const std::array<uint8_t, 16> &ring_id, uint64_t examined, uint64_t next_seq,
                   std::string *out) {
  ls_read_end e = {ring_id.data(), examined, next_seq};
  Append(out, LS_FRAME_HDR + LS_RING_ID_LEN + 2 * LS_VARINT_MAX,
         [&](uint8_t *buf, size_t cap) { return ls_read_end_encode(buf, cap, &e); });
}

}  // namespace logsink::daemon
