/* logsink.h: the public API of liblogsink, the C client library that ships
 * printf-style log records to logsinkd over a Unix socket.
 *
 * Errors: every function that returns int returns 0 on success or a negative
 * errno value (-EINVAL, -ENOTCONN, ...) on failure; ls_open returns NULL and
 * sets errno. The library never prints anything, and logs one record
 * itself only to say that $LOGSINK_LEVEL was refused (below).
 *
 * Paths and environment: the default per-user socket directory
 * ($XDG_RUNTIME_DIR/logsink or /tmp/logsink-<euid>) is used only if it is a
 * real directory owned by the effective uid and not writable by group or
 * others; otherwise the client behaves as if the daemon were absent (records
 * dropped and counted, or the system socket if it exists). A socket path
 * given to ls_open or in $LOGSINK_SOCKET is the caller's choice and is not
 * checked. LOGSINK_SOCKET, XDG_RUNTIME_DIR, LOGSINK_LEVEL and LOGSINK_CLOCK
 * are read with secure_getenv(3): a set-user-ID or set-group-ID program
 * ignores them.
 *
 * Usage:
 *   ls_client *c = ls_open(NULL, "myapp", NULL);   // NULL path: $LOGSINK_SOCKET or default
 *   LS_LOG(c, LS_INFO, "user %s port %d", name, port);
 *   ls_close(c);                                    // sends what is buffered, then frees
 * or, with the process-wide default client (opened on first use):
 *   LS_INFO("user %s port %d", name, port);
 *
 * Level names: LS_EMERG .. LS_DEBUG are enum constants with syslog's numbers
 * 0..7. The same names followed by '(' are function-like macros that log to
 * the default client at that level: `LS_ERR("disk %s full", dev)` logs, while
 * `LS_LOG(c, LS_ERR, ...)` or `int lvl = LS_ERR;` use the constant (a
 * function-like macro is only expanded when its name is followed by '(').
 * LS_WARN(...) is an alias of LS_WARNING(...).
 *
 * Cost model: a call site is a static struct holding its format, file, line
 * and level; the format is parsed once per process and sent to the daemon once
 * per connection. Each call then encodes only a timestamp and the binary
 * arguments into a per-thread buffer: no syscall, no lock, no formatting. A
 * background thread sends the buffers in batches. When a thread's buffer is
 * full, by default (LS_BLOCK_WHILE_DRAINING, see ls_options.blocking) the call
 * waits for space while the daemon reads, so a burst of any size lands; when
 * the daemon is absent, or stalled for block_timeout_ms, records are dropped
 * and counted instead (while a restarting daemon comes back they wait, up to
 * block_timeout_ms), and the count is reported to the daemon after
 * reconnecting. LS_BLOCK_NEVER drops at once and never waits.
 *
 * Levels at the source: $LOGSINK_LEVEL (read with secure_getenv(3) when a
 * client opens; else ls_options.level and .levels) says which calls produce
 * records, e.g. LOGSINK_LEVEL=info (nothing less severe than info) or
 * "warning,net.c=debug,db.c:120=off" (the default level, then levels per
 * source file or file:line, a glob; the last rule that names a site wins).
 * The full text is in proto/level_rules.h and liblogsink(3). A call below
 * its site's level produces nothing and counts nowhere. A $LOGSINK_LEVEL
 * that does not parse is ignored as a whole (the options apply), and the
 * client logs one warning record that says why; bad ls_options.levels make
 * ls_open fail with EINVAL. An empty $LOGSINK_LEVEL is as if unset. Each
 * client has its own levels (the default client's come from the
 * environment). LS_LOG's first check counts the default client too while
 * it is not open, at what it would log ($LOGSINK_LEVEL, else everything):
 * a program that sets its levels in code skips a disabled call at that
 * check once its default client is opened with them (ls_default_open).
 * While a program runs, `logctl level` (and logsinkd.toml's [levels]) may
 * put rules on top of a client's own: the daemon sends them, the client's
 * background thread applies them within ~50 ms, no call needed (liblogsink(3),
 * "Levels changed at run time"; proto/PROTOCOL.md, "Levels at run time").
 *
 * Thread-safety: every function may be called from any thread. Fork: a child
 * never writes into its parent's connection; it discards what the parent had
 * buffered and connects on its own when it next logs. Only fork(2) (which
 * runs pthread_atfork handlers) makes such a child: a child of vfork, clone
 * or _Fork must not call liblogsink (the parent's buffers in shared memory
 * are not mapped there).
 *
 * Signal handlers: LS_LOG, the level macros and ls_log_text may be called
 * from a signal handler once the interrupted thread has logged to that client
 * and the handler's call sites have each been used once outside a handler (a
 * thread's first call and a call site's first call take locks and allocate;
 * so does the default client's first use). A call that interrupts a call of
 * the same thread is not staged: it returns -EAGAIN and counts one record in
 * `dropped`; the interrupted call completes normally. Blocking mode may wait
 * inside the handler. ls_open, ls_close, ls_flush, ls_get_stats and
 * ls_default are not async-signal-safe. The background thread checks every
 * length it reads from the per-thread buffers; should one be impossible, it
 * discards that buffer's contents and counts them as dropped.
 *
 * Descriptors: the client's socket is close-on-exec. If the application
 * closes its number (say, a close-all-descriptors loop) and opens something
 * else on it, the client notices before its next write (st_dev/st_ino are
 * checked once per batch), never writes to or closes the new file, counts
 * the event (`fd_lost`, `disconnects`; what was pending is dropped and
 * counted) and reconnects. */
