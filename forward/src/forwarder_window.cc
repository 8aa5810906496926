// forwarder_window.cc: the window of unacknowledged messages: handing a
// message to the sink, its acknowledgment or refusal, resending (after a
// backoff, after a reconnect, a message too big replaced by a notice), and
// the cursor file moved past what is acknowledged, written on libuv's
// thread pool (see forwarder_impl.h).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "forwarder_impl.h"

namespace logsink::forward {

// Entry e's records go as one notice (key, text) under the same id and
// range, sent next (the destination refused the message for good).
void Forwarder::ReplaceWithNotice(Entry *e, const char *key, const std::string &text) {
  Message &m = e->msg;
  const uint64_t last = m.batch ? m.last_seq : m.seq;
  window_bytes_ -= m.body.size();
  if (sink_->body() == Sink::Body::kJson) {
    m.body = NoticeLine(key, last - m.seq + 1, m.seq, last, text);
    if (m.batch) {
      m.body += '\n';
      m.lines = 1;
    }
  } else {
    m.body = SyslogNotice(m.id, text);
  }
  window_bytes_ += m.body.size();
  e->replaced = true;
  e->unsent = true;
  maybe_unsent_ = true;
  e->backoff_ms = 0;
  e->resend_at_ms = NowMs();
}

// A message the destination refused for its size for good (the stream's
// max_msg_size is lower than what the forwarder knew): its records go as
// one notice, so that the forwarder moves on.
void Forwarder::ReplaceTooBig(Entry *e, const std::string &why) {
  const Message &m = e->msg;
  const uint64_t last = m.batch ? m.last_seq : m.seq;
  ++c_.oversize;
  spdlog::warn("records {}..{} ({} bytes) refused as too big ({}): sending a notice in their place",
               m.seq, last, m.body.size(), why);
  ReplaceWithNotice(e, "oversize",
                    fmt::format("records {}..{} of {} left out: refused by the destination as "
                                "too big ({} bytes; {})",
                                m.seq, last, o_.file, m.body.size(), why));
}

// A message the receiver refused --refused-retries times more (RELP: an
// answer other than 200, for this message each time): its records go as
// one notice, so that one message the receiver will never take does not
// hold back every record after it. The records stay in the ring; the
// notice, the log line and `refused` in the status say which.
void Forwarder::ReplaceRefused(Entry *e, const std::string &why) {
  const Message &m = e->msg;
  const uint64_t last = m.batch ? m.last_seq : m.seq;
  ++c_.refused;
  spdlog::warn("records {}..{} refused {} times ({}): sending a notice in their place", m.seq, last,
               e->refusals, why);
  ReplaceWithNotice(
      e, "refused",
      fmt::format("records {}..{} of {} left out: refused by the destination {} times ({})", m.seq,
                  last, o_.file, e->refusals, why));
}

bool Forwarder::Hand(Entry *e) {
  if (sink_->Publish(e->msg)) {
    e->unsent = false;
    return true;
  }
  e->unsent = true;
  maybe_unsent_ = true;
  e->backoff_ms = std::clamp<uint64_t>(e->backoff_ms * 2, 50, 5000);
  e->resend_at_ms = NowMs() + e->backoff_ms;
  return false;
}

// After a reconnect, batches in flight may be lost while cnats sent later
// ones it still had buffered: the earlier ones go out again at once (the
// stream drops those it has) instead of at their acknowledgment timeout, so
// that the stream's last message soon has everything before it again (what
// a restarted batching forwarder relies on).
void Forwarder::ResendAfterReconnect() {
  uint64_t reconnects = sink_->state().reconnects;
  if (reconnects == seen_reconnects_) return;
  seen_reconnects_ = reconnects;
  uint64_t now = NowMs();
  for (Entry &e : window_) {
    if (e.acked || e.unsent) continue;
    e.unsent = true;
    maybe_unsent_ = true;
    e.resend_at_ms = now;
  }
}

// Walks the window only when some entry may wait to be sent again (a walk
// per wake-up over --window entries was ~10% of the CPU at 100 k records/s).
void Forwarder::Resend() {
  if (!maybe_unsent_) return;
  uint64_t now = NowMs();
  bool waiting = false;
  for (Entry &e : window_) {
    if (!e.unsent) continue;
    if (e.resend_at_ms > now) {
      waiting = true;
      continue;
    }
    ++c_.retries;
    if (!Hand(&e)) return;  // keep order: stop at the first refusal
  }
  maybe_unsent_ = waiting;
}

void Forwarder::TakeAcks() {
  std::vector<Ack> acks;
  sink_->TakeAcks(&acks);
  for (Ack &a : acks) {
    auto it = std::lower_bound(window_.begin(), window_.end(), a.seq,
                               [](const Entry &e, uint64_t s) { return e.msg.seq < s; });
    if (it == window_.end() || it->msg.seq != a.seq || it->acked) continue;
    if (a.ok) {
      it->acked = true;
      ++c_.acked;
      if (a.duplicate) ++c_.duplicates;
    } else if (a.too_big && !it->replaced) {  // a notice refused too: sent again as usual
      ReplaceTooBig(&*it, a.error);
    } else if (a.refused && !it->replaced && o_.refused_retries > 0 &&
               ++it->refusals > uint32_t(o_.refused_retries)) {
      ReplaceRefused(&*it, a.error);
    } else {
      LogNack(a);
      it->unsent = true;
      maybe_unsent_ = true;
      it->backoff_ms = std::clamp<uint64_t>(it->backoff_ms * 2, 50, 5000);
      it->resend_at_ms = NowMs() + it->backoff_ms;
    }
  }
}

void Forwarder::LogNack(const Ack &a) {
  ++nacks_unlogged_;
  const uint64_t now = NowMs();
  if (nack_logged_ms_ && now - nack_logged_ms_ < 1000) return;
  std::string hint;
  std::string lower(a.error);
  for (char &ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.find("no responders") != std::string::npos)
    hint = "; no JetStream stream captures the subject " + subject_.wildcard() +
           ": create one that does (nats stream add NAME --subjects '" + subject_.wildcard() +
           "'), or start logsink-forward once with --create-stream NAME";
  if (nacks_unlogged_ == 1)
    spdlog::warn("record {} not acknowledged ({}): sending it again{}", a.seq, a.error, hint);
  else
    spdlog::warn(
        "{} records not acknowledged since the last report, record {} the last ({}): "
        "sending them again{}",
        nacks_unlogged_, a.seq, a.error, hint);
  nack_logged_ms_ = now;
  nacks_unlogged_ = 0;
}

// Entries leave the window only once the cursor file is past them, so a
// forwarder killed at any moment sends at most one window again. The write
// (with its two fsyncs) runs on libuv's thread pool so that shipping goes on
// meanwhile; `sync` writes at once (at exit, when the loop has stopped).
void Forwarder::Commit(bool force, bool sync) {
  if (commit_busy_) return;
  // The acknowledged entries at the window's front, counted on from the
  // last call (entries never lose their acknowledgment).
  for (; acked_front_ < window_.size() && window_[acked_front_].acked; ++acked_front_)
    acked_front_bytes_ +=
        window_[acked_front_].msg.body.size() + window_[acked_front_].msg.id.size();
  const size_t acked = acked_front_;
  const uint64_t acked_bytes = acked_front_bytes_;  // what moving the cursor past them frees
  uint64_t next = acked < window_.size() ? window_[acked].msg.seq
                  : batch_open_          ? batch_.msg.seq  // read, not handed over yet
                                         : read_next_;
  if (committed_valid_ && next == committed_) return;
  uint64_t now = NowMs();
  // At once when half the window (by messages or by bytes) waits only for
  // the cursor: batches fill the 64 MiB before --window messages, and
  // waiting for the timer then left the forwarder idle most of the time
  // (docs/DESIGN.md, decision 16, "Compressed batches, and the window's
  // cadence").
  if (!force && acked < size_t(o_.window) / 2 && acked_bytes < kMaxWindowBytes / 2 &&
      now - last_commit_ms_ < kCommitEveryMs)
    return;
  last_commit_ms_ = now;
  if (sync) {
    std::string err;
    if (!WritePosition(o_.cursor_file, Position{ring_id_, next}, &err))
      spdlog::error("{}", err);
    else
      Committed(next);
    return;
  }
  commit_busy_ = true;
  commit_.data = this;
  commit_pos_ = Position{ring_id_, next};
  uv_queue_work(
      &loop_, &commit_,
      [](uv_work_t *w) {
        auto *f = static_cast<Forwarder *>(w->data);
        f->commit_ok_ = WritePosition(f->o_.cursor_file, f->commit_pos_, &f->commit_err_);
      },
      [](uv_work_t *w, int) {
        auto *f = static_cast<Forwarder *>(w->data);
        f->commit_busy_ = false;
        if (f->commit_ok_)
          f->Committed(f->commit_pos_.next_seq);
        else
          spdlog::error("{}", f->commit_err_);
        if (f->finish_pending_)
          f->Finish();
        else
          f->Pump();
      });
}

void Forwarder::Committed(uint64_t next) {
  committed_ = next;
  committed_valid_ = true;
  while (!window_.empty() && window_.front().acked && window_.front().msg.seq < next) {
    const uint64_t bytes = window_.front().msg.body.size() + window_.front().msg.id.size();
    window_bytes_ -= bytes;
    if (acked_front_) --acked_front_, acked_front_bytes_ -= bytes;
    window_.pop_front();
  }
}

}  // namespace logsink::forward
