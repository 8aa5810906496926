// clock_env.h: the real file system with a wall clock the test sets: a ring
// written "in the past" (records with old timestamps) gets block open times
// that agree with them, as if the writer had run then.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "logsink/storage/env.h"

namespace logsink::test {

class ClockEnv : public storage::Env {
 public:
  uint64_t now_ns = 0;   // 0: the real clock
  uint64_t mono_ns = 0;  // 0: the real monotonic clock
  bool fake_boot = false;
  std::array<uint8_t, 16> boot_id{};  // this boot's identity when fake_boot

  storage::Status OpenFile(const std::string &path, bool writable,
                           std::unique_ptr<storage::File> *out) override {
    return storage::Env::Default()->OpenFile(path, writable, out);
  }
  storage::Status CreateFile(const std::string &path, uint64_t size,
                             const storage::CreateFileOptions &opts,
                             std::unique_ptr<storage::File> *out) override {
    return storage::Env::Default()->CreateFile(path, size, opts, out);
  }
  storage::Status RemoveFile(const std::string &path) override {
    return storage::Env::Default()->RemoveFile(path);
  }
  bool FileExists(const std::string &path) override {
    return storage::Env::Default()->FileExists(path);
  }
  uint64_t NowNanos() override { return now_ns ? now_ns : storage::Env::Default()->NowNanos(); }
  uint64_t MonoNanos() override { return mono_ns ? mono_ns : storage::Env::Default()->MonoNanos(); }
  std::array<uint8_t, 16> BootId() override {
    return fake_boot ? boot_id : storage::Env::Default()->BootId();
  }
};

}  // namespace logsink::test
