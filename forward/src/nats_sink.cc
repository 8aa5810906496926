// nats_sink.cc: see nats_sink.h. cnats runs its own threads (reader, flusher,
// reconnect); its acknowledgment callback only records the result and wakes
// the forwarder's loop. cnats is used as Debian ships it (3.4); there is no
// reason to speak the NATS protocol ourselves.
//
// Why not cnats' libuv adapter (nats/adapters/libuv.h): JetStream's
// acknowledgments would still be delivered on a cnats thread (so the
// ordering care at exit, Close below, stays), and only the socket reader
// and the flusher would move, onto the loop thread, already the busier one
// (measured per thread: docs/DESIGN.md, decision 16).
#include "nats_sink.h"

#include <lz4frame.h>
#include <nats/nats.h>
#include <spdlog/spdlog.h>
#include <zstd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "logsink/storage/cursor.h"

namespace logsink::forward {
namespace {

class NatsSink : public Sink {
 public:
  explicit NatsSink(const NatsOptions &o) : opts_(o) {}
  ~NatsSink() override {
    StopWorker();
    Close();
    if (zctx_) ZSTD_freeCCtx(zctx_);
  }

  Body body() const override { return Body::kJson; }

  bool Start(std::string *error) override {
    natsStatus s = natsOptions_Create(&nopts_);
    std::vector<const char *> urls;
    for (const auto &u : opts_.servers) urls.push_back(u.c_str());
    if (s == NATS_OK) s = natsOptions_SetServers(nopts_, urls.data(), int(urls.size()));
    if (s == NATS_OK) s = natsOptions_SetName(nopts_, "logsink-forward");
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(nopts_, -1);  // forever
    if (s == NATS_OK) s = natsOptions_SetReconnectWait(nopts_, 250);
    if (s == NATS_OK) s = natsOptions_SetTimeout(nopts_, 2000);
    if (s == NATS_OK) s = natsOptions_SetRetryOnFailedConnect(nopts_, true, OnConnected, this);
    if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(nopts_, OnDisconnected, this);
    if (s == NATS_OK) s = natsOptions_SetReconnectedCB(nopts_, OnConnected, this);
    if (s == NATS_OK) s = natsOptions_SetClosedCB(nopts_, OnClosed, this);
    if (s != NATS_OK) {
      *error = std::string("NATS options: ") + natsStatus_GetText(s);
      return false;
    }
    s = natsConnection_Connect(&nc_, nopts_);
    // With RetryOnFailedConnect, NATS_NOT_YET_CONNECTED means "connecting in
    // the background": publishes are buffered until then.
    if (s == NATS_OK) {
      std::lock_guard<std::mutex> lock(state_mu_);  // cnats' threads run already
      connected_ = true;
    }
    if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED) {
      *error = std::string("cannot connect to NATS: ") + natsStatus_GetText(s);
      return false;
    }
    if (s == NATS_NOT_YET_CONNECTED) {
      SetError("not connected to NATS at " + Servers() + " yet");
      spdlog::warn(
          "NATS at {} does not answer; trying again every 250 ms (records wait in the "
          "ring)",
          Servers());
    } else {
      spdlog::info("connected to NATS at {}", Servers());
    }
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.PublishAsync.MaxPending = opts_.window;
    jo.PublishAsync.AckHandler = OnAck;
    jo.PublishAsync.AckHandlerClosure = this;
    jo.Wait = int64_t(opts_.ack_timeout_ms);
    s = natsConnection_JetStream(&js_, nc_, &jo);
    if (s != NATS_OK) {
      *error = std::string("JetStream context: ") + natsStatus_GetText(s);
      return false;
    }
    if (!opts_.create_stream.empty() && !CreateStream(error)) return false;
    return true;
  }

  // With compression, batches are compressed and handed to cnats on a
  // thread of the sink's own, beside the loop that reads and renders them
  // (compressing on the loop cost it a fifth of its time: docs/DESIGN.md,
  // decision 16, "Compressed batches"); a
  // batch cnats does not take there comes back as a refused acknowledgment
  // and the forwarder sends it again.
  bool Publish(const Message &m) override {
    if (opts_.compress == "none") return PublishNow(m);
    std::lock_guard<std::mutex> lock(work_mu_);
    if (work_stop_) return false;
    if (!worker_.joinable()) worker_ = std::thread([this] { Work(); });
    work_.push_back(m);
    work_cv_.notify_one();
    return true;
  }

