// forward_test.cc: the real logsink-forward against the real nats-server
// (JetStream: one node, and a 3-node cluster with an R3 stream) and rsyslogd
// (imrelp -> a file). The test writes numbered records ("rec %d") into a ring
// with the storage writer while the forwarder follows it, kills the
// forwarder and the servers with SIGKILL mid-stream and restarts them, then
// checks the destination record by record: JetStream holds each record
// exactly once; rsyslog received each at least once, with the duplicates
// after a kill bounded by the window. A C program's typed fields, logged
// through the real logsinkd, arrive typed in the JSON.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <lz4frame.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/daemon_process.h"
#include "common/process.h"
#include "common/records.h"
#include "common/seed.h"
#include "common/servers.h"
#include "common/temp_dir.h"
#include "fleet_js.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/paths.h"
#include "logsink/proto/printf.h"
#include "logsink/storage/ring.h"

extern "C" int forward_log_typed_fields(const char *socket);  // fields_client.c

namespace logsink::test {
namespace {

using storage::Env;
using storage::RingReader;
using storage::RingWriter;
using storage::Site;
using storage::Source;
using storage::Status;
using storage::WriterOptions;

// A ring written by the test: records "rec %d" with i = 0, 1, 2, ...
class NumberedRing {
 public:
  // codec: WriterOptions' default unless a test needs the uncompressed
  // block layout (a small ring lapping).
  NumberedRing(const std::string &path, uint64_t size, uint8_t codec = WriterOptions().codec)
      : path_(path) {
    WriterOptions o;
    o.file_size = size;
    o.block_size = 4096;
    o.codec = codec;
    Status s = RingWriter::Open(Env::Default(), path, o, &w_);
    EXPECT_TRUE(s.ok()) << s.ToString();
    Site site;
    site.level = 6;
    site.line = 1;
    site.fmt = "rec %d";
    site.file = "t.c";
    site_ = w_->Intern(site);
    char sig[8];
    ls_fmt_signature("rec %d", 6, sig, sizeof sig);
    sig_ = sig;
    src_ = Source{1, 4242, 1000, 100, "fwdtest", "fwdtest"};
  }
  // Appends n more records and makes them visible.
  void Add(int n) {
    for (int k = 0; k < n; ++k) {
      uint8_t buf[LS_VARINT_MAX];
      size_t len = ls_put_varint(buf, ls_zigzag(next_));
      Status s = AppendRecord(w_.get(), src_, site_, sig_,
                              std::string_view(reinterpret_cast<char *>(buf), len),
                              1700000000000000000ull + uint64_t(next_) * 1000);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ++next_;
    }
    ASSERT_TRUE(w_->Flush().ok());
  }
  // Appends one record "big %s" with a string of `bytes` x's (it takes a
  // record number like the others; Numbers() does not count it).
  void AddBig(size_t bytes) {
    if (!big_site_) {
      Site site;
      site.level = 6;
      site.line = 2;
      site.fmt = "big %s";
      site.file = "t.c";
      big_site_ = w_->Intern(site);
      char sig[8];
      ls_fmt_signature("big %s", 6, sig, sizeof sig);
      big_sig_ = sig;
    }
    std::string args;
    uint8_t buf[LS_VARINT_MAX];
    args.append(reinterpret_cast<char *>(buf), ls_put_varint(buf, bytes));
    args.append(bytes, 'x');
    Status s = AppendRecord(w_.get(), src_, big_site_, big_sig_, args,
                            1700000000000000000ull + uint64_t(next_) * 1000);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ++next_;
    ASSERT_TRUE(w_->Flush().ok());
  }
  int count() const { return next_; }
  uint64_t oldest_seq() {
    std::unique_ptr<RingReader> r;
    EXPECT_TRUE(RingReader::Open(Env::Default(), path_, nullptr, &r).ok());
    RingReader::Summary s;
    EXPECT_TRUE(r->Summarize(&s).ok());
    return s.oldest_seq;
  }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<RingWriter> w_;
  uint32_t site_ = 0, big_site_ = 0;
  std::string sig_, big_sig_;
  Source src_;
  int next_ = 0;
};

// The forwarder as a child; ready = its sd_notify READY=1.
class Forwarder {
 public:
  // child_setup: run in the child before exec (its environment).
  Forwarder(const TempDir &dir, std::vector<std::string> args,
            std::function<void()> child_setup = nullptr)
      : dir_(dir), args_(std::move(args)), child_setup_(std::move(child_setup)) {}
  void Start() {
    DaemonOptions o;
    o.bin = BinPath("logsink-forward");
    o.args = args_;
    o.child_setup = child_setup_;
    o.stderr_path = dir_ / "forward.log";
    std::string err;
    ASSERT_TRUE(p_.Start(o, &err)) << err << "\n" << ReadFile(dir_ / "forward.log");
  }
  void Kill() { p_.Stop(SIGKILL); }
  // SIGTERM; an exit other than 0 prints the forwarder's log (its stderr,
  // sanitizer reports included) into the test's output.
  int Stop() {
    int st = p_.Stop(SIGTERM);
    if (st != 0)
      std::fprintf(stderr, "[forward.log, exit %d]\n%s\n", st,
                   ReadFile(dir_ / "forward.log").c_str());
    return st;
  }
  bool running() const { return p_.running(); }
  pid_t pid() const { return p_.pid(); }

 private:
  const TempDir &dir_;
  std::vector<std::string> args_;
  std::function<void()> child_setup_;
  DaemonProcess p_;
};

// The cursor file's committed position (-1 when there is none yet).
int64_t CursorNext(const std::string &path) {
  std::string s = ReadFile(path);
  size_t sp = s.rfind(' ');
  if (s.empty() || sp == std::string::npos) return -1;
  return std::stoll(s.substr(sp + 1));
}

// A status value of a running forwarder (<cursor>.status), or -1.
int64_t StatusValue(const std::string &cursor, const std::string &key) {
  std::string s = ReadFile(cursor + ".status");
  std::smatch m;
  if (!std::regex_search(s, m, std::regex("(^|\n)" + key + "=([0-9]+)\n"))) return -1;
  return std::stoll(m[2]);
}

// Holds one open(2) of a file in a directory until the test lets it go
// (fanotify permission events, which need root): the first open whose path
// `hold` accepts waits in the kernel until Release(); every other open in
// the directory is allowed at once. A write the test must see in flight
// is held there, without sleeping. The directory itself and its
// subdirectories are not watched.
class OpenGate {
 public:
  OpenGate(const std::string &dir, std::function<bool(const std::string &)> hold)
      : hold_(std::move(hold)) {
    fan_ = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK,
                         O_RDONLY | O_CLOEXEC | O_LARGEFILE);
    wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fan_ < 0 || wake_ < 0 ||
        fanotify_mark(fan_, FAN_MARK_ADD, FAN_OPEN_PERM | FAN_EVENT_ON_CHILD, AT_FDCWD,
                      dir.c_str()) != 0) {
      error_ = std::string("fanotify on ") + dir + ": " + std::strerror(errno);
      return;
    }
    thread_ = std::thread([this] { Serve(); });
  }
  ~OpenGate() { Close(); }
  OpenGate(const OpenGate &) = delete;
  OpenGate &operator=(const OpenGate &) = delete;

  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }
  // Waits until an open is held (or was, and has been released); its path
  // in *path.
  bool WaitHeld(std::string *path, Ms limit = kHang) {
    std::unique_lock<std::mutex> l(m_);
    if (!cv_.wait_for(l, limit, [&] { return !held_path_.empty(); })) return false;
    *path = held_path_;
    return true;
  }
  // Lets the held open (if any) go; later ones matching are not held.
  void Release() {
    {
      std::lock_guard<std::mutex> l(m_);
      released_ = true;
    }
    Wake();
  }
  // Lets everything go and stops watching (the kernel allows what was
  // still waiting when the fanotify descriptor closes).
  void Close() {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> l(m_);
        released_ = stop_ = true;
      }
      Wake();
      thread_.join();
    }
    if (fan_ >= 0) close(fan_);
    if (wake_ >= 0) close(wake_);
    fan_ = wake_ = -1;
  }

 private:
  void Wake() {
    const uint64_t one = 1;
    (void)!write(wake_, &one, sizeof one);
  }
  void Allow(int fd) {
    fanotify_response r{fd, FAN_ALLOW};
    (void)!write(fan_, &r, sizeof r);
    close(fd);
  }
  void Serve() {
    for (;;) {
      {
        std::lock_guard<std::mutex> l(m_);
        if (released_ && held_fd_ >= 0) {
          Allow(held_fd_);
          held_fd_ = -1;
        }
        if (stop_) return;
      }
      pollfd p[2] = {{fan_, POLLIN, 0}, {wake_, POLLIN, 0}};
      if (poll(p, 2, -1) < 0) continue;
      uint64_t n;
      if (p[1].revents) (void)!read(wake_, &n, sizeof n);
      alignas(fanotify_event_metadata) char buf[4096];
      ssize_t len = read(fan_, buf, sizeof buf);
      if (len <= 0) continue;
      auto *m = reinterpret_cast<fanotify_event_metadata *>(buf);
      for (; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
        if (m->fd < 0) continue;
        char link[64], path[4096];
        std::snprintf(link, sizeof link, "/proc/self/fd/%d", m->fd);
        ssize_t k = readlink(link, path, sizeof path - 1);
        const std::string p_str(path, size_t(k > 0 ? k : 0));
        std::lock_guard<std::mutex> l(m_);
        if (!released_ && held_fd_ < 0 && held_path_.empty() && hold_(p_str)) {
          held_fd_ = m->fd;
          held_path_ = p_str;
          cv_.notify_all();
        } else {
          Allow(m->fd);
        }
      }
    }
  }

  std::function<bool(const std::string &)> hold_;
  int fan_ = -1, wake_ = -1;
  std::string error_;
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  int held_fd_ = -1;  // the open waiting, until released
  std::string held_path_;
  bool released_ = false, stop_ = false;
};

// A JetStream client for checking what a stream holds.
// A message's body as a consumer reads it: a batch with the header
// Logsink-Encoding (--compress) decompressed by the codec it names (a zstd
// frame, an LZ4 frame); *compressed counts those. "" with a test failure
// for an encoding it does not know or a frame that does not decode.
std::string BodyOf(natsMsg *m, int *compressed) {
  std::string data(natsMsg_GetData(m), size_t(natsMsg_GetDataLength(m)));
  const char *enc = nullptr;
  if (natsMsgHeader_Get(m, "Logsink-Encoding", &enc) != NATS_OK || !enc) return data;
  ++*compressed;
  std::string out;
  if (std::string(enc) == "zstd") {
    unsigned long long size = ZSTD_getFrameContentSize(data.data(), data.size());
    EXPECT_LT(size, 1ull << 30) << "a zstd frame without its size";
    if (size >= 1ull << 30) return "";
    out.resize(size);
    size_t n = ZSTD_decompress(out.data(), out.size(), data.data(), data.size());
    EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
    EXPECT_EQ(n, out.size());
    return out;
  }
  EXPECT_EQ(std::string(enc), "lz4");
  if (std::string(enc) != "lz4") return "";
  LZ4F_dctx *d = nullptr;
  EXPECT_FALSE(LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)));
  char buf[65536];
  size_t at = 0;
  while (at < data.size()) {
    size_t dst = sizeof buf, src = data.size() - at;
    size_t r = LZ4F_decompress(d, buf, &dst, data.data() + at, &src, nullptr);
    EXPECT_FALSE(LZ4F_isError(r)) << LZ4F_getErrorName(r);
    if (LZ4F_isError(r)) break;
    out.append(buf, dst);
    at += src;
    if (r == 0) break;  // the frame's end
  }
  LZ4F_freeDecompressionContext(d);
  return out;
}

