// render_pool.h: renders and matches (--grep) records on a second thread
// while the reading thread reads the next ones, so `cat`, `export` and
// `--grep` use both cores. Whole sealed blocks go in as the reader hands them
// over (RingReader::NextOrBlock), still compressed: they are decoded,
// filtered by the fields (RecordFilter::Match), rendered and matched on
// either thread. Other records go in as the reader returns them (those that
// passed RecordFilter::Match), copied into batches. Lines come back in the
// order blocks and records went in, so the output is the one-thread output
// byte for byte. The reading thread decodes and renders a batch itself when
// the worker is behind. Every method is called by the reading thread only.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "field_match.h"
#include "logsink/render/filter.h"
#include "logsink/render/printer.h"
#include "logsink/storage/ring.h"

namespace logsink::logctl {

class RenderPool {
 public:
  // Copies pr's settings and grep's patterns (each thread has its own);
  // filter decides the records of whole blocks (AddBlock) and outlives the
  // pool, as do the FIELD=VALUE matches, which every record must pass (of
  // blocks and records alike: Add takes records that passed filter only).
  // reader: whose blocks AddBlock takes (each thread decodes them with a
  // BlockDecoder of its own); reporter: told of damage found inside them, in
  // order, on the reading thread. Both outlive the pool.
  RenderPool(const render::Printer &pr, const storage::RecordFilter &filter,
             const FieldMatcher &matches, const render::MessageMatcher &grep,
             const storage::RingReader *reader = nullptr, storage::Reporter *reporter = nullptr);
  ~RenderPool();  // stops and joins the worker (finish with WaitAll first)
  RenderPool(const RenderPool &) = delete;
  RenderPool &operator=(const RenderPool &) = delete;

  // Adds a copy of rec. May render a waiting batch on this thread. True
  // when a batch was sealed (then lines may be ready: see TakeReady).
  bool Add(const storage::Record &rec);
  // Adds a block that NextOrBlock handed over whole (its bytes are taken:
  // *img is left with a spare buffer). As Add otherwise.
  bool AddBlock(storage::BlockImage *img);
  // Appends the lines of the finished batches at the front to *out; *last
  // becomes the sequence number of the last record shown. True if any.
  bool TakeReady(std::string *out, std::optional<uint64_t> *last);
  // Renders everything added so far and appends it all (as TakeReady).
  void WaitAll(std::string *out, std::optional<uint64_t> *last);

 private:
  struct Batch {
    // Either whole blocks (the first nblocks of blocks; up to about four
    // times as many records as a batch of records) or records.
    std::vector<storage::BlockImage> blocks;
    size_t nblocks = 0;
    uint64_t block_records = 0;  // the blocks' records (their headers' counts)
    std::vector<std::pair<uint64_t, std::string>> problems;  // damage in the blocks (offset, why)
    std::vector<storage::Record> recs;
    std::string arena;  // the records' strings; reserved, never reallocated while filled
    std::string out;    // the rendered lines
    std::optional<uint64_t> last;
    enum class State { kQueued, kWorking, kDone } state = State::kQueued;
  };
  // What one thread renders with.
  struct Context {
    Context(const render::Printer &p, const storage::RecordFilter &f, const FieldMatcher &m,
            const render::MessageMatcher &grep, const storage::RingReader *r)
        : pr(p), filter(f), matches(m) {
      grep.CopyInto(&matcher);
      if (r) decoder = r->NewDecoder();
    }
    render::Printer pr;
    const storage::RecordFilter &filter;  // const, no state: shared by both threads
    const FieldMatcher &matches;          // the same; its state is in lookup
    FieldLookup lookup;
    render::MessageMatcher matcher;
    std::string msg;
    std::unique_ptr<storage::BlockDecoder> decoder;
    std::vector<storage::Record> decoded;  // one block's records
    std::string problem;
  };
  static void RenderRecord(Context *c, const storage::Record &rec, Batch *b);
  static void Render(Context *c, Batch *b);
  void Seal();
  bool RenderOneQueued();  // renders a queued batch on this thread (lock not held)
  void Worker();
  void Append(Batch *b, std::string *out, std::optional<uint64_t> *last);
  void Clear(Batch *b);
  void StartFilling(size_t need);

  static constexpr size_t kArena = 256 * 1024;
  static constexpr size_t kMaxRecords = 2048;
  // The first batches are small (128 records, then twice as many each up
  // to kMaxRecords): the first lines come out soon (--since).
  static constexpr size_t kFirstRecords = 128;
  static constexpr size_t kMaxInFlight = 4;

  Context mine_;
  std::unique_ptr<Context> theirs_;  // the worker's (made when it starts)
  const render::Printer &pr_;
  const storage::RecordFilter &filter_;
  const FieldMatcher &matches_;
  const render::MessageMatcher &grep_;
  const storage::RingReader *reader_;
  storage::Reporter *reporter_;
  std::unique_ptr<Batch> filling_;
  size_t max_records_ = kFirstRecords;
  std::vector<std::unique_ptr<Batch>> spare_;

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::unique_ptr<Batch>> queue_;  // sealed batches, in order
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace logsink::logctl
