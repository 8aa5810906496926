// text_record.h: free-text records (a line of a text stream, a syslog
// datagram) stored as ordinary records of a few fixed sites, so every reader
// of the ring shows them without knowing where they came from (FORMAT.md,
// "Free-text records"): the text is the one shown argument of the site's
// format, the syslog header fields ride along as "%.0s" arguments (kept as
// data, rendered as nothing), the site's file names the way in and its line
// carries the syslog facility. A record with named fields (an RFC 5424
// datagram's SD-PARAMs, the kernel's dictionary, a text stream's list:
// text_fields.h) is a record of its kind's site with FIELDS, whose format is
// the kind's, 0x1F and "NAME=%s ..." (FORMAT.md, "Free-text records").
#pragma once

#include <time.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "logsink/storage/ring.h"
#include "text_fields.h"

namespace logsink::daemon {

// The ways in, each one fixed site per (facility, level); the order of
// proto/text_kinds.h's table (its file, format and signature per kind).
enum class TextKind : uint8_t {
  kText,       // a text-stream connection's line (PROTOCOL.md, "Text streams")
  kStdout,     // ... of a program's standard output (`logctl run`)
  kStderr,     // ... of a program's standard error
  kRfc3164,    // a syslog datagram in the BSD form (with or without hostname)
  kRfc5424,    // a syslog datagram in the RFC 5424 form
  kSyslogRaw,  // a datagram that parsed as neither: its bytes, as they came
  kKernel,     // a record of the kernel's log (/dev/kmsg)
  kCount
};

// The site's file name for kind ("text", "stdout", "syslog:rfc5424", ...).
const char *TextKindFile(TextKind k);

// The fields of one free-text record. Only msg is shown; the others exist
// for the syslog kinds (empty when the message had none) and are stored in
// this order: RFC 3164 msg, timestamp, hostname; RFC 5424 msg, timestamp,
// hostname, msgid, structured data.
struct TextFields {
  std::string_view msg;
  std::string_view timestamp, hostname, msgid, sd;
  // kernel: the kernel's sequence number and monotonic time (microseconds)
  // in decimal, and its dictionary ("KEY=VALUE" lines).
  std::string_view kseq, kusec, kdict;
  // A text stream's own fields (its HELLO's list, names already checked);
  // the syslog and kernel kinds' fields come from sd and kdict.
  const std::vector<TextField> *fields = nullptr;
};

// The bounds of the sites free text with fields makes (FORMAT.md, "Free-text
// records"): distinct (kind, facility, level, name list) sites interned in
// one daemon run, and of those the ones a uid other than root brought first.
// Past either bound (or with the string table full, or more than
// kMaxTextFields fields) a record is stored whole as its kind's plain site.
constexpr size_t kMaxTextFieldSites = 4096;
constexpr size_t kMaxTextFieldSitesPerUid = 256;

// Where TextSites counts what became of fields (Counters' members).
struct TextFieldCounters {
  uint64_t *sites = nullptr;      // field sites interned (new name sets)
  uint64_t *fallback = nullptr;   // records whose fields could not get a site
  uint64_t *bad_names = nullptr;  // names not taken: not a field name, or '_'
};

constexpr uint8_t kMaxFacility = 23;

// The daemon's wall clock (CLOCK_REALTIME), ns since the epoch: the
// timestamp of a free-text record.
inline uint64_t WallClockNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}  // syslog facilities 0 (kern) .. 23 (local7)

// Appends free-text records to the ring, interning each site once and
// caching its string-table id. One per daemon (the loop thread).
class TextSites {
 public:
  explicit TextSites(storage::RingWriter *writer) : writer_(writer) {}
  // Where to count records whose sender claimed facility kern without being
  // root (stored as user, as glibc's syslog(3) cannot send kern either).
  void set_kern_refused_counter(uint64_t *c) { kern_refused_ = c; }
  void set_field_counters(const TextFieldCounters &c) { field_counters_ = c; }

  // Appends one record from src at ts_ns (the daemon's clock: a client's
  // timestamp is data, not order). facility is clamped to 0..23 and level to
  // 0..7; facility 0 (kern) from a sender other than root becomes 1 (user),
  // so only the kernel's own messages and root's read as the kernel's; `truncated` counts bytes the
  // caller already cut from the text (a record too big for a block is cut further by the writer).
  storage::Status Append(const storage::Source &src, TextKind kind, uint8_t facility, uint8_t level,
                         uint64_t ts_ns, const TextFields &f, uint64_t truncated);
  // Whether the last Append had fields and stored them as plain text (its
  // kind's site without FIELDS: a bound, the string table full).
  bool last_fields_fallback() const { return last_fallback_; }
  // The bytes the last Append cut so the record fits a block (the string
  // arguments, longest first: FORMAT.md, TRUNC), beyond `truncated`.
  uint64_t last_cut() const { return last_cut_; }
  // Field sites interned so far (the cache's size).
  size_t field_sites() const { return field_ids_.size(); }

 private:
  // The id of the site with FIELDS for (kind, facility, level) and the
  // names in list_, interning it when new and within the bounds; 0 when it
  // cannot be had.
  uint32_t FieldSite(TextKind kind, uint8_t facility, uint8_t level, uint32_t uid);

  storage::RingWriter *writer_;
  uint64_t *kern_refused_ = nullptr;
  TextFieldCounters field_counters_;
  bool last_fallback_ = false;
  TextFieldList list_;     // the fields of the record being appended
  std::string key_, fmt_;  // its cache key and its site's format (capacity reused)
  // (kind, facility, level, names) -> string-table id; never evicted (the
  // string table never forgets a site), bounded by kMaxTextFieldSites.
  std::unordered_map<std::string, uint32_t> field_ids_;
  std::unordered_map<uint32_t, uint32_t> sites_by_uid_;  // field sites each uid brought
  uint32_t ids_[size_t(TextKind::kCount)][kMaxFacility + 1][8] = {};  // 0: not interned yet
  std::string args_;      // the argument bytes of the record being appended (capacity reused)
  std::string cut_args_;  // ... cut to fit a block (capacity reused)
  uint64_t last_cut_ = 0;
};

}  // namespace logsink::daemon
