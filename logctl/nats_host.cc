// nats_host.cc: one host's records in a JetStream stream (nats_host.h).
#include "nats_host.h"

#include <lz4frame.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "common.h"
#include "logsink/render/escape.h"

namespace logsink::logctl::fleet {
namespace {

using nlohmann::json;

constexpr int64_t kRequestMs = 5000;  // a fetch that gets nothing
constexpr int kFetchBatch = 256;
constexpr int64_t kFetchMaxBytes = 1 << 20;
// A decompressed body bigger than this is refused (the forwarder's are at
// most about 512 KiB of JSON lines).
constexpr size_t kBodyMax = size_t(64) << 20;
// A body buffer bigger than this is not kept for the next message.
constexpr size_t kKeepBody = size_t(4) << 20;
// A killed reader's consumers go this long after its last request.
constexpr int64_t kInactiveNs = 60ll * 1000000000ll;

uint64_t StreamSeq(natsMsg *m) {
  jsMsgMetaData *meta = nullptr;
  if (natsMsg_GetMetaData(&meta, m) != NATS_OK) return 0;
  const uint64_t seq = meta->Sequence.Stream;
  jsMsgMetaData_Destroy(meta);
  return seq;
}

std::string Failed(const std::string &what, natsStatus s) {
  std::string t;
  render::AppendTerminalSafe(&t, what);
  t += std::string(": ") + natsStatus_GetText(s);
  if (const char *last = nats_GetLastError(nullptr); last && *last) {
    t += " (";
    render::AppendTerminalSafe(&t, last);
    t += ")";
  }
  return t;
}

// A ring identity as cursors carry it: 32 hex digits, lowercase; "" for
// anything else (a header or key a publisher made up).
std::string RingId(std::string_view v) {
  if (v.size() != 32) return "";
  std::string r(v);
  for (char &c : r) {
    if (c >= 'A' && c <= 'F') c = char(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "";
  }
  return r;
}

// A header's decimal u64, or false.
bool HeaderU64(natsMsg *m, const char *name, uint64_t *v) {
  const char *text = nullptr;
  if (natsMsgHeader_Get(m, name, &text) != NATS_OK || !text || !*text) return false;
  uint64_t x = 0;
  for (const char *p = text; *p; p++) {
    if (*p < '0' || *p > '9' || x > (UINT64_MAX - uint64_t(*p - '0')) / 10) return false;
    x = x * 10 + uint64_t(*p - '0');
  }
  *v = x;
  return true;
}

}  // namespace

namespace {

// The SAX handler of ParseFields: top-level keys only, every other value
// (args, fields, nested objects) passed over.
class FieldsSax : public nlohmann::json_sax<json> {
 public:
  // Deeper lines are refused: the forwarder's are at most 3 deep (the
  // kinds' objects in them), and json-pretty's printer recurses per level.
  static constexpr int kMaxDepth = 64;
  explicit FieldsSax(Fields *f) : f_(f) {}
  bool null() override { return true; }
  bool boolean(bool v) override {
    if (Top() && key_ == "mismatch") f_->mismatch = v;
    return true;
  }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t v) override {
    if (!Top()) return true;
    const uint32_t v32 = v > UINT32_MAX ? UINT32_MAX : uint32_t(v);
    if (key_ == "seq") {
      if (!seq_str_) f_->seq = v;
    } else if (key_ == "ts_ns") {
      if (!ts_str_) f_->ts_ns = v;
    } else if (key_ == "priority") {
      f_->priority = v32;
    } else if (key_ == "pid") {
      f_->pid = v32;
    } else if (key_ == "uid") {
      f_->uid = v32;
    } else if (key_ == "gid") {
      f_->gid = v32;
    } else if (key_ == "tid") {
      f_->tid = v32;
    } else if (key_ == "line") {
      f_->line = v32;
    } else if (key_ == "dropped") {
      f_->dropped = true;
      f_->dropped_count = v;
    } else if (key_ == "dropped_since_ns") {
      if (!since_str_) f_->dropped_since_ns = v;
    } else if (key_ == "lost") {
      f_->lost = true;
      f_->notice_count = v;
    } else if (key_ == "oversize") {
      f_->oversize = true;
      f_->notice_count = v;
    } else if (key_ == "first_seq") {
      f_->first_seq = v;
    } else if (key_ == "last_seq") {
      f_->last_seq = v;
    }
    return true;
  }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &v) override {
    if (!Top()) return true;
    if (key_ == "msg") {
      f_->msg = std::move(v);
    } else if (key_ == "app") {
      f_->app = std::move(v);
    } else if (key_ == "comm") {
      f_->comm = std::move(v);
    } else if (key_ == "unit") {
      f_->unit = std::move(v);
    } else if (key_ == "file") {
      f_->file = std::move(v);
    } else if (key_ == "ring") {
      f_->ring = std::move(v);
    } else if (key_ == "fmt") {
      f_->has_fmt = true;
    } else if (key_ == "seq_str") {
      seq_str_ = Exact(v, &f_->seq);
    } else if (key_ == "ts_ns_str") {
      ts_str_ = Exact(v, &f_->ts_ns);
    } else if (key_ == "dropped_since_ns_str") {
      since_str_ = Exact(v, &f_->dropped_since_ns);
    }
    return true;
  }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return ++depth_ <= kMaxDepth; }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return ++depth_ <= kMaxDepth; }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool key(string_t &k) override {
    if (depth_ != 1) return true;
    key_ = std::move(k);
    // The reader adds "host": a line that has one was not the forwarder's.
    return key_ != "host";
  }
  bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &) override {
    return false;
  }

 private:
  // A value right in the object (not in an array or object in it).
  bool Top() const { return depth_ == 1; }
  // A decimal u64 without sign or leading junk into *v.
  static bool Exact(const std::string &s, uint64_t *v) {
    if (s.empty() || s.size() > 20) return false;
    uint64_t x = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      const uint64_t d = uint64_t(c - '0');
      if (x > (UINT64_MAX - d) / 10) return false;
      x = x * 10 + d;
    }
    *v = x;
    return true;
  }

  Fields *f_;
  int depth_ = 0;
  std::string key_;
  bool seq_str_ = false, ts_str_ = false, since_str_ = false;
};

}  // namespace

