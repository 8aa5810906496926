/* registry.h: the call sites registered with one client, in registration
 * order, so the sender can INTERN each one on every connection before any
 * record that uses it. The caller serialises access (the client's mutex).
 * Depends on site.h. */
#ifndef LOGSINK_CLIENT_REGISTRY_H
#define LOGSINK_CLIENT_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "logsink/logsink.h"
#include "logsink/proto/wire.h"

typedef struct ls__registry {
  ls_site **v; /* in order of registration */
  size_t len, cap;
  uint64_t *bits[LS_SITE_MAX / 4096 + 1]; /* ids 1..LS_SITE_MAX, 4096 per page */
} ls__registry;

/* Adds the prepared site s (ls__site_prog(s) != NULL) unless it is there.
 * 0 or -ENOMEM. */
LS__HIDDEN int ls__registry_add(ls__registry *g, ls_site *s);
LS__HIDDEN void ls__registry_free(ls__registry *g);

#endif
