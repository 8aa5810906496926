// syslog_parse.cc: see syslog_parse.h and daemon/SYSLOG.md.
#include "syslog_parse.h"

#include <cstring>

namespace logsink::daemon {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// RFC 5424 PRINTUSASCII: %d33-126.
bool IsPrint(char c) { return c >= 33 && c <= 126; }

// ---- RFC 3164 -------------------------------------------------------------

// "Mmm dd hh:mm:ss" with the day space-padded ("Nov  5") or not ("Nov 5",
// "Nov 05"). Returns its length, or 0.
size_t ParseBsdTimestamp(std::string_view s) {
  static const char kMonths[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  if (s.size() < 3) return 0;
  bool month = false;
  for (size_t m = 0; m < 12 && !month; m++) month = std::memcmp(s.data(), kMonths + 3 * m, 3) == 0;
  if (!month) return 0;
  size_t i = 3;
  if (i >= s.size() || s[i] != ' ') return 0;
  i++;
  if (i < s.size() && s[i] == ' ') i++;  // space-padded day
  size_t d0 = i;
  while (i < s.size() && i - d0 < 2 && IsDigit(s[i])) i++;
  if (i == d0) return 0;
  if (i >= s.size() || s[i] != ' ') return 0;
  i++;
  // hh:mm:ss
  if (s.size() - i < 8) return 0;
  for (size_t k = 0; k < 8; k++) {
    char c = s[i + k];
    if (k == 2 || k == 5 ? c != ':' : !IsDigit(c)) return 0;
  }
  return i + 8;
}

// "TAG: " or "TAG[PID]: " at the start of s (TAG: 1 or more bytes other than
// space, '[' and ':'). On success sets tag, pid and the length up to and
// including the colon and one space after it.
bool ParseTag(std::string_view s, std::string_view *tag, std::string_view *pid, size_t *len) {
  size_t i = 0;
  while (i < s.size() && s[i] != ' ' && s[i] != '[' && s[i] != ':') i++;
  if (i == 0 || i >= s.size()) return false;
  std::string_view t = s.substr(0, i), p;
  if (s[i] == '[') {
    size_t close = s.find(']', i + 1);
    size_t space = s.find(' ', i + 1);
    if (close == std::string_view::npos || (space != std::string_view::npos && space < close))
      return false;
    p = s.substr(i + 1, close - i - 1);
    i = close + 1;
  }
  if (i >= s.size() || s[i] != ':') return false;
  i++;
  if (i < s.size() && s[i] == ' ') i++;
  *tag = t;
  *pid = p;
  *len = i;
  return true;
}

// s: what follows the PRI. Fills m and returns true, or returns false.
bool Parse3164(std::string_view s, SyslogMessage *m) {
  size_t n = ParseBsdTimestamp(s);
  if (n == 0) return false;
  m->timestamp = s.substr(0, n);
  if (n < s.size() && s[n] != ' ') return false;
  s.remove_prefix(n);
  while (!s.empty() && s[0] == ' ') s.remove_prefix(1);
  size_t len;
  // The local form (glibc, logger to a local socket) has the tag first; a
  // first word that is not "TAG:"/"TAG[PID]:" is the hostname.
  if (ParseTag(s, &m->tag, &m->procid, &len)) {
    m->msg = s.substr(len);
    return true;
  }
  size_t sp = s.find(' ');
  m->hostname = s.substr(0, sp);
  s = sp == std::string_view::npos ? std::string_view() : s.substr(sp + 1);
  if (ParseTag(s, &m->tag, &m->procid, &len))
    m->msg = s.substr(len);
  else
    m->msg = s;  // no tag: all of it is the message
  return true;
}

// ---- RFC 5424 -------------------------------------------------------------

// One header field: 1..max PRINTUSASCII then a space; "-" is the nil value
// (an empty view). Advances *s past the space.
bool Field(std::string_view *s, size_t max, std::string_view *out) {
  size_t i = 0;
  while (i < s->size() && IsPrint((*s)[i])) i++;
  if (i == 0 || i > max || i >= s->size() || (*s)[i] != ' ') return false;
  *out = (i == 1 && (*s)[0] == '-') ? std::string_view() : s->substr(0, i);
  s->remove_prefix(i + 1);
  return true;
}

// TIMESTAMP: "-" or FULL-DATE "T" ..., checked as far as "YYYY-MM-DDT".
bool TimestampOk(std::string_view t) {
  if (t.empty()) return true;
  if (t.size() < 11) return false;
  for (size_t k = 0; k < 10; k++)
    if (k == 4 || k == 7 ? t[k] != '-' : !IsDigit(t[k])) return false;
  return t[10] == 'T';
}

// SD-NAME: 1..32 PRINTUSASCII except '=', ' ', ']', '"'. Returns its length.
size_t SdName(std::string_view s, size_t at) {
  size_t i = at;
  while (i < s.size() && i - at <= 32 && IsPrint(s[i]) && s[i] != '=' && s[i] != ']' && s[i] != '"')
    i++;
  size_t n = i - at;
  return n > 32 ? 0 : n;
}

// STRUCTURED-DATA at the start of s: "-" or 1 or more
// "[SD-ID *(SP PARAM-NAME=\"VALUE\")]". In a value, '\' escapes '"', '\' and
// ']' (any other '\' is itself). As rsyslog is, lenient about spaces after
// '=' (`iut= "3"`, which some appliances send); the element is kept as it
// came. Returns its length, or 0.
size_t ParseSd(std::string_view s) {
  if (s.empty()) return 0;
  if (s[0] == '-') return 1;
  size_t i = 0;
  while (i < s.size() && s[i] == '[') {
    i++;
    size_t n = SdName(s, i);
    if (n == 0) return 0;
    i += n;
    while (i < s.size() && s[i] == ' ') {
      i++;
      n = SdName(s, i);
      if (n == 0) return 0;
      i += n;
      if (i >= s.size() || s[i] != '=') return 0;
      i++;
      while (i < s.size() && s[i] == ' ') i++;
      if (i >= s.size() || s[i] != '"') return 0;
      i++;
      for (;;) {
        if (i >= s.size()) return 0;  // the value never ends (a cut datagram)
        if (s[i] == '\\' && i + 1 < s.size()) {
          i += 2;
          continue;
        }
        if (s[i] == '"') break;
        i++;
      }
      i++;  // the closing quote
    }
    if (i >= s.size() || s[i] != ']') return 0;
    i++;
  }
  return i;
}

// s: what follows "<PRI>". Fills m and returns true, or returns false.
bool Parse5424(std::string_view s, SyslogMessage *m) {
  if (s.size() < 2 || s[0] != '1' || s[1] != ' ') return false;
  s.remove_prefix(2);
  std::string_view ts;
  if (!Field(&s, 64, &ts) || !TimestampOk(ts)) return false;
  m->timestamp = ts;
  if (!Field(&s, 255, &m->hostname) || !Field(&s, 48, &m->tag) || !Field(&s, 128, &m->procid) ||
      !Field(&s, 32, &m->msgid))
    return false;
  size_t n = ParseSd(s);
  if (n == 0) return false;
  m->sd = s[0] == '-' ? std::string_view() : s.substr(0, n);
  s.remove_prefix(n);
  if (!s.empty()) {
    if (s[0] != ' ') return false;
    s.remove_prefix(1);
  }
  if (s.size() >= 3 && std::memcmp(s.data(), "\xef\xbb\xbf", 3) == 0) {
    m->bom = true;
    s.remove_prefix(3);
  }
  m->msg = s;
  return true;
}

}  // namespace

// The grammar of ParseSd, element by element: "[" SD-ID, then " NAME=\"V\""
// (spaces after '=' tolerated, as ParseSd does) until "]".
bool SdParams::Next(SdParam *out) {
  for (;;) {
    if (!in_element_) {
      if (i_ >= s_.size() || s_[i_] != '[') return false;
      const size_t n = SdName(s_, i_ + 1);
      if (n == 0) return false;
      id_ = s_.substr(i_ + 1, n);
      i_ += 1 + n;
      in_element_ = true;
    }
    if (i_ >= s_.size()) return false;
    if (s_[i_] == ']') {
      i_++;
      in_element_ = false;
      continue;
    }
    if (s_[i_] != ' ') return false;
    size_t i = i_ + 1;
    const size_t n = SdName(s_, i);
    if (n == 0) return false;
    const std::string_view name = s_.substr(i, n);
    i += n;
    if (i >= s_.size() || s_[i] != '=') return false;
    i++;
    while (i < s_.size() && s_[i] == ' ') i++;
    if (i >= s_.size() || s_[i] != '"') return false;
    const size_t start = ++i;
    for (;;) {
      if (i >= s_.size()) return false;
      if (s_[i] == '\\' && i + 1 < s_.size()) {
        i += 2;
        continue;
      }
      if (s_[i] == '"') break;
      i++;
    }
    out->id = id_;
    out->name = name;
    out->value = s_.substr(start, i - start);
    i_ = i + 1;
    return true;
  }
}

SyslogMessage ParseSyslog(std::string_view in) {
  SyslogMessage m;
  // Trailing newlines and NULs (some senders end a datagram with them) are
  // framing, not text; a malformed datagram keeps them.
  std::string_view body = in;
  while (!body.empty() && (body.back() == '\n' || body.back() == '\0')) body.remove_suffix(1);
  unsigned pri = 0;
  size_t n = ParsePri(body, &pri);
  if (n == 0) {
    m.bad = SyslogBad::kPri;
    m.msg = in;
    return m;
  }
  m.facility = uint8_t(pri >> 3);
  m.severity = uint8_t(pri & 7);
  std::string_view rest = body.substr(n);
  SyslogMessage parsed = m;
  bool numeric = !rest.empty() && IsDigit(rest[0]);
  if (numeric ? Parse5424(rest, &parsed) : Parse3164(rest, &parsed)) {
    parsed.form = numeric ? SyslogForm::kRfc5424 : SyslogForm::kRfc3164;
    return parsed;
  }
  m.bad = numeric ? SyslogBad::kRfc5424 : SyslogBad::kRfc3164;
  m.msg = in;
  return m;
}

}  // namespace logsink::daemon
