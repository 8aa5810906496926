// reply.h: the frames logsinkd sends (STATS, REFUSE) and the list of counter
// names and values they carry, shared with the summary line printed at exit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "counters.h"
#include "logsink/storage/ring.h"

namespace logsink::daemon {

// Calls f(name, value) for every counter, in the order of PROTOCOL.md.
void ForEachCounter(const Counters &c, const storage::RingWriter &w,
                    const std::function<void(std::string_view, uint64_t)> &f);

// Appends a STATS frame with every counter to *out.
void AppendStatsFrame(const Counters &c, const storage::RingWriter &w, std::string *out);
// Appends a REFUSE frame to *out.
void AppendRefuseFrame(uint32_t version, std::string_view reason, std::string *out);

}  // namespace logsink::daemon
