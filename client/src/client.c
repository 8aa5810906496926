/* client.c: the client's life cycle: options, ls_open, ls_flush, ls_close,
 * statistics, what the hot path asks of a client (registering a call site,
 * a ring for a new thread), the process-wide default client, and the fork
 * and exit handlers. The top of the library: it uses every other file, and
 * only log.c calls into it. */
#define _GNU_SOURCE
#include "client.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/paths.h"
#include "logsink/proto/wire.h"
#include "sender.h"
#include "site.h"
#include "testing.h"

/* Every client, for the fork and exit handlers. Lock order:
 * ls__def_mu -> site mutex -> ls__all_mu -> client mu. */
static pthread_mutex_t ls__all_mu = PTHREAD_MUTEX_INITIALIZER;
static ls_client *ls__all;
static _Atomic uint32_t ls__next_uid = 1;
static pthread_once_t ls__proc_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t ls__def_mu = PTHREAD_MUTEX_INITIALIZER;
static ls_client *ls__def;

/* logsink.h: LS_LOG's first check. Written under ls__all_mu. */
int ls__level_max = LS_DEBUG;
/* ls__lv.gen: unique per published rules, 31 bits, never 0. */
static _Atomic uint32_t ls__next_gate = 1;

/* A new ls__lv holding r (its FILE rules only), or NULL. */
static ls__lv *ls__lv_new(const ls_level_rules *r, ls__lv *older) {
  ls__lv *lv = malloc(offsetof(ls__lv, rules.rule) + (size_t)r->n * sizeof r->rule[0]);
  if (!lv) return NULL;
  lv->older = older;
  lv->gen = atomic_fetch_add(&ls__next_gate, 1) & 0x7fffffffu;
  if (!lv->gen) lv->gen = atomic_fetch_add(&ls__next_gate, 1) & 0x7fffffffu;
  lv->rules.level = r->level;
  lv->rules.n = r->n;
  memcpy(lv->rules.rule, r->rule, (size_t)r->n * sizeof r->rule[0]);
  return lv;
}

void ls_options_init(ls_options *o) {
  memset(o, 0, sizeof *o);
  o->size = sizeof *o;
  o->max_buffered_bytes = 16u << 20;
  o->thread_buffer_bytes = 256u << 10;
  o->batch_bytes = 32u << 10;
  o->max_record_bytes = 8192;
  o->flush_interval_ms = 100;
  o->flush_level = LS_WARNING;
  o->blocking = LS_BLOCK_WHILE_DRAINING;
  o->block_timeout_ms = 1000;
  o->send_timeout_ms = 1000;
  o->reconnect_min_ms = 10;
  o->reconnect_max_ms = 1000;
  o->close_timeout_ms = 2000;
  o->crash_handler = 1;
  o->send_delay_ms = 2;
  o->level = LS_DEBUG;
  o->shared_buffers = 1;
}

