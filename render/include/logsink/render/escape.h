// escape.h: makes untrusted record bytes safe to print: on a terminal (control
// characters and invalid UTF-8 shown as \xNN, never emitted raw) and inside a
// JSON string (always valid JSON, invalid UTF-8 replaced by U+FFFD).
#pragma once

#include <string>
#include <string_view>

namespace logsink::render {

// Appends s to out with every byte a terminal could act on escaped: C0
// controls except TAB, DEL, C1 controls (U+0080..U+009F) and bytes that are
// not valid UTF-8 become \xNN; '\n' and '\r' become \n and \r. Valid
// printable UTF-8 is copied unchanged.
void AppendTerminalSafe(std::string *out, std::string_view s);

// Appends s as the contents of a JSON string (no surrounding quotes): '"' and
// '\\' escaped, control characters as \n \t \r \b \f or \u00XX, DEL and C1
// controls as \u00XX, the invisible characters the terminal escaping
// escapes too (U+2028/U+2029, bidi controls, zero-width characters, BOM) as
// \uXXXX, invalid UTF-8 replaced by \ufffd.
void AppendJsonEscaped(std::string *out, std::string_view s);

// Same, with the surrounding quotes.
inline void AppendJsonString(std::string *out, std::string_view s) {
  out->push_back('"');
  AppendJsonEscaped(out, s);
  out->push_back('"');
}

// Length of the valid UTF-8 sequence at the start of [p, end) (1..4), or 0 if
// the bytes there are not valid UTF-8 (overlong, surrogate, > U+10FFFF,
// truncated). *cp receives the code point.
size_t Utf8Decode(const unsigned char *p, const unsigned char *end, char32_t *cp);

// Appends the UTF-8 encoding of cp (U+FFFD for surrogates and > U+10FFFF).
void AppendUtf8(std::string *out, char32_t cp);

}  // namespace logsink::render