  bool PublishNow(const Message &m) {
    natsMsg *msg = nullptr;
    const std::string &subject = m.subject.empty() ? opts_.subject : m.subject;
    const char *encoding = m.batch ? Compress(m.body) : nullptr;
    const std::string &body = encoding ? packed_ : m.body;
    natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, body.data(), int(body.size()));
    if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Nats-Msg-Id", m.id.c_str());
    if (s == NATS_OK && encoding) s = natsMsgHeader_Set(msg, "Logsink-Encoding", encoding);
    if (m.batch) {
      // What a consumer needs to split and place a batch without parsing the
      // id (see the man page, "Batches").
      char num[24];
      if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Logsink-Ring", ring_id_.c_str());
      std::snprintf(num, sizeof num, "%" PRIu64, m.seq);
      if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Logsink-First-Seq", num);
      std::snprintf(num, sizeof num, "%" PRIu64, m.last_seq);
      if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Logsink-Last-Seq", num);
      std::snprintf(num, sizeof num, "%" PRIu32, m.lines);
      if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Logsink-Records", num);
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = int64_t(opts_.ack_timeout_ms);
    if (s == NATS_OK) s = js_PublishMsgAsync(js_, &msg, &po);
    natsMsg_Destroy(msg);         // no-op when the library took it
    if (s == NATS_MAX_PAYLOAD) {  // never goes: the forwarder replaces it
      Ack a;
      a.seq = m.seq;
      a.too_big = true;
      a.error = std::string("publish: ") + natsStatus_GetText(s);
      SetError(a.error);
      Report(std::move(a));
      return true;
    }
    if (s != NATS_OK) {
      // Without a connection cnats' answer ("Not Supported By Server") says
      // nothing useful: say what is wrong.
      SetError(Connected() ? std::string("publish: ") + natsStatus_GetText(s)
                           : "not connected to NATS at " + Servers() +
                                 " (publish: " + natsStatus_GetText(s) + ")");
      return false;
    }
    return true;
  }

