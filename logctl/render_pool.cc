// render_pool.cc: records rendered on a second thread, in order (see
// render_pool.h).
#include "render_pool.h"

#include <algorithm>
#include <cstring>

namespace logsink::logctl {
namespace {

// Copies s into arena (capacity reserved: no reallocation) and returns the copy.
std::string_view Keep(std::string *arena, std::string_view s) {
  if (s.empty()) return {};
  const size_t at = arena->size();
  arena->append(s);
  return std::string_view(arena->data() + at, s.size());
}

size_t StringBytes(const storage::Record &r) {
  return r.app.size() + r.comm.size() + r.unit.size() + r.site.fmt.size() + r.site.file.size() +
         r.args.size();
}

}  // namespace

RenderPool::RenderPool(const render::Printer &pr, const storage::RecordFilter &filter,
                       const FieldMatcher &matches, const render::MessageMatcher &grep,
                       const storage::RingReader *reader, storage::Reporter *reporter)
    : mine_(pr, filter, matches, grep, reader),
      pr_(pr),
      filter_(filter),
      matches_(matches),
      grep_(grep),
      reader_(reader),
      reporter_(reporter) {}

RenderPool::~RenderPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

// What ReadPipeline::Render does after RecordFilter::Match.
void RenderPool::RenderRecord(Context *c, const storage::Record &rec, Batch *b) {
  if (!c->matches.Match(rec, &c->lookup)) return;
  bool ok = c->pr.Message(rec, &c->msg);
  if (!c->matcher.Match(c->msg)) return;
  c->pr.Line(rec, c->msg, ok, &b->out);
  b->last = rec.seq;
}

void RenderPool::Render(Context *c, Batch *b) {
  for (size_t i = 0; i < b->nblocks; i++) {
    uint64_t off = 0;
    c->decoder->Decode(b->blocks[i], &c->decoded, &c->problem, &off);
    for (const storage::Record &rec : c->decoded) {
      if (c->filter.Match(rec)) RenderRecord(c, rec, b);
    }
    if (!c->problem.empty()) b->problems.emplace_back(off, c->problem);
  }
  for (const storage::Record &rec : b->recs) RenderRecord(c, rec, b);
}

void RenderPool::StartFilling(size_t need) {
  if (spare_.empty()) {
    filling_ = std::make_unique<Batch>();
  } else {
    filling_ = std::move(spare_.back());
    spare_.pop_back();
  }
  // Empty here: growing it moves nothing already kept.
  filling_->arena.reserve(std::max(kArena, need));
}

bool RenderPool::AddBlock(storage::BlockImage *img) {
  bool sealed = false;
  if (filling_ && (!filling_->recs.empty() || filling_->block_records >= 4 * max_records_)) {
    Seal();
    sealed = true;
  }
  if (!filling_) StartFilling(0);
  Batch &b = *filling_;
  if (b.nblocks == b.blocks.size()) b.blocks.emplace_back();
  storage::BlockImage &mine = b.blocks[b.nblocks++];
  std::swap(mine, *img);
  b.block_records += mine.count;
  return sealed;
}

bool RenderPool::Add(const storage::Record &rec) {
  const size_t need = StringBytes(rec);
  bool sealed = false;
  if (filling_ && (filling_->nblocks || filling_->recs.size() >= max_records_ ||
                   filling_->arena.size() + need > filling_->arena.capacity())) {
    Seal();
    sealed = true;
  }
  if (!filling_) StartFilling(need);
  Batch &b = *filling_;
  storage::Record &r = b.recs.emplace_back(rec);
  r.app = Keep(&b.arena, rec.app);
  r.comm = Keep(&b.arena, rec.comm);
  r.unit = Keep(&b.arena, rec.unit);
  r.site.fmt = Keep(&b.arena, rec.site.fmt);
  r.site.file = Keep(&b.arena, rec.site.file);
  r.args = Keep(&b.arena, rec.args);
  return sealed;
}

void RenderPool::Seal() {
  if (!filling_) return;
  max_records_ = std::min(max_records_ * 2, kMaxRecords);
  size_t in_flight;
  {
    std::lock_guard<std::mutex> l(mu_);
    filling_->state = Batch::State::kQueued;
    queue_.push_back(std::move(filling_));
    in_flight = queue_.size();
  }
  if (!worker_.joinable()) {
    theirs_ = std::make_unique<Context>(pr_, filter_, matches_, grep_, reader_);
    worker_ = std::thread([this] { Worker(); });
  }
  work_cv_.notify_one();
  // The worker is behind: render one here rather than read further ahead.
  if (in_flight >= kMaxInFlight) RenderOneQueued();
}

bool RenderPool::RenderOneQueued() {
  Batch *b = nullptr;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto &q : queue_) {
      if (q->state == Batch::State::kQueued) {
        b = q.get();
        b->state = Batch::State::kWorking;
        break;
      }
    }
  }
  if (!b) return false;
  Render(&mine_, b);
  {
    std::lock_guard<std::mutex> l(mu_);
    b->state = Batch::State::kDone;
  }
  return true;
}

void RenderPool::Worker() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    Batch *b = nullptr;
    for (auto &q : queue_) {
      if (q->state == Batch::State::kQueued) {
        b = q.get();
        break;
      }
    }
    if (!b) {
      if (stop_) return;
      work_cv_.wait(l);
      continue;
    }
    b->state = Batch::State::kWorking;
    l.unlock();
    Render(theirs_.get(), b);
    l.lock();
    b->state = Batch::State::kDone;
    done_cv_.notify_all();
  }
}

void RenderPool::Append(Batch *b, std::string *out, std::optional<uint64_t> *last) {
  out->append(b->out);
  if (b->last) *last = b->last;
  if (reporter_) {
    for (const auto &[off, why] : b->problems) reporter_->Corruption(off, why);
  }
}

void RenderPool::Clear(Batch *b) {
  b->nblocks = 0;
  b->block_records = 0;
  b->problems.clear();
  b->recs.clear();
  b->arena.clear();
  b->out.clear();
  b->last.reset();
}

bool RenderPool::TakeReady(std::string *out, std::optional<uint64_t> *last) {
  bool any = false;
  for (;;) {
    std::unique_ptr<Batch> b;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (queue_.empty() || queue_.front()->state != Batch::State::kDone) break;
      b = std::move(queue_.front());
      queue_.pop_front();
    }
    Append(b.get(), out, last);
    any = true;
    Clear(b.get());
    spare_.push_back(std::move(b));
  }
  return any;
}

void RenderPool::WaitAll(std::string *out, std::optional<uint64_t> *last) {
  // A last batch nobody waits for is rendered here, without the worker.
  if (filling_ && queue_.empty() && !worker_.joinable()) {
    Render(&mine_, filling_.get());
    Append(filling_.get(), out, last);
    Clear(filling_.get());
    return;
  }
  Seal();
  for (;;) {
    TakeReady(out, last);
    if (RenderOneQueued()) continue;
    std::unique_lock<std::mutex> l(mu_);
    if (queue_.empty()) return;
    if (queue_.front()->state == Batch::State::kDone) continue;
    done_cv_.wait(l);
  }
}

}  // namespace logsink::logctl