class JsCheck {
 public:
  explicit JsCheck(const std::string &urls) {
    natsOptions *o = nullptr;
    natsOptions_Create(&o);
    std::vector<std::string> list;
    for (size_t pos = 0; pos <= urls.size();) {
      size_t comma = urls.find(',', pos);
      if (comma == std::string::npos) comma = urls.size();
      list.push_back(urls.substr(pos, comma - pos));
      pos = comma + 1;
    }
    std::vector<const char *> ptrs;
    for (const auto &u : list) ptrs.push_back(u.c_str());
    natsOptions_SetServers(o, ptrs.data(), int(ptrs.size()));
    natsOptions_SetMaxReconnect(o, -1);
    natsOptions_SetReconnectWait(o, 100);
    s_ = natsConnection_Connect(&nc_, o);
    natsOptions_Destroy(o);
    if (s_ == NATS_OK) s_ = natsConnection_JetStream(&js_, nc_, nullptr);
  }
  ~JsCheck() {
    if (js_) jsCtx_Destroy(js_);
    if (nc_) natsConnection_Destroy(nc_);
  }
  bool ok() const { return s_ == NATS_OK; }
  bool AddStream(const std::string &name, const std::string &subject, int replicas) {
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = name.c_str();
    const char *subs[] = {subject.c_str()};
    sc.Subjects = subs;
    sc.SubjectsLen = 1;
    sc.Replicas = replicas;
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
  // A stream whose messages are at most max_msg_size bytes (headers included).
  bool AddSmallStream(const std::string &name, const std::string &subject, int32_t max_msg_size) {
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = name.c_str();
    const char *subs[] = {subject.c_str()};
    sc.Subjects = subs;
    sc.SubjectsLen = 1;
    sc.MaxMsgSize = max_msg_size;
    jsStreamInfo *si = nullptr;
    jsErrCode jerr;
    natsStatus s = js_AddStream(&si, js_, &sc, nullptr, &jerr);
    if (si) jsStreamInfo_Destroy(si);
    return s == NATS_OK;
  }
  // Publishes n messages "x" on subject and waits for their acknowledgments.
  bool PublishMany(const std::string &subject, int n) {
    for (int i = 0; i < n;) {
      natsStatus s = js_PublishAsync(js_, subject.c_str(), "x", 1, nullptr);
      if (s == NATS_OK)
        ++i;
      else if (s != NATS_TIMEOUT)  // too many pending: tried again
        return false;
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 60000;
    return js_PublishAsyncComplete(js_, &po) == NATS_OK;
  }
  // One message with these headers (a writer other than the forwarder).
  bool PublishWithHeaders(const std::string &subject, const std::string &body,
                          const std::vector<std::pair<std::string, std::string>> &headers) {
    natsMsg *m = nullptr;
    if (natsMsg_Create(&m, subject.c_str(), nullptr, body.data(), int(body.size())) != NATS_OK)
      return false;
    for (const auto &[k, v] : headers) natsMsgHeader_Set(m, k.c_str(), v.c_str());
    jsPubAck *pa = nullptr;
    jsErrCode jerr;
    natsStatus s = js_PublishMsg(&pa, js_, m, nullptr, &jerr);
    if (pa) jsPubAck_Destroy(pa);
    natsMsg_Destroy(m);
    return s == NATS_OK;
  }
  // Removes every message of the stream (its first sequence moves past them).
  bool Purge(const std::string &stream) {
    jsErrCode jerr;
    return js_PurgeStream(js_, stream.c_str(), nullptr, &jerr) == NATS_OK;
  }
  // Every message, holes (deleted ones) left out, up to the stream's last
  // sequence, as many as the stream said it held; a failure says why. A
  // hole is what the server answers "no message" for, nothing else: a
  // request that timed out was taken for one, and a stored message went
  // missing from what the test checked (a loaded machine, one read-back
  // request unanswered within cnats' 5 s).
  ::testing::AssertionResult AllPresent(const std::string &stream, std::vector<std::string> *bodies,
                                        std::vector<std::string> *ids,
                                        std::vector<std::string> *subjects) {
    jsStreamInfo *si = nullptr;
    jsErrCode jerr = jsErrCode(0);
    natsStatus s =
        JsPatiently([&] { return js_GetStreamInfo(&si, js_, stream.c_str(), nullptr, &jerr); });
    if (s != NATS_OK)
      return ::testing::AssertionFailure()
             << "the stream " << stream << "'s state: " << natsStatus_GetText(s)
             << " (JetStream error " << int(jerr) << ")";
    const uint64_t first = si->State.FirstSeq, last = si->State.LastSeq, held = si->State.Msgs;
    jsStreamInfo_Destroy(si);
    uint64_t read = 0;
    for (uint64_t seq = first; seq && seq <= last; ++seq) {
      natsMsg *m = nullptr;
      s = JsPatiently([&] { return js_GetMsg(&m, js_, stream.c_str(), seq, nullptr, &jerr); });
      if (s != NATS_OK && jerr == JSNoMessageFoundErr) continue;  // deleted
      if (s != NATS_OK)
        return ::testing::AssertionFailure()
               << "reading " << stream << " at sequence " << seq << ": " << natsStatus_GetText(s)
               << " (JetStream error " << int(jerr) << ")";
      ++read;
      bodies->emplace_back(natsMsg_GetData(m), size_t(natsMsg_GetDataLength(m)));
      const char *id = nullptr;
      natsMsgHeader_Get(m, "Nats-Msg-Id", &id);
      ids->push_back(id ? id : "");
      subjects->push_back(natsMsg_GetSubject(m));
      natsMsg_Destroy(m);
    }
    if (read != held)
      return ::testing::AssertionFailure() << stream << " held " << held << " messages in " << first
                                           << ".." << last << "; " << read << " read";
    return ::testing::AssertionSuccess();
  }
  // The bodies of the messages on one subject, in stream order, through an
  // ordered consumer filtered on it (one request per message, as
  // AllPresent does, costs seconds when other subjects hold most of the
  // stream), up to the subject's last message.
  bool OnSubject(const std::string &stream, const std::string &subject,
                 std::vector<std::string> *bodies) {
    jsErrCode jerr;
    natsMsg *last = nullptr;
    if (js_GetLastMsg(&last, js_, stream.c_str(), subject.c_str(), nullptr, &jerr) != NATS_OK)
      return false;
    const uint64_t last_seq = natsMsg_GetSequence(last);
    natsMsg_Destroy(last);
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = stream.c_str();
    so.Ordered = true;
    natsSubscription *sub = nullptr;
    if (js_SubscribeSync(&sub, js_, subject.c_str(), nullptr, &so, &jerr) != NATS_OK) return false;
    bool ok = false;
    for (;;) {
      natsMsg *m = nullptr;
      if (natsSubscription_NextMsg(&m, sub, 30000) != NATS_OK) break;  // a hang limit
      jsMsgMetaData *md = nullptr;
      uint64_t seq = 0;
      if (natsMsg_GetMetaData(&md, m) == NATS_OK) {
        seq = md->Sequence.Stream;
        jsMsgMetaData_Destroy(md);
      }
      bodies->emplace_back(natsMsg_GetData(m), size_t(natsMsg_GetDataLength(m)));
      natsMsg_Destroy(m);
      if (seq >= last_seq) {
        ok = true;
        break;
      }
    }
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
    return ok;
  }
  bool Delete(const std::string &stream, uint64_t seq) {
    jsErrCode jerr;
    return js_DeleteMsg(js_, stream.c_str(), seq, nullptr, &jerr) == NATS_OK;
  }
  std::string Leader(const std::string &stream) {
    jsStreamInfo *si = nullptr;
    jsErrCode jerr;
    if (js_GetStreamInfo(&si, js_, stream.c_str(), nullptr, &jerr) != NATS_OK) return "";
    std::string leader = si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "";
    jsStreamInfo_Destroy(si);
    return leader;
  }
  // The message at stream sequence seq.
  bool One(const std::string &stream, int64_t seq, std::vector<std::string> *bodies,
           std::vector<std::string> *ids) {
    natsMsg *m = nullptr;
    jsErrCode jerr;
    if (JsPatiently([&] {
          return js_GetMsg(&m, js_, stream.c_str(), uint64_t(seq), nullptr, &jerr);
        }) != NATS_OK)
      return false;
    bodies->push_back(BodyOf(m, &compressed_));
    const char *id = nullptr;
    natsMsgHeader_Get(m, "Nats-Msg-Id", &id);
    ids->push_back(id ? id : "");
    natsMsg_Destroy(m);
    return true;
  }
  // Every message body and Nats-Msg-Id, in stream order (and, when asked,
  // each message's subject and Logsink-Records header).
  bool All(const std::string &stream, int64_t n, std::vector<std::string> *bodies,
           std::vector<std::string> *ids, std::vector<std::string> *subjects = nullptr,
           std::vector<std::string> *records = nullptr) {
    for (int64_t seq = 1; seq <= n; ++seq) {
      natsMsg *m = nullptr;
      jsErrCode jerr;
      if (JsPatiently([&] {
            return js_GetMsg(&m, js_, stream.c_str(), uint64_t(seq), nullptr, &jerr);
          }) != NATS_OK)
        return false;
      bodies->push_back(BodyOf(m, &compressed_));
      const char *id = nullptr;
      natsMsgHeader_Get(m, "Nats-Msg-Id", &id);
      ids->push_back(id ? id : "");
      if (subjects) subjects->push_back(natsMsg_GetSubject(m));
      if (records) {
        const char *r = nullptr;
        natsMsgHeader_Get(m, "Logsink-Records", &r);
        records->push_back(r ? r : "");
      }
      natsMsg_Destroy(m);
    }
    return true;
  }

  // Messages read with a Logsink-Encoding (compressed batches).
  int compressed() const { return compressed_; }

 private:
  int compressed_ = 0;
  natsStatus s_ = NATS_ERR;
  natsConnection *nc_ = nullptr;
  jsCtx *js_ = nullptr;
};

// A batch's body split into its lines (JSON lines, each ending in '\n').
std::vector<std::string> SplitBatches(const std::vector<std::string> &bodies) {
  std::vector<std::string> lines;
  for (const std::string &b : bodies) {
    EXPECT_TRUE(!b.empty() && b.back() == '\n') << b;
    for (size_t pos = 0; pos < b.size();) {
      size_t nl = b.find('\n', pos);
      if (nl == std::string::npos) nl = b.size();
      lines.push_back(b.substr(pos, nl - pos));
      pos = nl + 1;
    }
  }
  return lines;
}

// The numbers i of the "rec i" messages in bodies; other messages in *other.
std::map<int, int> Numbers(const std::vector<std::string> &bodies,
                           std::vector<std::string> *other) {
  std::map<int, int> seen;
  std::regex rec("\"msg\":\"rec ([0-9]+)\"|\\] rec ([0-9]+)$");
  for (const auto &b : bodies) {
    std::smatch m;
    if (std::regex_search(b, m, rec))
      ++seen[std::stoi(m[1].matched ? m[1].str() : m[2].str())];
    else
      other->push_back(b);
  }
  return seen;
}

// Each record number in seen came exactly once, or which did not.
::testing::AssertionResult EachOnce(const std::map<int, int> &seen) {
  for (const auto &[i, times] : seen)
    if (times != 1) return ::testing::AssertionFailure() << "record " << i << ": " << times << "x";
  return ::testing::AssertionSuccess();
}

// The record numbers in a stream's messages, batches split into their
// lines (how often each came); other lines in *other.
std::map<int, int> StreamRecords(JsCheck &js, const std::string &stream,
                                 std::vector<std::string> *other) {
  std::vector<std::string> bodies, ids, subjects;
  EXPECT_TRUE(js.AllPresent(stream, &bodies, &ids, &subjects));
  return Numbers(SplitBatches(bodies), other);
}

// Runs fwd until its cursor file says n, then stops it (exit status 0).
void ForwardUntil(Forwarder &fwd, const TempDir &dir, int64_t n, Ms limit = kHang) {
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") == n; }, limit))
      << ReadFile(dir / "forward.log");
  ASSERT_EQ(fwd.Stop(), 0) << ReadFile(dir / "forward.log");
}

std::vector<std::string> NatsArgs(const std::string &ring_path, const TempDir &dir,
                                  const std::string &urls) {
  return {"--to",          "nats://" + urls.substr(7),
          "--subject",     "logs.test",
          "--file",        ring_path,
          "--cursor-file", dir / "cursor",
          "--ack-timeout", "1s",
          "--window",      "256"};
}

std::vector<std::string> NatsArgs(const NumberedRing &ring, const TempDir &dir,
                                  const std::string &urls) {
  return NatsArgs(ring.path(), dir, urls);
}

class ForwardNatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    NatsServerOptions o;
    o.dir = dir_.path();
    o.name = "single";
    ASSERT_TRUE(nats_.Start(o, &err)) << err;
    JsCheck js(nats_.url());
    ASSERT_TRUE(js.ok());
    ASSERT_TRUE(js.AddStream("LOGS", "logs.test", 1));
  }
  TempDir dir_{"logsink-fwd"};
  NatsServer nats_;
};