  // The stream capturing the subject ($JS.API.STREAM.NAMES with a subject
  // filter), its state (first sequence, how many messages it holds on the
  // subject, its max_msg_size), then its messages on the subject from the
  // last one backwards (JetStream's "get last message for subject", then
  // "get message" by stream sequence), until `depth` messages older than
  // `from` were seen: a message is stored at most a window away from its
  // place in record order, so none past `from` is further back. Only for a
  // fixed subject: batches are refused with a template.
  //
  // Why one request per stream sequence: JetStream's get API (nats-server
  // 2.9 as Debian ships it) filters by subject only forwards (next_by_subj)
  // or for the last message, and a consumer with a FilterSubject delivers
  // forwards too, from a start sequence we could only find by walking back;
  // what we need is the newest messages on the subject, backwards. The
  // walk is therefore bounded instead: it stops at the stream's first
  // sequence, once it has seen every message the stream holds on the
  // subject (the stream info's per-subject count), after `depth` older
  // ones, or after kReadBackBudgetMs of requests in all; it runs in slices
  // of kReadBackSliceMs so that the loop answers SIGTERM and the watchdog
  // meanwhile, and a failed request is tried again where it failed, not
  // from the start. Stopped by the budget it returns what it found: those
  // ranges are stored; records it did not see stored are sent again
  // (duplicates, never gaps).
  int StoredRanges(const std::string &ring_id, uint64_t from, int depth, std::vector<Range> *ranges,
                   std::string *error) override {
    ring_id_ = ring_id;
    ranges->clear();
    if (!Connected()) {
      *error = "not connected to NATS at " + Servers() + " yet";
      return -1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (!rb_.active) {
      if (int rc = StartReadBack(ring_id, from, error); rc <= 0) return rc;
    }
    return WalkBack(ring_id, from, depth, t0, ranges, error);
  }

  size_t MaxBody() override {
    int64_t limit = nc_ ? natsConnection_GetMaxPayload(nc_) : 0;
    if (stream_max_msg_ > 0 && (limit <= 0 || stream_max_msg_ < limit)) limit = stream_max_msg_;
    if (limit <= 0) return 0;  // not known yet
    return limit > kHeaderRoom ? size_t(limit - kHeaderRoom) : 1;
  }

  void Stop(uint64_t timeout_ms) override {
    StopWorker();
    if (js_) {
      jsPubOptions po;
      jsPubOptions_Init(&po);
      po.MaxWait = int64_t(timeout_ms);
      js_PublishAsyncComplete(js_, &po);
    }
    Close();
  }

  SinkState state() override {
    std::lock_guard<std::mutex> lock(state_mu_);
    SinkState st;
    st.connected = connected_;
    st.reconnects = reconnects_;
    st.last_error = last_error_;
    return st;
  }

 private:
  // What is queued and not handed to cnats yet is not acknowledged: the
  // forwarder sends it again on restart.
  void StopWorker() {
    {
      std::lock_guard<std::mutex> lock(work_mu_);
      work_stop_ = true;
      work_cv_.notify_one();
    }
    if (worker_.joinable()) worker_.join();
  }

  void Work() {
    for (;;) {
      Message m;
      {
        std::unique_lock<std::mutex> lock(work_mu_);
        work_cv_.wait(lock, [this] { return work_stop_ || !work_.empty(); });
        if (work_stop_) return;
        m = std::move(work_.front());
        work_.pop_front();
      }
      if (!PublishNow(m)) {
        Ack a;
        a.seq = m.seq;
        {
          std::lock_guard<std::mutex> lock(state_mu_);
          a.error = last_error_;
        }
        Report(std::move(a));
      }
    }
  }

  // Compresses a batch's body into packed_ as opts_.compress says; the
  // encoding's name, or nullptr to send the body as it is (no compression
  // asked for, it failed, or it would not be smaller). The same body always
  // compresses to the same bytes (one codec, one level, no dictionary).
  const char *Compress(const std::string &body) {
    if (opts_.compress == "lz4") {
      LZ4F_preferences_t prefs = LZ4F_INIT_PREFERENCES;
      prefs.frameInfo.contentSize = body.size();
      packed_.resize(LZ4F_compressFrameBound(body.size(), &prefs));
      size_t n =
          LZ4F_compressFrame(packed_.data(), packed_.size(), body.data(), body.size(), &prefs);
      if (LZ4F_isError(n) || n >= body.size()) return nullptr;
      packed_.resize(n);
      return "lz4";
    }
    if (opts_.compress == "zstd") {
      if (!zctx_) zctx_ = ZSTD_createCCtx();
      if (!zctx_) return nullptr;
      packed_.resize(ZSTD_compressBound(body.size()));
      size_t n =
          ZSTD_compressCCtx(zctx_, packed_.data(), packed_.size(), body.data(), body.size(), 1);
      if (ZSTD_isError(n) || n >= body.size()) return nullptr;
      packed_.resize(n);
      return "zstd";
    }
    return nullptr;
  }

  // A stored message seen reading back: its range, or one more older one.
  void Take(natsMsg *m, const std::string &ring_id, uint64_t from) {
    Range r;
    if (RangeOf(m, ring_id, &r) && r.last >= from)
      rb_.ranges.push_back(r);
    else
      ++rb_.older;
  }
  int Done(std::vector<Range> *ranges) {
    *ranges = std::move(rb_.ranges);
    rb_ = ReadBack{};
    return ranges->empty() ? 0 : 1;
  }

  // The record range a stored message of ring_id covers: a batch's headers,
  // or the cursor a one-record message's id is.
  static bool RangeOf(natsMsg *m, const std::string &ring_id, Range *r) {
    const char *ring = nullptr, *first = nullptr, *last = nullptr, *id = nullptr;
    if (natsMsgHeader_Get(m, "Logsink-Ring", &ring) == NATS_OK && ring) {
      if (ring_id != ring || natsMsgHeader_Get(m, "Logsink-First-Seq", &first) != NATS_OK ||
          !first || natsMsgHeader_Get(m, "Logsink-Last-Seq", &last) != NATS_OK || !last)
        return false;
      r->first = std::strtoull(first, nullptr, 10);
      r->last = std::strtoull(last, nullptr, 10);
      return r->first <= r->last;
    }
    storage::Cursor c;
    std::string why;
    if (natsMsgHeader_Get(m, "Nats-Msg-Id", &id) != NATS_OK || !id ||
        !storage::ParseCursor(id, &c, &why) || c.ring_id != ring_id)
      return false;
    r->first = r->last = c.seq;
    return true;
  }

  static void OnAck(jsCtx *, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure) {
    auto *self = static_cast<NatsSink *>(closure);
    const char *id = nullptr, *first = nullptr;
    Ack a;
    storage::Cursor c;
    std::string why;
    bool known = false;
    if (natsMsgHeader_Get(msg, "Logsink-First-Seq", &first) == NATS_OK && first) {
      a.seq = std::strtoull(first, nullptr, 10);  // a batch
      known = true;
    } else if (natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) == NATS_OK && id &&
               storage::ParseCursor(id, &c, &why)) {
      a.seq = c.seq;
      known = true;
    }
    if (known) {
      if (pa) {
        a.ok = true;
        a.duplicate = pa->Duplicate;
      } else {
        a.too_big = pae && (pae->ErrCode == JSStreamMessageExceedsMaximumErr ||
                            pae->Err == NATS_MAX_PAYLOAD);
        a.error = pae && pae->ErrText ? pae->ErrText
                  : pae               ? natsStatus_GetText(pae->Err)
                                      : "no acknowledgment";
        self->SetError(a.error);
      }
      self->Report(std::move(a));
    }
    natsMsg_Destroy(msg);
  }
  // cnats' callback thread: state changes are logged (spdlog's logger is
  // the thread-safe kind, main.cc).
  static void OnConnected(natsConnection *nc, void *closure) {
    auto *self = static_cast<NatsSink *>(closure);
    char url[256] = "";
    if (natsConnection_GetConnectedUrl(nc, url, sizeof url) != NATS_OK) url[0] = 0;
    {
      std::lock_guard<std::mutex> lock(self->state_mu_);
      if (!self->connected_) ++self->reconnects_;
      self->connected_ = true;
      self->last_error_.clear();
    }
    spdlog::info("connected to NATS at {}", url[0] ? url : self->Servers().c_str());
  }
  static void OnDisconnected(natsConnection *, void *closure) {
    auto *self = static_cast<NatsSink *>(closure);
    {
      std::lock_guard<std::mutex> lock(self->state_mu_);
      if (self->closing_) return;
      self->connected_ = false;
      self->last_error_ = "disconnected from NATS at " + self->Servers();
    }
    spdlog::warn(
        "disconnected from NATS at {}; reconnecting every 250 ms (records wait in the "
        "ring)",
        self->Servers());
  }
  bool Connected() {
    std::lock_guard<std::mutex> lock(state_mu_);
    return connected_;
  }
  std::string Servers() const {
    std::string s;
    for (const auto &u : opts_.servers) s += (s.empty() ? "" : ",") + u;
    return s;
  }
  // The last callback cnats makes for a connection (its callback thread
  // delivers them in order: the disconnected one comes before).
  static void OnClosed(natsConnection *, void *closure) {
    auto *self = static_cast<NatsSink *>(closure);
    std::lock_guard<std::mutex> lock(self->state_mu_);
    self->closed_ = true;
    self->closed_cv_.notify_all();
  }
  void SetError(std::string e) {
    std::lock_guard<std::mutex> lock(state_mu_);
    last_error_ = std::move(e);
  }