static size_t ls__pow2(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

/* Copies and validates options. 0 or -EINVAL. */
static int ls__options(const ls_options *in, ls_options *o) {
  ls_options_init(o);
  if (in) {
    if (in->size < offsetof(ls_options, max_buffered_bytes) + sizeof(size_t) ||
        in->size > sizeof *o)
      return -EINVAL;
    memcpy(o, in, in->size);
    o->size = sizeof *o;
  }
  if (o->max_record_bytes < 1024 || o->max_record_bytes > (64u << 10)) return -EINVAL;
  if (o->flush_interval_ms == 0 || o->flush_level < -1 || o->flush_level > 7) return -EINVAL;
  if (o->blocking < LS_BLOCK_NEVER || o->blocking > LS_BLOCK_WHILE_DRAINING) return -EINVAL;
  if (o->reconnect_min_ms == 0 || o->reconnect_max_ms < o->reconnect_min_ms) return -EINVAL;
  if (o->thread_buffer_bytes > (1u << 30) || o->batch_bytes == 0) return -EINVAL;
  /* A ring holds at least four records of the largest size. */
  size_t min_ring = ls__pow2(4 * (o->max_record_bytes + LS__REC_HDR + 16));
  o->thread_buffer_bytes = ls__pow2(o->thread_buffer_bytes);
  if (o->thread_buffer_bytes < min_ring) o->thread_buffer_bytes = min_ring;
  if (o->max_buffered_bytes < o->thread_buffer_bytes) return -EINVAL;
  if (o->batch_bytes > o->thread_buffer_bytes / 2) o->batch_bytes = o->thread_buffer_bytes / 2;
  if (o->send_delay_ms > o->flush_interval_ms) o->send_delay_ms = o->flush_interval_ms;
  if (o->level < LS_LEVEL_OFF || o->level > LS_DEBUG) return -EINVAL;
  return 0;
}

/* c's levels: $LOGSINK_LEVEL when set and valid, else the options'. 0, or
 * -EINVAL for options.levels that do not parse. A $LOGSINK_LEVEL that does
 * not parse leaves a message in bad_env (empty otherwise). */
static int ls__levels(ls_client *c, const ls_options *o, char *bad_env, size_t len) {
  char why[192];
  bad_env[0] = 0;
  if (o->levels) {
    if (ls_level_rules_parse(o->levels, o->level, &c->own, why, sizeof why)) return -EINVAL;
  } else {
    ls_level_rules_init(&c->own);
    c->own.level = o->level;
  }
  const char *env = secure_getenv("LOGSINK_LEVEL");
  if (env && *env) { /* empty: as if unset */
    ls_level_rules from_env;
    if (ls_level_rules_parse(env, LS_DEBUG, &from_env, why, sizeof why) == 0)
      c->own = from_env;
    else
      snprintf(bad_env, len, "liblogsink: LOGSINK_LEVEL=\"%.128s\" ignored: %s", env, why);
  }
  return 0;
}

/* c's first levels (its own rules) and their text for HELLO. 0 or -ENOMEM. */
static int ls__levels_publish_own(ls_client *c) {
  char text[LS_LEVELS_TEXT_MAX + 1];
  if (ls_level_rules_text(&c->own, text, sizeof text) < 0) text[0] = 0; /* cannot happen */
  c->own_text = strdup(text);
  c->lv = ls__lv_new(&c->own, NULL);
  return c->own_text && c->lv ? 0 : -ENOMEM;
}

/* Frees c's levels, the replaced ones too. */
static void ls__levels_free(ls_client *c) {
  for (ls__lv *lv = c->lv, *older; lv; lv = older) {
    older = lv->older;
    free(lv);
  }
  c->lv = NULL;
  free(c->own_text);
  c->own_text = NULL;
}

/* The most verbose level the default client would give a site, while it
 * is not open: $LOGSINK_LEVEL's when set and valid, else debug (its
 * options are the defaults). */
static int ls__default_most(void) {
  const char *env = secure_getenv("LOGSINK_LEVEL");
  ls_level_rules r;
  char why[192];
  if (env && *env && ls_level_rules_parse(env, LS_DEBUG, &r, why, sizeof why) == 0)
    return ls_level_rules_most(&r);
  return LS_DEBUG;
}

/* ls__level_max from the open clients' levels, and the default client's
 * while it is not open (a call to it must reach the library, which opens
 * it). Caller holds ls__all_mu. */
static void ls__level_max_update(void) {
  int m = __atomic_load_n(&ls__def, __ATOMIC_ACQUIRE) ? LS_LEVEL_OFF : ls__default_most();
  for (ls_client *c = ls__all; c; c = c->gnext) {
    const int l = ls_level_rules_most(&ls__lv_of(c)->rules);
    if (l > m) m = l;
  }
  __atomic_store_n(&ls__level_max, m, __ATOMIC_RELAXED);
}

/* Starts the sender of a fork child that needs it again. Caller holds c->mu.
 * 0 or -errno. */
static int ls__revive_sender_locked(ls_client *c) {
  return c->sender_needed ? ls__sender_start(c) : 0;
}

int ls__client_add_site(ls_client *c, ls_site *s) {
  pthread_mutex_lock(&c->mu);
  int rc = ls__registry_add(&c->reg, s);
  /* In the region's site log before its first record is staged. */
  if (!rc && c->shm) ls__sender_log_site(c, s);
  pthread_mutex_unlock(&c->mu);
  if (!rc) __atomic_store_n(&s->ls__reg, c->uid, __ATOMIC_RELEASE);
  return rc;
}

/* Waits until the sender's first connect attempt is done, so that a ring
 * made now goes into the region if the daemon hands one: a program that
 * logs right after it starts and is killed keeps those records. At most
 * LS__REGION_WAIT_MS: a connect and its answer take well under a
 * millisecond on an idle machine, and a daemon that answers later (one
 * starting, the connection in its backlog) hands the region then; the
 * thread moves into it at its next call. Not in LS_BLOCK_NEVER mode, nor
 * without a sender. */
#define LS__REGION_WAIT_MS 250u
static void ls__await_region(ls_client *c) {
  if (!c->opts.shared_buffers || c->blocking == LS_BLOCK_NEVER ||
      atomic_load_explicit(&c->shm_ready, memory_order_acquire) ||
      !__atomic_load_n(&c->sender_running, __ATOMIC_ACQUIRE))
    return;
  ls__wake(c);
  const unsigned ms =
      c->opts.send_timeout_ms < LS__REGION_WAIT_MS ? c->opts.send_timeout_ms : LS__REGION_WAIT_MS;
  uint64_t deadline = ls__now_mono_ns() + (uint64_t)ms * 1000000u;
  for (;;) {
    if (atomic_load_explicit(&c->shm_ready, memory_order_acquire)) return;
    uint64_t now = ls__now_mono_ns();
    if (now >= deadline) return;
    ls__futex_wait(&c->shm_ready, 0, deadline - now);
  }
}

ls__ring *ls__client_add_ring(ls_client *c) {
  pthread_mutex_lock(&c->mu);
  /* A fork child's first record on a new thread ring: the records need a
   * sender (ls_flush does the same for a child that only flushes). */
  (void)ls__revive_sender_locked(c);
  pthread_mutex_unlock(&c->mu);
  ls__await_region(c);
  pthread_mutex_lock(&c->mu);
  ls__ring *r = NULL;
  size_t bytes = c->ring_bytes;
  if (c->ring_total + c->ring_bytes <= c->opts.max_buffered_bytes) {
    /* A free slot of the region, if it holds a ring of this client's size
     * at least (then the slot's size), else the process's own memory. */
    int slot = -1;
    uint64_t base = 0;
    ls__line *line = c->shm && c->ring_total + c->shm->g.slot_bytes <= c->opts.max_buffered_bytes
                         ? ls__shm_slot_take(c->shm, c->ring_bytes, &slot, &base)
                         : NULL;
    if (line) {
      bytes = c->shm->g.slot_bytes;
      r = ls__ring_new(c, c->uid, bytes, line, c->shm, slot, base, (uint64_t)gettid());
      if (!r) ls__shm_slot_free(c->shm, slot);
    } else {
      r = ls__ring_new(c, c->uid, bytes, NULL, NULL, -1, 0, (uint64_t)gettid());
    }
  }
  if (!r) {
    pthread_mutex_unlock(&c->mu);
    return NULL;
  }
  c->ring_total += bytes;
  r->next = c->rings;
  c->rings = r;
  pthread_mutex_unlock(&c->mu);
  ls__ring_adopt(r);
  return r;
}

/* ---- fork and exit ---- */

static void ls__atfork_prepare(void) {
  pthread_mutex_lock(&ls__def_mu);
  ls__site_lock(1);
  pthread_mutex_lock(&ls__all_mu);
  for (ls_client *c = ls__all; c; c = c->gnext) pthread_mutex_lock(&c->mu);
}

static void ls__atfork_parent(void) {
  for (ls_client *c = ls__all; c; c = c->gnext) pthread_mutex_unlock(&c->mu);
  pthread_mutex_unlock(&ls__all_mu);
  ls__site_lock(0);
  pthread_mutex_unlock(&ls__def_mu);
}

/* A fork child's copy of c: the parent's rings (their threads do not exist
 * here), connection and counts are the parent's. Start over. */
static void ls__client_reset_child(ls_client *c) {
  c->uid = atomic_fetch_add(&ls__next_uid, 1);
  /* The parent's regions are not mapped here (MADV_DONTFORK): never
   * touched, never unmapped (shm.h, forgotten). */
  for (ls__ring *r = c->rings; r; r = r->next)
    if (r->region) r->region->forgotten = 1;
  if (c->shm) {
    c->shm->forgotten = 1;
    ls__shm_put(c->shm);
    c->shm = NULL;
  }
  atomic_store(&c->shm_ready, 0);
  for (ls__ring *r = c->rings, *next; r; r = next) {
    next = r->next;
    atomic_store(&r->owner_dead, 1);
    if (r->tmark)
      ls__ring_release(r); /* this thread drops it on its next call */
    else
      ls__ring_free(r); /* its thread does not exist here */
  }
  c->rings = NULL;
  c->ring_total = 0;
  c->conn.released = NULL; /* the parent's word, not mapped here */
  ls__conn_reset(&c->conn);
  atomic_store(&c->errors, 0);
  atomic_store(&c->dropped_noring, 0);
  atomic_store(&c->dropped_reentered, 0);
  atomic_store(&c->flush_done, atomic_load(&c->flush_req));
  c->sender_needed = c->sender_running;
  c->sender_running = 0;
}

/* The child has only the forking thread: no sender. */
static void ls__atfork_child(void) {
  ls__ring_mark_mine(1);
  for (ls_client *c = ls__all; c; c = c->gnext) {
    ls__client_reset_child(c);
    pthread_mutex_unlock(&c->mu);
  }
  ls__ring_mark_mine(0);
  pthread_mutex_unlock(&ls__all_mu);
  ls__site_lock(0);
  pthread_mutex_unlock(&ls__def_mu);
}

static void ls__stop_sender(ls_client *c);

/* At exit: send what every client has buffered (bounded), and shut the
 * default client down (its memory stays: other threads may still call). */
static void ls__atexit(void) {
  pthread_mutex_lock(&ls__all_mu);
  size_t n = 0;
  for (ls_client *c = ls__all; c; c = c->gnext) n++;
  ls_client **v = n ? malloc(n * sizeof *v) : NULL;
  n = 0;
  if (v)
    for (ls_client *c = ls__all; c; c = c->gnext) v[n++] = c;
  pthread_mutex_unlock(&ls__all_mu);
  for (size_t i = 0; i < n; i++) {
    if (v[i]->is_default)
      ls__stop_sender(v[i]);
    else
      (void)ls_flush(v[i]);
  }
  free(v);
}

static void ls__proc_init(void) {
  ls__clock_init();
  pthread_atfork(ls__atfork_prepare, ls__atfork_parent, ls__atfork_child);
  atexit(ls__atexit);
}

/* ---- open / close ---- */

ls_client *ls_open(const char *socket_path, const char *app_name, const ls_options *opts) {
  ls_options o;
  int rc = ls__options(opts, &o);
  if (rc) {
    errno = -rc;
    return NULL;
  }
  ls_client *c = aligned_alloc(LS__CACHELINE, (sizeof *c + LS__CACHELINE - 1) & ~(size_t)63);
  if (!c) return NULL;
  memset(c, 0, sizeof *c);
  ls__conn_cfg cfg;
  memset(&cfg, 0, sizeof cfg);
  int in_user_dir = 0;
  if (ls_client_socket(socket_path, cfg.path, sizeof cfg.path, &in_user_dir) < 0 ||
      (in_user_dir && ls_user_dir(cfg.user_dir, sizeof cfg.user_dir) < 0)) {
    free(c);
    errno = ENAMETOOLONG;
    return NULL;
  }
  const char *app = app_name ? app_name : program_invocation_short_name;
  size_t alen = strlen(app);
  alen = ls_utf8_cut((const uint8_t *)app, alen, LS_APP_MAX); /* whole characters */
  memcpy(cfg.app, app, alen);
  cfg.send_timeout_ms = o.send_timeout_ms;
  cfg.reconnect_min_ms = o.reconnect_min_ms;
  cfg.reconnect_window_ms = o.block_timeout_ms;
  cfg.reconnect_max_ms = o.reconnect_max_ms;
  cfg.shm = o.shared_buffers != 0;
  cfg.on_sent = ls__sender_ring_sent;
  cfg.on_sent_arg = c;
  c->opts = o;
  c->flush_level = o.flush_level;
  c->blocking = o.blocking;
  c->block_timeout_ms = o.block_timeout_ms;
  c->batch_bytes = o.batch_bytes;
  c->max_record_bytes = o.max_record_bytes;
  c->ring_bytes = o.thread_buffer_bytes;
  if (ls__conn_init(&c->conn, &cfg, 256u << 10) < 0) {
    ls__conn_free(&c->conn);
    free(c);
    errno = ENOMEM;
    return NULL;
  }
  char bad_env[384];
  if (ls__levels(c, &o, bad_env, sizeof bad_env)) {
    ls__conn_free(&c->conn);
    free(c);
    errno = EINVAL;
    return NULL;
  }
  if (ls__levels_publish_own(c)) {
    ls__levels_free(c);
    ls__conn_free(&c->conn);
    free(c);
    errno = ENOMEM;
    return NULL;
  }
  c->conn.cfg.own_levels = c->own_text;
  /* Every level until the warning below is staged. */
  c->level_all = bad_env[0] ? LS_DEBUG : ls_level_rules_least(&c->own);
  pthread_mutex_init(&c->mu, NULL);
  pthread_once(&ls__proc_once, ls__proc_init);
  c->uid = atomic_fetch_add(&ls__next_uid, 1);

  pthread_mutex_lock(&ls__all_mu);
  rc = ls__sender_start(c);
  if (!rc) {
    c->gnext = ls__all;
    ls__all = c;
    ls__level_max_update();
  }
  pthread_mutex_unlock(&ls__all_mu);
  if (!rc && o.crash_handler) ls__crash_install(&ls__all);
  if (rc) {
    pthread_mutex_destroy(&c->mu);
    ls__conn_free(&c->conn);
    ls__levels_free(c);
    free(c);
    errno = -rc;
    return NULL;
  }
  if (bad_env[0]) {
    /* Said where the records go, whatever the levels; no other thread
     * has c yet. */
    (void)ls__log_text_at_open(c, LS_WARNING, bad_env, strlen(bad_env));
    pthread_mutex_lock(&ls__all_mu); /* the sender may have published pushed rules */
    __atomic_store_n(&c->level_all, ls_level_rules_least(&ls__lv_of(c)->rules), __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ls__all_mu);
  }
  return c;
}

/* Fork child: starts the sender if this process logged anything. Returns 1
 * when there is nothing to send (no sender and no buffers), 0, or -errno. */
static int ls__ensure_sender(ls_client *c) {
  int rc = 0;
  pthread_mutex_lock(&c->mu);
  if (c->sender_needed) rc = c->rings ? ls__revive_sender_locked(c) : 1;
  pthread_mutex_unlock(&c->mu);
  return rc;
}

int ls_flush(ls_client *c) {
  if (!c) return -EINVAL;
  int e = errno;
  int started = ls__ensure_sender(c);
  if (started == 1) return 0; /* a fork child that has logged nothing */
  if (started < 0 || !c->sender_running) {
    errno = e;
    return -ENOTCONN;
  }
  uint32_t req = atomic_fetch_add(&c->flush_req, 1) + 1;
  ls__wake(c);
  uint64_t deadline = ls__now_mono_ns() + (uint64_t)c->opts.close_timeout_ms * 1000000u;
  int rc;
  for (;;) {
    uint32_t done = atomic_load(&c->flush_done);
    if ((int32_t)(done - req) >= 0) {
      rc = atomic_load(&c->flush_rc);
      break;
    }
    uint64_t now = ls__now_mono_ns();
    if (now >= deadline) {
      rc = -ETIMEDOUT;
      break;
    }
    ls__futex_wait(&c->flush_done, done, deadline - now);
  }
  errno = e;
  return rc;
}

/* Final pass with a deadline, then stop the sender and close the socket. */
static void ls__stop_sender(ls_client *c) {
  if (ls__ensure_sender(c) != 0 || !c->sender_running) return;
  atomic_store(&c->conn.closing, 1);
  atomic_store(&c->close_deadline_ns,
               ls__now_mono_ns() + (uint64_t)c->opts.close_timeout_ms * 1000000u);
  atomic_store(&c->stop, 1);
  ls__wake(c);
  pthread_join(c->sender, NULL);
  c->sender_running = 0;
  ls__conn_close(&c->conn);
}

void ls_close(ls_client *c) {
  if (!c) return;
  int e = errno;
  pthread_mutex_lock(&ls__all_mu);
  for (ls_client **pp = &ls__all; *pp; pp = &(*pp)->gnext)
    if (*pp == c) {
      *pp = c->gnext;
      break;
    }
  ls__level_max_update();
  pthread_mutex_unlock(&ls__all_mu);
  ls__stop_sender(c);
  /* Successors no thread moved to lose that thread's reference too. */
  for (ls__ring *r = c->rings; r; r = r->next) {
    if (r->successor && !atomic_load(&r->successor->adopted))
      atomic_store(&r->thread_gone, 1); /* its thread will not move now */
    ls__ring_settle(r);
  }
  for (ls__ring *r = c->rings, *next; r; r = next) {
    next = r->next;
    atomic_store_explicit(&r->owner_dead, 1, memory_order_release);
    ls__ring_release(r);
  }
  if (c->shm) ls__shm_put(c->shm); /* rings still in it keep it mapped */
  ls__registry_free(&c->reg);
  free(c->snap);
  ls__conn_free(&c->conn);
  ls__levels_free(c);
  pthread_mutex_destroy(&c->mu);
  free(c);
  errno = e;
}

/* Whether lv holds exactly the rules r. */
static int ls__lv_same(const ls__lv *lv, const ls_level_rules *r) {
  int same = lv->rules.level == r->level && lv->rules.n == r->n;
  for (int i = 0; same && i < r->n; i++)
    same = lv->rules.rule[i].line == r->rule[i].line &&
           lv->rules.rule[i].level == r->rule[i].level &&
           strcmp(lv->rules.rule[i].file, r->rule[i].file) == 0;
  return same;
}

int ls__client_push_levels(ls_client *c, const char *text) {
  ls_level_rules pushed, merged;
  char why[192];
  if (ls_level_rules_parse(text, LS_LEVEL_UNSET, &pushed, why, sizeof why)) return -EINVAL;
  merged = c->own;
  ls_level_rules_merge(&merged, &pushed);
  ls__lv *cur = c->lv; /* only this thread (the sender) publishes */
  if (ls__lv_same(cur, &merged)) return 0;
  /* Rules published before are published again (their generation is
   * theirs alone, so the answers cached with it still hold): a rule turned
   * on and off again and again keeps one ls__lv per distinct set. */
  ls__lv *lv = NULL;
  for (ls__lv **pp = &cur->older; *pp; pp = &(*pp)->older)
    if (ls__lv_same(*pp, &merged)) {
      lv = *pp;
      *pp = lv->older; /* out of the chain, back at its head */
      lv->older = cur;
      break;
    }
  if (!lv) lv = ls__lv_new(&merged, cur);
  if (!lv) return -ENOMEM;
  /* Under ls__all_mu: ls__level_max follows at once, and ls_open's store
   * of level_all after its warning does not undo this one. */
  pthread_mutex_lock(&ls__all_mu);
  __atomic_store_n(&c->lv, lv, __ATOMIC_RELEASE);
  __atomic_store_n(&c->level_all, ls_level_rules_least(&merged), __ATOMIC_RELAXED);
  ls__level_max_update();
  pthread_mutex_unlock(&ls__all_mu);
  return 0;
}

int ls_get_stats(ls_client *c, ls_stats *out) {
  if (!c || !out || out->size < offsetof(ls_stats, logged) + sizeof(uint64_t)) return -EINVAL;
  ls_stats s;
  memset(&s, 0, sizeof s);
  s.size = out->size < sizeof s ? out->size : sizeof s;
  const ls__conn *k = &c->conn;
  pthread_mutex_lock(&c->mu);
  s.logged = k->logged_gone;
  s.truncated = k->truncated_gone;
  s.dropped = k->dropped_sender + k->dropped_gone + atomic_load(&c->dropped_noring) +
              atomic_load(&c->dropped_reentered);
  for (ls__ring *r = c->rings; r; r = r->next) {
    s.logged += atomic_load_explicit(&r->line->logged, memory_order_relaxed);
    s.truncated += atomic_load_explicit(&r->line->truncated, memory_order_relaxed);
    s.dropped += atomic_load_explicit(&r->dropped, memory_order_relaxed);
    s.buffered_bytes += atomic_load_explicit(&r->line->head, memory_order_relaxed) -
                        atomic_load_explicit(&r->tail, memory_order_relaxed);
  }
  s.shared = c->shm != NULL;
  pthread_mutex_unlock(&c->mu);
  s.errors = atomic_load(&c->errors);
  s.sent = atomic_load(&k->st_sent);
  s.dropped_reported = atomic_load(&k->st_dropped_reported);
  s.bytes_sent = atomic_load(&k->st_bytes);
  s.frames_sent = atomic_load(&k->st_frames);
  s.interned = atomic_load(&k->st_interned);
  s.connects = atomic_load(&k->st_connects);
  s.reconnects = atomic_load(&k->st_reconnects);
  s.disconnects = atomic_load(&k->st_disconnects);
  s.connected = atomic_load(&k->st_link) == LS__LINK_UP;
  s.fd_lost = atomic_load(&k->st_fd_lost);
  s.formatted = atomic_load(&c->formatted);
  memcpy(out, &s, s.size);
  return 0;
}

/* ---- the default client ---- */

ls_client *ls__default_peek(void) { return __atomic_load_n(&ls__def, __ATOMIC_ACQUIRE); }

ls_client *ls__default_get(void) {
  ls_client *c = __atomic_load_n(&ls__def, __ATOMIC_ACQUIRE);
  return c ? c : ls_default();
}

static int ls__default_make(const char *path, const char *app, const ls_options *opts,
                            int explicit_open) {
  int rc = 0;
  pthread_mutex_lock(&ls__def_mu);
  if (ls__def) {
    rc = explicit_open ? -EALREADY : 0;
  } else {
    ls_client *c = ls_open(path, app, opts);
    if (!c) {
      rc = -errno;
    } else {
      c->is_default = 1;
      __atomic_store_n(&ls__def, c, __ATOMIC_RELEASE);
      /* Now counted by its own levels, not by what it would have. */
      pthread_mutex_lock(&ls__all_mu);
      ls__level_max_update();
      pthread_mutex_unlock(&ls__all_mu);
    }
  }
  pthread_mutex_unlock(&ls__def_mu);
  return rc;
}

ls_client *ls_default(void) {
  ls_client *c = __atomic_load_n(&ls__def, __ATOMIC_ACQUIRE);
  if (c) return c;
  int rc = ls__default_make(NULL, NULL, NULL, 0);
  if (rc) {
    errno = -rc;
    return NULL;
  }
  return __atomic_load_n(&ls__def, __ATOMIC_ACQUIRE);
}

int ls_default_open(const char *socket_path, const char *app_name, const ls_options *opts) {
  return ls__default_make(socket_path, app_name, opts, 1);
}

void ls__test_hold_lock(ls_client *c) { pthread_mutex_lock(&c->mu); }