bool ParseFields(std::string_view line, Fields *f) {
  *f = Fields{};
  if (line.empty() || line.front() != '{') return false;
  FieldsSax sax(f);
  return json::sax_parse(line, &sax);
}

bool Shown::Covers(uint64_t first, uint64_t last) const {
  auto it = ranges_.upper_bound(first);
  if (it == ranges_.begin()) return false;
  --it;
  return it->second >= last;
}

void Shown::Add(uint64_t first, uint64_t last) {
  auto it = ranges_.upper_bound(first);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= first - (first > 0)) {  // overlapping or adjacent
      first = prev->first;
      last = std::max(last, prev->second);
      it = ranges_.erase(prev);
    }
  }
  while (it != ranges_.end() && (last == UINT64_MAX || it->first <= last + 1)) {
    last = std::max(last, it->second);
    it = ranges_.erase(it);
  }
  ranges_[first] = last;
  if (ranges_.size() > kMaxRanges) {
    auto low = ranges_.begin(), next = std::next(low);
    low->second = next->second;
    ranges_.erase(next);
  }
}

Inbox::~Inbox() {
  for (auto &m : q) natsMsg_Destroy(m.second);
}

HostReader::HostReader(std::string host, std::string filter, size_t index, ShownByRing *shown)
    : host_(std::move(host)), filter_(std::move(filter)), index_(index), shown_(shown) {}

uint64_t HostReader::Progress(const std::string &ring) const {
  auto it = shown_->find(ring);
  return it == shown_->end() ? 0 : it->second.LowestEnd();
}

void HostReader::Abandon() {
  if (sub_) natsSubscription_Destroy(sub_);
  sub_ = nullptr;
}

HostReader::~HostReader() {
  natsMsgList_Destroy(&list_);
  if (sub_) {
    natsSubscription_Unsubscribe(sub_);  // deletes the ephemeral consumer
    natsSubscription_Destroy(sub_);
  }
}

void HostReader::Resume(const HostPos &p, bool aged_out) {
  resume_ = p;
  skip_lines_ = p.lines;
  if (!p.ring.empty()) (*shown_)[p.ring].Add(0, p.rec_seq);
  gap_check_ = aged_out && !p.ring.empty();
}