#ifndef LOGSINK_LOGSINK_H
#define LOGSINK_LOGSINK_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
/* LS_LOG's compile-time check that its format is a string literal (below). */
template <typename T>
struct ls__literal {
  enum { value = 0 };
};
template <size_t N>
struct ls__literal<const char[N]> {
  enum { value = 1 };
};
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define LS__PRINTF(f, a) __attribute__((format(printf, f, a)))
#define LS__EXPORT __attribute__((visibility("default")))
#else
#define LS__PRINTF(f, a)
#define LS__EXPORT
#endif

#define LS_VERSION_MAJOR 0
#define LS_VERSION_MINOR 1

/* Levels: syslog's numbers. Smaller is more severe. */
enum {
  LS_EMERG = 0,
  LS_ALERT = 1,
  LS_CRIT = 2,
  LS_ERR = 3,
  LS_WARNING = 4,
  LS_NOTICE = 5,
  LS_INFO = 6,
  LS_DEBUG = 7,
  LS_OFF = -1 /* ls_options.level: no record at all */
};

typedef struct ls_client ls_client;

/* ls_options.blocking */
#define LS_BLOCK_NEVER 0
#define LS_BLOCK_ALWAYS 1
#define LS_BLOCK_WHILE_DRAINING 2

/* Options of a client. Always start from ls_options_init(), which sets `size`;
 * the struct only grows at its end, and the library reads only `size` bytes. */
