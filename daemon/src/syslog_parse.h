// syslog_parse.h: the parser of syslog datagrams (daemon/SYSLOG.md), pure:
// bytes in, views into those bytes out, no I/O and no allocation. Accepts
// RFC 5424 ("<PRI>1 TS HOST APP PROCID MSGID SD [MSG]") and RFC 3164 with or
// without a hostname (the local form glibc's syslog(3) and logger(1) send:
// "<PRI>Mmm dd hh:mm:ss TAG[PID]: MSG"); anything else is malformed and
// stored as it came.
#pragma once

#include <cstdint>
#include <string_view>

#include "logsink/proto/facility.h"

namespace logsink::daemon {

enum class SyslogForm : uint8_t { kRfc3164, kRfc5424, kMalformed };

// Why a datagram is malformed (one counter each).
enum class SyslogBad : uint8_t {
  kNone,
  kPri,      // no "<N>" with N in 0..191 (no leading zeros) at the start
  kRfc3164,  // a valid PRI, no "1 " after it, and no "Mmm dd hh:mm:ss " timestamp
  kRfc5424,  // "<N>1 " but the header or the structured data is broken
};

// The facility and severity of a datagram without a valid PRI: user.notice
// (RFC 3164, 4.3.3).
constexpr uint8_t kDefaultFacility = 1, kDefaultSeverity = 5;

// Every view points into the parsed input (or is empty). Fields a form does
// not have, and RFC 5424's nil value "-", are empty.
struct SyslogMessage {
  SyslogForm form = SyslogForm::kMalformed;
  SyslogBad bad = SyslogBad::kNone;
  uint8_t facility = kDefaultFacility;  // 0..23; from the PRI when it is valid
  uint8_t severity = kDefaultSeverity;  // 0..7
  std::string_view tag;                 // RFC 3164 TAG / RFC 5424 APP-NAME
  std::string_view procid;              // "[PID]" / PROCID: the sender's claim, data only
  std::string_view timestamp;           // as written
  std::string_view hostname;
  std::string_view msgid;  // RFC 5424
  std::string_view sd;     // RFC 5424 STRUCTURED-DATA, brackets included
  std::string_view msg;    // the text (malformed: the whole datagram)
  bool bom = false;        // RFC 5424: MSG began with a UTF-8 BOM (not part of msg)
};

// The PRI "<N>" at the start of s: proto/facility.h's ls_pri_parse, the
// one rule for syslog datagrams and text streams' prefixes.
inline size_t ParsePri(std::string_view s, unsigned *pri) {
  return ls_pri_parse(s.data(), s.size(), pri);
}

// One SD-PARAM of RFC 5424 STRUCTURED-DATA: its SD-ELEMENT's SD-ID, its
// PARAM-NAME and its PARAM-VALUE as written (RFC 5424's escapes of '"',
// '\\' and ']' still in it; text_fields.h undoes them). Views into the SD.
struct SdParam {
  std::string_view id, name, value;
};

// The SD-PARAMs of a STRUCTURED-DATA (SyslogMessage::sd, as ParseSyslog
// accepted it, or any bytes: bounded, never reads past them), in the order
// written, every element's in turn. Next returns false at the end or at the
// first byte that breaks the grammar; done() says which (true: all of it
// was read). Pure, like ParseSyslog.
class SdParams {
 public:
  explicit SdParams(std::string_view sd) : s_(sd) {}
  bool Next(SdParam *out);
  bool done() const { return i_ == s_.size() && !in_element_; }

 private:
  std::string_view s_;
  size_t i_ = 0;
  bool in_element_ = false;
  std::string_view id_;
};

// Parses one datagram. Never fails: a datagram that is neither form comes
// back as kMalformed with msg = all of it and the PRI's facility and
// severity when the PRI itself was valid.
SyslogMessage ParseSyslog(std::string_view in);

}  // namespace logsink::daemon
