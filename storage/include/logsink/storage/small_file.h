// small_file.h: small state files (a reader's cursor, a daemon's status)
// kept beside other users' files. Such a file often lives in a directory
// someone else can write to (a sticky /tmp or /var/tmp, a shared state
// directory), and is written by root: nothing at a name that someone else can
// predict may be opened, and a file that is not the caller's own is not used.
// Used by logctl (--cursor-file) and logsink-forward (its cursor and status
// files); plain POSIX calls, not the Env seam (these are not ring files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace logsink::storage {

struct SmallFileOptions {
  // Permission bits of the new file (the umask applies).
  uint32_t mode = 0600;
  // fsync the new file before the rename and the directory after it, so that
  // a crash leaves the old contents or the new ones, never a torn file.
  bool durable = false;
  // Refuse to replace a path that exists and is not a regular file (a
  // symlink, a FIFO, a directory) or belongs to another uid than the
  // effective one. Without it whatever is at the path is replaced (rename(2)
  // replaces the name; nothing is written through it).
  bool only_own_regular = true;
};

// Replaces path with data atomically: writes a new file of a unique name in
// path's directory (".<name>.XXXXXX", random, created with
// O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, so no file or symlink someone planted
// is ever opened), fsyncs it if asked, and renames it over path. On failure
// returns false with *why (the reason, without path) and removes the new file.
bool WriteSmallFile(const std::string &path, std::string_view data, const SmallFileOptions &opts,
                    std::string *why);

// Reads up to max bytes of path, opened with O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC
// (a symlink is refused, a FIFO does not block) and checked on the open
// descriptor (fstat): it must be a regular file owned by the effective uid.
// 1 with *out; 0 when path does not exist; -1 with *why (without path).
int ReadSmallFile(const std::string &path, size_t max, std::string *out, std::string *why);

}  // namespace logsink::storage
