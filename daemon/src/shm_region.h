// shm_region.h: the shared buffers a client with the capability SHM gets
// (PROTOCOL.md, "Shared buffers"; layout in proto's shm.h): a memfd the
// daemon creates, sizes and seals against shrinking and growing (so no
// client can make the daemon's reads fault), mapped read-only here. The
// client writes it at any time: everything read from it is a copy, checked
// by the caller (Session::ShmDrain) as socket bytes are.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "logsink/proto/shm.h"

namespace logsink::daemon {

class ShmRegion {
 public:
  // A new region of g's geometry (ls_shm_geom_ok), or nullptr with *why.
  static std::unique_ptr<ShmRegion> Create(const ls_shm_geom &g, std::string *why);
  ~ShmRegion();
  ShmRegion(const ShmRegion &) = delete;
  ShmRegion &operator=(const ShmRegion &) = delete;

  const ls_shm_geom &geom() const { return geom_; }
  uint64_t bytes() const { return bytes_; }
  // The descriptor to hand the client (-1 once handed: the mapping keeps
  // the memory).
  int fd() const { return fd_; }
  void CloseFd();

  // The words the client publishes (one atomic load each).
  uint64_t Head(uint32_t slot) const;
  uint64_t Tid(uint32_t slot) const;
  uint64_t LogLen() const;
  // Copies slot's whole data (slot_bytes) into *out.
  void CopySlot(uint32_t slot, std::vector<uint8_t> *out) const;
  // Copies the first n bytes of the site log (n <= sites_bytes) into *out.
  void CopyLog(uint64_t n, std::vector<uint8_t> *out) const;

 private:
  ShmRegion() = default;
  const uint8_t *Word(uint64_t off) const { return base_ + off; }

  ls_shm_geom geom_{};
  uint64_t bytes_ = 0;
  int fd_ = -1;
  const uint8_t *base_ = nullptr;
};

}  // namespace logsink::daemon
