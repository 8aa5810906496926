// log_escape.h: client bytes (formats, comm, app labels) as they may appear
// in logsinkd's own log: printable ASCII stays, every other byte (control
// characters, DEL, anything >= 0x80, so also bidi controls and line
// separators in UTF-8) becomes \xHH, and '\' becomes "\\". A client cannot
// forge a log line, move the cursor or reorder text on an operator's
// terminal. The renderer library's (render/, UTF-8 aware, for records) is another job.
#pragma once

#include <string>
#include <string_view>

namespace logsink::daemon {

inline std::string LogEscape(std::string_view s, size_t max = 256) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() < max ? s.size() : max);
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out.push_back(char(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// s escaped and in single quotes, with a quote inside it as \x27: text
// that quotes client bytes (a level change's record) cannot be made to
// read as if the quotes ended early.
inline std::string Quoted(std::string_view s, size_t max = 256) {
  std::string out = "'";
  for (char c : LogEscape(s, max)) {
    if (c == '\'')
      out += "\\x27";
    else
      out.push_back(c);
  }
  return out + "'";
}

}  // namespace logsink::daemon
