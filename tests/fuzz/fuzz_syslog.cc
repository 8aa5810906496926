// fuzz_syslog.cc: the daemon's syslog parser (daemon/src/syslog_parse.h) on
// arbitrary datagrams. Invariants: it never crashes; every field is empty or
// a sub-range of the input; a malformed datagram keeps all of its bytes as
// msg and says why; facility and severity are in range; a parsed message's
// PRI is the one at the start of the input; parsing is deterministic. The
// SD-PARAMs of a parsed SD (and of the whole input, any bytes) are views
// into it, read to the SD's end; as fields, each name a field name, at most
// 32, each value no longer than its escaped form.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "logsink/proto/fields.h"
#include "syslog_parse.h"
#include "text_fields.h"

using logsink::daemon::ParseSyslog;
using logsink::daemon::SdParam;
using logsink::daemon::SdParams;
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
  // Any bytes: the iterator stays inside them and stops.
  {
    SdParams it(in);
    SdParam p;
    size_t n = 0;
    while (it.Next(&p)) {
      FUZZ_CHECK(Inside(p.id, in) && Inside(p.name, in) && Inside(p.value, in));
      FUZZ_CHECK(!p.id.empty() && !p.name.empty());
      FUZZ_CHECK(++n <= size);
    }
  }
  if (!m.sd.empty()) {
    SdParams it(m.sd);
    SdParam p;
    size_t escaped = 0;
    while (it.Next(&p)) {
      FUZZ_CHECK(Inside(p.value, m.sd));
      escaped += p.value.size();
    }
    FUZZ_CHECK(it.done());  // what the parser accepted is read to its end
    logsink::daemon::TextFieldList l;
    logsink::daemon::SdFields(m.sd, &l);
    FUZZ_CHECK(l.size() <= logsink::daemon::kMaxTextFields);
    size_t unescaped = 0;
    for (const auto &f : l.fields()) {
      FUZZ_CHECK(ls_field_name_ok(f.name.data(), f.name.size(), 0));
      unescaped += f.value.size();
    }
    FUZZ_CHECK(unescaped <= escaped);
  }
  SyslogMessage again = ParseSyslog(in);
  FUZZ_CHECK(again.form == m.form && again.msg.data() == m.msg.data() &&
             again.msg.size() == m.msg.size() && again.tag.size() == m.tag.size());
  return 0;
}
