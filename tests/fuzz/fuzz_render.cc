// fuzz_render.cc: fuzz target of the renderer of untrusted formats
// (render/: logsink/render/render.h, escape.h). Input: u16 LE format length, the format bytes,
// then the argument bytes. Checks that RenderMessage succeeds exactly when the
// arguments parse by the format's signature (what the daemon accepts, via
// ls_args_check), that Compile agrees with ls_fmt_signature, that output stays
// bounded, and that the terminal and JSON escapers emit valid UTF-8 with no
// raw control characters; and that -o short-fields writes the short line,
// then one terminal-safe name=value piece per field.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "logsink/proto/args.h"
#include "logsink/proto/braces.h"
#include "logsink/proto/format.h"
#include "logsink/proto/printf.h"
#include "logsink/render/escape.h"
#include "logsink/render/fields.h"
#include "logsink/render/printer.h"
#include "logsink/render/render.h"

namespace {

using namespace logsink::render;

// Length of the valid UTF-8 sequence at s[i] (1..4) or 0; *cp gets the code
// point. Independent of escape.cc on purpose.
size_t Utf8At(std::string_view s, size_t i, uint32_t *cp) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  uint8_t c = b(0);
  size_t n;
  uint32_t v, min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xe0) == 0xc0) {
    n = 2, v = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3, v = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  for (size_t k = 1; k < n; k++) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    v = v << 6 | (b(k) & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

// Valid UTF-8 with no C0 control (except TAB), DEL or C1 control.
bool TerminalSafe(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    size_t n = Utf8At(s, i, &cp);
    if (!n) return false;
    if ((cp < 0x20 && cp != '\t') || (cp >= 0x7f && cp <= 0x9f)) return false;
    i += n;
  }
  return true;
}

// The contents of a JSON string: valid UTF-8, no raw control characters, and
// every '"' and '\\' escaped with a valid escape.
bool JsonSafe(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    size_t n = Utf8At(s, i, &cp);
    if (!n || cp < 0x20 || cp == '"') return false;
    if (cp == '\\') {
      if (i + 1 >= s.size()) return false;
      char e = s[i + 1];
      if (e == 'u') {
        if (s.size() - i < 6) return false;
        for (size_t k = 2; k < 6; k++)
          if (!std::strchr("0123456789abcdefABCDEF", s[i + k]) || s[i + k] == 0) return false;
        n = 6;
      } else if (std::strchr("\"\\/bfnrt", e) && e != 0) {
        n = 2;
      } else {
        return false;
      }
    }
    i += n;
  }
  return true;
}

// The " name=value" pieces short-fields appends (RENDERING.md, "Named
// fields"), or -1 when tail does not split into such pieces: a name without
// space, '=' or '"', then a bare value (no space, TAB, '=' or '"') or one
// in double quotes, where a backslash escapes the byte after it.
int LogfmtPieces(std::string_view tail) {
  int n = 0;
  size_t i = 0;
  while (i < tail.size()) {
    if (tail[i++] != ' ') return -1;
    const size_t name = i;
    while (i < tail.size() && !std::strchr(" =\"", tail[i])) i++;
    if (i == name || i >= tail.size() || tail[i++] != '=') return -1;
    if (i < tail.size() && tail[i] == '"') {
      for (i++;; i++) {
        if (i >= tail.size()) return -1;  // unclosed
        if (tail[i] == '\\') {
          i++;
        } else if (tail[i] == '"') {
          i++;
          break;
        }
      }
      if (i < tail.size() && tail[i] != ' ') return -1;
    } else {
      const size_t value = i;
      while (i < tail.size() && tail[i] != ' ') {
        if (tail[i] == '=' || tail[i] == '"' || tail[i] == '\t') return -1;
        i++;
      }
      if (i == value) return -1;  // an empty value is quoted
    }
    n++;
  }
  return n;
}

