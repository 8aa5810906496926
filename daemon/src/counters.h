// counters.h: logsinkd's counters (answered to STATS_REQ, printed at exit)
// and the kinds of protocol errors, with their wire names.
#pragma once

#include <cstdint>

namespace logsink::daemon {

// Kinds of per-connection errors; each closes that connection only.
enum class Err : int {
  kBadLength,           // frame length 0 or above max_frame
  kUnknownType,         // frame type not in PROTOCOL.md
  kNoHello,             // a frame other than HELLO/STATS_REQ first, or a second HELLO
  kBadVersion,          // HELLO of another protocol version (answered with REFUSE)
  kBadHello,            // malformed HELLO or flags != 0
  kBadIntern,           // malformed INTERN, bad format, too many sites
  kUnknownSite,         // a record names a site not interned on this connection
  kBadRecord,           // malformed record or arguments not matching the signature
  kBadPayload,          // malformed DROPPED or non-empty STATS_REQ / RING_REQ
  kStalled,             // a frame did not complete within stall_timeout
  kTooManyConnections,  // accepted and closed at once
  kMemory,              // the connection's state would pass max_memory(_per_uid)
  kRepliesUnread,       // STATS_REQ/RING_REQ while 64 KiB of earlier replies are unsent,
                        // or more than 1 MiB of replies and LEVELS pushes unsent
  kUidConnections,      // the uid holds max_connections_per_uid already: closed at once
  kBadRead,             // malformed READ_REQ, READ_REQ after HELLO, or a frame after READ_REQ
  kStatsRefused,        // STATS_REQ from a peer that may not read the ring file
  kCount
};

inline const char *ErrName(Err e) {
  static const char *const kNames[] = {"err_bad_length",
                                       "err_unknown_type",
                                       "err_no_hello",
                                       "err_bad_version",
                                       "err_bad_hello",
                                       "err_bad_intern",
                                       "err_unknown_site",
                                       "err_bad_record",
                                       "err_bad_payload",
                                       "err_stalled",
                                       "err_too_many_connections",
                                       "err_memory",
                                       "err_replies_unread",
                                       "err_uid_connections",
                                       "err_bad_read",
                                       "err_stats_refused"};
  static_assert(sizeof kNames / sizeof kNames[0] == int(Err::kCount));
  return kNames[int(e)];
}

// The counter name without its "err_" prefix, for log lines ("bad_length").
inline const char *ErrShortName(Err e) {
  constexpr size_t kPrefixLen = sizeof "err_" - 1;
  return ErrName(e) + kPrefixLen;
}

struct Counters {
  uint64_t started_mono_ns = 0;  // CLOCK_MONOTONIC at start (uptime_ms)
  // The longest turn of the loop since start, in microseconds: the time
  // between two waits of the loop, less the waiting (Server::MeasureTurn).
  uint64_t loop_turn_max_us = 0;
  // The most CPU time the loop's thread used in one turn, in microseconds:
  // a long turn with little CPU waited for a core, the disk or the writer
  // thread (Server::MeasureTurn).
  uint64_t loop_turn_max_cpu_us = 0;
  // Messages to the service manager dropped because its socket's queue was
  // full (notify.h): the loop never waits for it.
  uint64_t notify_dropped = 0;
  uint64_t err[int(Err::kCount)] = {};
  uint64_t connections_current = 0;
  uint64_t connections_total = 0;    // accepted and served
  uint64_t connections_refused = 0;  // accepted and closed at once (limit)
  uint64_t dropped_reported = 0;     // sum of the counts of DROPPED frames
  uint64_t app_truncated = 0;        // HELLO labels cut to max_app
  uint64_t sites_cut = 0;            // inline sites whose file name was cut to fit a block
  uint64_t sites_renamed = 0;        // non-root sites naming a free-text kind, stored as "./NAME"
  uint64_t write_errors = 0;         // storage Append/Flush failures
  uint64_t syncs = 0;                // fdatasync calls completed
  uint64_t sync_errors = 0;
  uint64_t stats_requests = 0;
  uint64_t ring_requests = 0;       // RING_REQ frames answered
  uint64_t level_requests = 0;      // LEVEL_REQ frames answered (refused ones too)
  uint64_t level_refused = 0;       // ... of them refused (EPERM, EINVAL, ENOSPC, ENOENT)
  uint64_t level_pushes = 0;        // LEVELS frames sent to clients
  uint64_t census_requests = 0;     // CENSUS_REQ frames answered
  uint64_t census_dropped = 0;      // connections whose census passed 1 MiB or the memory bound
  uint64_t accept_emfile = 0;       // connections accepted with the reserve fd and closed (EMFILE)
  uint64_t memory_used = 0;         // bytes of connection state now (a gauge, see MemoryBudget)
  uint64_t text_streams = 0;        // connections that said HELLO with LS_HELLO_TEXT
  uint64_t text_lines = 0;          // lines of text streams stored as records
  uint64_t text_lines_cut = 0;      // ... of which cut (past kMaxTextLine, or to fit a block)
  uint64_t text_partial_lines = 0;  // ... of which had no newline when the stream ended
  uint64_t relay_streams = 0;       // text streams relaying a child whose pid was taken
  uint64_t relay_pid_refused = 0;   // ... whose named pid was not the sender's child (uid)
  // Named fields of free text (text_record.h, text_fields.h).
  uint64_t text_field_sites = 0;          // field sites interned (new name sets)
  uint64_t text_fields_fallback = 0;      // records with fields stored as the plain kind site
  uint64_t text_field_names_refused = 0;  // names not taken: not a field name, or '_'
  uint64_t text_fields_refused = 0;       // text streams refused for their HELLO's field list
  // The syslog socket (daemon/SYSLOG.md).
  uint64_t syslog_received = 0;           // datagrams read (each stored as one record)
  uint64_t syslog_bytes = 0;              // their sizes as sent
  uint64_t syslog_rfc3164 = 0;            // ... parsed as RFC 3164 (with or without hostname)
  uint64_t syslog_rfc5424 = 0;            // ... parsed as RFC 5424
  uint64_t syslog_malformed = 0;          // ... neither: stored raw (syslog:raw), sum of:
  uint64_t syslog_malformed_pri = 0;      //   no valid "<PRI>"
  uint64_t syslog_malformed_rfc3164 = 0;  //   a PRI, then no RFC 3164 timestamp
  uint64_t syslog_malformed_rfc5424 = 0;  //   "<PRI>1 ", then a broken header or SD
  uint64_t syslog_truncated = 0;          // datagrams longer than kMaxSyslogDatagram (cut)
  uint64_t syslog_no_credentials = 0;     // datagrams without SCM_CREDENTIALS (pid 0)
  uint64_t syslog_sources = 0;            // ring sources made for syslog senders
  uint64_t syslog_sources_evicted = 0;    // ... forgotten (kMaxSyslogSources reached)
  uint64_t syslog_budget_yields = 0;      // wakeups that stopped on the read budget
  uint64_t syslog_queue_full = 0;         // times the receive thread waited for the loop
  uint64_t syslog_read_errors = 0;        // recvmsg failures other than EAGAIN/EINTR
  uint64_t kern_refused =
      0;  // free-text records claiming facility kern from uid != 0 (stored as user)
  // Kernel messages (/dev/kmsg; daemon/KERNEL.md).
  uint64_t kmsg_records = 0;    // kernel records stored
  uint64_t kmsg_skipped = 0;    // ... read again after a restart and skipped (already in the ring)
  uint64_t kmsg_lost = 0;       // records the kernel overwrote before they were read
  uint64_t kmsg_malformed = 0;  // records not in the kmsg format (stored as they came)
  uint64_t kmsg_read_errors = 0;  // read failures other than EAGAIN/EINTR/EPIPE
  // Reads through the daemon (reader_session.h; PROTOCOL.md, "Reading through the daemon").
  uint64_t readers_current = 0;      // reads being served (a gauge)
  uint64_t readers_total = 0;        // READ_REQ frames taken
  uint64_t readers_refused = 0;      // ... refused: max_readers or max_readers_per_uid reached
  uint64_t read_records = 0;         // records sent to readers (their own)
  uint64_t read_bytes = 0;           // READ_RECORD bytes sent
  uint64_t read_lost = 0;            // records overwritten before a reader got to them (READ_LOST)
  uint64_t read_budget_yields = 0;   // turns a read stopped at read_blocks_per_turn
  uint64_t conn_slice_yields = 0;    // wakeups a connection's reading stopped at read_slice
  uint64_t read_socket_waits = 0;    // turns a read stopped because its socket had not drained
  uint64_t read_blocks_skipped = 0;  // blocks reads passed over: no record of their uid
  uint64_t read_errors = 0;          // reads ended by an error of the ring reader

  // Shared buffers (session.h; PROTOCOL.md, "Shared buffers").
  uint64_t shm_regions = 0;         // regions handed to clients (capability SHM)
  uint64_t shm_refused = 0;         // ... not handed: shm_max_memory[_per_uid] (or no memfd)
  uint64_t shm_memory_used = 0;     // bytes of regions handed out now (a gauge)
  uint64_t shm_drains = 0;          // regions read after their client was gone
  uint64_t shm_kept = 0;            // ... not read: the client lived on after its stream ended
  uint64_t shm_records = 0;         // records stored from them
  uint64_t shm_head_backwards = 0;  // slots whose head was before their last RECORDS_AT
  uint64_t shm_head_lapped = 0;     // slots whose head was more than a slot past it
  uint64_t shm_torn = 0;            // slots with bytes that were not a record (rest not read)
  uint64_t shm_log_bad = 0;         // site logs with bytes that were not an INTERN frame

  void Count(Err e) { err[int(e)]++; }
  uint64_t errors() const {
    uint64_t n = 0;
    for (uint64_t v : err) n += v;
    return n;
  }
};

}  // namespace logsink::daemon
