// cursor_file.h: the forwarder's position, kept in a small text file that is
// replaced atomically (write a temporary file, fsync it, rename it over the
// old one, fsync the directory) so that a crash leaves either the old or the
// new cursor, never a torn one.
#pragma once

#include <cstdint>
#include <string>

namespace logsink::forward {

// What the file holds: the ring's identity and the sequence number of the
// next record to ship (every record before it was acknowledged). Messages
// carry storage/cursor.h's cursor of their record.
struct Position {
  std::string ring_id;  // hex, as RingReader reports it
  uint64_t next_seq = 0;
};

// Reads path. Returns 1 when it holds a position, 0 when the file does not
// exist, -1 with *error when it exists but cannot be read or parsed.
int ReadPosition(const std::string &path, Position *out, std::string *error);
// Replaces path with pos atomically and durably. False with *error.
bool WritePosition(const std::string &path, const Position &pos, std::string *error);

}  // namespace logsink::forward