// Kills the forwarder and nats-server (SIGKILL) in turn mid-stream while the
// ring grows; then each record must be in the stream exactly once (batches
// split into their lines). batch: --batch, 1 = one record per message;
// compress: --compress (batches are then read back decompressed).
void ExactlyOnceAcrossKills(const TempDir &dir, NatsServer &nats, int batch,
                            const std::string &compress = "none") {
  uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  NumberedRing ring(dir / "r.ring", 4 << 20);
  std::vector<std::string> args = NatsArgs(ring, dir, nats.url());
  if (batch > 1) args.insert(args.end(), {"--batch", std::to_string(batch)});
  if (compress != "none") args.insert(args.end(), {"--compress", compress});
  Forwarder fwd(dir, args);
  ring.Add(2000);
  fwd.Start();
  const int kPhases = 6;
  int kills_fwd = 0, kills_server = 0;
  for (int phase = 0; phase < kPhases; ++phase) {
    // Batches: in small steps while the forwarder reads, so that where a
    // batch ends depends on timing (a restart cuts them elsewhere).
    int more = 2000 + int(rng() % 2000);
    for (int k = 0; k < more;) {
      int step = batch > 1 ? std::min(more - k, 1 + int(rng() % 60)) : more;
      ring.Add(step);
      k += step;
    }
    // Let it get somewhere, then kill something mid-stream.
    int64_t target = ring.count() / 2 + int64_t(rng() % 500);
    ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") >= target; }))
        << ReadFile(dir / "forward.log");
    if (phase % 2 == 0) {
      fwd.Kill();
      ++kills_fwd;
      fwd.Start();
    } else {
      nats.Kill(SIGKILL);
      ++kills_server;
      std::string err;
      ASSERT_TRUE(nats.Restart(&err)) << err;
    }
  }
  const int64_t n = ring.count();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") == n; }, Ms(30000)))
      << CursorNext(dir / "cursor") << " of " << n << "\n"
      << ReadFile(dir / "forward.log");
  EXPECT_EQ(fwd.Stop(), 0);

  JsCheck js(nats.url());
  const int64_t messages = js.Count("LOGS");
  if (batch == 1) {
    ASSERT_EQ(messages, n);
  }
  ASSERT_GT(messages, 0);
  std::vector<std::string> bodies, ids, subjects, records;
  ASSERT_TRUE(js.All("LOGS", messages, &bodies, &ids, &subjects, &records));
  // Compressed: most batches are (one of a record or two may not get smaller).
  if (compress != "none")
    EXPECT_GT(js.compressed(), messages / 2);
  else
    EXPECT_EQ(js.compressed(), 0);
  std::vector<std::string> lines = batch == 1 ? bodies : SplitBatches(bodies);
  if (batch > 1) {
    for (size_t k = 0; k < bodies.size(); ++k)
      EXPECT_EQ(std::to_string(SplitBatches({bodies[k]}).size()), records[k]) << ids[k];
  }
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(lines, &other);
  EXPECT_TRUE(other.empty()) << other.front();
  // Which messages hold record i (their ids), and what the forwarder said.
  auto holders = [&](int i) {
    std::string out, needle = "\"msg\":\"rec " + std::to_string(i) + "\"";
    for (size_t k = 0; k < bodies.size(); ++k)
      if (bodies[k].find(needle) != std::string::npos)
        out += " [message " + std::to_string(k + 1) + " " + ids[k] + "]";
    return out + "\n" + ReadFile(dir / "forward.log");
  };
  ASSERT_EQ(int64_t(seen.size()), n);
  for (const auto &[i, times] : seen) ASSERT_EQ(times, 1) << "record " << i << holders(i);
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), size_t(messages));
  std::printf(
      "[figures] nats single node, --batch %d --compress %s: %lld records, forwarder SIGKILLed "
      "%d times, nats-server SIGKILLed %d times: %lld messages in the stream, each record "
      "exactly once (seed %llu)\n",
      batch, compress.c_str(), (long long)n, kills_fwd, kills_server, (long long)messages,
      (unsigned long long)seed);
}

TEST_F(ForwardNatsTest, EachRecordExactlyOnceAcrossKillsOfForwarderAndServer) {
  ExactlyOnceAcrossKills(dir_, nats_, 1);
}

// Batches (JSON lines) are exactly once too: a restarted forwarder
// asks the stream for the last record it holds before it cuts new batches.
TEST_F(ForwardNatsTest, BatchesHoldEachRecordExactlyOnceAcrossKills) {
  ExactlyOnceAcrossKills(dir_, nats_, 100);
}

// Compressed batches (on the sink's own thread, which a kill stops with
// batches queued and not handed to cnats yet) are exactly once too, and a
// consumer gets every record back by the codec the header names.
TEST_F(ForwardNatsTest, CompressedBatchesHoldEachRecordExactlyOnceAcrossKills) {
  ExactlyOnceAcrossKills(dir_, nats_, 100, "zstd");
}
TEST_F(ForwardNatsTest, Lz4BatchesHoldEachRecordExactlyOnceAcrossKills) {
  ExactlyOnceAcrossKills(dir_, nats_, 100, "lz4");
}

TEST_F(ForwardNatsTest, LappedRecordsBecomeOneCountedLostMessage) {
  // The block layout as it is: this test laps a small ring.
  NumberedRing ring(dir_ / "r.ring", 8192 + 4096 + 8 * 4096, LS_CODEC_NONE);
  Forwarder fwd(dir_, NatsArgs(ring, dir_, nats_.url()));
  ring.Add(100);
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir_ / "cursor") == 100; }));
  ASSERT_EQ(fwd.Stop(), 0);
  ring.Add(20000);  // laps the 8-block ring many times
  uint64_t oldest = ring.oldest_seq();
  ASSERT_GT(oldest, 100u);
  uint64_t lost = oldest - 100;
  fwd.Start();
  const int64_t n = ring.count();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir_ / "cursor") == n; }))
      << ReadFile(dir_ / "forward.log");
  ASSERT_TRUE(WaitUntil([&] { return StatusValue(dir_ / "cursor", "lost") >= 0; }));
  EXPECT_EQ(StatusValue(dir_ / "cursor", "lost"), int64_t(lost));
  ASSERT_EQ(fwd.Stop(), 0);
  // --status shows what the instance wrote last (at exit here).
  ProcResult st =
      RunProcess(BinPath("logsink-forward"), {"--status", "--cursor-file", dir_ / "cursor"});
  EXPECT_EQ(st.status, 0) << st.err;
  EXPECT_NE(st.out.find("\nlost=" + std::to_string(lost) + "\n"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("\ncursor_next=" + std::to_string(ring.count()) + "\n"), std::string::npos)
      << st.out;
  EXPECT_NE(st.out.find("\nin_flight=0\n"), std::string::npos) << st.out;
  // The rates and the time to catch up (none left to catch up).
  for (const char *key : {"\nlag_records=0\n", "\ncatch_up_seconds=0\n", "\nrecords_per_second=",
                          "\nring_records_per_second=", "\nring_records=", "\nlap_seconds=never\n"})
    EXPECT_NE(st.out.find(key), std::string::npos) << key << "\n" << st.out;
  JsCheck js(nats_.url());
  int64_t count = js.Count("LOGS");
  ASSERT_EQ(count, 100 + 1 + (n - int64_t(oldest)));
  std::vector<std::string> bodies, ids;
  ASSERT_TRUE(js.All("LOGS", count, &bodies, &ids));
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(bodies, &other);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_NE(other[0].find("\"lost\":" + std::to_string(lost) + ","), std::string::npos) << other[0];
  EXPECT_EQ(int64_t(seen.size()), count - 1);
}

// A ring lapped while a batching forwarder was down: the lost
// records become one line of a batch, counted; the others each once.
TEST_F(ForwardNatsTest, BatchesAcrossALappedRingCarryOneLostLine) {
  NumberedRing ring(dir_ / "r.ring", 8192 + 4096 + 8 * 4096, LS_CODEC_NONE);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args.insert(args.end(), {"--batch", "64"});
  Forwarder fwd(dir_, args);
  ring.Add(100);
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir_ / "cursor") == 100; }));
  fwd.Kill();
  ring.Add(20000);  // laps the 8-block ring many times
  uint64_t oldest = ring.oldest_seq();
  ASSERT_GT(oldest, 100u);
  uint64_t lost = oldest - 100;
  fwd.Start();
  const int64_t n = ring.count();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir_ / "cursor") == n; }))
      << ReadFile(dir_ / "forward.log");
  ASSERT_EQ(fwd.Stop(), 0);
  JsCheck js(nats_.url());
  int64_t messages = js.Count("LOGS");
  std::vector<std::string> bodies, ids;
  ASSERT_TRUE(js.All("LOGS", messages, &bodies, &ids));
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(SplitBatches(bodies), &other);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_NE(other[0].find("\"lost\":" + std::to_string(lost) + ","), std::string::npos) << other[0];
  EXPECT_EQ(int64_t(seen.size()), 100 + (n - int64_t(oldest)));
  // The restart found itself more than half a ring behind, and said so.
  EXPECT_NE(ReadFile(dir_ / "forward.log").find("falling behind the ring: "), std::string::npos)
      << ReadFile(dir_ / "forward.log");
  EXPECT_TRUE(EachOnce(seen));
}

// Batch boundaries depend on timing, so a restarted forwarder
// learns from the stream where it stopped. A cursor file that lags the
// stream (as after a kill between an acknowledgment and the cursor write)
// ships nothing twice.
TEST_F(ForwardNatsTest, BatchingForwarderResumesAfterWhatTheStreamHolds) {
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args.insert(args.end(), {"--batch", "50"});
  ring.Add(1000);
  {
    Forwarder fwd(dir_, args);
    ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 1000));
  }
  JsCheck js(nats_.url());
  const int64_t before = js.Count("LOGS");
  // The cursor back at 300, as a forwarder killed long before its write.
  std::string c = ReadFile(dir_ / "cursor");
  c = c.substr(0, c.rfind(' ')) + " 300\n";
  WriteFile(dir_ / "cursor", c);
  ASSERT_EQ(CursorNext(dir_ / "cursor"), 300);
  ring.Add(500);
  Forwarder fwd(dir_, args);
  ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 1500));
  EXPECT_NE(ReadFile(dir_ / "forward.log")
                .find("the stream already holds records up to 999 (the cursor said 300): "
                      "resuming at 1000"),
            std::string::npos)
      << ReadFile(dir_ / "forward.log");
  int64_t messages = js.Count("LOGS");
  EXPECT_GT(messages, before);
  std::vector<std::string> bodies, ids;
  ASSERT_TRUE(js.All("LOGS", messages, &bodies, &ids));
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(SplitBatches(bodies), &other);
  EXPECT_TRUE(other.empty());
  ASSERT_EQ(seen.size(), 1500u);
  EXPECT_TRUE(EachOnce(seen));
}

// Records stored past a gap (as after a lost connection whose
// earlier batches were sent again behind later ones, then a kill) are
// skipped, and only the missing ones are sent, in batches that end where
// the stored ones begin.
TEST_F(ForwardNatsTest, BatchingForwarderFillsAGapInTheStreamOnce) {
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args.insert(args.end(), {"--batch", "50"});
  ring.Add(1000);
  {
    Forwarder fwd(dir_, args);
    ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 1000));
  }
  JsCheck js(nats_.url());
  int64_t count = js.Count("LOGS");
  std::vector<std::string> bodies, ids;
  ASSERT_TRUE(js.All("LOGS", count, &bodies, &ids));
  // A message of the second half goes (its id: ls1-RING-FIRST-LAST in hex).
  int64_t k = count * 2 / 3;
  const std::string &id = ids[size_t(k)];
  size_t d2 = id.rfind('-'), d1 = id.rfind('-', d2 - 1);
  uint64_t first = std::stoull(id.substr(d1 + 1, d2 - d1 - 1), nullptr, 16);
  ASSERT_GT(first, 300u) << id;
  ASSERT_TRUE(js.Delete("LOGS", uint64_t(k + 1)));
  std::string c = ReadFile(dir_ / "cursor");
  WriteFile(dir_ / "cursor", c.substr(0, c.rfind(' ')) + " 300\n");
  ring.Add(500);
  // Cut otherwise this time: the deleted message's own id is still in the
  // stream's duplicate window (a batch that was lost never was).
  args.back() = "30";
  Forwarder fwd(dir_, args);
  ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 1500));
  std::string log = ReadFile(dir_ / "forward.log");
  EXPECT_NE(log.find("resuming at " + std::to_string(first) + "\n"), std::string::npos) << log;
  EXPECT_NE(log.find("but not all before them"), std::string::npos) << log;
  // Every record once: the deleted message's records were sent again, the
  // stored ones after them were not. (The deleted sequence number is a hole
  // in the stream: read around it.)
  std::vector<std::string> all_bodies;
  const int64_t last = js.Count("LOGS") + 1;
  for (int64_t seq = 1; seq <= last; ++seq) {
    if (seq == k + 1) continue;
    std::vector<std::string> one_body, one_id;
    ASSERT_TRUE(js.One("LOGS", seq, &one_body, &one_id)) << seq;
    all_bodies.push_back(one_body[0]);
  }
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(SplitBatches(all_bodies), &other);
  EXPECT_TRUE(other.empty());
  ASSERT_EQ(seen.size(), 1500u);
  EXPECT_TRUE(EachOnce(seen));
}