typedef struct ls_options {
  /* sizeof(ls_options) of the caller (set by ls_options_init). */
  size_t size;
  /* All staging buffers of the client together (16 MiB). A thread that would
   * exceed it gets no buffer: its records are dropped and counted. */
  size_t max_buffered_bytes;
  /* One thread's staging buffer, rounded up to a power of two (256 KiB). */
  size_t thread_buffer_bytes;
  /* Wake the sender once a thread has this many bytes waiting (32 KiB). */
  size_t batch_bytes;
  /* Argument bytes of one record, 1024..65536; longer strings are cut (8192). */
  size_t max_record_bytes;
  /* Records never wait longer than this before being sent (100 ms). */
  unsigned flush_interval_ms;
  /* Records at this level or more severe are in the socket when the call
   * returns, with everything the thread logged before (the call waits up to
   * block_timeout_ms, not when a connect was tried and failed or while the
   * daemon does not read); LS_WARNING; -1: never. */
  int flush_level;
  /* What a call does when its thread's buffer is full (LS_BLOCK_*):
   * LS_BLOCK_WHILE_DRAINING (default): wait for space (futex, no spinning)
   *   while the daemon drains, so a burst of any size lands; if no space
   *   comes within block_timeout_ms the client counts as stalled and calls
   *   drop (and count) at once until the sender moves data again; without a
   *   connection, drop at once (once the client has tried to connect: a
   *   burst right after ls_open waits for the first connect).
   * LS_BLOCK_NEVER: drop (and count) at once; the caller never waits.
   * LS_BLOCK_ALWAYS: wait up to block_timeout_ms on every full buffer.
   * Without a connection staged records are dropped (counted) in every mode,
   * except right after the daemon closed one (a restart): see
   * block_timeout_ms. */
  int blocking;
  /* Longest wait for buffer space of one call (1000 ms). Also how long the
   * client treats a daemon that closed its connection as restarting: staged
   * records and the frames whose write failed wait for the next daemon
   * (connects are retried every reconnect_min_ms), and calls wait for space
   * as for a slow daemon; after that they are dropped and counted. See
   * PROTOCOL.md, "Restarts". */
  unsigned block_timeout_ms;
  /* Longest wait on a daemon that does not read before the connection is
   * given up and re-made (1000 ms). */
  unsigned send_timeout_ms;
  /* First reconnect delay, doubled per failure up to reconnect_max_ms (10, 1000 ms). */
  unsigned reconnect_min_ms;
  unsigned reconnect_max_ms;
  /* Longest wait of ls_flush, ls_close and the exit handler (2000 ms). */
  unsigned close_timeout_ms;
  /* 1 (default): on SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT, every open
   * client's staged records are sent (at most 1 s) before the signal goes on
   * to the handler installed before, or to its default action (core dump).
   * Installed once per process by the first ls_open that asks for it, unless
   * $LOGSINK_CRASH_HANDLER is "0". 0: not installed by this call. */
  int crash_handler;
  /* While records keep coming, the sender sends what is staged every
   * send_delay_ms (2 ms; at most flush_interval_ms), and the first record
   * after a quiet spell wakes it at once: a record logged at a low rate
   * reaches the daemon within a few milliseconds. The logging call pays
   * one futex wake for that first record only. 0: records wait for
   * batch_bytes, flush_level, ls_flush or flush_interval_ms, as before this
   * option existed (fewer, larger writes). */
  unsigned send_delay_ms;
  /* Levels at the source: a call whose level is less severe than the level
   * that applies to its call site produces nothing (LS_DEBUG: every record;
   * LS_OFF: none). `levels` (NULL: none) refines it per call site with the
   * rules of $LOGSINK_LEVEL (below); a bare level in them replaces `level`.
   * $LOGSINK_LEVEL, when set, replaces both (the operator's choice wins).
   * A disabled LS_LOG costs about one load and one branch while no client
   * of the process (the default one, not open yet, included: see "Levels
   * at the source" above) enables its level anywhere, else a call into the
   * library and a check of a value cached in its call site. */
  int level;
  const char *levels;
  /* 1 (default): with a daemon that offers them (logsinkd(8), "SHARED
   * BUFFERS"), each thread's buffer is a slot of shared memory the daemon
   * handed this connection, so the records a process staged and did not
   * send yet are read by the daemon after the process is killed (SIGKILL,
   * the OOM killer): only a record being written at that instant is lost.
   * A thread's first call waits, once per client, for the client's first
   * connect attempt (at most 250 ms and send_timeout_ms; not with
   * LS_BLOCK_NEVER). A thread whose thread_buffer_bytes is larger than the
   * daemon's slots (256 KiB by default), threads beyond its slots (4 by
   * default), and records staged while no daemon ran, stage in the
   * process's own memory, as with 0 (PROTOCOL.md, "Shared buffers", says
   * what can still be lost). Records still go through the socket: the
   * shared buffer only outlives the process. */
  int shared_buffers;
} ls_options;

