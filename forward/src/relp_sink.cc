// relp_sink.cc: see relp_sink.h. librelp is Debian's RELP client (the one
// rsyslog's omrelp uses); we keep only the acknowledgment bookkeeping.
#include "relp_sink.h"

// librelp.h has no extern "C" guard of its own.
extern "C" {
#include <librelp.h>
}
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace logsink::forward {
namespace {

// librelp calls its debug printer unconditionally; it must not be null.
void RelpDebug(char *, ...) {}
void RelpError(void *, char *objinfo, char *errmsg, relpRetVal code) {
  spdlog::debug("librelp: {}: {} ({})", objinfo ? objinfo : "", errmsg ? errmsg : "", int(code));
}
void RelpGenericError(char *objinfo, char *errmsg, relpRetVal code) {
  RelpError(nullptr, objinfo, errmsg, code);
}

using Clock = std::chrono::steady_clock;

class RelpSink : public Sink {
 public:
  explicit RelpSink(const RelpOptions &o) : opts_(o) {}
  ~RelpSink() override { Stop(0); }

  Body body() const override { return Body::kRfc5424; }

  bool Start(std::string *error) override {
    if (relpEngineConstruct(&engine_) != RELP_RET_OK) {
      *error = "cannot set up librelp";
      return false;
    }
    relpEngineSetDbgprint(engine_, RelpDebug);
    relpEngineSetOnErr(engine_, RelpError);
    relpEngineSetOnGenericErr(engine_, RelpGenericError);
    relpEngineSetEnableCmd(engine_, (unsigned char *)"syslog", eRelpCmdState_Required);
    thread_ = std::thread([this] { Run(); });
    return true;
  }

  bool Publish(const Message &m) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    queue_.push_back(m);
    cv_.notify_one();
    return true;
  }

  void Stop(uint64_t timeout_ms) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!thread_.joinable()) return;
      stopping_ = true;
      stop_deadline_ = Clock::now() + std::chrono::milliseconds(timeout_ms);
      cv_.notify_one();
    }
    thread_.join();
    if (engine_) relpEngineDestruct(&engine_);
    engine_ = nullptr;
  }

  SinkState state() override {
    std::lock_guard<std::mutex> lock(mu_);
    SinkState st;
    st.connected = connected_;
    st.reconnects = reconnects_;
    st.last_error = last_error_;
    st.resent = resent_;
    return st;
  }

 private:
  void SetState(bool connected, const std::string &err) {
    std::lock_guard<std::mutex> lock(mu_);
    if (connected && !connected_ && ever_connected_) ++reconnects_;
    if (connected) ever_connected_ = true;
    connected_ = connected;
    if (!err.empty()) last_error_ = err;
  }

  // Connects, with backoff, until it works or the stop deadline passes.
  bool Connect() {
    uint64_t wait_ms = 50;
    for (;;) {
      if (clt_) relpEngineCltDestruct(engine_, &clt_);
      clt_ = nullptr;
      if (relpEngineCltConstruct(engine_, &clt_) == RELP_RET_OK) {
        relpCltSetWindowSize(clt_, RelpWindow());
        relpCltSetTimeout(clt_, 5);
        if (relpCltConnect(clt_, AF_UNSPEC, (unsigned char *)opts_.port.c_str(),
                           (unsigned char *)opts_.host.c_str()) == RELP_RET_OK) {
          SetState(true, "");
          return true;
        }
      }
      SetState(false, "cannot connect to relp://" + opts_.host + ":" + opts_.port);
      std::unique_lock<std::mutex> lock(mu_);
      if (stopping_ && Clock::now() >= stop_deadline_) return false;
      cv_.wait_for(lock, std::chrono::milliseconds(wait_ms));
      wait_ms = std::min<uint64_t>(wait_ms * 2, opts_.backoff_max_ms);
    }
  }

  bool Send(const Message &m) {
    return relpCltSendSyslog(clt_, (unsigned char *)m.body.data(), m.body.size()) == RELP_RET_OK;
  }

  // Closes the session cleanly: RELP answers the close only after every
  // earlier message, so all of them are acknowledged.
  void CloseSession() {
    if (!clt_) return;
    bool clean = relpEngineCltDestruct(engine_, &clt_) == RELP_RET_OK;
    clt_ = nullptr;
    if (clean)
      for (const Message &old : unacked_) Report(Ack{old.seq, true, false, ""});
    unacked_.clear();
  }

  void Run() {
    bool up = false;
    for (;;) {
      Message m;
      {
        std::unique_lock<std::mutex> lock(mu_);
        bool ready = cv_.wait_for(lock, std::chrono::milliseconds(kIdleCloseMs),
                                  [this] { return stopping_ || !queue_.empty(); });
        if (!ready) {
          // Idle: nothing else would ever acknowledge the last messages.
          if (up && !unacked_.empty()) {
            lock.unlock();
            CloseSession();
            up = false;
            SetState(false, "");
          }
          continue;
        }
        if (queue_.empty() || (stopping_ && Clock::now() >= stop_deadline_)) break;
        m = std::move(queue_.front());
        queue_.pop_front();
      }
      if (!up) {
        up = Connect();
        // Messages of a session that broke were maybe not acknowledged.
        if (up && !unacked_.empty()) {
          std::lock_guard<std::mutex> lock(mu_);
          resent_ += unacked_.size();
        }
        for (size_t k = 0; up && k < unacked_.size(); ++k) up = Send(unacked_[k]);
      }
      // Send m; on a broken session, reconnect and send the possibly
      // unacknowledged window again first.
      while (up && !Send(m)) {
        SetState(false, "RELP session to " + opts_.host + ":" + opts_.port + " broken");
        up = Connect();
        if (!up) break;
        {
          std::lock_guard<std::mutex> lock(mu_);
          resent_ += unacked_.size();
        }
        for (size_t k = 0; up && k < unacked_.size(); ++k) up = Send(unacked_[k]);
      }
      if (!up) {
        std::lock_guard<std::mutex> lock(mu_);
        queue_.push_front(std::move(m));
        break;
      }
      unacked_.push_back(std::move(m));
      while (unacked_.size() > size_t(RelpWindow())) {
        Report(Ack{unacked_.front().seq, true, false, ""});
        unacked_.pop_front();
      }
    }
    if (up) CloseSession();
    if (clt_) relpEngineCltDestruct(engine_, &clt_);
    clt_ = nullptr;
    SetState(false, "");
  }

  // librelp's window: a quarter of the forwarder's. A message counts as
  // acknowledged once this many later ones went out, and the forwarder
  // writes its cursor once half its window is acknowledged: with half
  // (as before issue 29) that happened only when the window was full, and
  // every cursor write (two fsyncs) stalled the session; with a quarter, a
  // quarter of the window is still free to send while the cursor is written.
  int RelpWindow() const { return std::max(1, opts_.window / 4); }

  static constexpr int kIdleCloseMs = 200;

  RelpOptions opts_;
  relpEngine_t *engine_ = nullptr;
  relpClt_t *clt_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Message> queue_;    // handed over, not sent yet
  std::deque<Message> unacked_;  // sent, maybe not acknowledged (<= window)
  bool stopping_ = false;
  Clock::time_point stop_deadline_{};
  bool connected_ = false, ever_connected_ = false;
  uint64_t reconnects_ = 0, resent_ = 0;
  std::string last_error_;
};

}  // namespace

bool ParseRelpUrl(const std::string &to, RelpOptions *out, std::string *error) {
  const std::string scheme = "relp://";
  std::string hp = to.compare(0, scheme.size(), scheme) == 0 ? to.substr(scheme.size()) : "";
  size_t colon = hp.rfind(':');
  if (hp.empty() || colon == std::string::npos || colon == 0 || colon + 1 == hp.size() ||
      hp.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    *error = "expected relp://HOST:PORT, got " + to;
    return false;
  }
  out->host = hp.substr(0, colon);
  if (out->host.size() > 2 && out->host.front() == '[' && out->host.back() == ']')
    out->host = out->host.substr(1, out->host.size() - 2);
  out->port = hp.substr(colon + 1);
  return true;
}

std::unique_ptr<Sink> MakeRelpSink(const RelpOptions &opts) {
  return std::make_unique<RelpSink>(opts);
}

}  // namespace logsink::forward