// A subject template routes each record by its fields (two apps,
// two levels: four subjects); --create-stream captures every subject it can
// make (each field token a '*').
// This host's name as a subject token (what {host} renders).
std::string HostToken() {
  char host[256] = {};
  EXPECT_EQ(gethostname(host, sizeof host - 1), 0);
  std::string h = host;
  for (char &ch : h)
    if (ch == '.' || ch == '*' || ch == '>' || ch == ' ') ch = '_';
  return h;
}

// A template naming only {host} is one subject per forwarder, so
// batches take it: every batch on that host's subject, the stream created
// on it, and a restarted forwarder reads it back and goes on exactly once.
TEST_F(ForwardNatsTest, AHostOnlyTemplateCarriesBatches) {
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  ring.Add(500);
  std::vector<std::string> args = {
      "--to",    nats_.url(), "--subject",     "byhost.{host}", "--file",          ring.path(),
      "--batch", "50",        "--cursor-file", dir_ / "cursor", "--create-stream", "BYHOST"};
  Forwarder fwd(dir_, args);
  ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 500));
  ring.Add(300);
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir_ / "cursor") == 800; }))
      << ReadFile(dir_ / "forward.log");
  ASSERT_EQ(fwd.Stop(), 0);
  JsCheck js(nats_.url());
  const int64_t messages = js.Count("BYHOST");
  ASSERT_GT(messages, 0);
  EXPECT_LT(messages, 800);  // batched
  std::vector<std::string> bodies, ids, subjects;
  ASSERT_TRUE(js.All("BYHOST", messages, &bodies, &ids, &subjects));
  for (const std::string &sub : subjects) EXPECT_EQ(sub, "byhost." + HostToken());
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(SplitBatches(bodies), &other);
  EXPECT_TRUE(other.empty());
  ASSERT_EQ(seen.size(), 800u);
  EXPECT_TRUE(EachOnce(seen));
}

TEST_F(ForwardNatsTest, SubjectTemplateRoutesEachRecordByItsFields) {
  WriterOptions o;
  o.file_size = 1 << 20;
  o.block_size = 4096;
  std::unique_ptr<RingWriter> w;
  ASSERT_TRUE(RingWriter::Open(Env::Default(), dir_ / "r.ring", o, &w).ok());
  Source a{1, 10, 1000, 100, "alpha", "alpha"}, b{2, 11, 1000, 100, "beta.v2", "beta.v2"};
  Site err{3, 1, "rec %d", "t.c"}, info{6, 2, "rec %d", "t.c"};
  uint32_t s_err = w->Intern(err), s_info = w->Intern(info);
  char sig[8];
  ls_fmt_signature("rec %d", 6, sig, sizeof sig);
  const int n = 400;
  for (int i = 0; i < n; ++i) {
    uint8_t buf[LS_VARINT_MAX];
    size_t len = ls_put_varint(buf, ls_zigzag(i));
    std::string_view args(reinterpret_cast<char *>(buf), len);
    // i % 4: alpha err, alpha info, beta err, beta info
    ASSERT_TRUE(AppendRecord(w.get(), i % 4 < 2 ? a : b, i % 2 == 0 ? s_err : s_info, sig, args,
                             1700000000000000000ull + uint64_t(i))
                    .ok());
  }
  ASSERT_TRUE(w->Flush().ok());
  std::vector<std::string> args = {
      "--to",          nats_.url(),     "--subject",     "app.{host}.{app}.{level}", "--file",
      dir_ / "r.ring", "--cursor-file", dir_ / "cursor", "--create-stream",          "ROUTED"};
  Forwarder fwd(dir_, args);
  ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, n));
  const std::string h = HostToken();
  JsCheck js(nats_.url());
  ASSERT_EQ(js.Count("ROUTED"), n);
  std::vector<std::string> bodies, ids, subjects;
  ASSERT_TRUE(js.All("ROUTED", n, &bodies, &ids, &subjects));
  std::map<std::string, int> per_subject;
  for (size_t k = 0; k < subjects.size(); ++k) {
    ++per_subject[subjects[k]];
    // The subject matches the body's own fields ("beta.v2" is one token).
    bool alpha = bodies[k].find("\"app\":\"alpha\"") != std::string::npos;
    bool is_err = bodies[k].find("\"level\":\"err\"") != std::string::npos;
    EXPECT_EQ(subjects[k],
              "app." + h + "." + (alpha ? "alpha" : "beta_v2") + "." + (is_err ? "err" : "info"))
        << bodies[k];
  }
  EXPECT_EQ(per_subject.size(), 4u);
  for (const auto &[sub, count] : per_subject) EXPECT_EQ(count, n / 4) << sub;
  std::vector<std::string> other;
  EXPECT_EQ(Numbers(bodies, &other).size(), size_t(n));
  EXPECT_EQ(js.Count("LOGS"), 0);
}

// A subject no stream captures is said once a second with what to
// do, not once per record; a NATS that does not answer is said on stderr
// and in --status.
TEST_F(ForwardNatsTest, ExplainsASubjectNoStreamCaptures) {
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  ring.Add(500);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args[3] = "nostream.test";  // --subject: LOGS captures logs.test only
  args.insert(args.end(), {"--ack-timeout", "200ms", "--shutdown-timeout", "100ms"});
  Forwarder fwd(dir_, args);
  const auto t0 = std::chrono::steady_clock::now();
  fwd.Start();
  const std::string hint =
      "no JetStream stream captures the subject nostream.test: create one that does";
  ASSERT_TRUE(WaitUntil([&] {
    std::string log = ReadFile(dir_ / "forward.log");
    return log.find(hint) != std::string::npos &&
           log.find(" records not acknowledged since the last report") != std::string::npos;
  })) << ReadFile(dir_ / "forward.log");
  EXPECT_EQ(fwd.Stop(), 0);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  size_t lines = 0;
  for (const std::string &l : Lines(ReadFile(dir_ / "forward.log")))
    lines += l.find("not acknowledged") != std::string::npos;
  // One line a second (the first at once), whatever the number of records.
  EXPECT_LE(double(lines), 2 + secs) << ReadFile(dir_ / "forward.log");
  EXPECT_LE(CursorNext(dir_ / "cursor"), 0) << "nothing was acknowledged";
}

TEST(ForwardNatsDown, SaysSoOnStderrAndInTheStatus) {
  TempDir dir("logsink-fwd");
  NumberedRing ring(dir / "r.ring", 1 << 20);
  ring.Add(10);
  const std::string url = "nats://127.0.0.1:" + std::to_string(FreePort());  // nobody there
  std::vector<std::string> args = NatsArgs(ring, dir, url);
  args.insert(args.end(), {"--shutdown-timeout", "100ms"});
  Forwarder fwd(dir, args);
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] {
    return ReadFile(dir / "forward.log").find("NATS at " + url + " does not answer") !=
               std::string::npos &&
           ReadFile(dir / "cursor.status").find("last_error=not connected to NATS at " + url) !=
               std::string::npos;
  })) << ReadFile(dir / "forward.log")
      << ReadFile(dir / "cursor.status");
  // Nothing shipped, but a ring that never wrapped cannot lap the cursor:
  // no "falling behind" (said before at the first status: 10 of 10).
  EXPECT_EQ(ReadFile(dir / "forward.log").find("falling behind"), std::string::npos)
      << ReadFile(dir / "forward.log");
  EXPECT_EQ(fwd.Stop(), 0);
}

// $LOGSINK_SOCKET names a daemon; the forwarder reads a file, and with no
// --file or $LOGSINK_FILE says which one it follows (whether or not the
// system ring exists here).
TEST(ForwardRing, LogsinkSocketAloneGetsAWarningNamingTheRingFollowed) {
  TempDir dir("logsink-fwd");
  DaemonOptions o;
  o.bin = BinPath("logsink-forward");
  o.args = {"--to",
            "nats://127.0.0.1:" + std::to_string(FreePort()),
            "--subject",
            "logs.test",
            "--cursor-file",
            dir / "cursor",
            "--start",
            "end",
            "--shutdown-timeout",
            "100ms"};
  o.stderr_path = dir / "forward.log";
  o.child_setup = [&dir] {
    unsetenv("LOGSINK_FILE");
    setenv("LOGSINK_SOCKET", (dir / "some.sock").c_str(), 1);
  };
  DaemonProcess p;
  std::string err;
  (void)p.Start(o, &err);  // ready or not (no system ring): the warning comes first
  if (p.running()) p.Stop(SIGTERM);
  EXPECT_NE(ReadFile(dir / "forward.log")
                .find("$LOGSINK_SOCKET is set, but logsink-forward reads a ring file, not a "
                      "daemon: following " LS_SYSTEM_RING " (give --file or $LOGSINK_FILE"),
            std::string::npos)
      << ReadFile(dir / "forward.log");
}

TEST_F(ForwardNatsTest, RefusesACursorOfAnotherRing) {
  {
    NumberedRing ring(dir_ / "r.ring", 1 << 20);
    ring.Add(10);
    Forwarder fwd(dir_, NatsArgs(ring, dir_, nats_.url()));
    fwd.Start();
    ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir_ / "cursor") == 10; }));
    ASSERT_EQ(fwd.Stop(), 0);
  }
  ASSERT_EQ(unlink((dir_ / "r.ring").c_str()), 0);
  NumberedRing again(dir_ / "r.ring", 1 << 20);  // recreated: a new identity
  again.Add(10);
  std::vector<std::string> args = NatsArgs(again, dir_, nats_.url());
  ProcResult r = RunProcess(BinPath("logsink-forward"), args);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("belongs to another ring"), std::string::npos) << r.err;
  EXPECT_EQ(CursorNext(dir_ / "cursor"), 10);  // untouched
}

// A stop while the cursor write is in flight (the open of its temporary
// file held by the test) waits for that write: the forwarder says so, and
// once the write completes it writes the final cursor and exits 0. The
// window is 4, so the forwarder ships 4 records, all acknowledged, and
// then waits for the cursor (entries leave the window only once the
// cursor is past them); the write held is the first one, of an earlier
// position, so only the final cursor covers all 4.
TEST_F(ForwardNatsTest, AStopWaitsForTheCursorWriteInFlight) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root (fanotify's permission events)";
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  ring.Add(20);
  const std::string gated = dir_ / "gated";  // the cursor's directory, watched
  ASSERT_EQ(mkdir(gated.c_str(), 0700), 0);
  const std::string cursor = gated + "/cursor";
  // The cursor's temporary files (".cursor.XXXXXX"), not the status's
  // (".cursor.status.XXXXXX").
  OpenGate gate(gated, [&](const std::string &p) {
    return p.rfind(gated + "/.cursor.", 0) == 0 && p.rfind(gated + "/.cursor.status.", 0) != 0;
  });
  ASSERT_TRUE(gate.ok()) << gate.error();
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  *(std::find(args.begin(), args.end(), "--cursor-file") + 1) = cursor;
  *(std::find(args.begin(), args.end(), "--window") + 1) = "4";
  Forwarder fwd(dir_, args);
  fwd.Start();
  std::string held;
  ASSERT_TRUE(gate.WaitHeld(&held)) << ReadFile(dir_ / "forward.log");
  JsCheck js(nats_.url());
  ASSERT_TRUE(js.ok());
  ASSERT_TRUE(WaitUntil([&] { return js.Count("LOGS") == 4; })) << js.Count("LOGS") << "\n"
                                                                << ReadFile(dir_ / "forward.log");

  ASSERT_EQ(kill(fwd.pid(), SIGTERM), 0);
  const std::string waiting = "stopping: waiting for the cursor write in flight to complete";
  EXPECT_TRUE(WaitUntil([&] {
    return ReadFile(dir_ / "forward.log").find(waiting) != std::string::npos;
  })) << "held "
      << held << "\n"
      << ReadFile(dir_ / "forward.log");
  EXPECT_EQ(CursorNext(cursor), -1) << "the write held completed";
  gate.Release();
  EXPECT_EQ(fwd.Stop(), 0);
  gate.Close();
  EXPECT_EQ(CursorNext(cursor), 4) << ReadFile(dir_ / "forward.log");
  EXPECT_EQ(js.Count("LOGS"), 4);
}