  bool CreateStream(std::string *error) {
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = opts_.create_stream.c_str();
    const char *subjects[] = {opts_.subject.c_str()};
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    jsStreamInfo *si = nullptr;
    jsErrCode jerr = jsErrCode(0);
    natsStatus s = js_AddStream(&si, js_, &sc, nullptr, &jerr);
    if (si) jsStreamInfo_Destroy(si);
    if (s == NATS_OK || jerr == JSStreamNameExistErr) return true;
    *error = "cannot create the stream " + opts_.create_stream + ": " + natsStatus_GetText(s) +
             (jerr ? " (JetStream error " + std::to_string(int(jerr)) + ")" : "");
    return false;
  }

  // Closes the connection and waits (at most 5 s) for cnats' closed callback
  // before destroying it: cnats runs the disconnected and closed callbacks on
  // its own thread after natsConnection_Close/Destroy return, and they use
  // this object, which the caller frees next (the ASan run caught the
  // forwarder aborting at exit about once in 50 stops).
  void Close() {
    if (js_) jsCtx_Destroy(js_);
    js_ = nullptr;
    {
      std::lock_guard<std::mutex> lock(state_mu_);
      closing_ = true;  // the disconnect that follows is ours
    }
    if (nc_) {
      natsConnection_Close(nc_);
      std::unique_lock<std::mutex> lock(state_mu_);
      closed_cv_.wait_for(lock, std::chrono::seconds(5), [this] { return closed_; });
      lock.unlock();
      natsConnection_Destroy(nc_);
    }
    nc_ = nullptr;
    if (nopts_) natsOptions_Destroy(nopts_);
    nopts_ = nullptr;
  }

