// render_pool.h: renders and matches (--grep) records on a second thread
// while the reading thread decodes the next ones, so `cat`, `export` and
// `--grep` use both cores. Records go in as the reader returns them (those
// that passed Filter::MatchFields), copied into batches; lines come back in
// the order records went in, so the output is the one-thread output byte for
// byte. The reading thread renders a batch itself when the worker is behind.
// Every method is called by the reading thread only.
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

#include "filter.h"
#include "logsink/storage/ring.h"
#include "printer.h"

namespace logsink::logctl {

class RenderPool {
 public:
  // Copies pr's settings and filter's patterns (each thread has its own).
  RenderPool(const Printer &pr, const Filter &filter);
  ~RenderPool();  // stops and joins the worker (finish with WaitAll first)
  RenderPool(const RenderPool &) = delete;
  RenderPool &operator=(const RenderPool &) = delete;

  // Adds a copy of rec. May render a waiting batch on this thread. True
  // when a batch was sealed (then lines may be ready: see TakeReady).
  bool Add(const storage::Record &rec);
  // Appends the lines of the finished batches at the front to *out; *last
  // becomes the sequence number of the last record shown. True if any.
  bool TakeReady(std::string *out, std::optional<uint64_t> *last);
  // Renders everything added so far and appends it all (as TakeReady).
  void WaitAll(std::string *out, std::optional<uint64_t> *last);

 private:
  struct Batch {
    std::vector<storage::Record> recs;
    std::string arena;  // the records' strings; reserved, never reallocated while filled
    std::string out;    // the rendered lines
    std::optional<uint64_t> last;
    enum class State { kQueued, kWorking, kDone } state = State::kQueued;
  };
  // What one thread renders with.
  struct Context {
    Context(const Printer &p, const Filter &f) : pr(p) { f.NewMatcher(&matcher); }
    Printer pr;
    MessageMatcher matcher;
    std::string msg;
  };
  static void Render(Context *c, Batch *b);
  void Seal();
  bool RenderOneQueued();  // renders a queued batch on this thread (lock not held)
  void Worker();
  void Append(Batch *b, std::string *out, std::optional<uint64_t> *last);

  static constexpr size_t kArena = 256 * 1024;
  static constexpr size_t kMaxRecords = 2048;
  // The first batches are small (128 records, then twice as many each up
  // to kMaxRecords): the first lines come out soon (--since).
  static constexpr size_t kFirstRecords = 128;
  static constexpr size_t kMaxInFlight = 4;

  Context mine_;
  std::unique_ptr<Context> theirs_;  // the worker's (made when it starts)
  const Printer &pr_;
  const Filter &filter_;
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
