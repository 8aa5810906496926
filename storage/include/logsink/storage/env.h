// env.h: the file-system seam. Production code does all ring-file I/O through
// File/Env so tests can inject faults (short writes, errors, power loss that
// drops unsynced bytes) without touching production code paths.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "logsink/storage/status.h"

namespace logsink::storage {

class File {
 public:
  virtual ~File() = default;
  // Reads up to n bytes at off; *got < n only at end of file.
  virtual Status PRead(uint64_t off, void *buf, size_t n, size_t *got) = 0;
  // Writes all n bytes at off (EINTR and short writes retried) or fails.
  virtual Status PWrite(uint64_t off, const void *buf, size_t n) = 0;
  // fdatasync.
  virtual Status Sync() = 0;
  virtual Status Size(uint64_t *size) = 0;
  // Takes an exclusive advisory lock held until the File is destroyed (one
  // writer per ring file). Status::Busy if someone else holds it. The default
  // (for test Envs) always succeeds.
  virtual Status LockExclusive() { return Status::OK(); }
  // The file's owner (fstat). False when unknown: the default, for test Envs.
  virtual bool OwnerUid(uint32_t *uid) {
    (void)uid;
    return false;
  }
};

struct CreateFileOptions {
  uint32_t mode = 0640;  // permission bits of a new file (umask applies)
};

class Env {
 public:
  virtual ~Env() = default;
  // Opens an existing file. Status::NotFound if it does not exist. A
  // writable open never follows a symlink at path (the default Env fails
  // with ELOOP): a writer must not be led into a file someone else chose.
  virtual Status OpenFile(const std::string &path, bool writable, std::unique_ptr<File> *out) = 0;
  // Creates a new file of exactly `size` bytes, preallocated (posix_fallocate)
  // and zero-filled. Fails if the file exists.
  virtual Status CreateFile(const std::string &path, uint64_t size, const CreateFileOptions &opts,
                            std::unique_ptr<File> *out) = 0;
  virtual Status RemoveFile(const std::string &path) = 0;
  virtual bool FileExists(const std::string &path) = 0;
  // rename(2) that never replaces: `to` existing is Status::Busy.
  virtual Status RenameFile(const std::string &from, const std::string &to);
  // Sleeps about `us` microseconds (a reader's pause before re-reading a
  // block that may be racing the writer). Test Envs count instead.
  virtual void SleepMicros(uint32_t us);
  // The wall clock (CLOCK_REALTIME), ns since the epoch: the ring's creation
  // time and each block's open time (FORMAT.md, "Blocks"). Test Envs set it.
  virtual uint64_t NowNanos();
  // CLOCK_MONOTONIC, ns (the kernel's clock since boot, without suspend):
  // each block's open time beside NowNanos() (FORMAT.md, "Boots").
  virtual uint64_t MonoNanos();
  // This boot's identity: /proc/sys/kernel/random/boot_id as 16 bytes (all
  // zero when it cannot be read). Test Envs set it to play several boots.
  virtual std::array<uint8_t, 16> BootId();

  // The real file system (pread/pwrite/fdatasync on plain fds). Never deleted.
  static Env *Default();
};

// The real file system's File over fd, a descriptor the caller opened and
// checked itself (fstat: a regular file), so that what was checked is what
// is read: nothing is opened by path again. Takes ownership of fd (closed
// with the File); path only names the file in messages.
std::unique_ptr<File> FileFromFd(int fd, const std::string &path);

}  // namespace logsink::storage
