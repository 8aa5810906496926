// session.cc: one connection's protocol handling: frame reassembly, HELLO,
// INTERN (signature cache), RECORDS (validate all, then append), DROPPED,
// STATS_REQ, RING_REQ, and the lines of a text stream.
#include "session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "log_escape.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/read.h"
#include "peer.h"
#include "reply.h"

namespace logsink::daemon {

constexpr uint64_t kMaxDroppedCount = 1ull << 40;
constexpr size_t kMaxUnreadReplies = 64u << 10;

Session::Session(Context *ctx, const Limits &limits, Peer peer)
    : ctx_(ctx), limits_(limits), peer_(std::move(peer)) {
  source_.pid = peer_.pid;
  source_.uid = peer_.uid;
  source_.gid = peer_.gid;
  source_.comm = peer_.comm;
  source_.unit = peer_.unit;
}

Session::~Session() {
  if (charged_) ctx_->memory.Release(peer_.uid, charged_);
}

// An estimate of the heap this session holds, by capacity, plus a fixed
// share for the connection's own structures (Conn, poll handle, Session).
uint64_t Session::Holding() const {
  constexpr uint64_t kFixed = 1024;
  return kFixed + index_.capacity() * sizeof(uint32_t) + sparse_.size() * 48 +
         entries_.capacity() * sizeof(SiteEntry) + sigs_.capacity() +
         inline_.capacity() * sizeof(std::string) + inline_bytes_ + pending_.capacity() +
         out_.capacity() + app_.capacity() + line_.capacity();
}

bool Session::Account() {
  uint64_t now = Holding();
  if (now <= charged_) {
    ctx_->memory.Release(peer_.uid, charged_ - now);
    charged_ = now;
    return true;
  }
  if (!ctx_->memory.Charge(peer_.uid, now - charged_)) {
    Fail(Err::kMemory,
         fmt::format("its state would hold {} bytes, past max_memory ({}) or max_memory_per_uid "
                     "({}; uid {} holds {})",
                     now, ctx_->memory.limit, ctx_->memory.per_uid_limit, peer_.uid,
                     ctx_->memory.by_uid.count(peer_.uid) ? ctx_->memory.by_uid[peer_.uid] : 0));
    return false;
  }
  charged_ = now;
  return true;
}

void Session::Fail(Err e, std::string_view detail) {
  ctx_->counters->Count(e);
  ctx_->log_limit.Log(int(e), spdlog::level::warn,
                      "client pid {} uid {} comm '{}': {}: {}; connection closed", peer_.pid,
                      peer_.uid, LogEscape(peer_.comm), ErrShortName(e), LogEscape(detail, 512));
}

void Session::WriteFailed(const storage::Status &s) {
  ctx_->counters->write_errors++;
  ctx_->log_limit.Log(kLogKindWrite, spdlog::level::err, "ring write failed: {}", s.message());
}

bool Session::Feed(const uint8_t *p, size_t n, uint64_t now_ms) {
  ls_frame f;
  if (text_) return FeedText(p, n);
  if (!pending_.empty()) {
    // Complete the frame started by an earlier read: copy only its bytes.
    if (pending_.size() < 4) {
      size_t take = std::min<size_t>(4 - pending_.size(), n);
      pending_.insert(pending_.end(), p, p + take);
      p += take;
      n -= take;
    }
    ptrdiff_t r = 0;
    if (pending_.size() >= 4) {
      r = ls_frame_parse(pending_.data(), pending_.size(), limits_.max_frame, &f);
      if (r == 0) {
        size_t total = 4 + size_t(ls_get_u32(pending_.data()));
        size_t take = std::min(total - pending_.size(), n);
        pending_.insert(pending_.end(), p, p + take);
        p += take;
        n -= take;
        r = ls_frame_parse(pending_.data(), pending_.size(), limits_.max_frame, &f);
      }
    }
    if (r < 0) {
      Fail(Err::kBadLength, fmt::format("frame length {} (max_frame {})",
                                        ls_get_u32(pending_.data()), limits_.max_frame));
      return false;
    }
    if (r == 0) return Account();  // n == 0: everything went into pending_
    bool ok = HandleFrame(f);
    pending_.clear();
    if (pending_.capacity() > (64u << 10)) std::vector<uint8_t>().swap(pending_);
    partial_since_ms_ = 0;
    if (!ok) return false;
    if (text_) return FeedText(p, n);
  }
  while (n > 0) {
    ptrdiff_t r = ls_frame_parse(p, n, limits_.max_frame, &f);
    if (r < 0) {
      Fail(Err::kBadLength,
           fmt::format("frame length {} (max_frame {})", ls_get_u32(p), limits_.max_frame));
      return false;
    }
    if (r == 0) {
      pending_.assign(p, p + n);
      partial_since_ms_ = now_ms;
      return Account();
    }
    if (!HandleFrame(f)) return false;
    p += r;
    n -= size_t(r);
    if (text_) return FeedText(p, n);  // the rest of the connection is text
  }
  return Account();
}

// ---- text streams ------------------------------------------------------------

bool Session::FeedText(const uint8_t *p, size_t n) {
  while (n > 0) {
    const uint8_t *nl = static_cast<const uint8_t *>(memchr(p, '\n', n));
    size_t len = nl ? size_t(nl - p) : n;
    size_t keep = std::min(len, kMaxTextLine - line_.size());
    line_.append(reinterpret_cast<const char *>(p), keep);
    line_cut_ += len - keep;
    if (!nl) break;
    EndLine();
    p = nl + 1;
    n -= len + 1;
  }
  return Account();
}

// Parses a leading "<N>" (N 0..191, decimal, at most 3 digits); returns the
// prefix's length, or 0 when the line has none.
static size_t PrioPrefix(std::string_view line, unsigned *prio) {
  if (line.size() < 3 || line[0] != '<') return 0;
  unsigned v = 0;
  size_t i = 1;
  for (; i < line.size() && i <= 3 && line[i] >= '0' && line[i] <= '9'; i++)
    v = v * 10 + unsigned(line[i] - '0');
  if (i == 1 || i >= line.size() || line[i] != '>' || v > 191) return 0;
  *prio = v;
  return i + 1;
}

void Session::EndLine() {
  if (line_cut_) {  // cut at kMaxTextLine: whole characters only
    const size_t keep =
        ls_utf8_trim_partial(reinterpret_cast<const uint8_t *>(line_.data()), line_.size());
    line_cut_ += line_.size() - keep;
    line_.resize(keep);
  }
  unsigned level = text_flags_ >> LS_HELLO_LEVEL_SHIFT & 7u;
  unsigned facility = text_flags_ >> LS_HELLO_FACILITY_SHIFT & 31u;
  std::string_view msg = line_;
  unsigned prio;
  size_t k;
  if ((text_flags_ & LS_HELLO_PRIO_PREFIX) && (k = PrioPrefix(msg, &prio)) > 0) {
    msg.remove_prefix(k);
    level = prio & 7u;
    if (prio >= 8) facility = prio >> 3;
  }
  static constexpr TextKind kStream[] = {TextKind::kText, TextKind::kStdout, TextKind::kStderr};
  TextKind kind = kStream[text_flags_ >> LS_HELLO_STREAM_SHIFT & 3u];
  TextFields f;
  f.msg = msg;
  storage::Status s = ctx_->text->Append(source_, kind, uint8_t(facility), uint8_t(level),
                                         WallClockNanos(), f, line_cut_);
  if (s.ok()) {  // the acknowledgment counts only lines that are in the ring
    ctx_->counters->text_lines++;
    lines_++;
    if (line_cut_) {
      ctx_->counters->text_lines_cut++;
      lines_cut_++;
    }
  } else {
    WriteFailed(s);
  }
  line_.clear();
  line_cut_ = 0;
}

bool Session::Finish(bool stopping) {
  if (!text_ || (line_.empty() && line_cut_ == 0)) return false;
  if (stopping && (text_flags_ & LS_HELLO_RELAY)) {
    spdlog::debug("source {}: unfinished line of {} bytes left to its relay", source_.id,
                  line_.size() + line_cut_);
    line_.clear();
    line_cut_ = 0;
    return false;
  }
  uint64_t stored = lines_;
  EndLine();
  if (lines_ == stored) return false;
  ctx_->counters->text_partial_lines++;
  partial_lines_++;
  return true;
}

void Session::AppendTextAck() {
  AppendCountersFrame(
      [&](const CounterFn &f) {
        f("lines", lines_);
        f("lines_cut", lines_cut_);
        f("partial_lines", partial_lines_);
      },
      &out_);
}

bool Session::HandleFrame(const ls_frame &f) {
  ++frames_;
  if (read_req_) {  // a read's client sends nothing after READ_REQ (PROTOCOL.md)
    Fail(Err::kBadRead, fmt::format("frame type {:#04x} after READ_REQ", f.type));
    return false;
  }
  switch (f.type) {
    case LS_F_READ_REQ: {  // before HELLO only: a writing connection never turns reader
      ls_read_req r;
      if (hello_ || ls_read_req_decode(f.payload, f.len, &r) < 0) {
        Fail(Err::kBadRead, hello_ ? "READ_REQ after HELLO" : "malformed READ_REQ");
        return false;
      }
      read_req_ = r;
      return true;
    }
    case LS_F_STATS_REQ:  // allowed before HELLO (logctl stats)
      if (ls_stats_req_decode(f.payload, f.len) < 0) {
        Fail(Err::kBadPayload, "STATS_REQ with a payload");
        return false;
      }
      // Replies are built only while the client reads them: a connection
      // that sends STATS_REQ and never reads cannot make the daemon hold more
      // than this plus one reply.
      if (out_.size() >= kMaxUnreadReplies) {
        Fail(Err::kRepliesUnread,
             fmt::format("STATS_REQ while {} bytes of replies are unread", out_.size()));
        return false;
      }
      ctx_->counters->stats_requests++;
      AppendStatsFrame(*ctx_->counters, *ctx_->writer, &out_);
      return true;
    case LS_F_RING_REQ:  // allowed before HELLO too (logctl finding the ring)
      if (ls_ring_req_decode(f.payload, f.len) < 0) {
        Fail(Err::kBadPayload, "RING_REQ with a payload");
        return false;
      }
      if (out_.size() >= kMaxUnreadReplies) {
        Fail(Err::kRepliesUnread,
             fmt::format("RING_REQ while {} bytes of replies are unread", out_.size()));
        return false;
      }
      ctx_->counters->ring_requests++;
      AppendRingFrame(ctx_->writer->layout().ring_id, ctx_->ring_dev, ctx_->ring_ino,
                      ctx_->ring_path, &out_);
      return true;
    case LS_F_HELLO:
      if (hello_) {
        Fail(Err::kNoHello, "second HELLO");
        return false;
      }
      return OnHello(f.payload, f.len);
    case LS_F_INTERN:
    case LS_F_RECORDS:
    case LS_F_DROPPED:
      if (!hello_) {
        Fail(Err::kNoHello, fmt::format("frame type {:#04x} before HELLO", f.type));
        return false;
      }
      if (f.type == LS_F_INTERN) return OnIntern(f.payload, f.len);
      if (f.type == LS_F_RECORDS) return OnRecords(f.payload, f.len);
      return OnDropped(f.payload, f.len);
    default:
      Fail(Err::kUnknownType, fmt::format("unknown frame type {:#04x}", f.type));
      return false;
  }
}

bool Session::OnHello(const uint8_t *p, size_t n) {
  ls_hello h;
  int rc = ls_hello_decode(p, n, &h);
  if (rc == -EPROTONOSUPPORT) {
    std::string reason =
        fmt::format("protocol version {} is not supported; this logsinkd speaks {}", h.version,
                    LS_PROTO_VERSION);
    AppendRefuseFrame(LS_PROTO_VERSION, reason, &out_);
    Fail(Err::kBadVersion, reason);
    return false;
  }
  if (rc < 0) {
    Fail(Err::kBadHello, "malformed HELLO");
    return false;
  }
  size_t len = h.app_len;
  if (len > limits_.max_app) {  // whole characters only
    len = ls_utf8_cut(reinterpret_cast<const uint8_t *>(h.app), h.app_len, limits_.max_app);
    ctx_->counters->app_truncated++;
  }
  app_.assign(h.app, len);
  hello_ = true;
  text_ = (h.flags & LS_HELLO_TEXT) != 0;
  text_flags_ = h.flags;
  if (text_) ctx_->counters->text_streams++;
  if (h.flags & LS_HELLO_RELAY) {
    // The lines are the output of the sender's child h.pid: they carry its
    // pid only when the kernel's view agrees (same uid, parent = the sender),
    // else the sender's own (PROTOCOL.md, "Relayed streams").
    if (IsChildOf(h.pid, peer_.pid, peer_.uid)) {
      ctx_->counters->relay_streams++;
      source_.pid = h.pid;
      relay_comm_ = ReadComm(h.pid);
      if (!relay_comm_.empty()) source_.comm = relay_comm_;
    } else {
      ctx_->counters->relay_pid_refused++;
      ctx_->log_limit.Log(kLogKindRelay, spdlog::level::warn,
                          "client pid {} uid {} comm '{}': relays pid {}, which is not its "
                          "child of the same uid: its lines carry pid {}",
                          peer_.pid, peer_.uid, LogEscape(peer_.comm), h.pid, peer_.pid);
    }
  }
  // A text stream that asks is told at once that it was accepted (a
  // refused connection gets REFUSE instead: Server::AcceptAll).
  if (text_ && (h.flags & LS_HELLO_CONFIRM))
    AppendCountersFrame([](const CounterFn &f) { f("accepted", 1); }, &out_);
  source_.id = ctx_->next_source_id++;
  source_.app = app_;
  spdlog::debug("source {}: pid {} uid {} gid {} comm '{}' app '{}'", source_.id, source_.pid,
                peer_.uid, peer_.gid, LogEscape(source_.comm), LogEscape(app_));
  return true;
}

bool Session::OnIntern(const uint8_t *p, size_t n) {
  ls_intern in;
  if (ls_intern_decode(p, n, &in) < 0) {
    Fail(Err::kBadIntern, "malformed INTERN (site, level, line or lengths out of range)");
    return false;
  }
  char sig[LS_FMT_MAX_ARGS + 1];
  int nargs = ls_fmt_signature(in.fmt, in.fmt_len, sig, sizeof sig);
  if (nargs < 0) {
    Fail(Err::kBadIntern, fmt::format("site {}: format refused ({}): \"{}\"", in.site,
                                      nargs == -E2BIG ? "too many arguments" : "malformed or %n",
                                      std::string_view(in.fmt, std::min<size_t>(in.fmt_len, 80))));
    return false;
  }
  if (entries_.size() >= limits_.max_sites) {
    Fail(Err::kBadIntern,
         fmt::format("more than max_sites_per_connection ({}) INTERN frames", limits_.max_sites));
    return false;
  }
  SiteEntry e;
  e.site.level = in.level;
  e.site.line = in.line;
  storage::Site full = e.site;
  full.fmt = std::string_view(in.fmt, in.fmt_len);
  full.file = std::string_view(in.file, in.file_len);
  e.global = ctx_->writer->Intern(full);
  if (e.global == 0 && !InlineSiteFits(in.site, sig, size_t(nargs), &full)) return false;
  if (e.global == 0) {  // string table full: records carry the site inline
    e.inline_idx = uint32_t(inline_.size());
    inline_.emplace_back(full.fmt);
    inline_.emplace_back(full.file);
    inline_bytes_ += full.fmt.size() + full.file.size();
  }
  e.sig_off = uint32_t(sigs_.size());
  e.sig_len = uint32_t(nargs);
  sigs_.append(sig, size_t(nargs) + 1);
  entries_.push_back(e);
  if (in.site < kDenseSites) {
    if (in.site >= index_.size()) index_.resize(size_t(in.site) + 1, 0);
    index_[in.site] = uint32_t(entries_.size());
  } else {
    sparse_[in.site] = uint32_t(entries_.size());
  }
  // Charged now, so that a frame of many INTERNs is stopped at the bound.
  return Account();
}

// The string table is full, so records of this site would carry it inline:
// a site too large for a block that way could never be stored. Its file name
// is cut until it fits (FORMAT.md: the file name is only shown); a format
// string that cannot fit even so is refused here, never accepted and lost.
bool Session::InlineSiteFits(uint64_t site_id, const char *sig, size_t nargs, storage::Site *site) {
  size_t floor = 0;  // the arguments with every string cut to nothing
  for (size_t i = 0; i < nargs; i++) floor += sig[i] == LS_ARG_STR ? 1 : LS_VARINT_MAX;
  const storage::RingWriter &w = *ctx_->writer;
  if (w.InlineSiteFits(source_, *site, floor)) return true;
  storage::Site cut = *site;
  cut.file = {};
  if (!w.InlineSiteFits(source_, cut, floor)) {
    Fail(Err::kBadIntern,
         fmt::format("site {}: a {}-byte format cannot be stored: the string table is full "
                     "and a {}-byte block cannot hold it in each record",
                     site_id, site->fmt.size(), w.layout().block_size));
    return false;
  }
  size_t lo = 0, hi = site->file.size();  // the longest file name that fits
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2;
    cut.file = site->file.substr(0, mid);
    if (w.InlineSiteFits(source_, cut, floor))
      lo = mid;
    else
      hi = mid - 1;
  }
  lo = ls_utf8_cut(reinterpret_cast<const uint8_t *>(site->file.data()), site->file.size(), lo);
  site->file = site->file.substr(0, lo);
  ctx_->counters->sites_cut++;
  return true;
}

