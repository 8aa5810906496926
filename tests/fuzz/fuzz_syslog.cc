// fuzz_syslog.cc: the daemon's syslog parser (daemon/src/syslog_parse.h) on
// arbitrary datagrams. Invariants: it never crashes; every field is empty or
// a sub-range of the input; a malformed datagram keeps all of its bytes as
// msg and says why; facility and severity are in range; a parsed message's
// PRI is the one at the start of the input; parsing is deterministic.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "syslog_parse.h"

using logsink::daemon::ParseSyslog;
using logsink::daemon::SyslogBad;
using logsink::daemon::SyslogForm;
using logsink::daemon::SyslogMessage;

static bool Inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view in(reinterpret_cast<const char *>(data), size);
  SyslogMessage m = ParseSyslog(in);
  for (std::string_view v : {m.tag, m.procid, m.timestamp, m.hostname, m.msgid, m.sd, m.msg})
    FUZZ_CHECK(Inside(v, in));
  FUZZ_CHECK(m.facility <= 23 && m.severity <= 7);
  if (m.form == SyslogForm::kMalformed) {
    FUZZ_CHECK(m.bad != SyslogBad::kNone);
    FUZZ_CHECK(m.msg.data() == in.data() && m.msg.size() == in.size());
  } else {
    FUZZ_CHECK(m.bad == SyslogBad::kNone);
    FUZZ_CHECK(size >= 3 && in[0] == '<');
    unsigned pri = 0;
    size_t i = 1;
    while (in[i] != '>') pri = pri * 10 + unsigned(in[i++] - '0');
    FUZZ_CHECK(pri == unsigned(m.facility) * 8 + m.severity);
    // The message comes after everything else of the header.
    for (std::string_view v : {m.tag, m.procid, m.timestamp, m.hostname, m.msgid, m.sd})
      FUZZ_CHECK(v.empty() || m.msg.empty() || v.data() + v.size() <= m.msg.data());
    if (m.form == SyslogForm::kRfc3164) FUZZ_CHECK(m.msgid.empty() && m.sd.empty());
    if (!m.sd.empty()) FUZZ_CHECK(m.sd.front() == '[' && m.sd.back() == ']');
  }
  SyslogMessage again = ParseSyslog(in);
  FUZZ_CHECK(again.form == m.form && again.msg.data() == m.msg.data() &&
             again.msg.size() == m.msg.size() && again.tag.size() == m.tag.size());
  return 0;
}
