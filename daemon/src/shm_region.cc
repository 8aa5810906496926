// shm_region.cc: see shm_region.h.
#include "shm_region.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <string.h>
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
  // Sealed before anyone else has it: the size cannot change any more, so
  // a read inside it never faults (SIGBUS), whatever the client does.
  if (ftruncate(r->fd_, off_t(r->bytes_)) < 0 ||
      fcntl(r->fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
    *why = fmt::format("sizing and sealing the region: {}", strerror(errno));
    return nullptr;
  }
  void *m = mmap(nullptr, r->bytes_, PROT_READ, MAP_SHARED, r->fd_, 0);
  if (m == MAP_FAILED) {
    *why = fmt::format("mmap: {}", strerror(errno));
    return nullptr;
  }
  r->base_ = static_cast<const uint8_t *>(m);
  return r;
}

ShmRegion::~ShmRegion() {
  if (base_) munmap(const_cast<uint8_t *>(base_), bytes_);
  CloseFd();
}

void ShmRegion::CloseFd() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

namespace {
// An aligned word of the mapping, read once, atomically (the client stores
// it with a release store; acquire makes the bytes it published visible).
uint64_t LoadWord(const uint8_t *p) {
  return __atomic_load_n(reinterpret_cast<const uint64_t *>(p), __ATOMIC_ACQUIRE);
}
}  // namespace

uint64_t ShmRegion::Head(uint32_t slot) const {
  return LoadWord(Word(ls_shm_slot_off(geom_.sites_bytes, geom_.slot_bytes, slot)));
}

uint64_t ShmRegion::Tid(uint32_t slot) const {
  return LoadWord(Word(ls_shm_slot_off(geom_.sites_bytes, geom_.slot_bytes, slot) + 8));
}

uint64_t ShmRegion::LogLen() const { return LoadWord(Word(0)); }

void ShmRegion::CopySlot(uint32_t slot, std::vector<uint8_t> *out) const {
  out->resize(geom_.slot_bytes);
  std::memcpy(out->data(),
              Word(ls_shm_slot_off(geom_.sites_bytes, geom_.slot_bytes, slot) + LS_SHM_SLOT_HDR),
              geom_.slot_bytes);
}

void ShmRegion::CopyLog(uint64_t n, std::vector<uint8_t> *out) const {
  out->resize(n);
  if (n > 0) std::memcpy(out->data(), Word(LS_SHM_LOG_HDR), n);
}

}  // namespace logsink::daemon
