/* sender.h: the client's background thread (sender.c), started and stopped
 * by client.c. */
#ifndef LOGSINK_CLIENT_SENDER_H
#define LOGSINK_CLIENT_SENDER_H

#include "base.h"
#include "logsink/logsink.h"

/* Starts c's sender thread with every signal blocked. Caller holds c->mu or
 * owns c alone. 0 or -errno. */
LS__HIDDEN int ls__sender_start(ls_client *c);

#endif
