// sink.h: a destination of logsink-forward. The forwarder hands it messages
// in record order from its loop thread; the sink delivers them (on that
// loop, RELP, or on a client library's threads, NATS) and reports, per
// message, whether the destination acknowledged it. Reports are collected
// by TakeAcks() on the loop thread after the sink called the wake function
// (uv_async_send).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace logsink::forward {

struct Message {
  uint64_t seq = 0;     // the record's sequence number (a lost notice: the first lost one)
  std::string id;       // the cursor string: a stable, unique id for deduplication
  std::string body;     // what the destination stores
  std::string subject;  // NATS: this message's subject ("" = the configured one)
  // A batch (NATS, --batch > 1): the records seq..last_seq (filtered ones
  // left out), `lines` JSON lines in body, each ending in a newline.
  bool batch = false;
  uint64_t last_seq = 0;
  uint32_t lines = 0;
};

struct Ack {
  uint64_t seq = 0;
  bool ok = false;         // stored by the destination
  bool duplicate = false;  // the destination said it already had it
  std::string error;       // !ok: why (the forwarder sends it again)
  // !ok: refused for its size for good (over the server's max_payload or
  // the stream's max_msg_size): sending it again would never end.
  bool too_big = false;
  // !ok: the destination answered that it will not take this message
  // (RELP: a response other than 200), as opposed to not answering.
  bool refused = false;
};

// Counters and state a sink shows in --status.
struct SinkState {
  bool connected = false;
  uint64_t reconnects = 0;
  uint64_t resent = 0;  // messages sent again after a broken session (RELP)
  // The address of the open session ("127.0.0.1:2514", "[::1]:2514"; RELP),
  // "" when none is open.
  std::string address;
  std::string last_error;
};

class Sink {
 public:
  virtual ~Sink() = default;
  // The body format this destination wants.
  enum class Body { kJson, kRfc5424 };
  virtual Body body() const = 0;
  // Starts connecting (in the background; never blocks for long). False with
  // *error only for a setup that cannot work (a malformed address, a stream
  // that could not be created when asked to).
  virtual bool Start(std::string *error) = 0;
  // Hands over one message. False when it cannot be taken now (disconnected
  // with a full buffer): the forwarder keeps it and tries again later.
  virtual bool Publish(const Message &m) = 0;
  // Stops after the messages already handed over were acknowledged or
  // timeout_ms passed; reports what was acknowledged before returning.
  virtual void Stop(uint64_t timeout_ms) = 0;
  virtual SinkState state() = 0;

  // The forwarder is stopping (SIGTERM): it hands over nothing new and
  // waits for the acknowledgments of what it handed over. A sink that can
  // deliver only within a session of its own makes no new attempt to open
  // one from now on.
  virtual void BeginDrain() {}
  // After BeginDrain: whether what was handed over and is not acknowledged
  // yet can still be acknowledged. False ends the drain at once (those
  // messages stay in the ring, the cursor before them: they are sent again
  // on the next start); a sink calls the wake function when it turns false.
  // The default, kept by NATS: true (a connection that is reconnecting still
  // delivers what it buffered, and its acknowledgments may come).
  virtual bool CanStillAcknowledge() { return true; }

  // What the destination holds past a point, for destinations whose
  // messages' identities do not survive a restart on their own (batches:
  // their boundaries depend on timing): the record ranges [first, last] of
  // the ring `ring_id` it holds with last >= from (in any order; messages
  // can be stored out of record order after a lost connection), looking at
  // no more than about `depth` of its older messages. 1 with *ranges, 0 when
  // it holds none, -1 with *error when it could not be asked (not connected
  // yet: ask again later), 2 when it is still reading (it reads in slices so
  // as not to hold the loop; it wakes the loop to be asked again).
  struct Range {
    uint64_t first = 0, last = 0;
  };
  virtual int StoredRanges(const std::string &ring_id, uint64_t from, int depth,
                           std::vector<Range> *ranges, std::string *error) {
    (void)ring_id, (void)from, (void)depth, (void)ranges, (void)error;
    return 0;
  }
  // The largest body one message may have (what the destination accepts,
  // less room for the headers); 0 = no limit known.
  virtual size_t MaxBody() { return 0; }

  // Called by the sink's threads; thread-safe.
  void Report(Ack a) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      acks_.push_back(std::move(a));
    }
    if (wake_) wake_();
  }
  // On the loop thread: the reports since the last call.
  void TakeAcks(std::vector<Ack> *out) {
    std::lock_guard<std::mutex> lock(mu_);
    out->swap(acks_);
    acks_.clear();
  }
  void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }
  // The forwarder's loop, set before Start(): a sink may run on it (its
  // handles are closed by Stop(); the forwarder runs the loop once more
  // after it, so that their close callbacks run).
  void set_loop(uv_loop_t *loop) { loop_ = loop; }

 protected:
  uv_loop_t *loop() const { return loop_; }
  void Wake() {
    if (wake_) wake_();
  }

 private:
  std::mutex mu_;
  std::vector<Ack> acks_;
  std::function<void()> wake_;
  uv_loop_t *loop_ = nullptr;
};

}  // namespace logsink::forward
