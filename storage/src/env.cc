// env.cc: Env::Default(), the real file system: pread/pwrite/fdatasync on
// plain O_CLOEXEC fds, EINTR retried, short reads and writes completed.
#include "logsink/storage/env.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace logsink::storage {
namespace {

Status Errno(const std::string &what, const std::string &path, int err) {
  std::string m = what + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return Status::NotFound(m);
  return Status::IOError(m);
}

class PosixFile final : public File {
 public:
  PosixFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixFile() override { ::close(fd_); }

  Status PRead(uint64_t off, void *buf, size_t n, size_t *got) override {
    auto *p = static_cast<uint8_t *>(buf);
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, p + done, n - done, static_cast<off_t>(off + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        *got = done;
        return Errno("pread", path_, errno);
      }
      if (r == 0) break;  // end of file
      done += static_cast<size_t>(r);
    }
    *got = done;
    return Status::OK();
  }

  Status PWrite(uint64_t off, const void *buf, size_t n) override {
    const auto *p = static_cast<const uint8_t *>(buf);
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pwrite(fd_, p + done, n - done, static_cast<off_t>(off + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Errno("pwrite", path_, errno);
      }
      if (r == 0) return Status::IOError("pwrite " + path_ + ": wrote nothing");
      done += static_cast<size_t>(r);
    }
    return Status::OK();
  }

  Status Sync() override {
    while (::fdatasync(fd_) != 0) {
      if (errno != EINTR) return Errno("fdatasync", path_, errno);
    }
    return Status::OK();
  }

  Status Size(uint64_t *size) override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return Errno("fstat", path_, errno);
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  bool OwnerUid(uint32_t *uid) override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return false;
    *uid = st.st_uid;
    return true;
  }

  Status LockExclusive() override {
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      if (errno == EWOULDBLOCK) return Status::Busy(path_ + " is locked by another writer");
      return Errno("flock", path_, errno);
    }
    return Status::OK();
  }

 private:
  int fd_;
  std::string path_;
};

class PosixEnv final : public Env {
 public:
  Status OpenFile(const std::string &path, bool writable, std::unique_ptr<File> *out) override {
    int fd;
    do {
      fd = ::open(path.c_str(), (writable ? O_RDWR | O_NOFOLLOW : O_RDONLY) | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return Errno("open", path, errno);
    out->reset(new PosixFile(fd, path));
    return Status::OK();
  }

  Status CreateFile(const std::string &path, uint64_t size, const CreateFileOptions &opts,
                    std::unique_ptr<File> *out) override {
    int fd;
    do {
      fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, opts.mode);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return Errno("create", path, errno);
    int err;
    do {
      err = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    } while (err == EINTR);
    if (err != 0) {
      ::close(fd);
      ::unlink(path.c_str());
      return Errno("posix_fallocate", path, err);
    }
    out->reset(new PosixFile(fd, path));
    return Status::OK();
  }

  Status RemoveFile(const std::string &path) override {
    if (::unlink(path.c_str()) != 0) return Errno("unlink", path, errno);
    return Status::OK();
  }

  bool FileExists(const std::string &path) override {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
  }
};

}  // namespace

std::unique_ptr<File> FileFromFd(int fd, const std::string &path) {
  return std::make_unique<PosixFile>(fd, path);
}

void Env::SleepMicros(uint32_t us) {
  struct timespec ts = {time_t(us / 1000000), long(us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

uint64_t Env::NowNanos() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

Status Env::RenameFile(const std::string &from, const std::string &to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) != 0) {
    if (errno == EEXIST) return Status::Busy(to + " exists");
    return Errno("rename to " + to + ":", from, errno);
  }
  return Status::OK();
}

uint64_t Env::MonoNanos() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::array<uint8_t, 16> Env::BootId() {
  // Read once: the boot does not change while a process runs.
  static const std::array<uint8_t, 16> id = [] {
    std::array<uint8_t, 16> out{};
    FILE *f = std::fopen("/proc/sys/kernel/random/boot_id", "re");
    if (!f) return out;
    char text[64] = {};
    const bool ok = std::fgets(text, sizeof text, f) != nullptr;
    std::fclose(f);
    if (!ok) return out;
    // "8-4-4-4-12" hex digits with dashes.
    size_t n = 0;
    for (const char *p = text; *p && n < 32; p++) {
      int v = *p >= '0' && *p <= '9'   ? *p - '0'
              : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
              : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                       : -1;
      if (v < 0) continue;
      out[n / 2] = uint8_t(out[n / 2] | (n % 2 ? v : v << 4));
      n++;
    }
    if (n != 32) out = {};
    return out;
  }();
  return id;
}

Env *Env::Default() {
  static Env *env = new PosixEnv;  // never deleted
  return env;
}

}  // namespace logsink::storage
