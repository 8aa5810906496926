/* shm.c: the shared region of a connection (shm.h). */
#define _GNU_SOURCE
#include "shm.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

ls__shm *ls__shm_map(int fd, const ls_shm_geom *g) {
  ls__shm *m = NULL;
  const uint64_t bytes = ls_shm_region_bytes(g->slots, g->slot_bytes, g->sites_bytes);
  struct stat st;
  /* Sealed against shrinking and growing (the daemon did it before it let
   * go of it): no access to it can fault (SIGBUS) in this process. */
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals >= 0 && (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) == (F_SEAL_SHRINK | F_SEAL_GROW) &&
      ls_shm_geom_ok(g) && fstat(fd, &st) == 0 && (uint64_t)st.st_size >= bytes &&
      bytes <= SIZE_MAX && (m = calloc(1, sizeof *m)) != NULL) {
    void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    /* A child of fork gets no mapping of it (PROTOCOL.md: the region is
     * the process's that got it). Without that promise it is not used. */
    if (p != MAP_FAILED && madvise(p, (size_t)bytes, MADV_DONTFORK) == 0) {
      m->base = p;
      m->bytes = (size_t)bytes;
      m->g = *g;
      atomic_init(&m->refs, 1);
    } else {
      if (p != MAP_FAILED) munmap(p, (size_t)bytes);
      free(m);
      m = NULL;
    }
  }
  close(fd);
  return m;
}

void ls__shm_put(ls__shm *m) {
  if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1) return;
  if (!m->forgotten) munmap(m->base, m->bytes);
  free(m);
}

ls__line *ls__shm_slot_take(ls__shm *m, size_t min_bytes, int *slot, uint64_t *base) {
  if (m->g.slot_bytes < min_bytes) return NULL;
  for (uint32_t i = 0; i < m->g.slots; i++) {
    if (atomic_exchange_explicit(&m->used[i], 1, memory_order_acq_rel)) continue;
    ls__line *l = (ls__line *)(m->base + ls_shm_slot_off(m->g.sites_bytes, m->g.slot_bytes, i));
    /* Positions go on growing from the last ring's (a slot's records are
     * all sent before it is free): the daemon's position for it is there. */
    *base = atomic_load_explicit(&l->head, memory_order_relaxed);
    *slot = (int)i;
    atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    return l;
  }
  return NULL;
}

void ls__shm_slot_free(ls__shm *m, int slot) {
  atomic_store_explicit(&m->used[slot], 0, memory_order_release);
  ls__shm_put(m);
}

uint8_t *ls__shm_log_end(ls__shm *m, size_t *room) {
  *room = m->g.sites_bytes - m->log_len;
  return m->base + LS_SHM_LOG_HDR + m->log_len;
}

void ls__shm_log_commit(ls__shm *m, size_t len) {
  if (!len) {
    m->log_full = 1;
    return;
  }
  m->log_len += (uint32_t)len;
  __atomic_store_n((uint64_t *)m->base, (uint64_t)m->log_len, __ATOMIC_RELEASE);
}

void ls__shm_let_go(ls__shm *m) {
  __atomic_store_n((uint64_t *)(m->base + LS_SHM_RELEASED_OFF), (uint64_t)1, __ATOMIC_RELEASE);
}