/* Counters of a client since ls_open (or since fork, in a child). */
typedef struct ls_stats {
  size_t size;               /* set by the caller to sizeof(ls_stats) before ls_get_stats */
  uint64_t logged;           /* records accepted into staging buffers (sent + dropped = calls,
                                once nothing is staged or kept for a restarting daemon) */
  uint64_t sent;             /* records written to the socket */
  uint64_t dropped;          /* records lost: buffers full, daemon absent, send failed */
  uint64_t dropped_reported; /* of `dropped`, reported to the daemon in DROPPED frames */
  uint64_t errors;           /* records refused: bad format (%n, ...), too many call sites */
  uint64_t truncated;        /* records whose string arguments were cut to max_record_bytes */
  uint64_t bytes_sent;       /* bytes written to the socket */
  uint64_t frames_sent;      /* frames written to the socket */
  uint64_t interned;         /* INTERN frames sent (call sites made known, per connection) */
  uint64_t connects;         /* connections established */
  uint64_t reconnects;       /* connections established after a lost one */
  uint64_t disconnects;      /* connections lost (send failed or timed out) */
  uint64_t buffered_bytes;   /* bytes waiting in staging buffers now */
  int connected;             /* 1 when the client holds a connection now */
  uint64_t fd_lost;   /* times the client's socket descriptor was found closed or replaced by the
                         application: let go without closing, counted in disconnects, reconnected */
  uint64_t formatted; /* ls_log/ls_vlog records rendered in the process and sent as text
                         because the table of run-time formats was full */
  int shared;         /* 1 while the connection has a shared region (ls_options.shared_buffers):
                         threads whose buffer fits a free slot stage where a kill cannot lose them */
} ls_stats;

/* Fills *o with the defaults listed in ls_options and sets o->size. */
LS__EXPORT void ls_options_init(ls_options *o);

/* Creates a client. socket_path NULL or "": $LOGSINK_SOCKET, else the default
 * (/run/logsink/logsink.sock for root, else $XDG_RUNTIME_DIR/logsink/ or
 * /tmp/logsink-<uid>/, or the system socket when only that one exists).
 * app_name is a label (at most 64 bytes are sent, whole UTF-8 characters; NULL:
 * the program's short name). opts NULL: defaults. Succeeds when the daemon is
 * not running yet: the client connects in the background and drops (and
 * counts) what it cannot send until then. Returns NULL and sets errno to
 * EINVAL (bad options), ENAMETOOLONG (socket path), ENOMEM or EAGAIN (thread). */
LS__EXPORT ls_client *ls_open(const char *socket_path, const char *app_name,
                              const ls_options *opts);

/* Sends what is buffered (waiting at most close_timeout_ms), closes the
 * connection, stops the sender thread and frees the client. NULL is ignored.
 * No thread may use c afterwards. */
LS__EXPORT void ls_close(ls_client *c);

/* Sends everything logged before the call, waiting at most close_timeout_ms.
 * Returns 0 when it was written to the socket, -ENOTCONN when there is no
 * connection (what was buffered is dropped and counted, or, while the daemon
 * restarts, kept for the next one: see block_timeout_ms), -ETIMEDOUT when the
 * sender did not finish in time, -EINVAL for a NULL client. */
LS__EXPORT int ls_flush(ls_client *c);

/* Logs `len` bytes of dynamic text (any bytes; no format is applied) at
 * `level` (0..7). Returns 0 when the record was buffered, -EAGAIN when it was
 * dropped (buffers full, or a stalled or absent daemon), -EINVAL for a bad
 * level or client, -ETIMEDOUT (LS_BLOCK_ALWAYS) when no space came free in time. c NULL: the
 * default client. */
LS__EXPORT int ls_log_text(ls_client *c, int level, const char *msg, size_t len);