// --level and --app: only matching records are shipped; skipped ones still
// move the cursor (the forwarder is done with them).
TEST_F(ForwardNatsTest, LevelAndAppFiltersShipOnlyMatchingRecords) {
  WriterOptions o;
  o.file_size = 1 << 20;
  o.block_size = 4096;
  std::unique_ptr<RingWriter> w;
  ASSERT_TRUE(RingWriter::Open(Env::Default(), dir_ / "r.ring", o, &w).ok());
  Source a{1, 10, 1000, 100, "alpha", "alpha"}, b{2, 11, 1000, 100, "beta", "beta"};
  Site err{3, 1, "err %d", "t.c"}, info{6, 2, "info %d", "t.c"};
  uint32_t s_err = w->Intern(err), s_info = w->Intern(info);
  char sig[8];
  ls_fmt_signature("err %d", 6, sig, sizeof sig);
  int n = 0;
  for (int i = 0; i < 400; ++i) {
    uint8_t buf[LS_VARINT_MAX];
    size_t len = ls_put_varint(buf, ls_zigzag(i));
    std::string_view args(reinterpret_cast<char *>(buf), len);
    // i % 4: alpha err, alpha info, beta err, beta info
    ASSERT_TRUE(AppendRecord(w.get(), i % 4 < 2 ? a : b, i % 2 == 0 ? s_err : s_info, sig, args,
                             1700000000000000000ull + uint64_t(i))
                    .ok());
    ++n;
  }
  ASSERT_TRUE(w->Flush().ok());
  std::vector<std::string> args = {"--to",    nats_.url(),     "--subject",     "logs.test",
                                   "--file",  dir_ / "r.ring", "--cursor-file", dir_ / "cursor",
                                   "--level", "warning",       "--app",         "alpha"};
  Forwarder fwd(dir_, args);
  ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, n));
  JsCheck js(nats_.url());
  ASSERT_EQ(js.Count("LOGS"), 100);  // alpha's err records: i % 4 == 0
  std::vector<std::string> bodies, ids;
  ASSERT_TRUE(js.All("LOGS", 100, &bodies, &ids));
  for (const std::string &body : bodies) {
    EXPECT_NE(body.find("\"app\":\"alpha\""), std::string::npos) << body;
    EXPECT_NE(body.find("\"level\":\"err\""), std::string::npos) << body;
  }
  EXPECT_EQ(StatusValue(dir_ / "cursor", "filtered"), 300);
}

// A C program's named fields (LS_FIELDS: a string, an integer, a bool, a
// double) go through the real logsinkd into its ring and come out of the
// forwarder, which follows that ring live, typed in the message's JSON as
// `logctl --json` writes them: "fields" with a string, a number, true and a
// double.
TEST_F(ForwardNatsTest, ACProgramsFieldsArriveTypedInTheJson) {
  unsetenv("LOGSINK_LEVEL");  // the record is never left out at the source
  Daemon daemon(dir_);
  ASSERT_TRUE(daemon.Start()) << daemon.Stderr();
  Forwarder fwd(dir_, NatsArgs(daemon.ring, dir_, nats_.url()));
  fwd.Start();
  ASSERT_EQ(forward_log_typed_fields(daemon.socket.c_str()), 0);
  JsCheck js(nats_.url());
  ASSERT_TRUE(js.ok());
  std::string body;
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::vector<std::string> bodies, ids, subjects;
        if (!js.AllPresent("LOGS", &bodies, &ids, &subjects)) return false;
        for (const std::string &b : bodies)
          if (b.find("\"msg\":\"disk sda full\"") != std::string::npos) body = b;
        return !body.empty();
      },
      kHang, Ms(10)))
      << ReadFile(dir_ / "forward.log") << daemon.Stderr();
  EXPECT_EQ(fwd.Stop(), 0);
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Stderr();
  // The bytes: each value in its JSON type, in the site's order.
  EXPECT_NE(body.find("\"fields\":{\"user\":\"alice\",\"req\":-7,\"ok\":true,\"ratio\":0.25}"),
            std::string::npos)
      << body;
  // (Not const: operator[] makes a missing key null, which then fails.)
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << body;
  nlohmann::json &f = j["fields"];
  ASSERT_TRUE(f.is_object()) << body;
  EXPECT_EQ(f.size(), 4u) << body;
  EXPECT_TRUE(f["user"].is_string()) << body;
  EXPECT_EQ(f["user"], "alice");
  EXPECT_TRUE(f["req"].is_number_integer()) << body;
  EXPECT_EQ(f["req"].get<int64_t>(), -7);
  EXPECT_TRUE(f["ok"].is_boolean()) << body;
  EXPECT_EQ(f["ok"], true);
  EXPECT_TRUE(f["ratio"].is_number_float()) << body;
  EXPECT_EQ(f["ratio"].get<double>(), 0.25);
  // The rest of the record as logctl shows it: the message part as fmt,
  // every argument in args, the sender's label.
  EXPECT_EQ(j["fmt"], "disk %s full") << body;
  EXPECT_EQ(j["args"], nlohmann::json::parse(R"(["sda","alice",-7,1,0.25])")) << body;
  EXPECT_EQ(j["app"], "fielder") << body;
  EXPECT_EQ(j["level"], "warning") << body;
}

TEST(ForwardNatsCluster, ExactlyOnceWhenTheStreamLeaderIsKilled) {
  TempDir dir("logsink-fwd");
  int cport[3] = {FreePort(), FreePort(), FreePort()};
  NatsServer nodes[3];
  for (int k = 0; k < 3; ++k) {
    NatsServerOptions o;
    o.dir = dir.path();
    o.name = "n" + std::to_string(k);
    o.cluster_name = "c";
    o.cluster_port = cport[k];
    for (int j = 0; j < 3; ++j)
      if (j != k) o.routes.push_back(cport[j]);
    std::string err;
    ASSERT_TRUE(nodes[k].Start(o, &err)) << err;
  }
  std::string urls = nodes[0].url() + "," + nodes[1].url() + "," + nodes[2].url();
  JsCheck js(urls);
  ASSERT_TRUE(js.ok());
  // The cluster elects its meta leader after the nodes see each other.
  ASSERT_TRUE(WaitUntil([&] { return js.AddStream("LOGS", "logs.test", 3); }, Ms(30000)));
  NumberedRing ring(dir / "r.ring", 4 << 20);
  Forwarder fwd(dir, NatsArgs(ring, dir, urls));
  ring.Add(3000);
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") >= 1000; }));
  std::string leader = js.Leader("LOGS");
  ASSERT_FALSE(leader.empty());
  int killed = leader[1] - '0';
  nodes[killed].Kill(SIGKILL);
  ring.Add(3000);
  const int64_t n = ring.count();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") == n; }, Ms(60000)))
      << ReadFile(dir / "forward.log");
  std::string err;
  ASSERT_TRUE(nodes[killed].Restart(&err)) << err;
  EXPECT_EQ(fwd.Stop(), 0);
  int64_t count = -1;
  ASSERT_TRUE(WaitUntil([&] { return (count = js.Count("LOGS")) >= 0; }, Ms(30000)));
  ASSERT_EQ(count, n);
  std::vector<std::string> bodies, ids;
  ASSERT_TRUE(js.All("LOGS", n, &bodies, &ids));
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(bodies, &other);
  ASSERT_EQ(int64_t(seen.size()), n);
  EXPECT_TRUE(EachOnce(seen));
  std::printf(
      "[figures] nats 3-node cluster, R3 stream, leader %s SIGKILLed mid-run: %lld "
      "records, %lld in the stream, each exactly once\n",
      leader.c_str(), (long long)n, (long long)count);
}

