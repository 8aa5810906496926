// render.h: turns a record's untrusted format string and argument bytes into
// its message, type-safely: the format is parsed with proto/printf.h (a
// brace format with proto/braces.h), the arguments decoded with
// proto/args.h, and every conversion formatted by our own code or fmt (never
// the C printf family on a format from the file). A
// format/argument mismatch renders the raw parts instead. Never reads outside
// the given buffers, never throws.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "logsink/proto/args.h"
#include "logsink/proto/braces.h"
#include "logsink/proto/printf.h"

namespace logsink::render {

// Widths and precisions above this are clamped (a hostile "%99999d" must not
// make every record 100 KB): the result is what snprintf prints with 4096
// written instead. render/RENDERING.md has every rule.
constexpr int kMaxWidth = 4096;

// A field of a site (proto/fields.h; FORMAT.md, "Fields").
struct FieldDef {
  std::string name;
  char type = 0;   // LS_FIELD_*
  size_t arg = 0;  // its argument's index in the signature
  int length = 0;  // its conversion's length modifier (ls_fmt_len): integers narrow by it
};

// A parsed format string: compile once per call site, render many times.
struct Format {
  std::string fmt;                 // own copy of the message's format bytes
  std::vector<ls_fmt_spec> specs;  // every conversion of the message, %% included
  std::string sig;                 // argument signature (LS_ARG_* per argument), fields' too
  std::vector<FieldDef> fields;    // a site with FIELDS: its fields, in order
  bool ok = false;                 // false: malformed, refused or > LS_FMT_MAX_ARGS
  // A brace format (proto/braces.h): fmt holds its text only, specs is
  // empty, the text's replacement fields are here and types has its type
  // letters (the signature's first types.size() entries).
  bool braces = false;
  std::string types;
  std::vector<ls_brace_field> brace_fields;
  // The text fmt is handed, built once when no width or precision is
  // nested (it depends on no value: brace_text_ready); otherwise built per
  // record.
  std::string brace_text;
  bool brace_text_ready = false;
};

// site_flags: the site's LS_ST_F_* (storage::Site::flags). A FIELDS site
// whose field list is malformed compiles as a plain format (its list shows
// as text; RENDERING.md, "Fields").
void Compile(std::string_view fmt, Format *out, uint8_t site_flags = 0);

// Appends the message of (f, args) to out. Returns true when the arguments
// matched the format exactly; otherwise appends
//   [logsink: format/argument mismatch] fmt="..." args=[...]
// and returns false.
bool RenderMessage(const Format &f, std::string_view args, std::string *out);

// Appends "…[truncated N bytes]".
void AppendTruncated(uint64_t n, std::string *out);

// Appends "[unknown format #id] args=[hex:...]" for a site id missing from the
// string table.
void RenderUnknownSite(uint32_t id, std::string_view args, std::string *out);

// Appends the arguments uninterpreted but typed, e.g.
//   [i:-5, u:7, f:1.5, c:U+0041, s:"bob", p:0x1234]
// decoded by f's signature as far as they parse; bytes that do not parse (or
// all of them when f is null or not ok) are shown as hex:...
void AppendRawArgs(const Format *f, std::string_view args, std::string *out);

// Appends the arguments as a JSON array of typed values (integers as numbers,
// doubles as numbers or "nan"/"inf"/"-inf", chars, strings and pointers as
// strings). Returns the number of argument bytes that decoded; the caller
// reports the rest (see AppendHex) when it is not args.size().
size_t AppendJsonArgs(const Format *f, std::string_view args, std::string *out);
// The same array with every integer as its exact decimal in a JSON string
// (the "args_str" copy, RENDERING.md: jq reads numbers as doubles, exact only
// up to 2^53). Returns whether any integer is beyond +-2^53.
bool AppendJsonArgsExact(const Format *f, std::string_view args, std::string *out);

// One decoded argument as a JSON value (as in AppendJsonArgs), and as plain
// text: integers in decimal, doubles shortest ("nan", "inf"), a character
// as UTF-8, a pointer as 0x..., a string's bytes as they are (unescaped).
void AppendArgJson(const ls_arg &a, std::string *out);
// An integer argument as its conversion's length modifier makes it (the
// value the message shows: RENDERING.md, "Arguments and narrowing").
uint64_t NarrowInteger(int length, uint64_t v, bool is_signed);
void AppendArgText(const ls_arg &a, std::string *out);

// Appends at most max_bytes of bytes as lowercase hex, then "…" if cut.
void AppendHex(std::string_view bytes, std::string *out, size_t max_bytes = 256);

// Formats one already-decoded argument for a conversion byte for byte as
// glibc's snprintf would in the C locale (width/precision resolved, never
// LS_FMT_STAR here; clamped to kMaxWidth). Exposed for tests.
void FormatOne(const ls_fmt_spec &spec, unsigned flags, int width, int precision, uint64_t u,
               double d, std::string_view s, std::string *out);

// Compiled formats by string-table id (ids are never reused within a file),
// plus a one-entry cache for inline sites.
class FormatCache {
 public:
  // Returns the compiled form of fmt for site id (0 = inline site).
  const Format &Get(uint32_t id, std::string_view fmt, uint8_t site_flags = 0);

 private:
  std::vector<std::unique_ptr<Format>> by_id_;
  std::unordered_map<uint32_t, std::unique_ptr<Format>> big_ids_;
  Format inline_;
  std::string inline_full_;  // the inline site's whole format (inline_.fmt is its message)
  uint8_t inline_flags_ = 0;
  bool inline_valid_ = false;
};

}  // namespace logsink::render