bool HostReader::Open(jsCtx *js, const std::string &stream, uint64_t start_ns, uint64_t last_seq,
                      std::string *why) {
  last_seq_ = last_seq;
  next_seq_ = last_seq + 1;
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Config.AckPolicy = js_AckNone;
  so.Config.InactiveThreshold = kInactiveNs;
  so.Config.MemoryStorage = true;
  if (resume_.msg_seq) {
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = resume_.msg_seq;
  } else if (start_ns) {
    so.Config.DeliverPolicy = js_DeliverByStartTime;
    so.Config.OptStartTime = int64_t(std::min<uint64_t>(start_ns, INT64_MAX));
  }
  jsErrCode jerr = jsErrCode(0);
  failed_ = true;  // until it is open
  natsStatus s = js_PullSubscribe(&sub_, js, filter_.c_str(), nullptr, nullptr, &so, &jerr);
  if (s != NATS_OK) {
    *why = Failed("reading " + filter_ + " of the stream " + stream, s);
    return false;
  }
  jsConsumerInfo *ci = nullptr;
  s = natsSubscription_GetConsumerInfo(&ci, sub_, nullptr, &jerr);
  if (s != NATS_OK) {
    *why = Failed("asking about the consumer of " + filter_, s);
    return false;
  }
  pending_ = ci->NumPending;
  jsConsumerInfo_Destroy(ci);
  failed_ = false;
  return true;
}

bool HostReader::Next(Entry *e, std::string *why) {
  if (failed_) return false;
  for (;;) {
    if (NextLine(e)) return true;
    natsMsg *m = NextMessage(why);
    if (!m) return false;
    Decode(m);
  }
}

natsMsg *HostReader::NextMessage(std::string *why) {
  for (;;) {
    if (list_pos_ < list_.Count) {
      natsMsg *m = list_.Msgs[list_pos_];
      jsMsgMetaData *meta = nullptr;
      uint64_t seq = 0;
      if (natsMsg_GetMetaData(&meta, m) == NATS_OK) {
        seq = meta->Sequence.Stream;
        pending_ = meta->NumPending;
        jsMsgMetaData_Destroy(meta);
      }
      if (seq > last_seq_) {  // stored after the read began: the follow's first
        next_seq_ = seq;
        pending_ = 0;
        return nullptr;
      }
      list_pos_++;
      next_seq_ = seq + 1;
      return m;
    }
    natsMsgList_Destroy(&list_);
    list_ = natsMsgList{};
    list_pos_ = 0;
    if (pending_ == 0) return nullptr;
    // What is there now, at once (a request that waits would wait for the
    // whole batch); when nothing is, and the consumer still counts some,
    // one message with the request timeout.
    jsFetchRequest req;
    jsFetchRequest_Init(&req);
    req.Batch = kFetchBatch;
    req.MaxBytes = kFetchMaxBytes;
    req.Expires = kRequestMs * 1000000;
    req.NoWait = true;
    natsStatus s = natsSubscription_FetchRequest(&list_, sub_, &req);
    if (list_.Count > 0) continue;
    if (s != NATS_OK && s != NATS_TIMEOUT && s != NATS_NOT_FOUND) {
      // A message bigger than kFetchMaxBytes (a server whose max_payload
      // allows it) comes alone, without the byte limit.
      natsMsgList_Destroy(&list_);
      list_ = natsMsgList{};
      req.Batch = 1;
      req.MaxBytes = 0;
      s = natsSubscription_FetchRequest(&list_, sub_, &req);
      if (list_.Count > 0) continue;
    }
    jsConsumerInfo *ci = nullptr;
    jsErrCode jerr = jsErrCode(0);
    // What the consumer counted may have left the stream since (its age or
    // size limits).
    if ((s = natsSubscription_GetConsumerInfo(&ci, sub_, nullptr, &jerr)) != NATS_OK) {
      *why = Failed("asking about the consumer of " + filter_, s);
      return nullptr;
    }
    pending_ = ci->NumPending;
    jsConsumerInfo_Destroy(ci);
    if (pending_ == 0) return nullptr;
    natsMsgList_Destroy(&list_);
    list_ = natsMsgList{};
    req.Batch = 1;
    req.NoWait = false;
    s = natsSubscription_FetchRequest(&list_, sub_, &req);
    if (list_.Count == 0) {
      *why = Failed("fetching messages of " + filter_, s);
      return nullptr;
    }
  }
}

