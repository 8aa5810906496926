// cmd_level.cc: `logctl level`, levels at run time: lists the level rules
// the daemon pushes to its clients and the clients connected to it, or sets
// or removes one rule. One LEVEL_REQ on a connection of its own, answered by
// one LEVEL_ANSWER (PROTOCOL.md, "Levels at run time"); the daemon decides
// who may change what and says what it did, so logctl checks only what the
// protocol itself refuses (usage errors, before anything is sent).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "daemon_stats.h"
#include "logsink/proto/facility.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/frame_encode.h"
#include "logsink/proto/level_rules.h"
#include "logsink/render/escape.h"
#include "logsink/render/timefmt.h"
#include "out.h"
#include "read_setup.h"

namespace logsink::logctl {
namespace {

// The answer can list every connection with two rules texts of up to
// 16 KiB each, and is read whole: the protocol's limit is the bound, and a
// few seconds leave a busy daemon's loop time to answer.
constexpr int kTimeoutMs = 5000;

// LEVEL_ANSWER, decoded and copied out of the frame.
struct Rule {
  uint8_t which = 0;
  std::string app, unit, file;
  uint32_t pid = 0, uid = 0, line = 0;
  int level = 0;  // -1 (off) .. 7
  uint32_t by_uid = 0;
  uint64_t at_ns = 0;  // 0: a rule of the daemon's configuration
};
struct Client {
  uint32_t pid = 0, uid = 0, caps = 0;
  std::string app, unit, own, pushed;
};
struct Answer {
  uint32_t status = 0;
  std::string message;
  std::vector<Rule> rules;
  std::vector<Client> clients;
};

// The request for o's rule (LIST: an empty one). Returns its bytes.
size_t EncodeRequest(const LevelArgs &l, uint8_t *buf, size_t cap) {
  ls_level_req r{};
  r.op = l.op == LevelArgs::Op::kSet     ? LS_LEVEL_OP_SET
         : l.op == LevelArgs::Op::kReset ? LS_LEVEL_OP_RESET
                                         : LS_LEVEL_OP_LIST;
  ls_level_sel &s = r.rule;
  if (l.app) s.which |= LS_LSEL_APP, s.app = l.app->data(), s.app_len = l.app->size();
  if (l.pid) s.which |= LS_LSEL_PID, s.pid = *l.pid;
  if (l.unit) s.which |= LS_LSEL_UNIT, s.unit = l.unit->data(), s.unit_len = l.unit->size();
  if (l.uid) s.which |= LS_LSEL_UID, s.uid = *l.uid;
  if (l.file) {
    s.which |= LS_LSEL_SITE;
    s.file = l.file->data();
    s.file_len = l.file->size();
    s.line = l.line;
  }
  s.level = l.op == LevelArgs::Op::kSet ? l.level : 0;
  const ptrdiff_t n = ls_level_req_encode(buf, cap, &r);
  return n > 0 ? size_t(n) : 0;  // options.cc checked every bound the encoder checks
}

// Decodes the whole answer; false when any of it is malformed.
bool Decode(const std::string &payload, Answer *out) {
  ls_level_answer a{};
  if (ls_level_answer_begin(reinterpret_cast<const uint8_t *>(payload.data()), payload.size(), &a) <
      0)
    return false;
  out->status = a.status;
  out->message.assign(a.message, a.message_len);
  ls_level_sel s{};
  int rc;
  while ((rc = ls_level_answer_rule(&a, &s)) == 1) {
    Rule r;
    r.which = s.which;
    r.app.assign(s.app, s.app_len);
    r.unit.assign(s.unit, s.unit_len);
    r.file.assign(s.file, s.file_len);
    r.pid = s.pid;
    r.uid = s.uid;
    r.line = s.line;
    r.level = s.level;
    r.by_uid = s.by_uid;
    r.at_ns = s.at_ns;
    out->rules.push_back(std::move(r));
  }
  if (rc < 0) return false;
  ls_level_client c{};
  while ((rc = ls_level_answer_client(&a, &c)) == 1) {
    Client k;
    k.pid = c.pid;
    k.uid = c.uid;
    k.caps = c.caps;
    k.app.assign(c.app, c.app_len);
    k.unit.assign(c.unit, c.unit_len);
    k.own.assign(c.own, c.own_len);
    k.pushed.assign(c.pushed, c.pushed_len);
    out->clients.push_back(std::move(k));
  }
  return rc == 0;
}

// The default level the client produces at, computed as it computes it:
// its own rules, then the pushed ones, whose bare level replaces its own
// default. Unknown (nullopt) for a client that takes no pushed levels and
// said nothing of its own (a version 1 client does not say), or a text
// that does not parse.
std::optional<int> DefaultLevel(const Client &c) {
  const bool pushable = (c.caps & LS_CAP_LEVELS) != 0;
  if (!pushable && c.own.empty()) return std::nullopt;
  if (c.own.find('\0') != std::string::npos || c.pushed.find('\0') != std::string::npos)
    return std::nullopt;
  ls_level_rules rules;
  char err[256];
  if (ls_level_rules_parse(c.own.c_str(), LS_LEVEL_MAX, &rules, err, sizeof err) < 0)
    return std::nullopt;
  if (!pushable) return rules.level;
  const int own = rules.level;
  if (ls_level_rules_parse(c.pushed.c_str(), own, &rules, err, sizeof err) < 0) return std::nullopt;
  return rules.level;
}

// FILE or FILE:LINE.
std::string SiteText(const Rule &r) {
  return r.line ? r.file + ":" + std::to_string(r.line) : r.file;
}

// The clients a rule applies to, as the options that set it: "app=web
// uid=1000"; "*" for every client.
std::string SelectorText(const Rule &r) {
  std::string t;
  auto add = [&t](const char *name, const std::string &v) {
    if (!t.empty()) t += ' ';
    t += name;
    t += '=';
    render::AppendTerminalSafe(&t, v);
  };
  if (r.which & LS_LSEL_APP) add("app", r.app);
  if (r.which & LS_LSEL_PID) add("pid", std::to_string(r.pid));
  if (r.which & LS_LSEL_UNIT) add("unit", r.unit);
  if (r.which & LS_LSEL_UID) add("uid", std::to_string(r.uid));
  return t.empty() ? "*" : t;
}

// Appends s (already terminal-safe) padded with spaces to width, then two
// spaces.
void Column(std::string *b, const std::string &s, size_t width) {
  b->append(s);
  b->append(s.size() < width ? width - s.size() : 0, ' ');
  b->append("  ");
}

std::string Safe(const std::string &s) {
  std::string t;
  render::AppendTerminalSafe(&t, s);
  return t;
}

void AppendText(const Answer &a, std::string *b) {
  render::TimeFormatter tf;
  if (a.rules.empty()) {
    b->append("No run-time level rules: every client logs at its own levels.\n");
  } else {
    fmt::format_to(std::back_inserter(*b), "{:<7}  {:<28}  {:<24}  {:<10}  {}\n", "LEVEL",
                   "CLIENTS", "SITE", "SET BY", "SET AT");
    for (const Rule &r : a.rules) {
      Column(b, ls_level_rules_name(r.level), 7);
      Column(b, SelectorText(r), 28);
      Column(b, r.which & LS_LSEL_SITE ? Safe(SiteText(r)) : "*", 24);
      if (r.at_ns == 0) {
        Column(b, "config", 10);
        b->append("-");
      } else {
        Column(b, "uid " + std::to_string(r.by_uid), 10);
        tf.AppendHuman(r.at_ns, b);
      }
      b->push_back('\n');
    }
  }
  b->push_back('\n');
  if (a.clients.empty()) {
    b->append("No clients connected.\n");
    return;
  }
  fmt::format_to(std::back_inserter(*b), "{:<8}  {:<6}  {:<16}  {:<24}  {:<7}  {:<20}  {}\n", "PID",
                 "UID", "APP", "UNIT", "DEFAULT", "OWN RULES", "PUSHED RULES");
  for (const Client &c : a.clients) {
    const std::optional<int> level = DefaultLevel(c);
    Column(b, std::to_string(c.pid), 8);
    Column(b, std::to_string(c.uid), 6);
    Column(b, c.app.empty() ? "-" : Safe(c.app), 16);
    Column(b, c.unit.empty() ? "-" : Safe(c.unit), 24);
    Column(b, level ? ls_level_rules_name(*level) : "?", 7);
    Column(b, c.own.empty() ? "-" : Safe(c.own), 20);
    if (!(c.caps & LS_CAP_LEVELS))
      b->append("(cannot take levels)");
    else
      b->append(c.pushed.empty() ? "-" : Safe(c.pushed));
    b->push_back('\n');
  }
}

// One JSON object: {"rules":[...],"clients":[...]}; a rule's absent
// selectors and a configuration rule's set_at are left out.
void AppendJson(const Answer &a, std::string *b) {
  auto it = std::back_inserter(*b);
  render::TimeFormatter tf;
  b->append("{\"rules\":[");
  for (size_t i = 0; i < a.rules.size(); i++) {
    const Rule &r = a.rules[i];
    b->append(i ? ",{" : "{");
    if (r.which & LS_LSEL_APP) {
      b->append("\"app\":");
      render::AppendJsonString(b, r.app);
      b->push_back(',');
    }
    if (r.which & LS_LSEL_PID) fmt::format_to(it, "\"pid\":{},", r.pid);
    if (r.which & LS_LSEL_UNIT) {
      b->append("\"unit\":");
      render::AppendJsonString(b, r.unit);
      b->push_back(',');
    }
    if (r.which & LS_LSEL_UID) fmt::format_to(it, "\"uid\":{},", r.uid);
    if (r.which & LS_LSEL_SITE) {
      b->append("\"site\":");
      render::AppendJsonString(b, SiteText(r));
      b->push_back(',');
    }
    fmt::format_to(it, "\"level\":\"{}\",\"set_by_uid\":{}", ls_level_rules_name(r.level),
                   r.by_uid);
    if (r.at_ns) {
      b->append(",\"set_at\":\"");
      tf.AppendRfc3339(r.at_ns, b);
      b->push_back('"');
    }
    b->push_back('}');
  }
  b->append("],\"clients\":[");
  for (size_t i = 0; i < a.clients.size(); i++) {
    const Client &c = a.clients[i];
    fmt::format_to(it, "{}{{\"pid\":{},\"uid\":{},\"app\":", i ? "," : "", c.pid, c.uid);
    render::AppendJsonString(b, c.app);
    b->append(",\"unit\":");
    render::AppendJsonString(b, c.unit);
    fmt::format_to(it,
                   ",\"levels_pushable\":{},\"own\":", (c.caps & LS_CAP_LEVELS) ? "true" : "false");
    render::AppendJsonString(b, c.own);
    b->append(",\"pushed\":");
    render::AppendJsonString(b, c.pushed);
    if (const std::optional<int> level = DefaultLevel(c))
      fmt::format_to(it, ",\"effective_level\":\"{}\"", ls_level_rules_name(*level));
    b->push_back('}');
  }
  b->append("]}\n");
}

// Sends the request and decodes the answer. kExitOk, or kExitError after
// the reason was printed (no daemon, no answer, a malformed one).
int Ask(const Options &o, Answer *a) {
  std::string socket;
  if (!SocketPath(o.socket, &socket)) return kExitError;
  uint8_t req[1024];
  const size_t n = EncodeRequest(o.level, req, sizeof req);
  if (n == 0) {
    Error("level", "the rule cannot be encoded");
    return kExitError;
  }
  std::string payload, why;
  const int rc =
      QueryDaemonFrame(socket, kTimeoutMs, req, n, LS_F_LEVEL_ANSWER, LS_FRAME_MAX, &payload, &why);
  if (rc == -ENOENT || rc == -ECONNREFUSED) {
    Error("level", "the daemon is not running (socket " + Safe(socket) + ")");
    return kExitError;
  }
  if (rc < 0) {
    Error("level", Safe(why) + " (socket " + Safe(socket) + ")");
    return kExitError;
  }
  if (!Decode(payload, a)) {
    Error("level", "the daemon's answer is malformed (socket " + Safe(socket) + ")");
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

int RunLevel(Options &o) {
  Answer a;
  if (int rc = Ask(o, &a)) return rc;
  if (a.status != 0) {  // refused: the daemon says why
    Error("level", a.message.empty() ? std::strerror(int(a.status)) : Safe(a.message));
    return kExitError;
  }
  Out out(STDOUT_FILENO);
  std::string *b = out.buf();
  if (o.level.op != LevelArgs::Op::kList) {
    b->append(!a.message.empty()                  ? Safe(a.message)
              : o.level.op == LevelArgs::Op::kSet ? "rule set"
                                                  : "rule removed");
    b->push_back('\n');
  } else if (o.json) {
    AppendJson(a, b);
  } else {
    AppendText(a, b);
  }
  return FinishOutput(&out, "stdout");
}

}  // namespace logsink::logctl
