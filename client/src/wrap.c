/* wrap.c: ls_log and ls_vlog, a run-time level and format for code that
 * wraps its logger. The call site of a (level, format) pair is found by the
 * format's content in a process-wide table of at most LS__WRAP_MAX sites:
 * lookups take no lock (entries are published once and never removed, as a
 * site's id is process-wide and registered per connection), insertions take
 * a mutex. Once the table is full, a format not in it is rendered here with
 * vsnprintf and sent as text, counted in ls_stats.formatted. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "logsink/proto/fields.h"
#include "site.h"

#define LS__WRAP_MAX 4096u
#define LS__WRAP_SLOTS (2u * LS__WRAP_MAX) /* open addressing, at most half full */

typedef struct ls__wrap_entry {
  uint64_t hash;
  ls_site site; /* site.fmt points at fmt below */
  char fmt[];
} ls__wrap_entry;

static ls__wrap_entry *_Atomic ls__wrap_slots[LS__WRAP_SLOTS];
static unsigned ls__wrap_count; /* under ls__wrap_mu */
static pthread_mutex_t ls__wrap_mu = PTHREAD_MUTEX_INITIALIZER;

/* A fork child must not inherit the lock held by another parent thread. */
static void ls__wrap_lock(void) { pthread_mutex_lock(&ls__wrap_mu); }
static void ls__wrap_unlock(void) { pthread_mutex_unlock(&ls__wrap_mu); }
static void ls__wrap_atfork(void) {
  pthread_atfork(ls__wrap_lock, ls__wrap_unlock, ls__wrap_unlock);
}
static pthread_once_t ls__wrap_once = PTHREAD_ONCE_INIT;

/* FNV-1a over the format and the level. */
static uint64_t ls__wrap_hash(const char *fmt, size_t len, int level) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)level;
  for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)fmt[i]) * 1099511628211ull;
  return h;
}

static ls_site *ls__wrap_find(const char *fmt, int level) {
  size_t len = strlen(fmt);
  uint64_t h = ls__wrap_hash(fmt, len, level);
  unsigned i = (unsigned)h & (LS__WRAP_SLOTS - 1);
  for (;; i = (i + 1) & (LS__WRAP_SLOTS - 1)) {
    ls__wrap_entry *e = atomic_load_explicit(&ls__wrap_slots[i], memory_order_acquire);
    if (!e) break;
    if (e->hash == h && e->site.level == level && strcmp(e->fmt, fmt) == 0) return &e->site;
  }
  /* Not there: insert under the lock (another thread may have meanwhile). */
  pthread_once(&ls__wrap_once, ls__wrap_atfork);
  ls_site *found = NULL;
  pthread_mutex_lock(&ls__wrap_mu);
  for (i = (unsigned)h & (LS__WRAP_SLOTS - 1);; i = (i + 1) & (LS__WRAP_SLOTS - 1)) {
    ls__wrap_entry *e = atomic_load_explicit(&ls__wrap_slots[i], memory_order_relaxed);
    if (e && e->hash == h && e->site.level == level && strcmp(e->fmt, fmt) == 0) {
      found = &e->site;
      break;
    }
    if (e) continue;
    if (ls__wrap_count >= LS__WRAP_MAX) break;
    e = calloc(1, sizeof *e + len + 1);
    if (!e) break;
    memcpy(e->fmt, fmt, len + 1);
    e->hash = h;
    e->site.fmt = e->fmt;
    e->site.file = "";
    e->site.line = 0;
    e->site.level = level;
    atomic_store_explicit(&ls__wrap_slots[i], e, memory_order_release);
    ls__wrap_count++;
    found = &e->site;
    break;
  }
  pthread_mutex_unlock(&ls__wrap_mu);
  return found;
}

int ls_vlog(ls_client *c, int level, const char *fmt, va_list ap) {
  if (level < 0 || level > 7 || !fmt) return -EINVAL;
  /* Below the client's level (a run-time format has no file: the default
   * level applies): nothing produced, and no slot of the table taken. */
  if (!c) c = ls__default_get();
  if (c && level > ls__level_all(c) && level > ls__lv_of(c)->rules.level) return 0;
  ls_site *s = ls__wrap_find(fmt, level);
  va_list aq;
  va_copy(aq, ap);
  int rc;
  if (s) {
    rc = ls__vlog_site(c, s, &aq);
  } else {
    /* The table is full (or memory is short): render here, send as text. */
    char buf[4096];
    int n = vsnprintf(buf, sizeof buf, fmt, aq);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof buf) n = sizeof buf - 1;
    /* Fields (LS_FIELDS) become the end of the text, as for a daemon that
     * takes no fields. */
    if (strchr(fmt, LS_FIELDS_SEP))
      for (int i = 0; i < n; i++)
        if (buf[i] == LS_FIELDS_SEP) buf[i] = ' ';
    if (c) atomic_fetch_add_explicit(&c->formatted, 1, memory_order_relaxed);
    rc = ls_log_text(c, level, buf, (size_t)n);
  }
  va_end(aq);
  return rc;
}

int ls_log(ls_client *c, int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = ls_vlog(c, level, fmt, ap);
  va_end(ap);
  return rc;
}