bool HostReader::Follow(jsCtx *js, const std::string &stream, Inbox *inbox, std::string *why) {
  // The snapshot's messages from the one past last_seq on come again.
  natsMsgList_Destroy(&list_);
  list_ = natsMsgList{};
  list_pos_ = 0;
  if (sub_) {
    natsSubscription_Unsubscribe(sub_);
    natsSubscription_Destroy(sub_);
    sub_ = nullptr;
  }
  inbox_ = inbox;
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Ordered = true;
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = next_seq_;
  jsErrCode jerr = jsErrCode(0);
  natsStatus s = js_Subscribe(&sub_, js, filter_.c_str(), OnMessage, this, nullptr, &so, &jerr);
  if (s != NATS_OK) {
    *why = Failed("following " + filter_ + " of the stream " + stream, s);
    return false;
  }
  return true;
}

void HostReader::OnMessage(natsConnection *, natsSubscription *, natsMsg *m, void *closure) {
  auto *self = static_cast<HostReader *>(closure);
  Inbox *in = self->inbox_;
  std::unique_lock<std::mutex> lock(in->mu);
  in->room.wait(lock, [&] { return in->closing || in->q.empty() || in->bytes < Inbox::kMaxBytes; });
  if (in->closing) {
    lock.unlock();
    natsMsg_Destroy(m);
    return;
  }
  in->bytes += size_t(std::max(natsMsg_GetDataLength(m), 0));
  in->q.emplace_back(self->index_, m);
  in->ready.notify_one();
}

void HostReader::Feed(natsMsg *m) {
  Decode(m);
  natsMsg_Destroy(m);
}

bool HostReader::NextFed(Entry *e) { return NextLine(e); }

bool HostReader::NextLine(Entry *e) {
  while (body_pos_ < body_.size()) {
    size_t nl = body_.find('\n', body_pos_);
    if (nl == std::string::npos) nl = body_.size();
    const size_t start = body_pos_;
    body_pos_ = nl + 1;
    ++line_no_;
    if (msg_seq_ == resume_.msg_seq && line_no_ <= skip_lines_) continue;
    if (nl != start && Take(std::string_view(body_).substr(start, nl - start), e)) return true;
  }
  return false;
}

// The message's body, decompressed, becomes the lines to take.
void HostReader::Decode(natsMsg *m) {
  body_.clear();
  body_pos_ = 0;
  line_no_ = 0;
  msg_seq_ = StreamSeq(m);
  const char *data = natsMsg_GetData(m);
  const size_t len = size_t(std::max(natsMsg_GetDataLength(m), 0));
  const char *enc = nullptr, *ring = nullptr, *id = nullptr;
  natsMsgHeader_Get(m, "Logsink-Encoding", &enc);
  ring_.clear();
  if (natsMsgHeader_Get(m, "Logsink-Ring", &ring) == NATS_OK && ring) {
    ring_ = RingId(ring);
  } else if (natsMsgHeader_Get(m, "Nats-Msg-Id", &id) == NATS_OK && id &&
             std::strncmp(id, "ls1-", 4) == 0) {
    ring_ = RingId(std::string_view(id + 4, std::strcspn(id + 4, "-")));
  }
  // A batch's range bounds what its notices may cover.
  range_first_ = 0;
  range_last_ = UINT64_MAX;
  uint64_t v;
  if (HeaderU64(m, "Logsink-First-Seq", &v)) range_first_ = v;
  if (HeaderU64(m, "Logsink-Last-Seq", &v)) range_last_ = v;
  if (!enc) {
    body_.assign(data, len);
    return;
  }
  // Decoded in steps into a body that grows with what really comes out
  // (never by what a frame claims), at most kBodyMax; a body that stays
  // big is given back after its message.
  if (body_.capacity() > kKeepBody) std::string().swap(body_);
  if (std::strcmp(enc, "zstd") == 0) {
    std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream *)> d(ZSTD_createDStream(),
                                                                ZSTD_freeDStream);
    if (!d) return Bad(m, "a zstd body, and no memory to decode it");
    // Frames whose window is bigger than 16 MiB are refused before any
    // allocation (the forwarder's bodies are about 512 KiB): a frame that
    // claims 64 MiB costs nothing.
    ZSTD_DCtx_setParameter(d.get(), ZSTD_d_windowLogMax, 24);
    ZSTD_inBuffer in{data, len, 0};
    size_t rc = 1;
    while (in.pos < in.size || rc != 0) {
      if (body_.size() >= kBodyMax) return Bad(m, "a zstd body of more than 64 MiB");
      const size_t at = body_.size();
      body_.resize(std::min<size_t>(kBodyMax, std::max<size_t>(at * 2, 64 << 10)));
      ZSTD_outBuffer out{body_.data() + at, body_.size() - at, 0};
      rc = ZSTD_decompressStream(d.get(), &out, &in);
      body_.resize(at + out.pos);
      if (ZSTD_isError(rc)) return Bad(m, "a zstd body that does not decode");
      if (in.pos == in.size && rc != 0 && out.pos == 0)
        return Bad(m, "a zstd body that ends inside a frame");
    }
    return;
  }
  if (std::strcmp(enc, "lz4") == 0) {
    LZ4F_dctx *raw = nullptr;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION)))
      return Bad(m, "an LZ4 body, and no memory to decode it");
    std::unique_ptr<LZ4F_dctx, LZ4F_errorCode_t (*)(LZ4F_dctx *)> d(raw,
                                                                    LZ4F_freeDecompressionContext);
    size_t pos = 0, rc = 1;
    while (pos < len) {
      if (body_.size() >= kBodyMax) return Bad(m, "an LZ4 body of more than 64 MiB");
      const size_t at = body_.size();
      body_.resize(std::min<size_t>(kBodyMax, std::max<size_t>(at * 2, 64 << 10)));
      size_t out = body_.size() - at, in = len - pos;
      rc = LZ4F_decompress(d.get(), body_.data() + at, &out, data + pos, &in, nullptr);
      body_.resize(at + out);
      pos += in;
      if (LZ4F_isError(rc)) return Bad(m, "an LZ4 body that does not decode");
      if (rc == 0 && pos < len) return Bad(m, "an LZ4 body with bytes after its frame");
      if (in == 0 && out == 0) break;
    }
    if (rc != 0) return Bad(m, "an LZ4 body that ends inside its frame");
    return;
  }
  std::string named = "an unknown Logsink-Encoding '";
  render::AppendTerminalSafe(&named, enc);
  Bad(m, named + "'");
}

