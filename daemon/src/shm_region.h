// shm_region.h: the shared buffers a client with the capability SHM gets
// (PROTOCOL.md, "Shared buffers"; layout in proto's shm.h): a memfd the
// daemon creates, sizes and seals against shrinking and growing. The
// daemon never maps it: it reads the words and bytes it needs with pread,
// which returns a hole (a page the client never wrote) as zeros without
// allocating it, so a client cannot make the daemon own pages that outlive
// the connection's charge. The client writes it at any time: everything
// read from it is a copy, checked by the caller (Session::ShmDrain) as
// socket bytes are.
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
  // The descriptor (handed to the client once, kept for reading).
  int fd() const { return fd_; }

  // The words the client publishes, one read each (0 when the read fails).
  uint64_t Head(uint32_t slot) const;
  uint64_t Tid(uint32_t slot) const;
  uint64_t LogLen() const;
  uint64_t Released() const;
  // Copies slot's whole data (slot_bytes) into *out.
  void CopySlot(uint32_t slot, std::vector<uint8_t> *out) const;
  // Copies the first n bytes of the site log (n <= sites_bytes) into *out.
  void CopyLog(uint64_t n, std::vector<uint8_t> *out) const;

 private:
  ShmRegion() = default;
  uint64_t Word(uint64_t off) const;
  void Copy(uint64_t off, uint64_t n, std::vector<uint8_t> *out) const;

  ls_shm_geom geom_{};
  uint64_t bytes_ = 0;
  int fd_ = -1;
};

}  // namespace logsink::daemon
