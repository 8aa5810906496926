// syslog_parse.h: the parser of syslog datagrams (daemon/SYSLOG.md), pure:
// bytes in, views into those bytes out, no I/O and no allocation. Accepts
// RFC 5424 ("<PRI>1 TS HOST APP PROCID MSGID SD [MSG]") and RFC 3164 with or
// without a hostname (the local form glibc's syslog(3) and logger(1) send:
// "<PRI>Mmm dd hh:mm:ss TAG[PID]: MSG"); anything else is malformed and
// stored as it came.
#pragma once

#include <cstdint>
#include <string_view>

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

// The PRI "<N>" at the start of s, the daemon's one rule for it: syslog
// datagrams (SYSLOG.md, "PRI") and text streams' prefixes (PROTOCOL.md, "Text
// streams", PRIO_PREFIX) both use this function. N is 1 to 3 decimal digits
// without a leading zero ("<0>" is zero; "<03>" and "<003>" are not PRIs),
// at most 191. Returns the prefix's length with *pri = N, or 0 (and *pri
// untouched) when s does not start with one.
//
// Why no leading zeros: RFC 5424 (6.2.1) says "leading 0s MUST NOT be used",
// so "<N>" has one spelling per value; RFC 3164 (4.1.1) only bounds the PRI
// part to 3 to 5 characters, which this keeps. systemd's stream prefixes (SyslogLevelPrefix=)
// also take "<03>" and "<003>", but only as a level (0..7) and only because
// its parser reads fixed positions; what programs write is sd-daemon(3)'s
// "<3>" (SD_ERR), which both rules read alike. A refused prefix loses
// nothing: the line or datagram is stored whole, prefix included, with the
// default priority (and a datagram is counted in syslog_malformed_pri).
size_t ParsePri(std::string_view s, unsigned *pri);

// Parses one datagram. Never fails: a datagram that is neither form comes
// back as kMalformed with msg = all of it and the PRI's facility and
// severity when the PRI itself was valid.
SyslogMessage ParseSyslog(std::string_view in);

}  // namespace logsink::daemon
