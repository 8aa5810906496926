// nats_host.cc: one host's records in a JetStream stream (nats_host.h).
#include "nats_host.h"

#include <lz4frame.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
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
constexpr uint64_t kBodyMax = 64ull << 20;
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
  std::string t = what + ": " + natsStatus_GetText(s);
  if (const char *last = nats_GetLastError(nullptr); last && *last)
    t += std::string(" (") + last + ")";
  return t;
}

}  // namespace

namespace {

// The SAX handler of ParseFields: top-level keys only, every other value
// (args, fields, nested objects) passed over.
class FieldsSax : public nlohmann::json_sax<json> {
 public:
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
  bool start_object(std::size_t) override {
    ++depth_;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool key(string_t &k) override {
    if (depth_ == 1) key_ = std::move(k);
    return true;
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
}

Inbox::~Inbox() {
  for (auto &m : q) natsMsg_Destroy(m.second);
}

HostReader::HostReader(std::string host, std::string filter, size_t index)
    : host_(std::move(host)), filter_(std::move(filter)), index_(index) {}

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
  if (!p.ring.empty()) shown_[p.ring].Add(0, p.rec_seq);
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
  return true;
}

bool HostReader::Next(Entry *e, std::string *why) {
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
    ring_ = ring;
  } else if (natsMsgHeader_Get(m, "Nats-Msg-Id", &id) == NATS_OK && id &&
             std::strncmp(id, "ls1-", 4) == 0) {
    ring_.assign(id + 4, std::strcspn(id + 4, "-"));
  }
  if (!enc) {
    body_.assign(data, len);
    return;
  }
  if (std::strcmp(enc, "zstd") == 0) {
    const unsigned long long n = ZSTD_getFrameContentSize(data, len);
    if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR || n > kBodyMax)
      return Bad(m, "a zstd body without a content size of at most 64 MiB");
    body_.resize(size_t(n));
    const size_t got = ZSTD_decompress(body_.data(), body_.size(), data, len);
    if (ZSTD_isError(got) || got != n) return Bad(m, "a zstd body that does not decode");
    return;
  }
  if (std::strcmp(enc, "lz4") == 0) {
    LZ4F_dctx *d = nullptr;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
      return Bad(m, "an LZ4 body, and no memory to decode it");
    LZ4F_frameInfo_t info{};
    size_t in = len;
    size_t rc = LZ4F_getFrameInfo(d, &info, data, &in);
    if (LZ4F_isError(rc) || info.contentSize == 0 || info.contentSize > kBodyMax) {
      LZ4F_freeDecompressionContext(d);
      return Bad(m, "an LZ4 body without a content size of at most 64 MiB");
    }
    body_.resize(size_t(info.contentSize));
    size_t out = body_.size(), rest = len - in;
    rc = LZ4F_decompress(d, body_.data(), &out, data + in, &rest, nullptr);
    LZ4F_freeDecompressionContext(d);
    if (LZ4F_isError(rc) || rc != 0 || out != body_.size())
      return Bad(m, "an LZ4 body that does not decode");
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
    e->first = f.first_seq;
    e->last = std::max(f.first_seq, f.last_seq);
    e->ts_ns = last_ts_;
    e->ring = f.ring.empty() ? ring_ : f.ring;
  } else {
    e->first = e->last = f.seq;
    e->ts_ns = last_ts_ = f.ts_ns;
    e->ring = ring_;
  }
  Shown &shown = shown_[e->ring];
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
