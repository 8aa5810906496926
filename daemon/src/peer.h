// peer.h: what the kernel tells about the process at the other end of a
// Unix socket: pid, uid and gid (SO_PEERCRED of a connection, SCM_CREDENTIALS
// of a datagram) and the process's name from /proc/PID/comm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace logsink::daemon {

// Trusted facts about the peer, from the kernel at accept.
struct Peer {
  uint32_t pid = 0, uid = 0, gid = 0;
  std::string comm;
  std::string unit{};  // its systemd unit (unit.h), "" when none
  // Its supplementary groups when it connected (SO_PEERGROUPS); filled for
  // connections (not for root, who needs none), empty when unknown.
  std::vector<uint32_t> groups{};
};

// The kernel's pid, uid and gid of a connection (SO_PEERCRED); comm is read
// separately, only for connections that are served. Zeros on failure.
Peer PeerOf(int fd);

// The supplementary groups of a connection's peer as they were when it
// connected (SO_PEERGROUPS); empty when the kernel cannot tell.
std::vector<uint32_t> PeerGroups(int fd);

// Whether the peer may read a file of this owner, group and mode, by its
// permission bits as the kernel checks them (the owner's bits for the
// owner, else the group's for a member of its group, else the others';
// root always). The directories on the way are not checked.
bool MayReadFile(const Peer &p, uint32_t owner, uint32_t group, uint32_t mode);

// Whether pid is a child of parent (its parent pid in /proc/PID/stat) whose
// real and effective uids are both uid: a process the sender started and
// could have connected for itself (a relayed stream, PROTOCOL.md). An
// unreaped child (a zombie) still counts; false when /proc cannot tell.
bool IsChildOf(uint32_t pid, uint32_t parent, uint32_t uid);

// The first `max` bytes of /proc/PID/<name>; "" when it cannot be read.
constexpr size_t kProcFileMax = 16384;
std::string ReadProcFile(uint32_t pid, const char *name, size_t max);

// /proc/PID/comm without its newline; "" when it cannot be read (the
// process is gone, or /proc is hidden).
std::string ReadComm(uint32_t pid);

}  // namespace logsink::daemon