// Whoever can write in the cursor's directory plants <cursor>.status.tmp:
// a symlink to a file of root's, or a file of their own. Before the fix the
// forwarder (root) wrote its status every second through that fixed name
// (truncating, following the symlink) and renamed it into place: it
// overwrote the symlink's target, or the status became the other user's
// file. Now the status goes through a temporary file of a unique name
// (O_EXCL|O_NOFOLLOW). No destination is needed: the status is written
// while the forwarder tries to connect to a port nobody listens on.
TEST(ForwardStatus, NeverWrittenThroughAPlantedTempFile) {
  ASSERT_EQ(geteuid(), 0u) << "the test suite runs as root, to act as two users";
  for (bool as_link : {true, false}) {
    TempDir dir("logsink-fwd");
    NumberedRing ring(dir / "r.ring", 1 << 20);
    ring.Add(0);
    std::string status = dir / "cursor.status", planted = status + ".tmp", victim = dir / "victim";
    WriteFile(victim, "precious\n");
    if (as_link) {
      ASSERT_EQ(symlink(victim.c_str(), planted.c_str()), 0);
    } else {
      WriteFile(planted, "theirs\n");
      ASSERT_EQ(chown(planted.c_str(), 65534, 65534), 0);
    }
    Forwarder fwd(dir, {"--to", "relp://127.0.0.1:" + std::to_string(FreePort()), "--file",
                        ring.path(), "--cursor-file", dir / "cursor"});
    fwd.Start();
    ASSERT_TRUE(WaitUntil([&] {
      return ReadFile(status).find("\nlast_error=") != std::string::npos;
    })) << ReadFile(dir / "forward.log");
    struct stat st;
    ASSERT_EQ(lstat(status.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << "as_link " << as_link;
    EXPECT_EQ(st.st_uid, geteuid()) << "the status is the other user's file";
    // Some rewrites later (one a second).
    int64_t pid = StatusValue(dir / "cursor", "pid");
    EXPECT_GT(pid, 0);
    ASSERT_EQ(unlink(status.c_str()), 0);
    ASSERT_TRUE(WaitUntil([&] { return StatusValue(dir / "cursor", "pid") == pid; }))
        << ReadFile(dir / "forward.log");
    EXPECT_EQ(fwd.Stop(), 0);
    EXPECT_EQ(ReadFile(victim), "precious\n") << "as_link " << as_link;
    ASSERT_EQ(lstat(status.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << "as_link " << as_link;
    EXPECT_EQ(st.st_uid, geteuid()) << "the status is the other user's file";
    const bool still_there = lstat(planted.c_str(), &st) == 0;
    EXPECT_TRUE(still_there) << "the planted file was moved; as_link " << as_link;
    if (still_there) {
      EXPECT_EQ(S_ISLNK(st.st_mode), as_link);
      if (!as_link) {
        EXPECT_EQ(ReadFile(planted), "theirs\n");
      }
    }
  }
}

// systemd/rsyslog-receiver.conf, the receiving end README shows,
// works as written: only its port and its output directory are changed.
TEST(ForwardRelp, TheReceiverExampleWorksAsWritten) {
  TempDir dir("logsink-fwd");
  std::string conf = ReadFile(std::string(LOGSINK_SOURCE_DIR) + "/systemd/rsyslog-receiver.conf");
  RsyslogServer rs;
  const std::string port = std::to_string(rs.ChoosePort());
  auto replace = [&conf](const std::string &from, const std::string &to) {
    size_t at = conf.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    conf.replace(at, from.size(), to);
    EXPECT_EQ(conf.find(from), std::string::npos) << "once only: " << from;
  };
  replace("port=\"2514\"", "port=\"" + port + "\"");
  replace("/var/log/logsink/", dir / "received/");
  std::string err;
  ASSERT_TRUE(rs.StartWithConfig(dir.path(), conf, &err)) << err;
  NumberedRing ring(dir / "r.ring", 1 << 20);
  ring.Add(100);
  Forwarder fwd(dir, {"--to", "relp://127.0.0.1:" + port, "--file", ring.path(), "--cursor-file",
                      dir / "cursor"});
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") == 100; }))
      << ReadFile(dir / "forward.log");
  EXPECT_EQ(fwd.Stop(), 0);
  rs.Kill(SIGTERM);  // flushes its files
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  std::vector<std::string> lines =
      Lines(ReadFile(dir / ("received/" + std::string(host) + ".log")));
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(lines, &other);
  EXPECT_TRUE(other.empty()) << other.front();
  EXPECT_EQ(seen.size(), 100u);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("[logsink@32473 cursor=\""), std::string::npos) << lines[0];
}

// Whether a connect to ip:port is refused (nothing listens there), as
// opposed to accepted or left unanswered.
bool Refused(const char *ip, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  inet_pton(AF_INET, ip, &a.sin_addr);
  const int rc = connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
  const int e = errno;
  close(fd);
  return rc == -1 && e == ECONNREFUSED;
}

// Where nss_wrapper (Debian's libnss-wrapper) was found when the build was
// configured ("" = not installed: the tests that need it fail, saying so).
const std::string kNssWrapper = LOGSINK_NSS_WRAPPER;
const char *const kNoNssWrapper =
    "libnss_wrapper.so was not found when the build was configured: install libnss-wrapper "
    "(scripts/deps.sh) and configure again";

// The forwarder's environment for resolving names through `hosts` (a
// hosts file of the test's) with nss_wrapper.
std::function<void()> ResolveThrough(const std::string &hosts) {
  return [hosts] {
    setenv("LD_PRELOAD", kNssWrapper.c_str(), 1);
    setenv("NSS_WRAPPER_HOSTS", hosts.c_str(), 1);
    // For the sanitizer builds (the asan preset): nss_wrapper without deep
    // binding, and a preloaded library allowed ahead of the sanitizer's
    // runtime.
    setenv("NSS_WRAPPER_DISABLE_DEEPBIND", "1", 1);
    const char *asan = getenv("ASAN_OPTIONS");
    const std::string opts =
        (asan && *asan ? std::string(asan) + ":" : std::string()) + "verify_asan_link_order=0";
    setenv("ASAN_OPTIONS", opts.c_str(), 1);
  };
}

// A name that resolves to two addresses, the first of which refuses: a
// hosts file of the test's own, read through nss_wrapper, maps
// multi.logsink.test to 127.0.0.2 (nothing listens there) and then to
// 127.0.0.1 (rsyslogd). The forwarder moves on to the second address at
// once, every record arrives, and the status and the log name the address
// in use. Before, it tried only the first address, again and again, and
// shipped nothing.
TEST(ForwardRelp, EveryAddressOfTheNameIsTriedInOrder) {
  ASSERT_FALSE(kNssWrapper.empty()) << kNoNssWrapper;
  TempDir dir("logsink-fwd");
  RsyslogServer rs;
  std::string err;
  ASSERT_TRUE(rs.Start(dir.path(), &err)) << err;
  const std::string port = std::to_string(rs.port());
  // rsyslogd listens on 127.0.0.1 only.
  ASSERT_TRUE(Refused("127.0.0.2", rs.port())) << "127.0.0.2:" << port << " does not refuse";
  const std::string hosts = dir / "hosts";
  WriteFile(hosts, "127.0.0.2 multi.logsink.test\n127.0.0.1 multi.logsink.test\n");
  NumberedRing ring(dir / "r.ring", 1 << 20);
  ring.Add(100);
  Forwarder fwd(dir,
                {"--to", "relp://multi.logsink.test:" + port, "--file", ring.path(),
                 "--cursor-file", dir / "cursor"},
                ResolveThrough(hosts));
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") == 100; }))
      << ReadFile(dir / "forward.log");
  EXPECT_TRUE(WaitUntil([&] {
    return ReadFile(dir / "cursor.status").find("\naddress=127.0.0.1:" + port + "\n") !=
           std::string::npos;
  })) << ReadFile(dir / "cursor.status");
  const std::string log = ReadFile(dir / "forward.log");
  EXPECT_NE(log.find("RELP session open to relp://multi.logsink.test:" + port + " at 127.0.0.1:" +
                     port + " (failed: 127.0.0.2:" + port + ": connection refused)"),
            std::string::npos)
      << log;
  EXPECT_EQ(fwd.Stop(), 0);
  rs.Kill(SIGTERM);  // flushes its output file
  std::vector<std::string> lines = Lines(ReadFile(rs.output()));
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(lines, &other);
  EXPECT_TRUE(other.empty()) << other.front();
  EXPECT_EQ(seen.size(), 100u);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.begin()->first, 0);
  EXPECT_EQ(seen.rbegin()->first, 99);
}

// When every address of the name refuses, the attempt fails (and is tried
// again after the backoff): the status says that all of them failed, each
// with its error, in order, and that no address is in use.
TEST(ForwardRelp, AllAddressesOfTheNameFailingIsReported) {
  ASSERT_FALSE(kNssWrapper.empty()) << kNoNssWrapper;
  TempDir dir("logsink-fwd");
  const int p = FreePort();
  const std::string port = std::to_string(p);
  ASSERT_TRUE(Refused("127.0.0.3", p)) << "127.0.0.3:" << port << " does not refuse";
  ASSERT_TRUE(Refused("127.0.0.2", p)) << "127.0.0.2:" << port << " does not refuse";
  const std::string hosts = dir / "hosts";
  WriteFile(hosts, "127.0.0.3 multi.logsink.test\n127.0.0.2 multi.logsink.test\n");
  NumberedRing ring(dir / "r.ring", 1 << 20);
  ring.Add(10);
  Forwarder fwd(dir,
                {"--to", "relp://multi.logsink.test:" + port, "--file", ring.path(),
                 "--cursor-file", dir / "cursor"},
                ResolveThrough(hosts));
  fwd.Start();
  const std::string want = "\nlast_error=cannot connect to relp://multi.logsink.test:" + port +
                           ": all 2 addresses failed (127.0.0.3:" + port +
                           ": connection refused; 127.0.0.2:" + port + ": connection refused)\n";
  EXPECT_TRUE(WaitUntil([&] {
    const std::string st = ReadFile(dir / "cursor.status");
    return st.find(want) != std::string::npos &&
           st.find("\ndestination=disconnected\naddress=\n") != std::string::npos;
  })) << ReadFile(dir / "cursor.status");
  EXPECT_EQ(StatusValue(dir / "cursor", "acked"), 0);
  EXPECT_EQ(fwd.Stop(), 0);
}

// A listening TCP socket of the test's own on a free loopback port (*addr);
// -1 when it cannot be made.
int LoopbackListener(sockaddr_in *addr) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  *addr = sockaddr_in{};
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof *addr;
  if (bind(fd, reinterpret_cast<sockaddr *>(addr), sizeof *addr) != 0 || listen(fd, 8) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr *>(addr), &len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The forwarder's own RELP client: a receiver that refuses to open the
// session (here a listener of the test's that answers the open with 500,
// with a code that only starts with 200, or without syslog among its
// commands) is reported in the status, and nothing is acknowledged. Stopped
// then, the forwarder does not wait for acknowledgments that cannot come
// (no session is open, none is opened while stopping): it exits at once,
// not after its shutdown timeout (30 s here; before, it waited all of it),
// saying how many stay unacknowledged, and its cursor stays before them.
TEST(ForwardRelp, AReceiverThatRefusesTheSessionIsReported) {
  for (const std::string answer : {"500 nope", "2001 OK\nrelp_version=0\ncommands=syslog",
                                   "200 OK\nrelp_version=0\ncommands=syslogx,other"}) {
    SCOPED_TRACE(answer);
    TempDir dir("logsink-fwd");
    sockaddr_in addr{};
    const int lfd = LoopbackListener(&addr);
    ASSERT_GE(lfd, 0);
    std::atomic<bool> done{false};
    std::atomic<int> opens{0};
    std::thread receiver([&] {
      while (!done) {
        pollfd p{lfd, POLLIN, 0};
        if (poll(&p, 1, 50) != 1) continue;
        int c = accept(lfd, nullptr, nullptr);
        if (c < 0) continue;
        std::string got;
        char buf[4096];
        while (got.find('\n') == std::string::npos) {
          pollfd q{c, POLLIN, 0};
          if (poll(&q, 1, 2000) != 1) break;
          ssize_t n = read(c, buf, sizeof buf);
          if (n <= 0) break;
          got.append(buf, size_t(n));
        }
        if (got.rfind("1 open ", 0) == 0) {
          ++opens;
          const std::string no = "1 rsp " + std::to_string(answer.size()) + " " + answer + "\n";
          EXPECT_EQ(write(c, no.data(), no.size()), ssize_t(no.size()));
        }
        close(c);
      }
    });
    NumberedRing ring(dir / "r.ring", 1 << 20);
    ring.Add(10);
    Forwarder fwd(dir,
                  {"--to", "relp://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), "--file",
                   ring.path(), "--cursor-file", dir / "cursor", "--shutdown-timeout", "30s"});
    fwd.Start();
    const std::string first_line = answer.substr(0, answer.find('\n'));
    EXPECT_TRUE(WaitUntil([&] {
      return ReadFile(dir / "cursor.status")
                 .find("\nlast_error=the receiver refused to open a RELP session for syslog: " +
                       first_line + "\n") != std::string::npos;
    })) << ReadFile(dir / "cursor.status");
    EXPECT_TRUE(WaitUntil([&] { return opens >= 2; })) << "it tries again";
    EXPECT_EQ(StatusValue(dir / "cursor", "acked"), 0);
    // The first cursor write (with its fsyncs) is done: a stop waits for
    // a write in flight, and this test is not about the disk.
    EXPECT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") == 0; }));
    const auto stop_at = std::chrono::steady_clock::now();
    EXPECT_EQ(fwd.Stop(), 0);
    // A third of the shutdown timeout: not a speed bound (the exit takes
    // milliseconds), the mark of a drain that waited for nothing.
    const auto stop_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - stop_at)
                             .count();
    EXPECT_LT(stop_ms, 10000) << "the stop waited for acknowledgments that cannot come";
    const std::string log = ReadFile(dir / "forward.log");
    EXPECT_NE(log.find("no session with the destination, so 10 messages cannot be acknowledged"),
              std::string::npos)
        << log;
    EXPECT_EQ(log.find("shutdown timeout"), std::string::npos) << log;
    EXPECT_EQ(CursorNext(dir / "cursor"), 0) << "the unacknowledged records are not skipped";
    done = true;
    receiver.join();
    close(lfd);
  }
}

// A session that breaks while the forwarder stops ends the stop: without
// a session nothing more can be acknowledged, and none is opened while
// stopping. Here a listener of the test's opens the session, answers no
// syslog message, and closes the connection once the forwarder said it is
// stopping; the forwarder exits at once, not after its shutdown timeout
// (30 s; before, it opened a session again and waited all of it), its
// cursor before the 10 unacknowledged records.
TEST(ForwardRelp, ASessionLostWhileStoppingEndsTheStop) {
  TempDir dir("logsink-fwd");
  sockaddr_in addr{};
  const int lfd = LoopbackListener(&addr);
  ASSERT_GE(lfd, 0);
  std::atomic<bool> done{false}, hang_up{false};
  std::atomic<int> connections{0};
  std::thread receiver([&] {
    while (!done) {
      pollfd p{lfd, POLLIN, 0};
      if (poll(&p, 1, 50) != 1) continue;
      int c = accept(lfd, nullptr, nullptr);
      if (c < 0) continue;
      ++connections;
      std::string got;
      char buf[4096];
      bool answered = false;
      while (!done && !hang_up) {
        pollfd q{c, POLLIN, 0};
        if (poll(&q, 1, 50) != 1) continue;
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        got.append(buf, size_t(n));
        if (!answered && got.rfind("1 open ", 0) == 0 && got.find('\n') != std::string::npos) {
          answered = true;
          const std::string ok = "200 OK\nrelp_version=0\ncommands=syslog";
          const std::string rsp = "1 rsp " + std::to_string(ok.size()) + " " + ok + "\n";
          EXPECT_EQ(write(c, rsp.data(), rsp.size()), ssize_t(rsp.size()));
        }
      }
      close(c);
    }
  });
  NumberedRing ring(dir / "r.ring", 1 << 20);
  ring.Add(10);
  Forwarder fwd(dir, {"--to", "relp://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), "--file",
                      ring.path(), "--cursor-file", dir / "cursor", "--shutdown-timeout", "30s"});
  fwd.Start();
  EXPECT_TRUE(WaitUntil([&] {
    return StatusValue(dir / "cursor", "forwarded") == 10 &&
           ReadFile(dir / "cursor.status").find("\ndestination=connected\n") != std::string::npos;
  })) << ReadFile(dir / "cursor.status");
  // The first cursor write (with its fsyncs) is done: a stop waits for a
  // write in flight, and this test is not about the disk.
  EXPECT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") == 0; }));
  // The connection is closed once the forwarder is stopping.
  std::thread closer([&] {
    EXPECT_TRUE(WaitUntil([&] {
      return ReadFile(dir / "forward.log").find("stopping: waiting") != std::string::npos;
    }));
    hang_up = true;
  });
  const auto stop_at = std::chrono::steady_clock::now();
  EXPECT_EQ(fwd.Stop(), 0);
  const auto stop_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - stop_at)
                           .count();
  closer.join();
  // A third of the shutdown timeout: not a speed bound, the mark of a
  // drain that waited for nothing.
  EXPECT_LT(stop_ms, 10000) << "the stop waited for acknowledgments that cannot come";
  const std::string log = ReadFile(dir / "forward.log");
  EXPECT_NE(log.find("no session with the destination, so 10 messages cannot be acknowledged"),
            std::string::npos)
      << log;
  EXPECT_EQ(connections, 1) << "no session is opened while stopping";
  EXPECT_EQ(CursorNext(dir / "cursor"), 0) << "the unacknowledged records are not skipped";
  done = true;
  receiver.join();
  close(lfd);
}

// A message the receiver refuses every time (here a listener of the
// test's that answers 500 to the record "rec 3" and 200 to the others) is
// sent --refused-retries times more, then replaced by a notice naming its
// records, so that the records after it are shipped (before: it was sent
// again forever and nothing after it was acknowledged).
TEST(ForwardRelp, AMessageRefusedEveryTimeIsReplacedByANotice) {
  TempDir dir("logsink-fwd");
  sockaddr_in addr{};
  const int lfd = LoopbackListener(&addr);
  ASSERT_GE(lfd, 0);
  std::atomic<bool> done{false};
  std::atomic<int> refusals{0};
  std::mutex mu;
  std::vector<std::string> taken;  // the syslog messages answered 200
  std::thread receiver([&] {
    while (!done) {
      pollfd p{lfd, POLLIN, 0};
      if (poll(&p, 1, 50) != 1) continue;
      int c = accept(lfd, nullptr, nullptr);
      if (c < 0) continue;
      std::string in;
      char buf[4096];
      bool open = true;
      while (open && !done) {
        // One frame: TXNR SP COMMAND SP DATALEN [SP DATA] LF.
        size_t a = in.find(' '), b = a == std::string::npos ? a : in.find(' ', a + 1);
        size_t e = b == std::string::npos ? b : in.find_first_of(" \n", b + 1);
        if (e != std::string::npos) {
          const size_t n = std::stoul(in.substr(b + 1, e - b - 1));
          const size_t data_at = e + (n ? 1 : 0);
          if (in.size() >= data_at + n + 1) {
            const std::string txnr = in.substr(0, a), cmd = in.substr(a + 1, b - a - 1);
            const std::string data = in.substr(data_at, n);
            in.erase(0, data_at + n + 1);
            std::string answer = "200 OK";
            if (cmd == "open") {
              answer = "200 OK\nrelp_version=0\ncommands=syslog";
            } else if (cmd == "syslog" && data.find(" rec 3") != std::string::npos) {
              answer = "500 not this one";
              refusals++;
            } else if (cmd == "syslog") {
              std::lock_guard<std::mutex> lock(mu);
              taken.push_back(data);
            } else if (cmd == "close") {
              open = false;
            }
            const std::string out =
                txnr + " rsp " + std::to_string(answer.size()) + " " + answer + "\n";
            if (write(c, out.data(), out.size()) != ssize_t(out.size())) open = false;
            continue;
          }
        }
        pollfd q{c, POLLIN, 0};
        if (poll(&q, 1, 50) != 1) continue;
        ssize_t k = read(c, buf, sizeof buf);
        if (k <= 0) break;
        in.append(buf, size_t(k));
      }
      close(c);
    }
  });
  NumberedRing ring(dir / "r.ring", 1 << 20);
  ring.Add(6);
  Forwarder fwd(dir, {"--to", "relp://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), "--file",
                      ring.path(), "--cursor-file", dir / "cursor", "--refused-retries", "2"});
  fwd.Start();
  EXPECT_TRUE(WaitUntil([&] { return StatusValue(dir / "cursor", "acked") == 6; }))
      << ReadFile(dir / "cursor.status") << ReadFile(dir / "forward.log");
  EXPECT_EQ(StatusValue(dir / "cursor", "refused"), 1);
  EXPECT_EQ(refusals, 3) << "sent once and 2 times more";
  EXPECT_EQ(fwd.Stop(), 0);
  done = true;
  receiver.join();
  close(lfd);
  std::lock_guard<std::mutex> lock(mu);
  std::string all;
  for (const std::string &m : taken) all += m + "\n";
  for (int i : {0, 1, 2, 4, 5})
    EXPECT_NE(all.find(" rec " + std::to_string(i) + "\n"), std::string::npos) << i << ": " << all;
  EXPECT_NE(all.find("records 3..3 of " + ring.path() +
                     " left out: refused by the destination 3 times (refused by the receiver: "
                     "500 not this one)"),
            std::string::npos)
      << all;
  EXPECT_NE(ReadFile(dir / "forward.log").find("records 3..3 refused 3 times"), std::string::npos);
}

TEST(ForwardRelp, EveryRecordAtLeastOnceAcrossKillsDuplicatesBoundedByTheWindow) {
  TempDir dir("logsink-fwd");
  RsyslogServer rs;
  std::string err;
  ASSERT_TRUE(rs.Start(dir.path(), &err)) << err;
  NumberedRing ring(dir / "r.ring", 4 << 20);
  const int kWindow = 64;
  std::vector<std::string> args = {"--to",          "relp://127.0.0.1:" + std::to_string(rs.port()),
                                   "--file",        ring.path(),
                                   "--cursor-file", dir / "cursor",
                                   "--window",      std::to_string(kWindow)};
  Forwarder fwd(dir, args);
  ring.Add(3000);
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") >= 1000; }))
      << ReadFile(dir / "forward.log");
  fwd.Kill();
  ring.Add(3000);
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") >= 4000; }))
      << ReadFile(dir / "forward.log");
  rs.Kill(SIGKILL);
  ASSERT_TRUE(rs.Restart(&err)) << err;
  ring.Add(2000);
  const int64_t n = ring.count();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") == n; }, Ms(30000)))
      << ReadFile(dir / "forward.log");
  EXPECT_EQ(fwd.Stop(), 0) << ReadFile(dir / "forward.log");
  rs.Kill(SIGTERM);  // flushes its output file
  std::vector<std::string> lines = Lines(ReadFile(rs.output()));
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(lines, &other);
  EXPECT_TRUE(other.empty()) << other.front();
  ASSERT_EQ(int64_t(seen.size()), n);  // every record at least once
  int64_t dups = int64_t(lines.size()) - n;
  // One window when the forwarder was killed, one when rsyslogd was (resent).
  EXPECT_LE(dups, 2 * kWindow);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find(" fwdtest 4242 - [logsink@32473 cursor=\""), std::string::npos)
      << lines[0];
  std::printf(
      "[figures] relp: %lld records, forwarder and rsyslogd each SIGKILLed once: %zu "
      "lines received, every record at least once, %lld duplicates (bound %d)\n",
      (long long)n, lines.size(), (long long)dups, 2 * kWindow);
}

