/* crash.h: the fatal-signal handler (crash.c): on SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE and SIGABRT it has every open client's staged records sent before
 * the process dies, then hands the signal on. */
#ifndef LOGSINK_CLIENT_CRASH_H
#define LOGSINK_CLIENT_CRASH_H

#include "base.h"

struct ls_client;

/* Installs the handler once per process (later calls do nothing), unless
 * $LOGSINK_CRASH_HANDLER is "0". first: the client list's head, read by the
 * handler through *head (the caller's ls__all). */
LS__HIDDEN void ls__crash_install(struct ls_client *const *head);

#endif
