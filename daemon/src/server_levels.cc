// server_levels.cc: run-time levels (PROTOCOL.md, "Levels at run time"): a
// connection's LEVEL_REQ is answered, a change is recorded in the ring and
// pushed in LEVELS frames to every client whose rules text it changes (see
// server.h). The rules themselves are levels.h's.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "log_escape.h"
#include "logsink/proto/frame_encode.h"
#include "server_conn.h"
#include "text_record.h"

namespace logsink::daemon {
namespace {

// Appends what an encoder of at most `cap` bytes writes to *out (the caps
// below are upper bounds; a failure drops only that piece).
template <typename F>
bool Put(std::string *out, size_t cap, F encode) {
  const size_t start = out->size();
  out->resize(start + cap);
  const ptrdiff_t n = encode(reinterpret_cast<uint8_t *>(out->data() + start), cap);
  out->resize(n > 0 ? start + size_t(n) : start);
  return n > 0;
}

// The most of a client's own or pushed rules text an answer shows: a
// listing of every client stays bounded (a client may send 16 KiB).
std::string_view Shown(const std::string &s) {
  return std::string_view(s).substr(0, std::min<size_t>(s.size(), LS_LEVEL_TEXT_SHOWN));
}

// A client's app as answers carry it: at most LS_APP_MAX bytes, cut on a
// character (with [limits] max_app above 64 a label can be longer; a
// longer one made the client's entry fail to encode, and the answer with
// it).
std::string_view AnswerApp(std::string_view app) {
  return app.substr(
      0, ls_utf8_cut(reinterpret_cast<const uint8_t *>(app.data()), app.size(), LS_APP_MAX));
}

}  // namespace

void Server::AppendLevelAnswer(uint32_t status, std::string_view msg, std::string *out,
                               uint32_t caller) const {
  const size_t frame = out->size();
  msg = msg.substr(0, std::min<size_t>(msg.size(), LS_LEVEL_MESSAGE_MAX));
  // A user other than root sees what concerns their own programs: the
  // rules that may apply to them and their own clients.
  const auto shown_rule = [&](const LevelRule &r) {
    return caller == 0 || !(r.which & LS_LSEL_UID) || r.uid == caller;
  };
  const auto shown_client = [&](const Conn *c) {
    const Session &s = *c->session;
    return s.hello() && !s.text() && (caller == 0 || s.peer().uid == caller);
  };
  const size_t rules =
      size_t(std::count_if(levels_.rules().begin(), levels_.rules().end(), shown_rule));
  Put(out, LS_FRAME_HDR + 3 * LS_VARINT_MAX + msg.size(), [&](uint8_t *b, size_t cap) {
    return ls_level_answer_open(b, cap, status, msg.data(), msg.size(), rules);
  });
  for (const LevelRule &r : levels_.rules()) {
    if (!shown_rule(r)) continue;
    const ls_level_sel s = r.Sel();
    Put(out, 8 * LS_VARINT_MAX + 2 + r.app.size() + r.unit.size() + r.file.size(),
        [&](uint8_t *b, size_t cap) { return ls_level_sel_encode(b, cap, &s, 1); });
  }
  const size_t clients = size_t(std::count_if(conns_.begin(), conns_.end(), shown_client));
  Put(out, LS_VARINT_MAX,
      [&](uint8_t *b, size_t cap) { return ls_varint_encode(b, cap, clients); });
  for (const Conn *c : conns_) {
    if (!shown_client(c)) continue;
    const Session &s = *c->session;
    const LevelClient lc = s.level_client();
    const std::string_view own = Shown(s.own_levels()), pushed = Shown(s.pushed_levels());
    const std::string_view app = AnswerApp(lc.app);
    const ls_level_client w = {lc.pid,         lc.uid,         app.data(),   app.size(),
                               lc.unit.data(), lc.unit.size(), s.caps(),     own.data(),
                               own.size(),     pushed.data(),  pushed.size()};
    Put(out, 7 * LS_VARINT_MAX + app.size() + lc.unit.size() + own.size() + pushed.size(),
        [&](uint8_t *b, size_t cap) { return ls_level_client_encode(b, cap, &w); });
  }
  uint8_t *f = reinterpret_cast<uint8_t *>(out->data() + frame);
  (void)ls_frame_close(f, reinterpret_cast<uint8_t *>(out->data() + out->size()));
}

void Server::ServeLevelRequest(Conn *c) {
  Session &s = *c->session;
  const Session::LevelRequest req = *s.level_request();
  const uint32_t caller = s.peer().uid;
  std::string msg;
  int status = 0;
  if (req.op == LS_LEVEL_OP_SET)
    status = levels_.Set(req.rule, caller, WallClockNanos(), &msg);
  else if (req.op == LS_LEVEL_OP_RESET)
    status = levels_.Reset(req.rule, caller, &msg);
  counters_.level_requests++;
  if (status) {
    counters_.level_refused++;
    ctx_.log_limit.Log(kLogKindLevel, spdlog::level::warn,
                       "client pid {} uid {} comm '{}': level change refused: {}", s.peer().pid,
                       caller, LogEscape(s.peer().comm), msg);
  } else if (req.op != LS_LEVEL_OP_LIST) {
    ctx_.log_limit.Log(kLogKindLevel, spdlog::level::info, "{} (by uid {} pid {})", msg, caller,
                       s.peer().pid);
    s.RecordLevelChange(msg);
    PushLevels();
    // Where a rule changes nothing (no client matches), say so.
    msg += fmt::format("; {} client(s) connected now take levels", [&] {
      size_t n = 0;
      for (const Conn *k : conns_) n += (k->session->caps() & LS_CAP_LEVELS) != 0;
      return n;
    }());
  }
  AppendLevelAnswer(uint32_t(status), msg, &s.out(), caller);
  c->close_when_sent = true;
  if (!s.Charge()) {  // the answer would pass the caller's memory bound
    CloseConn(c);
    return;
  }
  SendOut(c);
}

void Server::ApplyConfigLevels() {
  std::vector<LevelRule> rules;
  std::string err;
  if (!LevelRules::ParseConfig(cfg_.level_rules, &rules, &err)) {  // checked before: a bug
    spdlog::error("{}; the rules in force are kept", err);
    return;
  }
  levels_.SetConfig(std::move(rules));
  PushLevels();
}

// One frame of at most kCensusAnswerMax bytes: the clients that do not
// fit are left out (the answer says how many it has).
constexpr size_t kCensusAnswerMax = 8u << 20;

void Server::ServeCensusRequest(Conn *c) {
  Session &s = *c->session;
  const uint32_t caller = s.peer().uid;
  std::string *out = &s.out();
  const size_t frame = out->size();
  Put(out, LS_FRAME_HDR,
      [](uint8_t *b, size_t cap) { return ls_frame_open(b, cap, LS_F_CENSUS_ANSWER); });
  // The count goes first: the clients are written after a placeholder of
  // LS_VARINT_MAX bytes, then moved back over its unused bytes.
  const size_t count_at = out->size();
  out->append(LS_VARINT_MAX, '\0');
  const size_t body_at = out->size();
  uint64_t clients = 0;
  for (const Conn *k : conns_) {
    const Session &t = *k->session;
    if (!t.hello() || !(t.caps() & LS_CAP_CENSUS) || (caller != 0 && t.peer().uid != caller))
      continue;
    const LevelClient lc = t.level_client();
    const std::string_view own = Shown(t.own_levels()), pushed = Shown(t.pushed_levels());
    const std::string_view app = AnswerApp(lc.app);
    const ls_census_client w = {lc.pid,         lc.uid,         app.data(), app.size(),
                                lc.unit.data(), lc.unit.size(), own.data(), own.size(),
                                pushed.data(),  pushed.size(),  {}};
    std::string head;
    Put(&head, 7 * LS_VARINT_MAX + app.size() + lc.unit.size() + own.size() + pushed.size(),
        [&](uint8_t *b, size_t cap) {
          return ls_census_client_encode(b, cap, &w, t.census_count());
        });
    if (out->size() - body_at + head.size() + t.census().size() > kCensusAnswerMax) continue;
    out->append(head);
    out->append(t.census());
    clients++;
  }
  uint8_t count[LS_VARINT_MAX];
  const size_t k = ls_put_varint(count, clients);
  std::memcpy(out->data() + count_at, count, k);
  out->erase(count_at + k, LS_VARINT_MAX - k);
  (void)ls_frame_close(reinterpret_cast<uint8_t *>(out->data() + frame),
                       reinterpret_cast<uint8_t *>(out->data() + out->size()));
  counters_.census_requests++;
  c->close_when_sent = true;
  if (!s.Charge()) {
    CloseConn(c);
    return;
  }
  SendOut(c);
}

// O(connections x rules) per change: changes are an operator's, rare; a
// rule set that changes nothing for a client sends it nothing.
void Server::PushLevels() {
  for (size_t i = conns_.size(); i-- > 0;) {  // SendOut may close (and remove) one
    Conn *c = conns_[i];
    if (c->closed || c->reader || c->ending || c->draining || !c->session->hello() ||
        !(c->session->caps() & LS_CAP_LEVELS))
      continue;  // also not to streams that ended
    if (!c->session->PushLevels(levels_.TextFor(c->session->level_client()))) continue;
    SendOut(c);
    // What the client left unread is charged to its uid's share, as any
    // reply is: a program that never reads cannot hold the daemon's memory
    // outside the bound with pushes (err_memory closes it).
    if (!c->closed && !c->session->Charge()) CloseConn(c);
  }
}

}  // namespace logsink::daemon
