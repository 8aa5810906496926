// dict.cc: the compression dictionary's region, checks and training
// (proto/FORMAT.md, "Dictionary"). Training is zstd's own (ZDICT, the
// trainer the zstd command uses): nothing here decides what goes into a
// dictionary.
#include "dict.h"

#define ZSTD_STATIC_LINKING_ONLY   // ZSTD_createCDict_advanced: parameters sized for a block
#define ZDICT_STATIC_LINKING_ONLY  // ZDICT_trainFromBuffer_fastCover: one pass, fixed parameters
#include <zdict.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <system_error>

#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"

namespace logsink::storage::internal {

namespace {
constexpr unsigned long long kBlockHint = 64 * 1024;
}  // namespace

Dictionary::~Dictionary() {
  ZSTD_freeDDict(static_cast<ZSTD_DDict *>(ddict_));
  ZSTD_freeCDict(static_cast<ZSTD_CDict *>(cdict_));
}

std::shared_ptr<Dictionary> Dictionary::Make(std::string content, uint32_t id, std::string *why) {
  if (id == 0 || content.empty()) {
    *why = "the dictionary is empty or has id 0";
    return nullptr;
  }
  if (ZSTD_getDictID_fromDict(content.data(), content.size()) != id) {
    *why = "the dictionary's own id is not " + std::to_string(id);
    return nullptr;
  }
  std::shared_ptr<Dictionary> d(new Dictionary());
  d->id_ = id;
  d->content_ = std::move(content);
  d->ddict_ = ZSTD_createDDict(d->content_.data(), d->content_.size());
  if (!d->ddict_) {
    *why = "zstd does not accept the dictionary";
    return nullptr;
  }
  return d;
}

size_t Dictionary::HeldBytes() const {
  return content_.capacity() + ZSTD_sizeof_DDict(static_cast<const ZSTD_DDict *>(ddict_)) +
         ZSTD_sizeof_CDict(static_cast<const ZSTD_CDict *>(cdict_));
}

void *Dictionary::cdict(int level) {
  if (cdict_ && cdict_level_ == level) return cdict_;
  ZSTD_freeCDict(static_cast<ZSTD_CDict *>(cdict_));
  // Parameters for what a block holds (up to LS_BLK_RAW_FACTOR slots of
  // entries, typically 4-8), not for an input of unknown size: zstd then
  // sizes the dictionary's tables for that, and a compression that uses
  // them sets up in a fraction of the time (half the writer's CPU on short
  // records otherwise).
  const ZSTD_compressionParameters cp = ZSTD_getCParams(level, kBlockHint, content_.size());
  cdict_ = ZSTD_createCDict_advanced(content_.data(), content_.size(), ZSTD_dlm_byCopy,
                                     ZSTD_dct_auto, cp, ZSTD_defaultCMem);
  cdict_level_ = level;
  return cdict_;
}

Status ReadDictionary(File *f, const Layout &l, std::shared_ptr<Dictionary> *out) {
  out->reset();
  if (l.dict_size == 0) return Status::OK();
  std::string region(l.dict_size, '\0');
  size_t got = 0;
  Status s = f->PRead(l.dict_off, region.data(), region.size(), &got);
  if (!s.ok()) return s;
  if (got != region.size()) return Status::Corruption("the dictionary region is cut short");
  const auto *p = reinterpret_cast<const uint8_t *>(region.data());
  // A region whose magic never reached the disk was never used: no block is
  // written with a dictionary before it is (WriteDictionary syncs).
  if (ls_get_u32(p + LS_DICT_OFF_MAGIC) == 0) return Status::OK();
  if (ls_get_u32(p + LS_DICT_OFF_MAGIC) != LS_DICT_MAGIC) {
    return Status::Corruption("the dictionary region has no LSDC magic");
  }
  const uint32_t len = ls_get_u32(p + LS_DICT_OFF_LEN);
  if (len == 0 || len > l.dict_size - LS_DICT_HDR) {
    return Status::Corruption("the dictionary's length " + std::to_string(len) +
                              " does not fit its region");
  }
  if (ls_get_u32(p + LS_DICT_OFF_CRC) != Crc32c(p + 8, LS_DICT_HDR - 8 + len)) {
    return Status::Corruption("the dictionary's CRC does not match");
  }
  std::string why;
  *out = Dictionary::Make(region.substr(LS_DICT_HDR, len), ls_get_u32(p + LS_DICT_OFF_ID), &why);
  if (!*out) return Status::Corruption(why);
  return Status::OK();
}

Status WriteDictionary(File *f, const Layout &l, const Dictionary &d, uint64_t now_ns) {
  if (l.dict_size < LS_DICT_HDR || d.content().size() > l.dict_size - LS_DICT_HDR) {
    return Status::InvalidArgument("the dictionary does not fit the file's region");
  }
  std::vector<uint8_t> region(l.dict_size, 0);
  uint8_t *p = region.data();
  const uint32_t len = uint32_t(d.content().size());
  ls_put_u32(p + LS_DICT_OFF_MAGIC, LS_DICT_MAGIC);
  ls_put_u32(p + LS_DICT_OFF_LEN, len);
  ls_put_u32(p + LS_DICT_OFF_ID, d.id());
  ls_put_u64(p + LS_DICT_OFF_WRITTEN_NS, now_ns);
  std::memcpy(p + LS_DICT_HDR, d.content().data(), len);
  ls_put_u32(p + LS_DICT_OFF_CRC, Crc32c(p + 8, LS_DICT_HDR - 8 + len));
  Status s = f->PWrite(l.dict_off, region.data(), region.size());
  if (!s.ok()) return s;
  return f->Sync();
}

DictionaryBuilder::DictionaryBuilder(size_t want_bytes, size_t max_size)
    : want_(want_bytes), max_(max_size) {}

DictionaryBuilder::~DictionaryBuilder() {
  if (thread_.joinable()) thread_.join();
}

void DictionaryBuilder::Add(const uint8_t *p, size_t n) {
  if (state_ != State::kCollecting) return;
  n = std::min(n, kBlockBytes);
  for (size_t off = 0; off < n; off += kSampleBytes) {
    const size_t k = std::min(kSampleBytes, n - off);
    samples_.append(reinterpret_cast<const char *>(p + off), k);
    sizes_.push_back(k);
  }
  if (samples_.size() < want_) return;
  state_ = State::kTraining;
  try {
    thread_ = std::thread([this] {
      std::string dict(max_, '\0');
      // One fastCover pass with fixed parameters: ZDICT_trainFromBuffer searches
      // several (k, d) and took ~70 ms of CPU per MiB of samples, a cost the
      // first million records of a fresh ring paid (0.07 us each, measured end
      // to end); these gave dictionaries within 1% of its ratio on the
      // project's text mix in a fraction of the time.
      ZDICT_fastCover_params_t p{};
      p.k = 1000;
      p.d = 8;
      p.f = 20;
      p.accel = 1;
      p.nbThreads = 1;
      p.zParams.compressionLevel = 1;
      const size_t r = ZDICT_trainFromBuffer_fastCover(dict.data(), dict.size(), samples_.data(),
                                                       sizes_.data(), unsigned(sizes_.size()), p);
      if (!ZDICT_isError(r) && r > 0) {
        dict.resize(r);
        result_ = std::move(dict);
      }
      finished_.store(true, std::memory_order_release);
    });
  } catch (const std::system_error &) {
    // No thread to be had (a process or thread limit): no dictionary.
    finished_.store(true, std::memory_order_release);
  }
}

std::shared_ptr<Dictionary> DictionaryBuilder::Take(bool *failed) {
  *failed = false;
  if (state_ != State::kTraining || !finished_.load(std::memory_order_acquire)) return nullptr;
  if (thread_.joinable()) thread_.join();
  state_ = State::kDone;
  samples_ = std::string();
  sizes_ = std::vector<size_t>();
  std::string why;
  const uint32_t id = result_.empty() ? 0 : ZDICT_getDictID(result_.data(), result_.size());
  std::shared_ptr<Dictionary> d = Dictionary::Make(std::move(result_), id, &why);
  *failed = !d;
  return d;
}

}  // namespace logsink::storage::internal
