// session.cc: one connection's protocol handling: frame reassembly and
// dispatch, HELLO, INTERN, RECORDS (validate all, then append), DROPPED,
// STATS_REQ, RING_REQ, READ_REQ (see session.h).
#include "session.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "durability.h"
#include "inline_site.h"
#include "log_escape.h"
#include "logsink/proto/braces.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/fields.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/read.h"
#include "peer.h"
#include "reply.h"

namespace logsink::daemon {

constexpr uint64_t kMaxDroppedCount = 1ull << 40;
constexpr size_t kMaxUnreadReplies = 64u << 10;
// What a STATS answer still waiting for the writer thread counts as unread:
// a little more than a STATS frame holds (1,831 bytes with 96 counters and
// the error kinds), so a client that pipelines requests meets the bound at
// about the same count as without the thread.
constexpr size_t kStatsWaitBytes = 2u << 10;
// The most of a connection's census (CENSUS sites) the daemon keeps.
constexpr size_t kMaxCensusBytes = 1u << 20;

Session::Session(Context *ctx, const Limits &limits, Peer peer)
    : ctx_(ctx),
      limits_(limits),
      peer_(std::move(peer)),
      charge_(&ctx->memory, peer_.uid),
      shm_charge_(&ctx->shm_memory, peer_.uid) {
  source_.pid = peer_.pid;
  source_.uid = peer_.uid;
  source_.gid = peer_.gid;
  source_.comm = peer_.comm;
  source_.unit = peer_.unit;
}

// An estimate of the heap this session holds, by capacity, plus a fixed
// share for the connection's own structures (Conn, poll handle, Session).
uint64_t Session::Holding() const {
  constexpr uint64_t kFixed = 1024;
  return kFixed + sites_.Holding() + pending_.capacity() + out_.capacity() + app_.capacity() +
         own_levels_.capacity() + pushed_levels_.capacity() + census_.capacity() +
         (text_ ? text_->Holding() : 0);
}

bool Session::Account() {
  std::string why;
  if (charge_.Hold(Holding(), &why)) return true;
  Fail(Err::kMemory, why);
  return false;
}

void Session::Fail(Err e, std::string_view detail, bool closes) {
  ctx_->counters->Count(e);
  ctx_->log_limit.Log(int(e), spdlog::level::warn, "client pid {} uid {} comm '{}': {}: {}; {}",
                      peer_.pid, peer_.uid, LogEscape(peer_.comm), ErrShortName(e),
                      LogEscape(detail, 512), closes ? "connection closed" : "record refused");
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

bool Session::FeedText(const uint8_t *p, size_t n) {
  text_->Feed(p, n);
  return Account();
}

bool Session::Finish(bool stopping) { return text_ && text_->Finish(stopping); }

void Session::AppendTextAck() { text_->AppendAck(&out_); }

// A request (STATS_REQ, RING_REQ) has no payload, and is answered only
// while the client reads the replies: a connection that sends requests and
// never reads cannot make the daemon hold more than kMaxUnreadReplies plus
// one reply.
bool Session::TakeRequest(const char *name, bool well_formed) {
  if (!well_formed) {
    Fail(Err::kBadPayload, fmt::format("{} with a payload", name));
    return false;
  }
  const size_t unread = out_.size() + stats_wait_.size() * kStatsWaitBytes;
  if (unread >= kMaxUnreadReplies) {
    Fail(Err::kRepliesUnread, fmt::format("{} while {} bytes of replies are unread", name, unread));
    return false;
  }
  return true;
}

void Session::Sent(size_t n) {
  out_.erase(0, n);
  for (StatsWait &w : stats_wait_) w.at = w.at > n ? w.at - n : 0;
}

void Session::AnswerStats(uint64_t written) {
  if (stats_wait_.empty() || stats_wait_.front().mark > written) return;
  CountWriterErrors(ctx_);
  while (!stats_wait_.empty() && stats_wait_.front().mark <= written) {
    std::string frame;
    AppendStatsFrame(*ctx_->counters, *ctx_->writer, &frame);
    const size_t at = std::min(stats_wait_.front().at, out_.size());
    out_.insert(at, frame);
    stats_wait_.pop_front();
    for (StatsWait &w : stats_wait_) w.at += frame.size();
  }
}

bool Session::MayReadRing() const {
  if (peer_.uid == 0) return true;
  // The file the daemon writes, not whatever has taken its path since.
  struct stat st;
  if (stat(ctx_->ring_path.c_str(), &st) != 0 || uint64_t(st.st_dev) != ctx_->ring_dev ||
      uint64_t(st.st_ino) != ctx_->ring_ino)
    return false;
  return MayReadFile(peer_, uint32_t(st.st_uid), uint32_t(st.st_gid), uint32_t(st.st_mode));
}

bool Session::HandleFrame(const ls_frame &f) {
  ++frames_;
  if (read_req_) {  // a read's client sends nothing after READ_REQ (PROTOCOL.md)
    Fail(Err::kBadRead, fmt::format("frame type {:#04x} after READ_REQ", f.type));
    return false;
  }
  if (level_req_ || census_req_) {  // nor a level or census request's after it
    Fail(Err::kBadPayload, fmt::format("frame type {:#04x} after {}", f.type,
                                       level_req_ ? "LEVEL_REQ" : "CENSUS_REQ"));
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
    case LS_F_LEVEL_REQ: {  // before HELLO only, like READ_REQ
      ls_level_req r;
      if (hello_ || ls_level_req_decode(f.payload, f.len, &r) < 0) {
        Fail(Err::kBadPayload, hello_ ? "LEVEL_REQ after HELLO" : "malformed LEVEL_REQ");
        return false;
      }
      level_req_ = LevelRequest{r.op, LevelRule::From(r.rule)};
      return true;
    }
    case LS_F_CENSUS_REQ:  // before HELLO only, like LEVEL_REQ
      if (hello_ || f.len != 0) {
        Fail(Err::kBadPayload, hello_ ? "CENSUS_REQ after HELLO" : "CENSUS_REQ with a payload");
        return false;
      }
      census_req_ = true;
      return true;
    case LS_F_CENSUS:
      if (!hello_ || !(caps_ & LS_CAP_CENSUS)) {
        Fail(Err::kBadPayload, "CENSUS without the capability (HELLO version 2 and WELCOME)");
        return false;
      }
      return OnCensus(f.payload, f.len);
    case LS_F_STATS_REQ:  // allowed before HELLO (logctl stats)
      if (!TakeRequest("STATS_REQ", ls_stats_req_decode(f.payload, f.len) >= 0)) return false;
      if (!MayReadRing()) {
        const std::string reason = fmt::format(
            "uid {} may not read the ring file, and its counters tell about "
            "everyone's records",
            peer_.uid);
        AppendRefuseFrame(LS_PROTO_VERSION, reason, &out_);
        Fail(Err::kStatsRefused, "STATS_REQ: " + reason);
        return false;
      }
      ctx_->counters->stats_requests++;
      // Counting every record stored before the request: with the writer
      // thread, once it has appended them (AnswerStats; the loop goes on).
      if (ctx_->writer->io_lock()) {
        stats_wait_.push_back({out_.size(), ctx_->writer->Mark()});
        return true;
      }
      AppendStatsFrame(*ctx_->counters, *ctx_->writer, &out_);
      return true;
    case LS_F_RING_REQ:  // allowed before HELLO too (logctl finding the ring)
      if (!TakeRequest("RING_REQ", ls_ring_req_decode(f.payload, f.len) >= 0)) return false;
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
    case LS_F_RECORDS_AT:
    case LS_F_DROPPED:
      if (!hello_) {
        Fail(Err::kNoHello, fmt::format("frame type {:#04x} before HELLO", f.type));
        return false;
      }
      if (f.type == LS_F_INTERN) return OnIntern(f.payload, f.len);
      if (f.type == LS_F_RECORDS) return OnRecords(f.payload, f.len);
      if (f.type == LS_F_RECORDS_AT) return OnRecordsAt(f.payload, f.len);
      return OnDropped(f.payload, f.len);
    default:
      Fail(Err::kUnknownType, fmt::format("unknown frame type {:#04x}", f.type));
      return false;
  }
}

// A text stream's field list (PROTOCOL.md, "Text streams"): every name a
// field name that does not start with '_' (those are the daemon's own) and
// none twice, or the stream is refused with the reason (REFUSE), counted.
bool Session::TextStreamFields(const ls_hello &h,
                               std::vector<std::pair<std::string, std::string>> *out) {
  const uint8_t *p = h.fields, *end = h.fields + h.fields_len;
  uint64_t n = 0;
  p += ls_get_varint(p, end, &n);  // the decoder checked the list's shape
  std::string why;
  for (uint64_t i = 0; i < n && why.empty(); i++) {
    const char *k, *v;
    size_t kl, vl;
    if (ls_hello_field_next(&p, end, &k, &kl, &v, &vl) < 0) {
      why = "malformed field list";
      break;
    }
    const std::string_view name(k, kl);
    if (kl && k[0] == '_')
      why = fmt::format("field name '{}' starts with '_': such fields are the daemon's own",
                        LogEscape(name, 80));
    else if (!ls_field_name_ok(k, kl, 0))
      why = fmt::format("'{}' is not a field name", LogEscape(name, 80));
    for (const auto &e : *out)
      if (why.empty() && e.first == name)
        why = fmt::format("field name '{}' given twice", LogEscape(name, 80));
    out->emplace_back(name, std::string_view(v, vl));
  }
  if (why.empty()) return true;
  ctx_->counters->text_fields_refused++;
  AppendRefuseFrame(LS_PROTO_VERSION, "text stream refused: " + why, &out_);
  Fail(Err::kBadHello, why);
  return false;
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
  std::vector<std::pair<std::string, std::string>> fields;
  if ((h.flags & LS_HELLO_FIELDS) && !TextStreamFields(h, &fields)) return false;
  app_ = CutAppLabel(ctx_, std::string_view(h.app, h.app_len), limits_.max_app);
  hello_ = true;
  if (h.version >= 2) {
    // Version 2: capabilities, answered with those in use (PROTOCOL.md,
    // "Versions and capabilities"); levels are for frame connections.
    caps_ =
        (h.flags & LS_HELLO_TEXT)
            ? 0
            : h.caps & (LS_CAP_LEVELS | LS_CAP_CENSUS | LS_CAP_FIELDS | LS_CAP_BRACES | LS_CAP_SHM);
    own_levels_.assign(h.levels, h.levels_len);
    if (caps_ & LS_CAP_LEVELS) pushed_levels_ = ctx_->levels->TextFor(level_client());
    if ((caps_ & LS_CAP_SHM) && !MakeRegion()) caps_ &= ~LS_CAP_SHM;
    AppendWelcomeFrame(h.version, caps_, pushed_levels_, &out_);
    if (region_) AppendShmFrame(region_->geom(), &out_);
  }
  if (h.flags & LS_HELLO_TEXT) {
    text_.emplace(ctx_, &source_, h.flags);
    if (!fields.empty()) text_->SetFields(std::move(fields));
    ctx_->counters->text_streams++;
  }
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
  // Fields (PROTOCOL.md, "Fields"): only on a connection that took the
  // capability, never a trusted ('_') name.
  if (in.fields && !(caps_ & LS_CAP_FIELDS)) {
    Fail(Err::kBadIntern, fmt::format("site {}: FIELDS without the fields capability", in.site));
    return false;
  }
  if (in.fields && ls_fields_check(in.fmt, in.fmt_len, 0) < 0) {
    Fail(Err::kBadIntern,
         fmt::format("site {}: field list refused (a name, a conversion, a repeat or a '_' "
                     "name): \"{}\"",
                     in.site, std::string_view(in.fmt, std::min<size_t>(in.fmt_len, 120))));
    return false;
  }
  // Brace formats (PROTOCOL.md, "Brace formats"): only on a connection
  // that took the capability; their text parses, and a 0x1F in one starts
  // its field list (so it needs FIELDS).
  if (in.fmt_len && in.fmt[0] == LS_BRACES_MARK) {
    if (!(caps_ & LS_CAP_BRACES)) {
      Fail(Err::kBadIntern,
           fmt::format("site {}: a brace format without the braces capability", in.site));
      return false;
    }
    if (ls_braces_check(in.fmt, in.fmt_len) < 0 ||
        (!in.fields && memchr(in.fmt, LS_FIELDS_SEP, in.fmt_len))) {
      Fail(Err::kBadIntern, fmt::format("site {}: brace format refused: \"{}\"", in.site,
                                        LogEscape(std::string_view(in.fmt, in.fmt_len), 120)));
      return false;
    }
  }
  char sig[LS_FMT_MAX_ARGS + 1];
  int nargs = ls_fmt_signature(in.fmt, in.fmt_len, sig, sizeof sig);
  if (nargs < 0) {
    Fail(Err::kBadIntern, fmt::format("site {}: format refused ({}): \"{}\"", in.site,
                                      nargs == -E2BIG ? "too many arguments" : "malformed or %n",
                                      std::string_view(in.fmt, std::min<size_t>(in.fmt_len, 80))));
    return false;
  }
  if (sites_.size() >= limits_.max_sites) {
    Fail(Err::kBadIntern,
         fmt::format("more than max_sites_per_connection ({}) INTERN frames", limits_.max_sites));
    return false;
  }
  storage::Site site;
  site.level = in.level;
  site.flags = in.fields ? LS_ST_F_FIELDS : 0;
  site.line = in.line;
  site.fmt = std::string_view(in.fmt, in.fmt_len);
  site.file = std::string_view(in.file, in.file_len);
  // A site file that names a free-text kind ("kernel", "syslog:raw", ...)
  // makes readers take the site's line for a syslog facility and the record
  // for the kernel's or the daemon's own free text: only root may say so.
  std::string renamed;
  if (peer_.uid != 0 && IsTextKindFile(site.file)) {
    renamed = std::string(kForeignTextKindPrefix) + std::string(site.file);
    site.file = renamed;
    ctx_->counters->sites_renamed++;
  }
  const uint32_t global = ctx_->writer->Intern(site);
  if (global == 0) {  // the string table is full: records will carry the site inline
    const InlineFit fit = FitInlineSite(*ctx_->writer, source_, sig, size_t(nargs), &site);
    if (fit == InlineFit::kNever) {
      Fail(Err::kBadIntern,
           fmt::format("site {}: a {}-byte format cannot be stored: the string table is full "
                       "and a {}-byte block cannot hold it in each record",
                       in.site, site.fmt.size(), ctx_->writer->layout().block_size));
      return false;
    }
    if (fit == InlineFit::kCut) ctx_->counters->sites_cut++;
  }
  sites_.Add(in.site, global, site, sig, size_t(nargs));
  // Charged now, so that a frame of many INTERNs is stopped at the bound.
  return Account();
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
    const SiteCache::Entry *e = sites_.Lookup(r.site);
    if (!e) {
      Fail(Err::kUnknownSite, fmt::format("record names site {} that was not interned", r.site));
      return false;
    }
    const std::string_view sig = sites_.Signature(*e);
    if (ls_records_args(&it, sig.data(), &r) < 0) {
      Fail(Err::kBadRecord,
           fmt::format("record of site {} does not match its signature \"{}\"", r.site, sig));
      return false;
    }
    parsed.push_back(
        ParsedRecord{sites_.IndexOf(e), uint32_t(r.args_len), r.args, r.ts_ns, r.truncated});
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
    const SiteCache::Entry &e = sites_.At(pr.entry);
    in.site_id = e.global;
    if (e.global == 0) {
      inline_site = sites_.InlineSite(e);
      in.inline_site = &inline_site;
    } else {
      in.inline_site = nullptr;
    }
    in.signature = sites_.Signature(e);
    in.ts_ns = pr.ts_ns;
    in.args = pr.args;
    in.args_len = pr.args_len;
    in.truncated = pr.truncated;
    storage::Status s = ctx_->writer->Append(in);
    if (!s.ok()) WriteFailed(ctx_, s);
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
  if (!s.ok()) WriteFailed(ctx_, s);
  return true;
}

// The client's call sites, fired or not (PROTOCOL.md, "The census of call
// sites"): kept as sent, bounded by max_sites_per_connection and charged to
// the memory budget.
bool Session::OnCensus(const uint8_t *p, size_t n) {
  ls_census_iter it;
  ls_census_site s;
  int rc;
  if (ls_census_decode(p, n, &it) < 0) {
    Fail(Err::kBadPayload, "malformed CENSUS");
    return false;
  }
  const uint8_t *first = it.p;
  uint64_t count = 0;
  while ((rc = ls_census_next(&it, &s)) > 0) count++;
  if (rc < 0 || it.p != p + n) {
    Fail(Err::kBadPayload, "malformed CENSUS site");
    return false;
  }
  if (census_dropped_) return true;
  // The census is worth less than the connection: one that would pass
  // max_sites_per_connection sites, kMaxCensusBytes or the memory bound is
  // let go (counted), the client keeps logging.
  std::string why;
  census_.append(reinterpret_cast<const char *>(first), size_t(p + n - first));
  census_n_ += count;
  if (census_n_ > limits_.max_sites || census_.size() > kMaxCensusBytes ||
      !charge_.Hold(Holding(), &why)) {
    std::string().swap(census_);
    census_n_ = 0;
    census_dropped_ = true;
    ctx_->counters->census_dropped++;
  }
  return Account();
}

LevelClient Session::level_client() const {
  return LevelClient{source_.pid, peer_.uid, app_, peer_.unit};
}

bool Session::PushLevels(const std::string &text) {
  if (!(caps_ & LS_CAP_LEVELS) || text == pushed_levels_) return false;
  pushed_levels_ = text;
  AppendLevelsFrame(text, &out_);
  ctx_->counters->level_pushes++;
  return true;
}

void Session::RecordLevelChange(std::string_view what) {
  if (source_.id == 0) source_.id = ctx_->next_source_id++;
  if (app_.empty()) app_ = "logctl";
  source_.app = app_;
  const std::string msg =
      fmt::format("{} (by uid {} pid {} comm {})", what, peer_.uid, peer_.pid, Quoted(peer_.comm));
  TextFields f;
  f.msg = msg;
  // Facility daemon (3), level notice (5): a change an operator made.
  storage::Status s = ctx_->text->Append(source_, TextKind::kText, 3, 5, WallClockNanos(), f, 0);
  if (!s.ok()) WriteFailed(ctx_, s);
}

// Shared buffers (PROTOCOL.md, "Shared buffers"). A region is charged to
// its own budget (shm_max_memory, shm_max_memory_per_uid), not to the one
// of everyone's connection state: one that would pass it is not made, and
// the client stages in its own memory (WELCOME without SHM; counted).
bool Session::MakeRegion() {
  if (limits_.shm_slots == 0) return false;
  ls_shm_geom g{limits_.shm_slots, limits_.shm_slot_bytes, limits_.shm_sites_bytes};
  std::string why;
  const uint64_t bytes = ls_shm_region_bytes(g.slots, g.slot_bytes, g.sites_bytes);
  if (!shm_charge_.Hold(bytes, &why)) {
    ctx_->counters->shm_refused++;
    ctx_->log_limit.Log(int(Err::kMemory), spdlog::level::info,
                        "client pid {} uid {}: no shared buffers ({}); it stages records in "
                        "its own memory",
                        peer_.pid, peer_.uid, why);
    return false;
  }
  region_ = ShmRegion::Create(g, &why);
  if (!region_) {
    ctx_->counters->shm_refused++;
    ctx_->log_limit.Log(int(Err::kMemory), spdlog::level::warn,
                        "client pid {}: no shared buffers: {}", peer_.pid, why);
    shm_charge_.Hold(0, &why);
    return false;
  }
  sent_at_.assign(g.slots, 0);
  ctx_->counters->shm_regions++;
  return true;
}

bool Session::OnRecordsAt(const uint8_t *p, size_t n) {
  if (!region_) {
    Fail(Err::kBadPayload, "RECORDS_AT without shared buffers (the capability SHM)");
    return false;
  }
  uint64_t slot, end;
  const uint8_t *rec;
  size_t rec_len;
  if (ls_records_at_decode(p, n, &slot, &end, &rec, &rec_len) < 0) {
    Fail(Err::kBadPayload, "malformed RECORDS_AT");
    return false;
  }
  if (slot >= sent_at_.size()) {
    Fail(Err::kBadPayload, fmt::format("RECORDS_AT names slot {} of {}", slot, sent_at_.size()));
    return false;
  }
  if (end < sent_at_[slot]) {
    Fail(Err::kBadPayload,
         fmt::format("RECORDS_AT moves slot {} back from {} to {}", slot, sent_at_[slot], end));
    return false;
  }
  if (!OnRecords(rec, rec_len)) return false;
  sent_at_[slot] = end;
  return true;
}

// The site log: INTERN frames of sites the connection did not intern yet
// (a client killed between staging a new site's first record and sending
// its INTERN). One copy of it (sites_bytes at most), read about `budget`
// bytes per call like the slots; false once it is done.
bool Session::DrainLogStep(size_t *budget) {
  if (!log_loaded_) {
    log_loaded_ = true;
    const uint64_t len = region_->LogLen();
    if (len > region_->geom().sites_bytes) {
      ctx_->counters->shm_log_bad++;
      return false;
    }
    region_->CopyLog(len, &drain_copy_);
    drain_pos_ = 0;
  }
  const uint64_t start = drain_pos_, size = drain_copy_.size();
  while (drain_pos_ < size && drain_pos_ - start < *budget) {
    ls_frame f;
    const ptrdiff_t r =
        ls_frame_parse(drain_copy_.data() + drain_pos_, size - drain_pos_, limits_.max_frame, &f);
    ls_intern in;
    if (r <= 0 || f.type != LS_F_INTERN || ls_intern_decode(f.payload, f.len, &in) < 0 ||
        (!sites_.Lookup(in.site) && !OnIntern(f.payload, f.len))) {
      ctx_->counters->shm_log_bad++;
      drain_pos_ = size;  // the rest of it cannot be read
      break;
    }
    drain_pos_ += uint64_t(r);
  }
  *budget -= std::min<size_t>(*budget, drain_pos_ - start);
  return drain_pos_ < size;
}

bool Session::DrainSlotStep(size_t *budget) {
  const ls_shm_geom &g = region_->geom();
  if (!slot_loaded_) {
    // One look at the slot's head, then a copy of its data taken after
    // it: only the copy is parsed.
    drain_pos_ = sent_at_[drain_slot_];
    drain_head_ = region_->Head(drain_slot_);
    if (drain_head_ == drain_pos_) return false;
    if (drain_head_ < drain_pos_) {
      ctx_->counters->shm_head_backwards++;
      return false;
    }
    if (drain_head_ - drain_pos_ > g.slot_bytes) {
      ctx_->counters->shm_head_lapped++;
      return false;
    }
    drain_tid_ = region_->Tid(drain_slot_);
    region_->CopySlot(drain_slot_, &drain_copy_);
    slot_loaded_ = true;
  }
  // One RECORDS payload of the copied records, at most max_frame bytes,
  // validated and stored as one from the socket would be.
  std::vector<uint8_t> &payload = drain_frame_;
  payload.resize(limits_.max_frame);
  size_t at = size_t(ls_varint_encode(payload.data(), payload.size(), drain_tid_));
  uint64_t prev_ts = 0, n = 0;
  const uint64_t start = drain_pos_;
  int rc = 0;
  ls_record r{};
  while (drain_pos_ - start < *budget) {
    const uint64_t before = drain_pos_;
    rc = ls_shm_next(drain_copy_.data(), g.slot_bytes, &drain_pos_, drain_head_, &r);
    if (rc <= 0) break;
    if (r.site == 0 || r.site > LS_SITE_MAX) {  // the rest cannot be trusted either
      rc = -EBADMSG;
      break;
    }
    // A site neither sent nor in the log (the client's log was full): its
    // record alone is refused, not the frame it would share with others.
    if (!sites_.Lookup(r.site)) {
      Fail(Err::kUnknownSite,
           fmt::format("staged record names site {} that was not interned", r.site), false);
      continue;
    }
    const ptrdiff_t w = ls_record_encode(payload.data() + at, payload.size() - at, &r, &prev_ts);
    if (w < 0 && n > 0) {  // the next payload's first
      drain_pos_ = before;
      break;
    }
    if (w < 0) {  // no frame of max_frame could carry it: refused alone
      Fail(Err::kBadRecord,
           fmt::format("staged record of {} argument bytes does not fit "
                       "max_frame ({})",
                       r.args_len, limits_.max_frame),
           false);
      prev_ts = 0;
      continue;
    }
    at += size_t(w);
    n++;
  }
  *budget -= std::min<size_t>(*budget, drain_pos_ - start);
  if (n > 0 && OnRecords(payload.data(), at)) ctx_->counters->shm_records += n;
  if (rc > 0) return true;                 // more of this slot to read
  if (rc < 0) ctx_->counters->shm_torn++;  // the rest of it cannot be read
  slot_loaded_ = false;
  return false;
}

bool Session::ShmEnd() {
  bool staged = false;
  for (uint32_t i = 0; i < sent_at_.size() && !staged; i++)
    staged = region_->Head(i) != sent_at_[i];
  if (staged && region_->Released() == 0) return true;
  if (staged) ctx_->counters->shm_kept++;
  ReleaseRegion();
  return false;
}

void Session::ReleaseRegion() {
  region_.reset();
  std::string unused;
  shm_charge_.Hold(0, &unused);
  std::vector<uint8_t>().swap(drain_copy_);
  std::vector<uint8_t>().swap(drain_frame_);
}

bool Session::ShmDrain(size_t budget) {
  if (!shm_pending()) return true;
  if (!drain_started_) {
    drain_started_ = true;
    ctx_->counters->shm_drains++;
  }
  while (!log_done_ && budget > 0) log_done_ = !DrainLogStep(&budget);
  while (drain_slot_ < sent_at_.size() && budget > 0) {
    if (!DrainSlotStep(&budget)) drain_slot_++;
  }
  if (drain_slot_ < sent_at_.size()) return false;
  ReleaseRegion();
  return true;
}

}  // namespace logsink::daemon
