// record.h: a record as a reader gets it back (Record, with its call site,
// Site) and the two times it is placed by (FilterTime, MonotonicTime).
// Header-only and apart from the ring library: whoever only handles records
// (the renderer, render/) needs this header and no RingReader or RingWriter.
// proto/FORMAT.md, "Entries" and "What is trusted".
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace logsink::storage {

// A call site: what the string table stores once.
struct Site {
  uint8_t level = 6;  // syslog level 0..7
  uint32_t line = 0;
  std::string_view fmt;
  std::string_view file;
  // LS_ST_F_* (proto/format.h): FIELDS, the format carries named fields
  // after its message (proto/fields.h; FORMAT.md, "Fields").
  uint8_t flags = 0;
};

// The level a DROPPED entry counts at, which has no call site: warning
// (FORMAT.md, "Block summaries"): in block summaries, retention, filters
// and what readers show.
constexpr uint8_t kDroppedLevel = 4;

// A record as read back. Views point into the reader's buffers and stay valid
// until the next call on the reader.
struct Record {
  enum class Kind { kRecord, kDropped };
  Kind kind = Kind::kRecord;
  uint64_t seq = 0;  // record sequence number
  uint64_t block_seq = 0;
  uint64_t ts_ns = 0;
  uint64_t tid = 0;
  uint64_t source_id = 0;
  uint32_t pid = 0, uid = 0, gid = 0;
  std::string_view app, comm;
  std::string_view unit;    // the source's systemd unit ("" when none)
  uint32_t site_id = 0;     // 0 for an inline site
  bool site_known = false;  // false: site_id not in the string table
  Site site;
  std::string_view args;   // raw argument bytes (decode with the signature of site.fmt)
  uint64_t truncated = 0;  // bytes cut from string arguments
  uint64_t dropped_count = 0, dropped_since_ns = 0;  // kDropped only
  // When the writer opened the record's block, by its own clock (whole
  // seconds, not after the true time); 0 when the file does not say.
  uint64_t block_opened_ns = 0;
  // The boot the record's block was written in (all zero: unknown), and
  // the writer's monotonic and realtime clocks read together when the block
  // opened (FORMAT.md, "Boots").
  std::array<uint8_t, 16> boot_id{};
  uint64_t block_open_mono_ns = 0, block_open_real_ns = 0;
};

// A record's monotonic time (CLOCK_MONOTONIC of its boot, ns): its
// timestamp placed against its block's clock pair, 0 when the block has
// none or the record claims to be older than its boot.
inline uint64_t MonotonicTime(const Record &r) {
  if (r.block_open_real_ns == 0) return 0;
  // Unsigned all the way: the timestamp is the client's and may be anything.
  if (r.ts_ns < r.block_open_real_ns) {
    const uint64_t back = r.block_open_real_ns - r.ts_ns;
    return back > r.block_open_mono_ns ? 0 : r.block_open_mono_ns - back;
  }
  const uint64_t ahead = r.ts_ns - r.block_open_real_ns;
  return ahead > ~0ull - r.block_open_mono_ns ? ~0ull : r.block_open_mono_ns + ahead;
}

// A record's own timestamp comes from its client and is not trusted. Time
// filters compare FilterTime(): the timestamp, unless it lies more than
// kClockSlackNs before the writer opened the record's block (a wrong or
// lying clock), then that open time (FORMAT.md, "What is trusted").
constexpr uint64_t kClockSlackNs = 60ull * 1000000000ull;
inline uint64_t FilterTime(const Record &r) {
  if (r.block_opened_ns == 0 || r.ts_ns + kClockSlackNs >= r.block_opened_ns) return r.ts_ns;
  return r.block_opened_ns;
}

}  // namespace logsink::storage
