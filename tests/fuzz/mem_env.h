// mem_env.h: an in-memory storage::Env for the fuzz targets and the seed
// generator: files are byte vectors, so a mutated ring file is read with no
// disk I/O and a generated one can be saved with one fwrite.
#pragma once

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "logsink/storage/env.h"

namespace logsink::fuzz {

class MemFile : public storage::File {
 public:
  // read_budget: most bytes all PReads through this Env may ask for (0: no
  // limit); going over it aborts, so a reader whose work is not bounded by
  // the file's real size fails fast instead of hanging.
  MemFile(std::vector<uint8_t> *bytes, bool writable, uint64_t *read_total, uint64_t read_budget)
      : bytes_(bytes), writable_(writable), read_total_(read_total), read_budget_(read_budget) {}
  storage::Status PRead(uint64_t off, void *buf, size_t n, size_t *got) override {
    *got = 0;
    *read_total_ += n;
    if (read_budget_ && *read_total_ > read_budget_) {
      std::fprintf(stderr, "MemFile: reads asked for %llu bytes of a %zu-byte file (budget %llu)\n",
                   static_cast<unsigned long long>(*read_total_), bytes_->size(),
                   static_cast<unsigned long long>(read_budget_));
      FUZZ_CHECK(!"reader work is not bounded by the file size");
    }
    if (off >= bytes_->size()) return storage::Status::OK();
    size_t k = bytes_->size() - off < n ? static_cast<size_t>(bytes_->size() - off) : n;
    if (k) std::memcpy(buf, bytes_->data() + off, k);
    *got = k;
    return storage::Status::OK();
  }
  storage::Status PWrite(uint64_t off, const void *buf, size_t n) override {
    if (!writable_) return storage::Status::IOError("read-only");
    if (off + n > bytes_->size()) bytes_->resize(off + n);
    if (n) std::memcpy(bytes_->data() + off, buf, n);
    return storage::Status::OK();
  }
  storage::Status Sync() override { return storage::Status::OK(); }
  storage::Status Size(uint64_t *size) override {
    *size = bytes_->size();
    return storage::Status::OK();
  }

 private:
  std::vector<uint8_t> *bytes_;
  bool writable_;
  uint64_t *read_total_;
  uint64_t read_budget_;
};

class MemEnv : public storage::Env {
 public:
  std::map<std::string, std::vector<uint8_t>> files;
  uint64_t read_total = 0;   // bytes asked for by all PReads
  uint64_t read_budget = 0;  // see MemFile; 0: no limit

  storage::Status OpenFile(const std::string &path, bool writable,
                           std::unique_ptr<storage::File> *out) override {
    auto it = files.find(path);
    if (it == files.end()) return storage::Status::NotFound(path);
    *out = std::make_unique<MemFile>(&it->second, writable, &read_total, read_budget);
    return storage::Status::OK();
  }
  storage::Status CreateFile(const std::string &path, uint64_t size,
                             const storage::CreateFileOptions &,
                             std::unique_ptr<storage::File> *out) override {
    if (files.count(path)) return storage::Status::IOError("exists: " + path);
    auto &v = files[path];
    v.assign(size, 0);
    *out = std::make_unique<MemFile>(&v, true, &read_total, read_budget);
    return storage::Status::OK();
  }
  storage::Status RemoveFile(const std::string &path) override {
    return files.erase(path) ? storage::Status::OK() : storage::Status::NotFound(path);
  }
  bool FileExists(const std::string &path) override { return files.count(path) != 0; }
};

}  // namespace logsink::fuzz