// The id's range of a batch: ls1-RING-FIRST-LAST, both in hexadecimal.
std::pair<uint64_t, uint64_t> IdRange(const std::string &id) {
  size_t d2 = id.rfind('-'), d1 = id.rfind('-', d2 - 1);
  return {std::stoull(id.substr(d1 + 1, d2 - d1 - 1), nullptr, 16),
          std::stoull(id.substr(d2 + 1), nullptr, 16)};
}

// The ring identity a cursor file names.
std::string CursorRing(const std::string &path) {
  std::string s = ReadFile(path);
  size_t sp2 = s.rfind(' '), sp1 = s.rfind(' ', sp2 - 1);
  return s.substr(sp1 + 1, sp2 - sp1 - 1);
}

void RewindCursor(const std::string &path, int64_t to) {
  std::string c = ReadFile(path);
  WriteFile(path, c.substr(0, c.rfind(' ')) + " " + std::to_string(to) + "\n");
}

// Review finding: reading the stream back went one stream sequence at a
// time down to sequence 1 or 100,000 requests, on the loop thread: here
// 120,000 messages of another writer were purged, so the stream begins past
// them, and the walk used to request each purged sequence (the budget's
// warning, tens of seconds). It stops where the stream begins now, or once
// it has read every message the stream holds on the subject.
TEST_F(ForwardNatsTest, ReadingBackStopsWhereTheStreamBegins) {
  JsCheck js(nats_.url());
  ASSERT_TRUE(js.AddStream("WIDE", "wide.>", 1));
  ASSERT_TRUE(js.PublishMany("wide.other", 120000));
  ASSERT_TRUE(js.Purge("WIDE"));
  ASSERT_EQ(js.Count("WIDE"), 0);
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args[3] = "wide.test";
  args.insert(args.end(), {"--batch", "50"});
  ring.Add(1000);
  {
    Forwarder fwd(dir_, args);
    ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 1000));
  }
  RewindCursor(dir_ / "cursor", 300);
  ring.Add(500);
  Forwarder fwd(dir_, args);
  ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 1500, Ms(120000)));
  const std::string log = ReadFile(dir_ / "forward.log");
  EXPECT_EQ(log.find("stopped reading the stream"), std::string::npos) << log;
  EXPECT_NE(log.find("the stream already holds records up to 999 (the cursor said 300): "
                     "resuming at 1000"),
            std::string::npos)
      << log;
  std::vector<std::string> other;
  std::map<int, int> seen = StreamRecords(js, "WIDE", &other);
  EXPECT_TRUE(other.empty());
  ASSERT_EQ(seen.size(), 1500u);
  EXPECT_TRUE(EachOnce(seen));
}

// Review finding: the walk back ran on the loop thread in one go, so a
// stream with many messages of another subject between the forwarder's own
// kept SIGTERM (and the watchdog) waiting until it was done. It runs in
// slices now and stops after a bounded time; what it did not see stored is
// sent again: duplicates, never gaps.
TEST_F(ForwardNatsTest, ReadingBackPastOtherSubjectsAnswersSigtermAndLeavesNoGap) {
  JsCheck js(nats_.url());
  ASSERT_TRUE(js.AddStream("WIDE", "wide.>", 1));
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args[3] = "wide.test";
  args.insert(args.end(), {"--batch", "50"});
  auto run_to = [&](int64_t n) {
    Forwarder fwd(dir_, args);
    fwd.Start();
    ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir_ / "cursor") == n; }, Ms(60000)))
        << ReadFile(dir_ / "forward.log");
    ASSERT_EQ(fwd.Stop(), 0);
  };
  ring.Add(1000);
  ASSERT_NO_FATAL_FAILURE(run_to(1000));
  ASSERT_TRUE(js.PublishMany("wide.other", 150000));
  ring.Add(500);
  ASSERT_NO_FATAL_FAILURE(run_to(1500));
  RewindCursor(dir_ / "cursor", 300);
  {
    WriteFile(dir_ / "forward.log", "");
    Forwarder fwd(dir_, args);
    fwd.Start();
    ASSERT_TRUE(WaitUntil([&] {
      return ReadFile(dir_ / "forward.log").find(" to nats://") != std::string::npos;
    })) << ReadFile(dir_ / "forward.log");
    EXPECT_EQ(fwd.Stop(), 0) << "SIGTERM not answered while reading the stream back";
  }
  WriteFile(dir_ / "forward.log", "");
  ASSERT_NO_FATAL_FAILURE(run_to(1500));
  const std::string log = ReadFile(dir_ / "forward.log");
  const bool stopped = log.find("stopped reading the stream WIDE backwards") != std::string::npos;
  std::vector<std::string> mine;
  ASSERT_TRUE(js.OnSubject("WIDE", "wide.test", &mine));
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(SplitBatches(mine), &other);
  EXPECT_TRUE(other.empty());
  ASSERT_EQ(seen.size(), 1500u) << log;  // no gap, whatever the walk found
  for (const auto &[i, times] : seen) {
    if (stopped)
      ASSERT_LE(times, 2) << "record " << i;
    else
      ASSERT_EQ(times, 1) << "record " << i << "\n" << log;
  }
  std::printf("[figures] reading back past 150000 messages of another subject: %s\n",
              stopped ? "stopped by the time bound (records sent again)" : "read to the end");
}

