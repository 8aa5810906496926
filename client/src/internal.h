/* internal.h: liblogsink's private types: the client, the per-thread staging
 * ring, the prepared call-site program, and the functions the source files
 * share. Not installed. */
#ifndef LOGSINK_CLIENT_INTERNAL_H
#define LOGSINK_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "logsink/logsink.h"
#include "logsink/proto/printf.h"
#include "logsink/proto/wire.h"

#define LS__HIDDEN __attribute__((visibility("hidden")))
#define LS__LIKELY(x) __builtin_expect(!!(x), 1)
#define LS__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LS__CACHELINE 64

/* ---- Prepared call sites (site.c) ---------------------------------------- */

/* How one argument is taken from the va_list. */
enum ls__op {
  LS_OP_INT,
  LS_OP_SCHAR,
  LS_OP_SHORT,
  LS_OP_LONG,
  LS_OP_LLONG,
  LS_OP_INTMAX,
  LS_OP_SSIZE,
  LS_OP_PTRDIFF,
  LS_OP_UINT,
  LS_OP_UCHAR,
  LS_OP_USHORT,
  LS_OP_ULONG,
  LS_OP_ULLONG,
  LS_OP_UINTMAX,
  LS_OP_SIZE,
  LS_OP_UPTRDIFF,
  LS_OP_DOUBLE,
  LS_OP_LDOUBLE,
  LS_OP_CHAR,
  LS_OP_WCHAR,
  LS_OP_STR,
  LS_OP_WSTR,
  LS_OP_ERRNO,
  LS_OP_PTR,
  LS_OP_STAR /* an int width or precision */
};

/* Precision handling of a %s / %ls argument. */
#define LS_PREC_NONE (-1)
#define LS_PREC_STAR (-2) /* the value of the STAR op just before */

typedef struct ls__prog {
  uint32_t id;       /* process-wide site id, 1..LS_SITE_MAX */
  uint8_t nargs;     /* ops */
  uint8_t has_str;   /* a string-like op is present (variable size) */
  uint8_t has_errno; /* %m */
  uint8_t fixed_max; /* worst-case bytes of the non-string args */
  uint8_t op[LS_FMT_MAX_ARGS];
  int32_t prec[LS_FMT_MAX_ARGS]; /* string ops: LS_PREC_* or a precision */
} ls__prog;

/* Parses fmt into *p (id not set). 0 or -EINVAL (refused format), -E2BIG. */
LS__HIDDEN int ls__prog_build(const char *fmt, size_t len, ls__prog *p);

/* Encodes the arguments of p from ap into [out, out + cap). *trunc receives
 * the number of string bytes cut to fit. saved_errno is used by %m. Returns
 * the bytes written (the caller guarantees cap >= p->fixed_max when
 * !p->has_str; string args are cut to fit cap). */
LS__HIDDEN size_t ls__encode_args(const ls__prog *p, va_list *ap, int saved_errno, uint8_t *out,
                                  size_t cap, uint64_t *trunc);

/* Returns the prepared program of a site, preparing it on first use (once per
 * process). NULL when the format is refused or the id space is exhausted. */
LS__HIDDEN const ls__prog *ls__site_prog(ls_site *s);
LS__HIDDEN void ls__site_lock(int lock); /* 1: lock, 0: unlock (fork handlers) */

/* ---- Timestamps (clock.c) ------------------------------------------------ */

extern int ls__tsc_mode LS__HIDDEN; /* 1: stamps are raw TSC ticks; 0: CLOCK_REALTIME ns */
LS__HIDDEN void ls__clock_init(void);
LS__HIDDEN uint64_t ls__realtime_ns(void);

static inline uint64_t ls__stamp(void) {
#if defined(__x86_64__) || defined(__i386__)
  if (LS__LIKELY(ls__tsc_mode)) return __builtin_ia32_rdtsc();
#endif
  return ls__realtime_ns();
}

/* Sender-side conversion of stamps to CLOCK_REALTIME ns (one per sender). */
typedef struct ls__cal {
  uint64_t tsc, ns;     /* latest sample */
  uint64_t a_tsc, a_ns; /* anchor of the rate estimate */
  double ns_per_tick;
  int valid;
} ls__cal;
LS__HIDDEN void ls__cal_update(ls__cal *k);
LS__HIDDEN uint64_t ls__cal_ns(const ls__cal *k, uint64_t stamp);

/* ---- Staging rings (one per thread and client) ---------------------------- */

/* A staged record, 8-byte aligned in the ring:
 *   u32 args_len | u32 site (bit 31: truncated) | u64 stamp | args | [u64 cut bytes]
 * A u32 of LS__PAD in args_len position means "skip to the ring's start". */
#define LS__REC_HDR 16u
#define LS__TRUNC_BIT 0x80000000u
#define LS__PAD 0xffffffffu

