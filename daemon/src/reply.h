// reply.h: the frames logsinkd sends (STATS, RING, REFUSE, READ_*) and the list of counter
// names and values they carry, shared with the summary line printed at exit.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "counters.h"
#include "logsink/proto/shm.h"
#include "logsink/storage/ring.h"

namespace logsink::daemon {

using CounterFn = std::function<void(std::string_view, uint64_t)>;

// Calls f(name, value) for every counter, in the order of PROTOCOL.md.
void ForEachCounter(const Counters &c, const storage::RingWriter &w, const CounterFn &f);

// Appends a STATS frame with the (name, value) pairs `each` gives its
// argument, in that order.
void AppendCountersFrame(const std::function<void(const CounterFn &)> &each, std::string *out);

// Appends a STATS frame with every counter to *out.
void AppendStatsFrame(const Counters &c, const storage::RingWriter &w, std::string *out);
// Appends a RING frame (the ring's identity, the file's st_dev and st_ino,
// its absolute path) to *out. A path the frame cannot carry (empty, longer
// than LS_RING_PATH_MAX) appends nothing.
void AppendRingFrame(const std::array<uint8_t, 16> &ring_id, uint64_t dev, uint64_t ino,
                     std::string_view path, std::string *out);
// The frames of a read through the daemon (proto/read.h): one record (returns
// the bytes appended), a report of n records lost to the writer, the end of
// what the ring holds now.
// fields: the reader asked for LS_READ_FIELDS (a site's FIELDS flag is sent).
size_t AppendReadRecord(const storage::Record &rec, bool fields, std::string *out);
void AppendReadLost(uint64_t n, std::string *out);
void AppendReadEnd(const std::array<uint8_t, 16> &ring_id, uint64_t examined, uint64_t next_seq,
                   std::string *out);
// Appends a REFUSE frame to *out.
void AppendRefuseFrame(uint32_t version, std::string_view reason, std::string *out);
// The frames of run-time levels (PROTOCOL.md, "Levels at run time"): the
// answer to a version 2 HELLO, and the rules text pushed to a client.
void AppendWelcomeFrame(uint32_t version, uint32_t caps, std::string_view levels, std::string *out);
// SHM: the geometry of the region whose descriptor goes with it (shm.h).
void AppendShmFrame(const ls_shm_geom &g, std::string *out);
void AppendLevelsFrame(std::string_view levels, std::string *out);

}  // namespace logsink::daemon
