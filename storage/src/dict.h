// dict.h: the file's compression dictionary (proto/FORMAT.md, "Dictionary"):
// reading and checking its region, writing it (once per file), and training
// one from the entries of the first blocks a writer seals, on a thread of its
// own so that the writer's caller never waits for it. Internal to the
// storage library.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "logsink/storage/env.h"
#include "logsink/storage/ring.h"

namespace logsink::storage::internal {

// A checked zstd dictionary: its id, bytes and the decoder's digested form;
// the encoder's form is made on first use. Immutable once made, except for
// that cache (used by the writer's thread only).
class Dictionary {
 public:
  ~Dictionary();
  Dictionary(const Dictionary &) = delete;
  Dictionary &operator=(const Dictionary &) = delete;
  // nullptr (and *why) when content is not a zstd dictionary with id `id`
  // (nonzero) that the decoder accepts.
  static std::shared_ptr<Dictionary> Make(std::string content, uint32_t id, std::string *why);
  uint32_t id() const { return id_; }
  const std::string &content() const { return content_; }
  const void *ddict() const { return ddict_; }  // ZSTD_DDict
  void *cdict(int level);                       // ZSTD_CDict at level, nullptr on failure
  // The heap it holds: its bytes and zstd's digested forms.
  size_t HeldBytes() const;

 private:
  Dictionary() = default;
  uint32_t id_ = 0;
  std::string content_;
  void *ddict_ = nullptr;
  void *cdict_ = nullptr;
  int cdict_level_ = 0;
};

// Reads and checks l's dictionary region. OK with *out null: the file has no
// region, or it was never written (all-zero header). Corruption with the
// reason: a header, CRC or dictionary that does not check.
Status ReadDictionary(File *f, const Layout &l, std::shared_ptr<Dictionary> *out);
// Writes d into l's region (header, CRC, zero padding) and syncs the file, so
// that no block compressed with it can reach the disk before it.
Status WriteDictionary(File *f, const Layout &l, const Dictionary &d, uint64_t now_ns);

// The largest dictionary the writer trains: 16 KiB did as well as 64 KiB on
// text and native records (4-8 KiB samples, zstd level 1) and fits the
// region (LS_DICT_REGION) with room for a larger one later.
constexpr size_t kDictionaryBytes = 16384;

// Collects samples (the entries of sealed blocks) until it has want_bytes,
// then trains a dictionary of at most max_size bytes on a thread of its own.
class DictionaryBuilder {
 public:
  DictionaryBuilder(size_t want_bytes, size_t max_size);
  ~DictionaryBuilder();  // waits for a training still running
  DictionaryBuilder(const DictionaryBuilder &) = delete;
  DictionaryBuilder &operator=(const DictionaryBuilder &) = delete;
  bool collecting() const { return state_ == State::kCollecting; }
  // One block's entries (cut into samples of at most kSampleBytes; at most
  // kBlockBytes of them). Starts the training once want_bytes are in.
  void Add(const uint8_t *p, size_t n);
  // After the training ended: its dictionary (nullptr, *failed set, when it
  // failed); then the builder is done. nullptr while collecting or training.
  std::shared_ptr<Dictionary> Take(bool *failed);
  bool done() const { return state_ == State::kDone; }
  // Blocks until a training under way has ended (Take then returns).
  void Wait() {
    if (thread_.joinable()) thread_.join();
  }

  static constexpr size_t kSampleBytes = 8192, kBlockBytes = 65536;

 private:
  enum class State { kCollecting, kTraining, kDone };
  State state_ = State::kCollecting;
  size_t want_, max_;
  std::string samples_;
  std::vector<size_t> sizes_;
  std::thread thread_;
  std::atomic<bool> finished_{false};
  std::string result_;  // written by the thread before finished_
};

}  // namespace logsink::storage::internal
