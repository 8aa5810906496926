// kmsg_parse.h: one record of the kernel's log as /dev/kmsg hands it out
// (Documentation/ABI/testing/dev-kmsg): "PRI,SEQ,USEC,FLAG[,...];TEXT\n"
// followed by dictionary lines " KEY=VALUE\n". Pure and bounded: the fuzz
// target and the unit tests call it on any bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace logsink::daemon {

struct KmsgRecord {
  uint8_t level = 6;          // PRI & 7
  uint8_t facility = 0;       // PRI >> 3, clamped to 23 (0 kern; 1 user: written by a process)
  uint64_t seq = 0;           // the kernel's sequence number
  uint64_t usec = 0;          // CLOCK_MONOTONIC of the message, microseconds
  bool continuation = false;  // FLAG 'c' or '+' (a line continued by the next record)
  std::string text;           // the message, the kernel's \xNN escapes undone
  std::string dict;           // "KEY=VALUE" lines, '\n'-separated, as the kernel escaped them
};

// False for bytes that are not a kmsg record (no ';', a field not a number).
bool ParseKmsg(std::string_view rec, KmsgRecord *out);

}  // namespace logsink::daemon
