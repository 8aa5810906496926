/* sender.h: the client's background thread (sender.c), started and stopped
 * by client.c. */
#ifndef LOGSINK_CLIENT_SENDER_H
#define LOGSINK_CLIENT_SENDER_H

#include <stdint.h>

#include "base.h"
#include "logsink/logsink.h"

/* Starts c's sender thread with every signal blocked. Caller holds c->mu or
 * owns c alone. 0 or -errno. */
LS__HIDDEN int ls__sender_start(ls_client *c);
/* Appends site s's INTERN (as this connection's daemon takes it) to the
 * site log of c's region. Caller holds c->mu; c->shm is not NULL. */
LS__HIDDEN void ls__sender_log_site(ls_client *c, const ls_site *s);
/* The connection's on_sent (conn.h): arg is the client, tag a ring. */
LS__HIDDEN void ls__sender_ring_sent(void *arg, void *tag, uint64_t end);

#endif
