// escape.cc: terminal-safe and JSON escaping of untrusted bytes (see escape.h).
#include "logsink/render/escape.h"

#include <cstddef>
#include <cstdint>

#include "logsink/proto/codec.h"

namespace logsink::render {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// True for ASCII bytes that can be copied as they are (printable, plus TAB
// for the terminal).
struct AsciiTable {
  bool term[128];
  bool json[128];
  constexpr AsciiTable() : term(), json() {
    for (int c = 0; c < 128; c++) {
      term[c] = (c >= 0x20 && c < 0x7f) || c == '\t';
      json[c] = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    }
  }
};
constexpr AsciiTable kAscii;

void AppendHexByte(std::string *out, unsigned char c) {
  char b[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
  out->append(b, 4);
}

void AppendU00(std::string *out, unsigned c) {
  char b[6] = {'\\', 'u', '0', '0', kHex[(c >> 4) & 15], kHex[c & 15]};
  out->append(b, 6);
}

}  // namespace

size_t Utf8Decode(const unsigned char *p, const unsigned char *end, char32_t *cp) {
  if (p >= end) return 0;
  unsigned char c = p[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  char32_t v, min;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2, v = c & 0x1f, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3, v = c & 0x0f, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (end - p < static_cast<ptrdiff_t>(n)) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    v = (v << 6) | (p[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

void AppendUtf8(std::string *out, char32_t cp) {
  uint8_t b[4];
  size_t n = ls_utf8_put(b, sizeof b, static_cast<uint32_t>(cp));
  out->append(reinterpret_cast<const char *>(b), n);
}

// Invisible characters that change how the text around them reads: bidi
// embeddings, overrides and isolates (U+202E turns "exe.txt" into "txt.exe"),
// line and paragraph separators (a line break to some terminals and
// viewers), zero-width characters and the BOM.
static bool Deceptive(char32_t cp) {
  return cp == 0x061C || cp == 0x180E || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2064) ||
         (cp >= 0x2066 && cp <= 0x206F) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB);
}

static void AppendCodePointEscape(std::string *out, char32_t cp) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->append("\\u", 2);
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(cp >> shift) & 0xf]);
}

namespace {

// Appends the two-character escape of c ('\\' and the letter) if c is one of
// `chars`, whose letters are `letters` in the same order. False if it is not.
bool AppendShortEscape(std::string *out, unsigned char c, std::string_view chars,
                       const char *letters) {
  const size_t i = chars.find(static_cast<char>(c));
  if (i == std::string_view::npos) return false;
  out->push_back('\\');
  out->push_back(letters[i]);
  return true;
}

// The walk both escapings share: the longest runs of bytes `safe` marks are
// copied in one append; another ASCII byte goes to ascii(c); a byte that does
// not start valid UTF-8 to invalid(c) (decoding resumes at the next byte); a
// C1 control (U+0080..U+009F, n bytes at p) to c1(p, n, cp); the deceptive
// characters become \uNNNN and any other valid UTF-8 is copied.
template <typename Ascii, typename Invalid, typename C1>
void Escape(std::string *out, std::string_view s, const bool (&safe)[128], Ascii ascii,
            Invalid invalid, C1 c1) {
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  const auto *end = p + s.size();
  while (p < end) {
    const auto *run = p;
    while (p < end && *p < 0x80 && safe[*p]) p++;
    if (p > run) out->append(reinterpret_cast<const char *>(run), p - run);
    if (p >= end) break;
    if (*p < 0x80) {
      ascii(*p++);
      continue;
    }
    char32_t cp;
    const size_t n = Utf8Decode(p, end, &cp);
    if (n == 0) {
      invalid(*p++);
      continue;
    }
    if (cp <= 0x9f) {
      c1(p, n, cp);
    } else if (Deceptive(cp)) {
      AppendCodePointEscape(out, cp);
    } else {
      out->append(reinterpret_cast<const char *>(p), n);
    }
    p += n;
  }
}

}  // namespace

void AppendTerminalSafe(std::string *out, std::string_view s) {
  auto hex = [out](unsigned char c) { AppendHexByte(out, c); };
  Escape(
      out, s, kAscii.term,
      [out, hex](unsigned char c) {
        if (!AppendShortEscape(out, c, "\n\r", "nr")) hex(c);
      },
      hex,
      // C1 controls: U+009B is CSI on some terminals.
      [hex](const unsigned char *p, size_t n, char32_t) {
        for (size_t i = 0; i < n; i++) hex(p[i]);
      });
}

void AppendJsonEscaped(std::string *out, std::string_view s) {
  // Valid JSON either way, but U+2028/U+2029 end a line in JavaScript
  // source and bidi controls reorder what a viewer shows: escaped (by
  // Escape), the JSON can be pasted into a script or a page and read as it is.
  Escape(
      out, s, kAscii.json,
      [out](unsigned char c) {
        if (!AppendShortEscape(out, c, "\"\\\n\r\t\b\f", "\"\\nrtbf")) AppendU00(out, c);
      },
      [out](unsigned char) { out->append("\\ufffd", 6); },
      [out](const unsigned char *, size_t, char32_t cp) { AppendU00(out, unsigned(cp)); });
}

}  // namespace logsink::render