// A message this reader cannot read is passed over with a warning.
void HostReader::Bad(natsMsg *m, const std::string &what) {
  std::string text = "host ";
  render::AppendTerminalSafe(&text, host_);
  text += ": message " + std::to_string(msg_seq_) + " on ";
  render::AppendTerminalSafe(&text, natsMsg_GetSubject(m));
  Warn(text + " holds " + what + " (skipped)");
  body_.clear();
}

// One JSON line: false when it is passed over (returned already, or not a
// JSON object).
bool HostReader::Take(std::string_view line, Entry *e) {
  // Without the white space JSON allows around the object, so that the
  // line ends in its '}' (the host is added before it).
  while (!line.empty() && std::strchr(" \t\r", line.back())) line.remove_suffix(1);
  while (!line.empty() && std::strchr(" \t\r", line.front())) line.remove_prefix(1);
  if (!ParseFields(line, &e->f)) {
    ++bad_lines_;
    return false;
  }
  const Fields &f = e->f;
  e->notice = f.lost || f.oversize;
  if (e->notice) {
    // A notice covers at most the records it counts, within its batch's
    // range: a made-up one cannot hide a ring's later records.
    const uint64_t n = std::max<uint64_t>(f.notice_count, 1);
    e->first = std::max(f.first_seq, range_first_);
    e->last = std::min({std::max(f.first_seq, f.last_seq), range_last_,
                        e->first > UINT64_MAX - (n - 1) ? UINT64_MAX : e->first + (n - 1)});
    if (e->last < e->first) e->last = e->first;
    e->ts_ns = last_ts_;
    e->ring = f.ring.empty() ? ring_ : RingId(f.ring);
  } else {
    e->first = e->last = f.seq;
    e->ts_ns = last_ts_ = f.ts_ns;
    e->ring = ring_;
  }
  Shown &shown = (*shown_)[e->ring];
  if (shown.Covers(e->first, e->last)) return false;
  if (gap_check_ && e->ring == resume_.ring) {
    gap_check_ = false;
    if (e->first > resume_.rec_seq + 1) gap_ = e->first - resume_.rec_seq - 1;
  }
  shown.Add(e->first, e->last);
  e->line.assign(line);
  e->msg_seq = msg_seq_;
  e->line_no = line_no_;
  return true;
}

}  // namespace logsink::logctl::fleet
