// shm_region.cc: see shm_region.h.
#include "shm_region.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace logsink::daemon {

std::unique_ptr<ShmRegion> ShmRegion::Create(const ls_shm_geom &g, std::string *why) {
  if (!ls_shm_geom_ok(&g)) {
    *why = "invalid geometry";
    return nullptr;
  }
  std::unique_ptr<ShmRegion> r(new ShmRegion());
  r->geom_ = g;
  r->bytes_ = ls_shm_region_bytes(g.slots, g.slot_bytes, g.sites_bytes);
  r->fd_ = memfd_create("logsink-buffers", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (r->fd_ < 0) {
    *why = fmt::format("memfd_create: {}", strerror(errno));
    return nullptr;
  }
  // Sealed before anyone else has it: the size the uid is charged for is
  // the size it stays, and a client's mapping of it never changes under it.
  if (ftruncate(r->fd_, off_t(r->bytes_)) < 0 ||
      fcntl(r->fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
    *why = fmt::format("sizing and sealing the region: {}", strerror(errno));
    return nullptr;
  }
  return r;
}

ShmRegion::~ShmRegion() {
  if (fd_ >= 0) close(fd_);
}

// pread of a word: the client stores it with one aligned 8-byte store, and
// whatever pread returns (a torn value included) is checked by the caller.
uint64_t ShmRegion::Word(uint64_t off) const {
  uint64_t v = 0;
  if (pread(fd_, &v, sizeof v, off_t(off)) != ssize_t(sizeof v)) return 0;
  return v;
}

void ShmRegion::Copy(uint64_t off, uint64_t n, std::vector<uint8_t> *out) const {
  out->assign(n, 0);  // what a short read leaves is zeros: not a record
  uint64_t got = 0;
  while (got < n) {
    const ssize_t r = pread(fd_, out->data() + got, n - got, off_t(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return;
    got += uint64_t(r);
  }
}

uint64_t ShmRegion::Head(uint32_t slot) const {
  return Word(ls_shm_slot_off(geom_.sites_bytes, geom_.slot_bytes, slot));
}

uint64_t ShmRegion::Tid(uint32_t slot) const {
  return Word(ls_shm_slot_off(geom_.sites_bytes, geom_.slot_bytes, slot) + 8);
}

uint64_t ShmRegion::LogLen() const { return Word(0); }
uint64_t ShmRegion::Released() const { return Word(LS_SHM_RELEASED_OFF); }

void ShmRegion::CopySlot(uint32_t slot, std::vector<uint8_t> *out) const {
  Copy(ls_shm_slot_off(geom_.sites_bytes, geom_.slot_bytes, slot) + LS_SHM_SLOT_HDR,
       geom_.slot_bytes, out);
}

void ShmRegion::CopyLog(uint64_t n, std::vector<uint8_t> *out) const {
  Copy(LS_SHM_LOG_HDR, n, out);
}

}  // namespace logsink::daemon
