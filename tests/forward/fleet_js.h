// fleet_js.h: the JetStream client (cnats) the fleet reader's tests use
// for what they put into a stream and read out of it themselves: streams
// on one subject (with a consumer limit), messages of any bytes with
// headers, stored (not a duplicate) when Publish says so, and the
// stream's messages back in stream order. Header-only: the tests of this
// directory include it (forward_test for JsPatiently).
#pragma once

#include <nats/nats.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/process.h"

namespace logsink::test {

using Headers = std::vector<std::pair<std::string, std::string>>;

// A request to the server, asked again while it times out, up to the hang
// limit: on a loaded machine the server (or this process) can go
// unscheduled for longer than one request's wait (cnats' default, 5 s).
// Any other answer is the request's.
template <typename Request>
natsStatus JsPatiently(Request request) {
  const auto give_up = std::chrono::steady_clock::now() + kHang;
  natsStatus s = request();
  while (s == NATS_TIMEOUT && std::chrono::steady_clock::now() < give_up) s = request();
  return s;
}

class Js {
 public:
  struct Msg {
    std::string subject, id, body;
  };

  explicit Js(const std::string &url) {
    s_ = natsConnection_ConnectTo(&nc_, url.c_str());
    if (s_ == NATS_OK) s_ = natsConnection_JetStream(&js_, nc_, nullptr);
  }
  ~Js() {
    if (js_) jsCtx_Destroy(js_);
    if (nc_) natsConnection_Destroy(nc_);
  }
  Js(const Js &) = delete;
  Js &operator=(const Js &) = delete;

  bool ok() const { return s_ == NATS_OK; }
  // max_consumers: the stream's limit (0: none).
  bool AddStream(const std::string &name, const std::string &subject, int64_t max_consumers = 0) {
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = name.c_str();
    if (max_consumers > 0) sc.MaxConsumers = max_consumers;
    const char *subs[] = {subject.c_str()};
    sc.Subjects = subs;
    sc.SubjectsLen = 1;
    jsStreamInfo *si = nullptr;
    jsErrCode jerr;
    natsStatus s = js_AddStream(&si, js_, &sc, nullptr, &jerr);
    if (si) jsStreamInfo_Destroy(si);
    return s == NATS_OK;
  }
  // Messages in the stream, or -1.
  int64_t Count(const std::string &stream) {
    jsStreamInfo *si = nullptr;
    jsErrCode jerr;
    if (JsPatiently([&] { return js_GetStreamInfo(&si, js_, stream.c_str(), nullptr, &jerr); }) !=
        NATS_OK)
      return -1;
    int64_t n = int64_t(si->State.Msgs);
    jsStreamInfo_Destroy(si);
    return n;
  }
  // Every message of the stream, in stream order.
  bool All(const std::string &stream, std::vector<Msg> *out) {
    jsStreamInfo *si = nullptr;
    jsErrCode jerr;
    if (JsPatiently([&] { return js_GetStreamInfo(&si, js_, stream.c_str(), nullptr, &jerr); }) !=
        NATS_OK)
      return false;
    uint64_t first = si->State.FirstSeq, last = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    for (uint64_t seq = first; seq && seq <= last; ++seq) {
      natsMsg *m = nullptr;
      if (JsPatiently([&] { return js_GetMsg(&m, js_, stream.c_str(), seq, nullptr, &jerr); }) !=
          NATS_OK)
        return false;
      const char *id = nullptr;
      natsMsgHeader_Get(m, "Nats-Msg-Id", &id);
      out->push_back({natsMsg_GetSubject(m), id ? id : "",
                      std::string(natsMsg_GetData(m), size_t(natsMsg_GetDataLength(m)))});
      natsMsg_Destroy(m);
    }
    return true;
  }
  // One message (body may be empty: a message without data), stored
  // before it returns true; *why says what went wrong.
  bool Publish(const std::string &subject, const std::string &body, const Headers &headers = {},
               std::string *why = nullptr) {
    natsMsg *m = nullptr;
    natsStatus s = natsMsg_Create(&m, subject.c_str(), nullptr,
                                  body.empty() ? nullptr : body.data(), int(body.size()));
    if (s != NATS_OK) {
      if (why) *why = std::string("natsMsg_Create: ") + natsStatus_GetText(s);
      return false;
    }
    for (const auto &[k, v] : headers) natsMsgHeader_Set(m, k.c_str(), v.c_str());
    jsPubAck *pa = nullptr;
    jsErrCode jerr = jsErrCode(0);
    jsPubOptions o;
    jsPubOptions_Init(&o);
    o.MaxWait = 10000;
    s = js_PublishMsg(&pa, js_, m, &o, &jerr);
    bool stored = s == NATS_OK && pa && !pa->Duplicate;
    if (!stored && why) {
      *why = std::string(natsStatus_GetText(s)) + " (" + std::to_string(int(jerr)) + ")";
      if (const char *e = nats_GetLastError(nullptr); e) *why += std::string(" ") + e;
    }
    if (pa) jsPubAck_Destroy(pa);
    natsMsg_Destroy(m);
    return stored;
  }

 private:
  natsStatus s_ = NATS_ERR;
  natsConnection *nc_ = nullptr;
  jsCtx *js_ = nullptr;
};

}  // namespace logsink::test
