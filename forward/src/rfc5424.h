// rfc5424.h: one ring record as an RFC 5424 syslog message for RELP:
//   <PRI>1 TIMESTAMP HOST APP PROCID - [SDID cursor="…" uid="…" gid="…" tid="…"] MSG
// PRI = facility * 8 + the record's level; TIMESTAMP in UTC with
// microseconds; APP is the record's app label limited to RFC 5424's
// PRINTUSASCII (other bytes become '_', at most 48); SD parameter values
// escape '"', '\' and ']' as the RFC requires; MSG is the rendered message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace logsink::forward {

struct SyslogFields {
  uint8_t facility = 1;  // user
  uint8_t level = 6;
  uint64_t ts_ns = 0;
  std::string_view host, app;
  uint32_t pid = 0, uid = 0, gid = 0;
  uint64_t tid = 0;
  std::string_view sd_id;  // e.g. "logsink@32473"
  std::string_view cursor;
  std::string_view msg;
};

std::string FormatRfc5424(const SyslogFields &f);

}  // namespace logsink::forward