/* A run-time level (0..7) and format, for code that wraps its logger:
 *   void my_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
 *   void my_log(int level, const char *fmt, ...) {
 *     va_list ap; va_start(ap, fmt); ls_vlog(NULL, level, fmt, ap); va_end(ap);
 *   }
 * -Wformat checks the wrapper's callers through the attribute. The call site
 * of a (level, format) pair is found by the format's content in a
 * process-wide table of 4096 sites (no lock once it is there; the first use
 * of a format takes a lock and allocates, so these are not
 * async-signal-safe); the format, the level and the binary arguments then
 * travel exactly as with LS_LOG. Once the table is full, a new format is
 * rendered here with vsnprintf (at most 4095 bytes) and sent as text,
 * counted in ls_stats.formatted. Each call hashes its format, so LS_LOG
 * stays the fast path. Returns like ls_log_text; -EINVAL for a bad level,
 * a NULL format, or a format the library refuses (counted in errors). */
LS__EXPORT int ls_log(ls_client *c, int level, const char *fmt, ...) LS__PRINTF(3, 4);
LS__EXPORT int ls_vlog(ls_client *c, int level, const char *fmt, va_list ap) LS__PRINTF(3, 0);

/* Fills *out (whose `size` the caller sets to sizeof(ls_stats)). Returns 0 or
 * -EINVAL (NULL argument or a size this library does not know). */
LS__EXPORT int ls_get_stats(ls_client *c, ls_stats *out);

/* The process-wide default client, opened on first use with socket
 * $LOGSINK_SOCKET (or the default), app name program_invocation_short_name and
 * default options, and flushed and closed at exit. NULL (errno set) if it
 * cannot be created. */
LS__EXPORT ls_client *ls_default(void);

/* Creates the default client explicitly, with ls_open's arguments. Call it
 * before the first use of the default client. Returns 0, -EALREADY when the
 * default client exists already, or ls_open's error as -errno. */
LS__EXPORT int ls_default_open(const char *socket_path, const char *app_name,
                               const ls_options *opts);

/* ---- Logging macros ---------------------------------------------------- */

/* A call site. LS_LOG creates one per call as a static variable; the fields
 * after `level` are the library's and must be zero-initialised. */
typedef struct ls_site {
  const char *fmt;
  const char *file;
  int line;
  int level;
  const void *ls__prog; /* parsed format (set once by the library) */
  uint32_t ls__reg;     /* the last client the site was registered with */
  uint32_t ls__gate;    /* whether it produces records, for one client's rules */
} ls_site;

/* The most verbose level any open client produces at some call site, and
 * the default client while it is not open would ($LOGSINK_LEVEL's, else 7):
 * LS_LOG skips the call above it. The library's; read only through
 * LS__LEVEL_ON. */
LS__EXPORT extern int ls__level_max;
/* A level outside 0..7 goes on to the library, which refuses and counts it. */
#if defined(__GNUC__) || defined(__clang__)
#define LS__LEVEL_ON(level) \
  ((unsigned)(level) > 7u || (level) <= __atomic_load_n(&ls__level_max, __ATOMIC_RELAXED))
#else
#define LS__LEVEL_ON(level) ((unsigned)(level) > 7u || (level) <= *(volatile int *)&ls__level_max)
#endif

/* The census of call sites (`logctl sites --all`): LS_LOG puts a pointer
 * to its site into the section "ls_census" of the module it is compiled
 * into (an ELF program or library), and every translation unit that
 * includes this header registers its module's section with the library
 * at startup (a constructor; the library keeps one entry per module, and a
 * destructor takes it back when the module is unloaded), so the daemon
 * can be told of every call site, fired or not. Define
 * LS_NO_CENSUS before including this header to leave a translation unit
 * out. */
