// unit.h: the systemd unit a process belongs to, from its cgroup
// (/proc/PID/cgroup), the way journald finds _SYSTEMD_UNIT: the first
// component of the cgroup path below the slices that is a unit name. The
// kernel vouches for the cgroup and only root (systemd) places processes in
// a system unit's cgroup; a user's delegated subtree lies below
// user@UID.service, so its processes can only ever get that unit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace logsink::daemon {

// The longest unit name systemd allows (UNIT_NAME_MAX - 1).
constexpr size_t kMaxUnitName = 255;

// The unit named by the contents of a /proc/PID/cgroup file: from the
// "name=systemd" hierarchy's line when there is one (cgroup v1 and hybrid),
// else the unified "0::" line; "" when the path holds no unit (the root,
// only slices, a malformed line). Pure: the unit tests feed it tables.
std::string UnitFromCgroup(std::string_view cgroup_file);

// Reads /proc/PID/cgroup (at most 8 KiB) and applies UnitFromCgroup; "" when
// it cannot be read (the process is gone, /proc is hidden).
std::string ReadUnit(uint32_t pid);

}  // namespace logsink::daemon
