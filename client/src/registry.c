/* registry.c: a client's registered call sites (registry.h). */
#include "registry.h"

#include <errno.h>
#include <stdlib.h>

#include "site.h"

int ls__registry_add(ls__registry *g, ls_site *s) {
  const ls__prog *p = s->ls__prog;
  uint32_t id = p->id, page = id >> 12, bit = id & 4095;
  if (!g->bits[page]) g->bits[page] = calloc(4096 / 64, sizeof(uint64_t));
  if (!g->bits[page]) return -ENOMEM;
  if (g->bits[page][bit / 64] & (1ull << (bit % 64))) return 0;
  if (g->len == g->cap) {
    size_t cap = g->cap ? 2 * g->cap : 64;
    ls_site **n = realloc(g->v, cap * sizeof *n);
    if (!n) return -ENOMEM;
    g->v = n;
    g->cap = cap;
  }
  g->v[g->len++] = s;
  g->bits[page][bit / 64] |= 1ull << (bit % 64);
  return 0;
}

void ls__registry_free(ls__registry *g) {
  for (size_t i = 0; i < sizeof g->bits / sizeof g->bits[0]; i++) free(g->bits[i]);
  free(g->v);
}
