// context.h: what the daemon's inputs share on the loop thread (connections,
// the syslog socket, the kernel's log): the ring writer and its identity,
// the free-text sites, the run-time level rules, the counters, the
// rate-limited error log, the source ids and the memory bound of
// connection state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "counters.h"
#include "logsink/storage/ring.h"
#include "memory_budget.h"
#include "ratelimit.h"
#include "text_record.h"

namespace logsink::daemon {

class WriteWake;   // durability.h
class LevelRules;  // levels.h

// The rate limiter's kind for storage and accept errors (one past the Err kinds):
// they are rare and come from the disk or the kernel, not from one client.
constexpr int kLogKindWrite = int(Err::kCount);
// ... and for relayed streams whose pid was not taken (Session::OnHello).
constexpr int kLogKindRelay = int(Err::kCount) + 1;
// ... and for refused reads through the daemon (Server::StartReader).
constexpr int kLogKindRead = int(Err::kCount) + 2;
// ... and for refused level changes (Server::ServeLevelRequest).
constexpr int kLogKindLevel = int(Err::kCount) + 3;

// A record of a RECORDS frame that passed validation, waiting to be appended.
struct ParsedRecord {
  uint32_t entry;  // the site's index in the session's cache (SiteCache::At)
  uint32_t args_len;
  const uint8_t *args;
  uint64_t ts_ns;
  uint64_t truncated;
};

struct Context {
  storage::RingWriter *writer = nullptr;
  WriteWake *write_wake = nullptr;  // with the writer thread (durability.h)
  TextSites *text = nullptr;        // free-text records (text streams, syslog, kernel)
  LevelRules *levels = nullptr;     // run-time level rules (levels.h)
  // The ring file as RING replies name it: its absolute path, and its
  // stat(2) st_dev and st_ino.
  std::string ring_path;
  uint64_t ring_dev = 0, ring_ino = 0;
  Counters *counters = nullptr;
  uint64_t next_source_id = 1;  // the next ring source's id (a connection, a syslog sender)
  RateLimit<int(Err::kCount) + 4> log_limit;
  // One frame's validated records; shared (one thread), its capacity reused.
  std::vector<ParsedRecord> scratch;
  MemoryBudget memory;
  // What shared-buffer regions may hold at once (their own bound: a
  // region's pages are made by its client, and it must not take the
  // memory bound of everyone's connection state; session.h).
  MemoryBudget shm_memory;
};

// Counts (write_errors) and reports, rate-limited, an append to the ring
// that failed.
void WriteFailed(Context *ctx, const storage::Status &s);

// The cuts of text, all at a UTF-8 character boundary (proto/codec.h's
// ls_utf8_cut, the one rule; bytes that are not UTF-8 are cut anywhere):
// an app label (a HELLO's app, a syslog TAG or APP-NAME) to at most max
// bytes, counted in app_truncated when cut;
std::string_view CutAppLabel(Context *ctx, std::string_view app, uint32_t max);
// and text that a cut already ended (a line past kMaxTextLine, a datagram
// the kernel cut): a partial last character is dropped too, its bytes
// added to *cut.
std::string_view DropPartialChar(std::string_view text, uint64_t *cut);

}  // namespace logsink::daemon