// Review finding: batches were checked against their size only after a
// record was appended, with a fixed 512 KiB, so a stream with a smaller
// max_msg_size refused every batch forever (the cursor never moved). Now a
// batch ends before the record that would take it past what the stream
// (or the server's max_payload) takes, and a record too big for any
// message goes as a notice line in its place.
TEST_F(ForwardNatsTest, BatchesFitTheStreamsMaxMsgSizeAndABigRecordBecomesANotice) {
  JsCheck js(nats_.url());
  ASSERT_TRUE(js.AddSmallStream("SMALL", "small.test", 4096));
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args[3] = "small.test";
  args.insert(args.end(), {"--batch", "100"});
  ring.Add(300);
  ring.AddBig(3300);  // ~3.8 KB as JSON: no 4 KiB message holds it with its headers
  ring.Add(300);
  const int64_t n = ring.count();
  Forwarder fwd(dir_, args);
  fwd.Start();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir_ / "cursor") == n; }))
      << ReadFile(dir_ / "forward.log");
  ASSERT_TRUE(WaitUntil([&] { return StatusValue(dir_ / "cursor", "oversize") == 1; }))
      << ReadFile(dir_ / "cursor.status");
  ASSERT_EQ(fwd.Stop(), 0);
  std::vector<std::string> bodies, ids, subjects;
  ASSERT_TRUE(js.AllPresent("SMALL", &bodies, &ids, &subjects));
  for (const std::string &b : bodies) EXPECT_LE(b.size(), 4096u);
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(SplitBatches(bodies), &other);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_NE(other[0].find("{\"oversize\":1,\"first_seq\":300,\"last_seq\":300,"), std::string::npos)
      << other[0];
  ASSERT_EQ(seen.size(), 600u);
  EXPECT_TRUE(EachOnce(seen));
}

// Review finding, one record per message: a record the stream refuses for
// its size (max_msg_size) was sent again forever. It goes as a notice now.
TEST_F(ForwardNatsTest, ARecordTheStreamRefusesAsTooBigBecomesANotice) {
  JsCheck js(nats_.url());
  ASSERT_TRUE(js.AddSmallStream("SMALL", "small.test", 2048));
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args[3] = "small.test";
  ring.Add(50);
  ring.AddBig(3000);
  ring.Add(50);
  const int64_t n = ring.count();
  Forwarder fwd(dir_, args);
  ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, n));
  ASSERT_EQ(js.Count("SMALL"), n);
  std::vector<std::string> bodies, ids, subjects;
  ASSERT_TRUE(js.AllPresent("SMALL", &bodies, &ids, &subjects));
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(bodies, &other);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_NE(other[0].find("{\"oversize\":1,\"first_seq\":50,\"last_seq\":50,"), std::string::npos)
      << other[0];
  EXPECT_EQ(seen.size(), 100u);
}

// Review finding: the batch size limit was a fixed 512 KiB, not what the
// server takes: with a smaller max_payload cnats refused every batch, and
// the forwarder tried again forever. The limit is the server's max_payload
// now (less room for the headers); a record bigger than that goes as a
// notice, with or without batches.
TEST(ForwardNatsMaxPayload, MessagesFitTheServersMaxPayload) {
  for (int batch : {100, 1}) {
    TempDir dir("logsink-fwd");
    NatsServer nats;
    NatsServerOptions o;
    o.dir = dir.path();
    o.name = "small";
    o.max_payload = 4096;
    std::string err;
    ASSERT_TRUE(nats.Start(o, &err)) << err;
    JsCheck js(nats.url());
    ASSERT_TRUE(js.ok());
    ASSERT_TRUE(js.AddStream("LOGS", "logs.test", 1));
    NumberedRing ring(dir / "r.ring", 1 << 20);
    std::vector<std::string> args = NatsArgs(ring, dir, nats.url());
    args.insert(args.end(), {"--batch", std::to_string(batch)});
    ring.Add(300);
    ring.AddBig(3300);  // ~3.8 KB as JSON: more than 4 KiB less the headers' room
    ring.Add(300);
    const int64_t n = ring.count();
    Forwarder fwd(dir, args);
    fwd.Start();
    ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir / "cursor") == n; }))
        << "--batch " << batch << "\n"
        << ReadFile(dir / "forward.log");
    ASSERT_EQ(fwd.Stop(), 0);
    std::vector<std::string> bodies, ids, subjects;
    ASSERT_TRUE(js.AllPresent("LOGS", &bodies, &ids, &subjects));
    std::vector<std::string> other;
    std::map<int, int> seen = Numbers(batch > 1 ? SplitBatches(bodies) : bodies, &other);
    ASSERT_EQ(other.size(), 1u) << "--batch " << batch;
    EXPECT_NE(other[0].find("{\"oversize\":1,\"first_seq\":300,\"last_seq\":300,"),
              std::string::npos)
        << other[0];
    ASSERT_EQ(seen.size(), 600u) << "--batch " << batch;
    EXPECT_TRUE(EachOnce(seen));
  }
}

// Review finding: with a subject template the "no responders" hint named
// the template (braces and all); it names the wildcard a stream needs.
TEST_F(ForwardNatsTest, TheNoStreamHintNamesATemplatesWildcard) {
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  ring.Add(10);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args[3] = "nostream.{app}.{level}";
  args.insert(args.end(), {"--ack-timeout", "200ms", "--shutdown-timeout", "100ms"});
  Forwarder fwd(dir_, args);
  fwd.Start();
  const std::string hint =
      "no JetStream stream captures the subject nostream.*.*: create one that does (nats stream "
      "add NAME --subjects 'nostream.*.*')";
  ASSERT_TRUE(WaitUntil([&] {
    return ReadFile(dir_ / "forward.log").find(hint) != std::string::npos;
  })) << ReadFile(dir_ / "forward.log");
  EXPECT_EQ(fwd.Stop(), 0);
}

// Review finding: any message on the subject carrying the ring's id was
// trusted, and only the range sorted last was checked against the ring: a
// foreign message claiming records 300..5,000,000 made a restarted
// forwarder skip everything after its cursor. Each range is checked now;
// an impossible one is ignored, with a log line.
TEST_F(ForwardNatsTest, AForeignRangeTheRingCannotHaveIsIgnored) {
  NumberedRing ring(dir_ / "r.ring", 1 << 20);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args.insert(args.end(), {"--batch", "50"});
  ring.Add(1000);
  {
    Forwarder fwd(dir_, args);
    ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 1000));
  }
  JsCheck js(nats_.url());
  ASSERT_TRUE(js.PublishWithHeaders("logs.test", "foreign\n",
                                    {{"Logsink-Ring", CursorRing(dir_ / "cursor")},
                                     {"Logsink-First-Seq", "300"},
                                     {"Logsink-Last-Seq", "5000000"},
                                     {"Logsink-Records", "1"}}));
  RewindCursor(dir_ / "cursor", 300);
  ring.Add(500);
  Forwarder fwd(dir_, args);
  ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 1500));
  const std::string log = ReadFile(dir_ / "forward.log");
  EXPECT_NE(log.find("claiming records 300..5000000 of this ring"), std::string::npos) << log;
  EXPECT_NE(log.find("resuming at 1000\n"), std::string::npos) << log;
  std::vector<std::string> other;
  std::map<int, int> seen = StreamRecords(js, "LOGS", &other);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0], "foreign");
  ASSERT_EQ(seen.size(), 1500u);
  EXPECT_TRUE(EachOnce(seen));
}

// Review finding: a lap while a stored range was being skipped counted the
// stored records as lost, in one notice. Now each piece of the gap that is
// not stored has its notice, and only those are counted.
TEST_F(ForwardNatsTest, ALapAcrossAStoredRangeCountsOnlyWhatIsNotStored) {
  NumberedRing ring(dir_ / "r.ring", 8192 + 4096 + 8 * 4096, LS_CODEC_NONE);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args.insert(args.end(), {"--batch", "50"});
  ring.Add(300);
  {
    Forwarder fwd(dir_, args);
    ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 300));
  }
  JsCheck js(nats_.url());
  std::vector<std::string> bodies, ids, subjects;
  ASSERT_TRUE(js.AllPresent("LOGS", &bodies, &ids, &subjects));
  ASSERT_GE(ids.size(), 3u);
  // The second message goes; the cursor goes back into its records: the
  // stream holds what follows them past a gap. (Not to its first record:
  // the lost notice for the gap would then have the deleted message's id,
  // which the stream still drops as a duplicate.)
  auto [first, gap_last] = IdRange(ids[1]);
  ASSERT_LT(gap_last, 299u) << ids[1];
  ASSERT_GT(gap_last, first + 10) << ids[1];
  const uint64_t gap_first = first + 10;
  ASSERT_TRUE(js.Delete("LOGS", 2));
  RewindCursor(dir_ / "cursor", int64_t(gap_first));
  ring.Add(20000);  // laps the 8-block ring many times
  const uint64_t oldest = ring.oldest_seq();
  ASSERT_GT(oldest, 300u);
  const uint64_t lost = (gap_last - gap_first + 1) + (oldest - 300);
  Forwarder fwd(dir_, args);
  fwd.Start();
  const int64_t n = ring.count();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir_ / "cursor") == n; }))
      << ReadFile(dir_ / "forward.log");
  ASSERT_TRUE(WaitUntil([&] { return StatusValue(dir_ / "cursor", "lost") >= 0; }));
  EXPECT_EQ(StatusValue(dir_ / "cursor", "lost"), int64_t(lost));
  ASSERT_EQ(fwd.Stop(), 0);
  bodies.clear(), ids.clear(), subjects.clear();
  ASSERT_TRUE(js.AllPresent("LOGS", &bodies, &ids, &subjects));
  std::vector<std::string> other;
  std::map<int, int> seen = Numbers(SplitBatches(bodies), &other);
  ASSERT_EQ(other.size(), 2u);
  if (other[0].find("\"first_seq\":300,") != std::string::npos) std::swap(other[0], other[1]);
  auto lost_line = [](uint64_t count, uint64_t first, uint64_t last) {
    return "{\"lost\":" + std::to_string(count) + ",\"first_seq\":" + std::to_string(first) +
           ",\"last_seq\":" + std::to_string(last) + ",";
  };
  EXPECT_NE(other[0].find(lost_line(gap_last - gap_first + 1, gap_first, gap_last)),
            std::string::npos)
      << other[0];
  EXPECT_NE(other[1].find(lost_line(oldest - 300, 300, oldest - 1)), std::string::npos) << other[1];
  EXPECT_TRUE(EachOnce(seen));
  // The deleted message's records before the cursor are not in the stream.
  EXPECT_EQ(int64_t(seen.size()), 300 - int64_t(gap_last - first + 1) + (n - int64_t(oldest)));
}

// Review findings: with a subject template the lost notice went to the
// template's wildcard (no subject to publish on); it has its own fields now
// (app logsink-forward, level warning). Its JSON escapes the ring's path.
TEST_F(ForwardNatsTest, ALostNoticeUnderATemplateHasASubjectOfItsOwn) {
  NumberedRing ring(dir_ / "r\"q\\.ring", 8192 + 4096 + 8 * 4096, LS_CODEC_NONE);
  std::vector<std::string> args = NatsArgs(ring, dir_, nats_.url());
  args[3] = "app.{host}.{app}.{level}";
  args.insert(args.end(), {"--create-stream", "ROUTED"});
  ring.Add(100);
  {
    Forwarder fwd(dir_, args);
    ASSERT_NO_FATAL_FAILURE(ForwardUntil(fwd, dir_, 100));
  }
  ring.Add(20000);
  const uint64_t oldest = ring.oldest_seq();
  ASSERT_GT(oldest, 100u);
  Forwarder fwd(dir_, args);
  fwd.Start();
  const int64_t n = ring.count();
  ASSERT_TRUE(WaitUntil([&] { return CursorNext(dir_ / "cursor") == n; }))
      << ReadFile(dir_ / "forward.log");
  ASSERT_EQ(fwd.Stop(), 0);
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  std::string h = host;
  for (char &ch : h)
    if (ch == '.' || ch == '*' || ch == '>' || ch == ' ') ch = '_';
  JsCheck js(nats_.url());
  std::vector<std::string> bodies, ids, subjects;
  ASSERT_TRUE(js.AllPresent("ROUTED", &bodies, &ids, &subjects));
  size_t notices = 0;
  for (size_t k = 0; k < bodies.size(); ++k) {
    if (bodies[k].find("{\"lost\":") != 0) continue;
    ++notices;
    EXPECT_EQ(subjects[k], "app." + h + ".logsink-forward.warning") << bodies[k];
    EXPECT_NE(bodies[k].find("overwritten in " + (dir_ / "r\\\"q\\\\.ring") + " before"),
              std::string::npos)
        << bodies[k];
  }
  EXPECT_EQ(notices, 1u);
  EXPECT_EQ(int64_t(bodies.size()), 100 + 1 + (n - int64_t(oldest)));
}

}  // namespace
}  // namespace logsink::test
