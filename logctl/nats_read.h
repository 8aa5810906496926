// nats_read.h: `logctl --nats URL` (cat and tail): the records that
// logsink-forward published into a NATS JetStream stream, from every host
// or those --host selects, merged by time, each record once. The subject
// layout it reads, its costs and its bounds are logctl.1's "READING A
// FLEET" and docs/DESIGN.md's "Reading the fleet".
#pragma once

#include "options.h"

namespace logsink::logctl {

// Reads, filters and prints as o says (Finish refused what a stream does
// not have: cursors, boots, following, named-field matches). tty: standard
// output is a terminal (colours). Returns the exit code.
int ReadNats(const Options &o, bool tty);

}  // namespace logsink::logctl