  // StoredRanges' first step: finds the stream that captures the subject
  // and how many messages it holds there, and reads the newest. Returns -1
  // (*error), 0 when the stream holds nothing on the subject (or there is
  // no stream), 1 when the walk backwards is to go on (rb_.active).
  int StartReadBack(const std::string &ring_id, uint64_t from, std::string *error) {
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = kReadBackRequestMs;
    natsStatus s = NATS_OK;
    jsErrCode jerr = jsErrCode(0);
    rb_ = ReadBack{};
    std::string req = "{\"subject\":\"" + opts_.subject + "\"}";
    natsMsg *reply = nullptr;
    s = natsConnection_Request(&reply, nc_, "$JS.API.STREAM.NAMES", req.data(), int(req.size()),
                               kReadBackRequestMs);
    if (s != NATS_OK) {
      *error = std::string("asking NATS which stream captures ") + opts_.subject + ": " +
               natsStatus_GetText(s);
      return -1;
    }
    std::string names(natsMsg_GetData(reply), size_t(natsMsg_GetDataLength(reply)));
    natsMsg_Destroy(reply);
    std::string stream;
    size_t at = names.find("\"streams\":[\"");
    if (at != std::string::npos) {
      at += 12;
      size_t end = names.find('"', at);
      if (end != std::string::npos) stream = names.substr(at, end - at);
    }
    if (stream.empty()) return 0;  // no stream: publishing will say so
    jsStreamInfo *si = nullptr;
    jsOptions io;
    jsOptions_Init(&io);
    io.Wait = kReadBackRequestMs;
    io.Stream.Info.SubjectsFilter = opts_.subject.c_str();
    s = js_GetStreamInfo(&si, js_, stream.c_str(), &io, &jerr);
    if (s != NATS_OK) {
      *error = "asking NATS about the stream " + stream + ": " + natsStatus_GetText(s);
      return -1;
    }
    // Unknown when the server does not list the subject's count.
    uint64_t on_subject = si->State.Subjects ? 0 : UINT64_MAX;
    if (si->State.Subjects)
      for (int i = 0; i < si->State.Subjects->Count; ++i)
        if (opts_.subject == si->State.Subjects->List[i].Subject)
          on_subject += si->State.Subjects->List[i].Msgs;
    rb_.first_seq = si->State.FirstSeq;
    stream_max_msg_ = si->Config ? int64_t(si->Config->MaxMsgSize) : -1;
    jsStreamInfo_Destroy(si);
    if (on_subject == 0) return 0;
    natsMsg *m = nullptr;
    jerr = jsErrCode(0);
    s = js_GetLastMsg(&m, js_, stream.c_str(), opts_.subject.c_str(), &jo, &jerr);
    if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr) return 0;
    if (s != NATS_OK) {
      *error = "reading the last message of " + opts_.subject + " in the stream " + stream + ": " +
               natsStatus_GetText(s);
      return -1;
    }
    rb_.active = true;
    rb_.stream = stream;
    rb_.left = on_subject - 1;
    rb_.seq = natsMsg_GetSequence(m);
    Take(m, ring_id, from);
    natsMsg_Destroy(m);
    return 1;
  }

