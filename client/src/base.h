/* base.h: the attribute macros every source file of liblogsink uses. Not
 * installed; includes nothing. */
#ifndef LOGSINK_CLIENT_BASE_H
#define LOGSINK_CLIENT_BASE_H

#define LS__HIDDEN __attribute__((visibility("hidden")))
#define LS__LIKELY(x) __builtin_expect(!!(x), 1)
#define LS__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LS__CACHELINE 64

#endif
