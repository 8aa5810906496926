/* shm.h: the shared region a daemon hands a connection (PROTOCOL.md,
 * "Shared buffers"; layout in proto/shm.h): mapping it, its slots (each the
 * line and data of one thread's ring, ring.h), its site log and its
 * `released` word. A region outlives its connection while rings still
 * live in it (references). Depends on ring.h (a slot is a ring's line). */
#ifndef LOGSINK_CLIENT_SHM_H
#define LOGSINK_CLIENT_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "logsink/proto/shm.h"
#include "ring.h"

typedef struct ls__shm {
  uint8_t *base;
  size_t bytes;
  ls_shm_geom g;
  uint32_t log_len; /* bytes of the site log written (the writer's own count) */
  int log_full;     /* a site did not fit: its records cannot be read after a kill */
  _Atomic int refs; /* the client while it is current + each ring in a slot */
  /* A fork child's copy (set by the child handler on every region its
   * clients hold and on the region of every ring of the forking thread,
   * a closed client's included): not mapped in this process
   * (MADV_DONTFORK), so never touched or unmapped here (the child may have
   * mapped something else at that address since). A pid compare would not
   * do: a child in a new pid namespace, or a reused pid, may have the
   * parent's. */
  int forgotten;
  _Atomic uint8_t used[LS_SHM_MAX_SLOTS];
} ls__shm;

/* Maps the region of descriptor fd (the daemon's, geometry g) and closes
 * fd. NULL when it cannot be used: the connection then stages privately. */
LS__HIDDEN ls__shm *ls__shm_map(int fd, const ls_shm_geom *g);
/* Drops a reference; the last one unmaps the region. */
LS__HIDDEN void ls__shm_put(ls__shm *m);
/* A free slot, taken (its line, the position its records start at in
 * *base), or NULL. Rings need data of at least min_bytes. */
LS__HIDDEN ls__line *ls__shm_slot_take(ls__shm *m, size_t min_bytes, int *slot, uint64_t *base);
/* Gives slot i back (all its records sent). */
LS__HIDDEN void ls__shm_slot_free(ls__shm *m, int slot);
/* The site log is written in place, so a call site's first record needs
 * no frame-sized buffer on its thread's stack (a thread may have a small
 * one): ls__shm_log_end says where the
 * next INTERN frame goes and how many bytes are left (bytes past the
 * published length, which the daemon does not read); ls__shm_log_commit
 * then publishes len more bytes (release), or, with len 0 (the frame did
 * not fit), marks the log full. Callers serialize (the client's mu). */
LS__HIDDEN uint8_t *ls__shm_log_end(ls__shm *m, size_t *room);
LS__HIDDEN void ls__shm_log_commit(ls__shm *m, size_t len);
/* Stores `released` (PROTOCOL.md: the client lives on and sends what is
 * staged on another connection). */
LS__HIDDEN void ls__shm_let_go(ls__shm *m);

#endif
