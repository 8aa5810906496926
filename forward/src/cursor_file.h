// cursor_file.h: the forwarder's position, kept in a small text file that is
// replaced atomically (write a temporary file, fsync it, rename it over the
// old one, fsync the directory) so that a crash leaves either the old or the
// new cursor, never a torn one. storage/small_file.h does it safely in a
// directory others can write to: the temporary file has a unique name
// (O_EXCL|O_NOFOLLOW), and a cursor file owned by another uid than the
// effective one, or not a regular file, is refused.
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
// exist, -1 with *error when it exists but cannot be read or parsed, or is
// refused (another user's, not a regular file).
int ReadPosition(const std::string &path, Position *out, std::string *error);
// Replaces path with pos atomically and durably (mode 0640, umask applies).
// False with *error, also when path is refused as ReadPosition refuses it.
bool WritePosition(const std::string &path, const Position &pos, std::string *error);

}  // namespace logsink::forward