  // StoredRanges' walk: older messages on the subject, one request each,
  // within the slice, the depth and the budget (see StoredRanges). Returns
  // as StoredRanges does.
  int WalkBack(const std::string &ring_id, uint64_t from, int depth,
               std::chrono::steady_clock::time_point t0, std::vector<Range> *ranges,
               std::string *error) {
    auto spent = [&] {
      return rb_.spent_ms + uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - t0)
                                         .count());
    };
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = kReadBackRequestMs;
    natsStatus s = NATS_OK;
    jsErrCode jerr = jsErrCode(0);
    for (;;) {
      // The previous message on the subject, if any is left to read.
      if (rb_.left == 0 || rb_.seq <= rb_.first_seq || rb_.seq <= 1 || rb_.older >= depth)
        return Done(ranges);
      if (spent() >= kReadBackBudgetMs) {
        spdlog::warn(
            "stopped reading the stream {} backwards after {} ms ({} of its messages read, "
            "down to sequence {}): records past the cursor stored earlier than that may be "
            "sent again",
            rb_.stream, spent(), rb_.read, rb_.seq);
        return Done(ranges);
      }
      if (std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(kReadBackSliceMs)) {
        rb_.spent_ms = spent();
        *error = "reading the stream " + rb_.stream + " back (" + std::to_string(rb_.read) +
                 " messages so far)";
        Wake();  // ask again at once, after the loop's other work
        return 2;
      }
      natsMsg *m = nullptr;
      jerr = jsErrCode(0);
      s = js_GetMsg(&m, js_, rb_.stream.c_str(), rb_.seq - 1, &jo, &jerr);
      ++rb_.read;
      if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr) {  // deleted
        --rb_.seq;
        continue;
      }
      if (s != NATS_OK) {  // tried again from here on the next call
        rb_.spent_ms = spent();
        *error = "reading the stream " + rb_.stream + ": " + natsStatus_GetText(s);
        return -1;
      }
      --rb_.seq;
      const char *subj = natsMsg_GetSubject(m);
      if (subj && opts_.subject == subj) {
        --rb_.left;
        Take(m, ring_id, from);
      }
      natsMsg_Destroy(m);
    }
  }

  // Reading the stream back (StoredRanges), across calls.
  static constexpr int64_t kReadBackRequestMs = 1000;  // one request's timeout
  static constexpr uint64_t kReadBackSliceMs = 100;    // the loop held at most about this
  static constexpr uint64_t kReadBackBudgetMs = 5000;  // requests in all (WatchdogSec=30s)
  static constexpr int64_t kHeaderRoom = 1024;         // a batch's headers fit in this
  struct ReadBack {
    bool active = false;
    std::string stream;
    uint64_t first_seq = 0;  // the stream's first sequence
    uint64_t seq = 0;        // the last one read; the next read is seq - 1
    uint64_t left = 0;       // messages on the subject not read yet
    uint64_t read = 0;       // requests made
    uint64_t spent_ms = 0;   // time in requests before this call
    int older = 0;
    std::vector<Range> ranges;
  };
  ReadBack rb_;
  int64_t stream_max_msg_ = -1;  // the stream's max_msg_size (-1: none or not known)

  NatsOptions opts_;
  // Compressing publisher (Work): messages handed over, not yet to cnats.
  std::thread worker_;
  std::mutex work_mu_;
  std::condition_variable work_cv_;
  std::deque<Message> work_;
  bool work_stop_ = false;
  std::string packed_;         // a compressed body (Compress), on the worker
  ZSTD_CCtx *zctx_ = nullptr;  // kept across batches: its tables are set up once
  std::string ring_id_;        // set by StoredRanges before the first batch
  natsOptions *nopts_ = nullptr;
  natsConnection *nc_ = nullptr;
  jsCtx *js_ = nullptr;
  std::mutex state_mu_;
  std::condition_variable closed_cv_;  // closed_ became true
  bool closed_ = false, closing_ = false;
  bool connected_ = false;
  uint64_t reconnects_ = 0;
  std::string last_error_;
};

}  // namespace

bool ParseNatsUrl(const std::string &to, std::vector<std::string> *servers, std::string *error) {
  const std::string scheme = "nats://";
  if (to.compare(0, scheme.size(), scheme) != 0) {
    *error = "not a nats:// address: " + to;
    return false;
  }
  std::string rest = to.substr(scheme.size());
  servers->clear();
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t comma = rest.find(',', pos);
    std::string hp = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (hp.compare(0, scheme.size(), scheme) == 0) hp = hp.substr(scheme.size());
    size_t colon = hp.rfind(':');
    if (hp.empty() || colon == std::string::npos || colon == 0 || colon + 1 == hp.size() ||
        hp.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
      *error = "expected nats://HOST:PORT[,HOST:PORT...], got " + to;
      return false;
    }
    servers->push_back(scheme + hp);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

std::unique_ptr<Sink> MakeNatsSink(const NatsOptions &opts) {
  return std::make_unique<NatsSink>(opts);
}

}  // namespace logsink::forward