volatile size_t g_sink;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  size_t fmt_len = (data[0] | size_t{data[1]} << 8) % (size - 2 + 1);
  std::string_view fmt(reinterpret_cast<const char *>(data + 2), fmt_len);
  std::string_view args(reinterpret_cast<const char *>(data + 2 + fmt_len), size - 2 - fmt_len);
  const auto *ap = reinterpret_cast<const uint8_t *>(args.data());

  Format f;
  Compile(fmt, &f);
  char sig[LS_FMT_MAX_ARGS + 1];
  int n = ls_fmt_signature(fmt.data(), fmt.size(), sig, sizeof sig);
  // A brace format (proto/braces.h) compiles when its text parses too.
  const bool braces = !fmt.empty() && fmt[0] == LS_BRACES_MARK;
  FUZZ_CHECK(f.ok == (n >= 0 && (!braces || ls_braces_check(fmt.data(), fmt.size()) >= 0)));
  if (f.ok) FUZZ_CHECK(f.braces == braces);
  if (f.ok) FUZZ_CHECK(f.sig == sig);
  const bool valid = f.ok && ls_args_check(sig, ap, args.size()) == 0;

  std::string out;
  bool ok = RenderMessage(f, args, &out);
  // A brace format's spec may not suit its value (fmt refuses): then a
  // mismatch although the arguments decode.
  FUZZ_CHECK(braces ? (!ok || valid) : ok == valid);
  // Bounded: literal text, at most kMaxWidth (+ digits/exponent) per
  // conversion, strings no longer than the argument bytes.
  FUZZ_CHECK(out.size() <= 4 * (fmt.size() + args.size()) +
                               (f.specs.size() + f.brace_fields.size()) * (2 * kMaxWidth + 400) +
                               512);

  std::string safe;
  AppendTerminalSafe(&safe, out);
  FUZZ_CHECK(TerminalSafe(safe));
  std::string json;
  AppendJsonEscaped(&json, out);
  FUZZ_CHECK(JsonSafe(json));

  // The same bytes as a site with fields (FORMAT.md, "Fields"): the same
  // signature whether the list splits or not, rendering agrees with it,
  // every field names an argument, and the fields decode within bounds.
  Format ff;
  Compile(fmt, &ff, LS_ST_F_FIELDS);
  FUZZ_CHECK(ff.ok == f.ok);
  if (ff.ok) FUZZ_CHECK(ff.sig == f.sig);
  for (const FieldDef &d : ff.fields) FUZZ_CHECK(d.arg < ff.sig.size());
  std::string out2;
  const bool ok2 = RenderMessage(ff, args, &out2);
  FUZZ_CHECK(braces ? (!ok2 || valid) : ok2 == valid);
  logsink::storage::Record rec;
  rec.site_known = true;
  rec.site.fmt = fmt;
  rec.site.file = "f.c";
  rec.site.flags = LS_ST_F_FIELDS;
  rec.args = args;
  std::vector<FieldValue> fields;
  RecordFields(rec, ff, &fields);
  // A list that splits gives its fields or none (a plain fallback reads
  // format 5's strings instead, below).
  if (!ff.fields.empty()) FUZZ_CHECK(fields.size() <= ff.fields.size());
  std::string ftext;
  for (const FieldValue &v : fields) {
    AppendFieldText(v, &ftext);
    AppendFieldJson(v, &ftext);
  }
  // -o short-fields: the short line, then one piece per field.
  auto short_line = [&rec](OutputMode mode) {
    Printer p(mode, false, true);
    std::string line;
    p.Print(rec, &line);
    FUZZ_CHECK(!line.empty() && line.back() == '\n');
    line.pop_back();
    return line;
  };
  for (uint8_t flags : {uint8_t(LS_ST_F_FIELDS), uint8_t(0)}) {
    rec.site.flags = flags;
    RecordFields(rec, flags ? ff : f, &fields);  // flags 0: the format-5 "%.0s" strings
    const std::string plain = short_line(OutputMode::kShort);
    const std::string line = short_line(OutputMode::kShortFields);
    FUZZ_CHECK(TerminalSafe(line));
    FUZZ_CHECK(line.compare(0, plain.size(), plain) == 0);
    FUZZ_CHECK(LogfmtPieces(std::string_view(line).substr(plain.size())) == int(fields.size()));
  }

  std::string raw;
  AppendRawArgs(&f, args, &raw);
  AppendRawArgs(nullptr, args, &raw);
  std::string js;
  size_t used = AppendJsonArgs(&f, args, &js);
  FUZZ_CHECK(used <= args.size());
  if (valid) FUZZ_CHECK(used == args.size());
  used = AppendJsonArgs(nullptr, args, &js);
  FUZZ_CHECK(used <= args.size());
  std::string hex;
  AppendHex(args, &hex, data[0]);
  FUZZ_CHECK(hex.size() <= 2 * size_t{data[0]} + 3);
  RenderUnknownSite(data[1], args, &hex);
  AppendTruncated(size, &hex);

  // The cache hands out the same compilation for the same site.
  FormatCache cache;
  uint32_t ids[] = {0, 1u + data[0], 0xfffffff0u + data[1] % 16};
  for (uint32_t id : ids) {
    const Format &c = cache.Get(id, fmt);
    FUZZ_CHECK(c.ok == f.ok && c.sig == f.sig && &cache.Get(id, fmt) == &c);
  }
  g_sink = out.size() + raw.size() + js.size() + hex.size() + safe.size() + json.size();
  return 0;
}
