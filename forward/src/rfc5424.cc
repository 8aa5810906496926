// rfc5424.cc: see rfc5424.h.
#include "rfc5424.h"

#include <fmt/format.h>

#include <ctime>

namespace logsink::forward {
namespace {

// RFC 5424 header fields: PRINTUSASCII (33..126), at most max bytes, "-" if empty.
void Field(std::string_view s, size_t max, std::string *out) {
  if (s.empty()) {
    out->push_back('-');
    return;
  }
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out->push_back(c >= 33 && c <= 126 ? char(c) : '_');
  }
}

void ParamValue(std::string_view s, std::string *out) {
  for (char c : s) {
    if (c == '"' || c == '\\' || c == ']') out->push_back('\\');
    out->push_back(c);
  }
}

}  // namespace

std::string FormatRfc5424(const SyslogFields &f) {
  std::string out;
  out.reserve(128 + f.msg.size());
  time_t secs = time_t(f.ts_ns / 1000000000u);
  struct tm tm;
  gmtime_r(&secs, &tm);
  fmt::format_to(std::back_inserter(out), "<{}>1 {:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z ",
                 unsigned(f.facility) * 8 + (f.level & 7), tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (f.ts_ns % 1000000000u) / 1000);
  Field(f.host, 255, &out);
  out.push_back(' ');
  Field(f.app, 48, &out);
  fmt::format_to(std::back_inserter(out), " {} - [", f.pid);
  Field(f.sd_id, 32, &out);
  out += " cursor=\"";
  ParamValue(f.cursor, &out);
  fmt::format_to(std::back_inserter(out), "\" uid=\"{}\" gid=\"{}\" tid=\"{}\"] ", f.uid, f.gid,
                 f.tid);
  out.append(f.msg);
  return out;
}

}  // namespace logsink::forward
