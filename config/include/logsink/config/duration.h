// duration.h: logsink's one duration grammar, shared by the configuration
// (flush_interval, fsync, stall_timeout, ...) and logctl (--since "10min ago").
#pragma once

#include <cstdint>
#include <string_view>

namespace logsink::config {

// Parses one or more terms "<digits>[.<digits>] [unit]", separated by spaces
// and summed: "250ms", "1.5s", "1h 30min". Units (systemd's names): ns nsec
// us usec ms msec s sec secs second seconds m min mins minute minutes h hr
// hour hours d day days w week weeks. A term without a unit is seconds; then
// *unitless (if given) is set. False on anything else or on overflow.
bool ParseDurationNs(std::string_view s, uint64_t *ns, bool *unitless = nullptr);

}  // namespace logsink::config