bool Session::OnRecords(const uint8_t *p, size_t n) {
  ls_records it;
  ls_record r;
  int rc;
  if (ls_records_begin(p, n, &it) < 0) {
    Fail(Err::kBadRecord, "RECORDS without a thread id");
    return false;
  }
  // Pass 1: validate the whole frame (a frame is all or nothing), keeping
  // what pass 2 needs so nothing is decoded twice.
  std::vector<ParsedRecord> &parsed = ctx_->scratch;
  parsed.clear();
  while ((rc = ls_records_next(&it, &r)) > 0) {
    const SiteEntry *e = Lookup(r.site);
    if (!e) {
      Fail(Err::kUnknownSite, fmt::format("record names site {} that was not interned", r.site));
      return false;
    }
    if (ls_records_args(&it, sigs_.data() + e->sig_off, &r) < 0) {
      Fail(Err::kBadRecord,
           fmt::format("record of site {} does not match its signature \"{}\"", r.site,
                       std::string_view(sigs_.data() + e->sig_off, e->sig_len)));
      return false;
    }
    parsed.push_back(ParsedRecord{uint32_t(e - entries_.data()), uint32_t(r.args_len), r.args,
                                  r.ts_ns, r.truncated});
  }
  if (rc < 0) {
    Fail(Err::kBadRecord, "malformed record header");
    return false;
  }
  // Pass 2: append.
  storage::RecordIn in;
  in.source = &source_;
  in.tid = it.tid;
  storage::Site inline_site;
  for (const ParsedRecord &pr : parsed) {
    const SiteEntry *e = &entries_[pr.entry];
    in.site_id = e->global;
    if (e->global == 0) {
      inline_site = e->site;
      inline_site.fmt = inline_[e->inline_idx];
      inline_site.file = inline_[e->inline_idx + 1];
      in.inline_site = &inline_site;
    } else {
      in.inline_site = nullptr;
    }
    in.signature = std::string_view(sigs_.data() + e->sig_off, e->sig_len);
    in.ts_ns = pr.ts_ns;
    in.args = pr.args;
    in.args_len = pr.args_len;
    in.truncated = pr.truncated;
    storage::Status s = ctx_->writer->Append(in);
    if (!s.ok()) WriteFailed(s);
  }
  return true;
}

bool Session::OnDropped(const uint8_t *p, size_t n) {
  ls_dropped d;
  if (ls_dropped_decode(p, n, &d) < 0) {
    Fail(Err::kBadPayload, "malformed DROPPED");
    return false;
  }
  // A client reports what it dropped since its last report: zero is not a
  // report, and more than 2^40 (an hour at 300 M records/s) is not a count.
  if (d.count == 0 || d.count > kMaxDroppedCount) {
    Fail(Err::kBadPayload, fmt::format("DROPPED count {} out of range (1..2^40)", d.count));
    return false;
  }
  ctx_->counters->dropped_reported += d.count;
  storage::Status s = ctx_->writer->AppendDropped(source_, d.now_ns, d.count, d.since_ns);
  if (!s.ok()) WriteFailed(s);
  return true;
}

}  // namespace logsink::daemon
