/* testing.h: hooks into liblogsink's internals for its unit tests (linked
 * against the static library; hidden in the shared one). C and C++. */
#ifndef LOGSINK_CLIENT_TESTING_H
#define LOGSINK_CLIENT_TESTING_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Prepares fmt like a call site and encodes the arguments in ap into
 * [out, out + cap) exactly as a record would carry them; saved_errno stands
 * for errno at the call (%m). *len receives the bytes written, *trunc the
 * string bytes cut. Returns 0, or -EINVAL / -E2BIG for a refused format. */
int ls__test_encode(const char *fmt, int saved_errno, uint8_t *out, size_t cap, size_t *len,
                    uint64_t *trunc, va_list ap);

/* 1 when timestamps are raw TSC ticks converted by the sender. */
int ls__test_tsc_mode(void);

struct ls_client;
/* Takes c's internal lock (the one the sender needs for every pass) and
 * never gives it back: a thread that then crashes holds it, the crash
 * handler's worst case. */
void ls__test_hold_lock(struct ls_client *c);

#ifdef __cplusplus
}
#endif
#endif