typedef struct ls__ring ls__ring;
struct ls__ring {
  /* Producer side: written by the owning thread only. */
  _Alignas(LS__CACHELINE) _Atomic uint64_t head; /* published end of staged records */
  uint64_t cached_tail;
  uint64_t wake_pos;        /* head when the sender was last woken */
  _Atomic uint64_t logged;  /* records staged */
  _Atomic uint64_t dropped; /* records dropped by the producer (ring full) */
  _Atomic uint64_t truncated;
  ls_client *owner;
  uint32_t owner_uid; /* owner->uid when the ring was made */
  uint32_t mask;      /* capacity - 1 */
  uint8_t *buf;
  /* Sender side. */
  _Alignas(LS__CACHELINE) _Atomic uint64_t tail; /* consumed up to here */
  uint64_t tid;
  ls__ring *next;          /* owner's list (owner->mu) */
  ls__ring *tnext;         /* owning thread's list (thread-local) */
  _Atomic int refs;        /* owner's list + owning thread */
  _Atomic int thread_gone; /* the owning thread exited or dropped it */
  _Atomic int owner_dead;  /* the client was closed (or this is a fork child) */
  int tmark;               /* fork child handler: ring of the forking thread */
};

/* ---- The client ------------------------------------------------------------ */

struct ls_client {
  /* Read on every call by logging threads; written rarely (open, fork). */
  _Alignas(LS__CACHELINE) uint32_t uid;
  int flush_level;
  int blocking;
  unsigned block_timeout_ms;
  size_t batch_bytes;
  size_t max_record_bytes;
  size_t ring_bytes;

  /* Wake-up word of the sender (futex), bumped by producers once per batch. */
  _Alignas(LS__CACHELINE) _Atomic uint32_t wake_seq;
  _Atomic uint32_t flush_req;  /* ls_flush requests */
  _Atomic uint32_t flush_done; /* last request fully handled (futex) */
  _Atomic int flush_rc;
  _Atomic int stop;
  _Atomic uint32_t space_seq; /* bumped by the sender after freeing ring space (futex) */
  _Atomic int space_waiters;  /* producers waiting for space (blocking mode) */
  _Atomic uint64_t errors;    /* refused records (hot-path failures only) */
  _Atomic uint64_t dropped_noring;

  /* Everything below is under mu or owned by the sender thread. */
  _Alignas(LS__CACHELINE) pthread_mutex_t mu;
  ls__ring *rings;
  size_t ring_total; /* bytes of all rings */
  ls_site **reg;     /* sites registered with this client, in order */
  size_t reg_len, reg_cap;
  uint64_t *reg_bits[LS_SITE_MAX / 4096 + 1]; /* ids 1..LS_SITE_MAX */
  pthread_t sender;
  int sender_running;
  int sender_needed; /* fork child: start the sender on next use */
  ls_client *gnext;  /* global list of clients */
  int is_default;

  /* Sender state. */
  int fd;
  size_t interned_n; /* reg entries interned on the current connection */
  unsigned backoff_ms;
  uint64_t next_connect_ns;
  int ever_connected;
  uint64_t dropped_sender; /* records dropped by the sender */
  uint64_t dropped_gone;   /* producer drops of freed rings */
  uint64_t logged_gone, truncated_gone;
  uint64_t drop_since_ns; /* first unreported drop */
  ls__cal cal;
  uint8_t *out; /* frame buffer */
  size_t out_len, out_cap;
  uint64_t out_records; /* records in out */
  /* Ends of the RECORDS and DROPPED frames in out, so a send that fails
   * half-way counts exactly the records of the frames it did not complete. */
  struct ls__mark {
    size_t end;
    uint64_t records;
    int dropped_frame;
  } * marks;
  size_t marks_len, marks_cap;
  uint64_t out_frames, out_interns;
  _Atomic uint64_t close_deadline_ns; /* set by ls_close / exit: sends give up by then */
  int pass_lost;                      /* this pass dropped records */
  struct ls__snap {
    ls__ring *ring;
    uint64_t head;
  } * snap;
  size_t snap_cap;
  uint64_t out_dropped_report; /* drops reported by a DROPPED frame in out */

  /* Counters (sender writes, ls_get_stats reads). */
  _Atomic uint64_t st_sent, st_dropped_reported, st_bytes, st_frames, st_interned, st_connects,
      st_reconnects, st_disconnects;
  _Atomic int st_connected;

  ls_options opts;
  char path[108];
  char app[65];
};

/* ring.c / client.c */
LS__HIDDEN ls__ring *ls__ring_get(ls_client *c);
LS__HIDDEN int ls__register_site(ls_client *c, ls_site *s);
LS__HIDDEN void ls__wake(ls_client *c);
LS__HIDDEN int ls__sender_start(ls_client *c);
LS__HIDDEN void *ls__sender_main(void *arg);
LS__HIDDEN void ls__ring_release(ls__ring *r);
LS__HIDDEN uint64_t ls__now_mono_ns(void);
LS__HIDDEN void ls__futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns);
LS__HIDDEN void ls__futex_wake(_Atomic uint32_t *w);
LS__HIDDEN ls_client *ls__default_get(void);
LS__HIDDEN void ls__tl_mark(int on);

#endif
