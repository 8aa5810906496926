// timeparse.h: parses the --since/--until arguments of logctl: absolute
// ("2026-11-23 10:00:00", ISO 8601 with fraction and zone, "@1763892000.5"),
// relative ("10min ago", "2h ago", "-30s", "1h 30min ago"; durations in
// config/duration.h's grammar) and the words
// "now", "today", "yesterday", "tomorrow". Local time unless a zone is given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace logsink::logctl {

// Parses s relative to now_ns (ns since the epoch). Returns true and sets
// *out_ns, or false with a reason in *why.
bool ParseTime(std::string_view s, uint64_t now_ns, uint64_t *out_ns, std::string *why);

}  // namespace logsink::logctl
