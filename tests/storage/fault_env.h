// fault_env.h: an in-memory Env for storage tests that can cut the Nth write
// after K bytes (the process "dies": later writes fail), fail writes, and
// simulate power loss (every file falls back to its last synced bytes).
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "logsink/storage/env.h"

namespace logsink::test {

using namespace ::logsink::storage;

struct MemData {
  std::vector<uint8_t> data;    // what reads see
  std::vector<uint8_t> synced;  // what survives a power loss
};

class FaultEnv : public Env {
 public:
  // ---- fault knobs ----
  int64_t writes = 0;        // PWrite calls so far (all files)
  int64_t cut_write = -1;    // index of the write to cut, -1: none
  size_t cut_after = 0;      // bytes of that write that land
  bool fail_writes = false;  // every write fails (set by a cut: the process died)
  int64_t syncs = 0;
  int64_t reads = 0;                  // PRead calls so far
  uint64_t bytes_read = 0;            // bytes those calls asked for
  int64_t sleeps = 0;                 // SleepMicros calls so far (never really sleeps)
  std::function<void()> before_read;  // runs before every PRead (e.g. to finish a "racing" write)
  // Runs before every PWrite with its index and offset (e.g. to set
  // cut_write to the write a test wants the process to die in).
  std::function<void(int64_t, uint64_t)> before_write;

  void PowerLoss() {
    for (auto &[name, f] : files_) f->data = f->synced;
  }
  std::vector<uint8_t> &Data(const std::string &path) { return files_.at(path)->data; }
  void Put(const std::string &path, std::vector<uint8_t> bytes) {
    auto d = std::make_shared<MemData>();
    d->data = d->synced = std::move(bytes);
    files_[path] = d;
  }

  Status OpenFile(const std::string &path, bool, std::unique_ptr<File> *out) override {
    auto it = files_.find(path);
    if (it == files_.end()) return Status::NotFound(path);
    out->reset(new MemFile(this, it->second));
    return Status::OK();
  }
  Status CreateFile(const std::string &path, uint64_t size, const CreateFileOptions &,
                    std::unique_ptr<File> *out) override {
    if (files_.count(path)) return Status::IOError(path + " exists");
    auto d = std::make_shared<MemData>();
    d->data.assign(size, 0);
    d->synced = d->data;
    files_[path] = d;
    out->reset(new MemFile(this, d));
    return Status::OK();
  }
  Status RemoveFile(const std::string &path) override {
    return files_.erase(path) ? Status::OK() : Status::NotFound(path);
  }
  bool FileExists(const std::string &path) override { return files_.count(path) > 0; }
  void SleepMicros(uint32_t) override { sleeps++; }
  // A fixed clock: two runs of the same writes give byte-identical slots
  // (block headers carry the open time in ns).
  uint64_t now_ns = 1700000000000000000ull, mono_ns = 1000000000ull;
  uint64_t NowNanos() override { return now_ns; }
  uint64_t MonoNanos() override { return mono_ns; }
  std::array<uint8_t, 16> boot_id{{1, 2, 3}};  // this "boot"; tests change it to reboot
  std::array<uint8_t, 16> BootId() override { return boot_id; }
  Status RenameFile(const std::string &from, const std::string &to) override {
    auto it = files_.find(from);
    if (it == files_.end()) return Status::NotFound(from);
    if (files_.count(to)) return Status::Busy(to + " exists");
    files_[to] = it->second;
    files_.erase(from);
    return Status::OK();
  }

 private:
  class MemFile : public File {
   public:
    MemFile(FaultEnv *env, std::shared_ptr<MemData> d) : env_(env), d_(std::move(d)) {}
    Status PRead(uint64_t off, void *buf, size_t n, size_t *got) override {
      env_->reads++;
      env_->bytes_read += n;
      if (env_->before_read) env_->before_read();
      const auto &v = d_->data;
      size_t avail = off < v.size() ? v.size() - off : 0;
      *got = std::min(n, avail);
      if (*got) std::memcpy(buf, v.data() + off, *got);
      return Status::OK();
    }
    Status PWrite(uint64_t off, const void *buf, size_t n) override {
      int64_t idx = env_->writes++;
      if (env_->before_write && !env_->fail_writes) env_->before_write(idx, off);
      if (env_->fail_writes) return Status::IOError("injected write failure");
      size_t len = n;
      if (idx == env_->cut_write) len = std::min(n, env_->cut_after);
      auto &v = d_->data;
      if (off + len > v.size()) v.resize(off + len, 0);
      std::memcpy(v.data() + off, buf, len);
      if (idx == env_->cut_write) {
        env_->fail_writes = true;
        return Status::IOError("injected cut write");
      }
      return Status::OK();
    }
    Status Sync() override {
      if (env_->fail_writes) return Status::IOError("injected sync failure");
      env_->syncs++;
      d_->synced = d_->data;
      return Status::OK();
    }
    Status Size(uint64_t *size) override {
      *size = d_->data.size();
      return Status::OK();
    }

   private:
    FaultEnv *env_;
    std::shared_ptr<MemData> d_;
  };

  std::map<std::string, std::shared_ptr<MemData>> files_;
};

}  // namespace logsink::test