/* Not with g++: it refuses one named section for the statics of inline
 * and of other functions of one file ("section type conflict"), so C++
 * sites built with GCC are listed once they fire. The library's functions
 * are weak references: a file that includes this header needs liblogsink
 * only if it logs, and a program runs against an older liblogsink (then
 * without a census). */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__ELF__) && !defined(LS_NO_CENSUS) && \
    !(defined(__cplusplus) && !defined(__clang__))
#define LS__CENSUS(site) \
  static ls_site *const ls__census_ __attribute__((section("ls_census"), used)) = &(site)
extern ls_site *const __start_ls_census[] __attribute__((weak, visibility("hidden")));
extern ls_site *const __stop_ls_census[] __attribute__((weak, visibility("hidden")));
LS__EXPORT void ls__census_add(ls_site *const *start, ls_site *const *stop) __attribute__((weak));
LS__EXPORT void ls__census_remove(ls_site *const *start) __attribute__((weak));
__attribute__((constructor, used)) static void ls__census_register(void) {
  if (ls__census_add) ls__census_add(__start_ls_census, __stop_ls_census);
}
/* A library unloaded (dlclose) takes its sites with it. */
__attribute__((destructor, used)) static void ls__census_unregister(void) {
  if (ls__census_remove) ls__census_remove(__start_ls_census);
}
#else
#define LS__CENSUS(site) ((void)0)
#endif

/* Internal entry point of LS_LOG: fmt is site->fmt, passed again only so the
 * compiler checks the arguments against it. Returns like ls_log_text. */
LS__EXPORT int ls__log(ls_client *c, ls_site *site, const char *fmt, ...) LS__PRINTF(3, 4);

/* Internal entry points of the C++ API (logsink.hpp), which encodes a
 * record's arguments itself (PROTOCOL.md, "Arguments") from types it knows
 * at compile time. ls__slot_open stages a record of the site for at most
 * `need` argument bytes: 1 when the caller is to write them to slot->args
 * (at most slot->cap bytes, cutting strings when cap < need) and then call
 * ls__slot_close with the bytes written and the string bytes cut; 0 when
 * the call produces nothing (its level); else ls_log_text's errors. */
typedef struct ls__slot {
  unsigned char *args;
  size_t cap;
  ls_client *ls__c;
  void *ls__r;
  const void *ls__p;
  uint64_t ls__head;
  uint64_t ls__stamp;
  int ls__level;
} ls__slot;
LS__EXPORT int ls__slot_open(ls_client *c, ls_site *site, size_t need, ls__slot *slot);
LS__EXPORT int ls__slot_close(ls__slot *slot, size_t n, uint64_t trunc);

#define LS__FIRST(...) LS__FIRST_(__VA_ARGS__, 0)
#define LS__FIRST_(a, ...) a

/* LS__CHECK_SITE(level, fmt): a clear compile error, before any other, for a
 * format that is not a string literal or a level that is not a constant. */
#define LS__MSG_LITERAL \
  "LS_LOG: the format must be a string literal; ls_log() takes a run-time format"
#define LS__MSG_LEVEL \
  "LS_LOG: the level must be a constant (LS_ERR, LS_INFO, ...); ls_log() takes a run-time level"
#if defined(__cplusplus) && (defined(__GNUC__) || defined(__clang__))
#define LS__CHECK_SITE(level, fmt)                                     \
  static_assert(ls__literal<__typeof__(fmt)>::value, LS__MSG_LITERAL); \
  static_assert(__builtin_constant_p(level), LS__MSG_LEVEL)
#elif defined(__GNUC__) || defined(__clang__)
#define LS__CHECK_SITE(level, fmt)                                                           \
  _Static_assert(__builtin_types_compatible_p(__typeof__(fmt), char[sizeof(fmt)]) ||         \
                     __builtin_types_compatible_p(__typeof__(fmt), const char[sizeof(fmt)]), \
                 LS__MSG_LITERAL);                                                           \
  _Static_assert(__builtin_constant_p(level), LS__MSG_LEVEL)
#else
#define LS__CHECK_SITE(level, fmt) ((void)0)
#endif

