// nats_read.h: `logctl --nats URL` (cat, tail and stats): the records that
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

// `logctl stats --nats URL` (nats_stats.cc): per selected host, its
// messages and records, how many are err or worse or were lost, its oldest
// and newest record, the rate between them and its top writers; text or
// --json. Returns the exit code.
int StatsNats(const Options &o);

}  // namespace logsink::logctl