/* LS_LOG(client, level, fmt, ...): logs a printf-style record. client NULL:
 * the default client. level must be a constant expression (0..7) and fmt a
 * string literal: both are part of the static call site, which keeps the
 * first format it sees, so anything else fails to compile, with the error
 * "LS_LOG: the format must be a string literal" or "LS_LOG: the level must be
 * a constant" first (static assertions with GCC and Clang; the macro also
 * pastes "" before the format); ls_log takes a run-time level and format,
 * ls_log_text run-time text. The arguments
 * are checked against fmt by GCC and Clang (-Wformat). %n and positional
 * arguments (%1$d) are refused: the record is not sent and counted in
 * ls_stats.errors. Conversions: flags -+ #0', width and precision (digits or
 * *), length modifiers hh h l ll j z t L q, d i u o x X f F e E g G a A c s p %%
 * and %m (strerror(errno) at the call). %s copies the string (NULL: "(null)"),
 * %ls converts to UTF-8, long double is sent as double. The statement has no
 * value; errors and drops are counted in ls_stats. */
#define LS_LOG(client, level, ...)                                                                \
  do {                                                                                            \
    LS__CHECK_SITE(level, LS__FIRST(__VA_ARGS__));                                                \
    static ls_site ls__site_ = {"" LS__FIRST(__VA_ARGS__), __FILE__, __LINE__, (level), 0, 0, 0}; \
    LS__CENSUS(ls__site_);                                                                        \
    if (LS__LEVEL_ON(level)) (void)ls__log((client), &ls__site_, __VA_ARGS__);                    \
  } while (0)

/* LS_FIELDS("name=%conv ..."): named, typed fields after a format, kept
 * apart from the message (`logctl user=alice`, `-F user`, JSON "fields"):
 *
 *   LS_LOG(c, LS_INFO, "disk %s full" LS_FIELDS("user=%s req=%llu ok:bool=%d"),
 *          disk, user, req, ok);
 *
 * Each field is `name=%conv`, separated by one space: a conversion without
 * flags, width or precision, whose argument the compiler checks as any
 * other (-Wformat); its type follows the conversion (d i: signed, u o x X:
 * unsigned, f e g a: double, c: a character, s m: a string, p: a pointer),
 * and `name:bool=%d` makes an integer a bool. Names: 1 to 64 bytes of
 * letters, digits, '_', '.', '@' and '-', the first a letter or a digit
 * (names that start with '_' are the daemon's: _PID, _UID...), each once
 * per site. A site whose field list breaks a rule is
 * refused like a format with %n (not sent, counted in ls_stats.errors).
 * The names cost nothing per record: they are interned with the site.
 * ls_log takes the same (a run-time format may hold a field list). A
 * daemon older than fields gets the list as the end of the message
 * ("disk sda full user=alice req=7 ok:bool=1"). */
#define LS_FIELDS(spec) "\x1f" spec

/* Default-client shorthands (see "Level names" above). */
#define LS_EMERG(...) LS_LOG(0, LS_EMERG, __VA_ARGS__)
#define LS_ALERT(...) LS_LOG(0, LS_ALERT, __VA_ARGS__)
#define LS_CRIT(...) LS_LOG(0, LS_CRIT, __VA_ARGS__)
#define LS_ERR(...) LS_LOG(0, LS_ERR, __VA_ARGS__)
#define LS_WARNING(...) LS_LOG(0, LS_WARNING, __VA_ARGS__)
#define LS_WARN(...) LS_LOG(0, LS_WARNING, __VA_ARGS__)
#define LS_NOTICE(...) LS_LOG(0, LS_NOTICE, __VA_ARGS__)
#define LS_INFO(...) LS_LOG(0, LS_INFO, __VA_ARGS__)
#define LS_DEBUG(...) LS_LOG(0, LS_DEBUG, __VA_ARGS__)

#ifdef __cplusplus
}
#endif
#endif
