// render.cc: the type-safe message renderer (see render.h).
#include "render.h"

#include <fmt/format.h>
#include <fmt/printf.h>

#include <cmath>
#include <cstring>
#include <exception>

#include "escape.h"
#include "logsink/proto/args.h"

namespace logsink::render {
namespace {

constexpr char kLowerHex[] = "0123456789abcdef";
constexpr char kUpperHex[] = "0123456789ABCDEF";

int Clamp(int v) { return v > kMaxWidth ? kMaxWidth : v; }

// Narrows a value to the width printf's length modifier gives it; signed
// values come back sign-extended, as the bits of an int64_t.
uint64_t Narrow(int length, uint64_t v, bool is_signed) {
  const int bits = length == LS_LEN_HH     ? 8
                   : length == LS_LEN_H    ? 16
                   : length == LS_LEN_NONE ? 32
                                           : 64;
  if (bits == 64) return v;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (is_signed && (v >> (bits - 1)) != 0) v |= ~mask;
  return v;
}

void Pad(std::string *out, size_t n, char c) { out->append(n, c); }

// Appends body padded to width: right-aligned with spaces, or left-aligned
// with MINUS.
void AppendPadded(std::string *out, std::string_view body, unsigned flags, int width) {
  size_t w = width > 0 ? static_cast<size_t>(width) : 0;
  size_t pad = w > body.size() ? w - body.size() : 0;
  if (!(flags & LS_FMT_MINUS)) Pad(out, pad, ' ');
  out->append(body);
  if (flags & LS_FMT_MINUS) Pad(out, pad, ' ');
}

// C semantics of d i u o x X with flags, width and precision.
void FormatInteger(std::string *out, char conv, unsigned flags, int width, int precision,
                   bool negative, uint64_t mag) {
  char digits[72];
  size_t nd = 0;
  char *end = digits + sizeof digits;
  char *p = end;
  if (!(precision == 0 && mag == 0)) {
    switch (conv) {
      case 'o':
        do {
          *--p = static_cast<char>('0' + (mag & 7));
          mag >>= 3;
        } while (mag);
        break;
      case 'x':
        do {
          *--p = kLowerHex[mag & 15];
          mag >>= 4;
        } while (mag);
        break;
      case 'X':
        do {
          *--p = kUpperHex[mag & 15];
          mag >>= 4;
        } while (mag);
        break;
      default:
        do {
          *--p = static_cast<char>('0' + mag % 10);
          mag /= 10;
        } while (mag);
        break;
    }
  }
  nd = static_cast<size_t>(end - p);
  bool was_zero = (nd == 1 && *p == '0') || nd == 0;
  size_t zeros = precision > 0 && static_cast<size_t>(precision) > nd ? precision - nd : 0;
  if (conv == 'o' && (flags & LS_FMT_HASH) && zeros == 0 && (nd == 0 || *p != '0')) zeros = 1;
  char prefix[2];
  size_t np = 0;
  if (conv == 'd' || conv == 'i') {
    if (negative)
      prefix[np++] = '-';
    else if (flags & LS_FMT_PLUS)
      prefix[np++] = '+';
    else if (flags & LS_FMT_SPACE)
      prefix[np++] = ' ';
  } else if ((conv == 'x' || conv == 'X') && (flags & LS_FMT_HASH) && !was_zero) {
    prefix[np++] = '0';
    prefix[np++] = conv;
  }
  size_t len = np + zeros + nd;
  size_t w = width > 0 ? static_cast<size_t>(width) : 0;
  size_t pad = w > len ? w - len : 0;
  bool zero_pad = (flags & LS_FMT_ZERO) && !(flags & LS_FMT_MINUS) && precision < 0;
  if (!(flags & LS_FMT_MINUS) && !zero_pad) Pad(out, pad, ' ');
  out->append(prefix, np);
  if (zero_pad) Pad(out, pad, '0');
  Pad(out, zeros, '0');
  out->append(p, nd);
  if (flags & LS_FMT_MINUS) Pad(out, pad, ' ');
}

void FormatDouble(std::string *out, char conv, unsigned flags, int width, int precision, double d) {
  // A spec rebuilt from validated parts only: flags, numbers, one conversion.
  char spec[32];
  size_t n = 0;
  spec[n++] = '%';
  if (flags & LS_FMT_MINUS) spec[n++] = '-';
  if (flags & LS_FMT_PLUS) spec[n++] = '+';
  if (flags & LS_FMT_SPACE) spec[n++] = ' ';
  if (flags & LS_FMT_HASH) spec[n++] = '#';
  if (flags & LS_FMT_ZERO) spec[n++] = '0';
  auto r = fmt::format_to_n(spec + n, sizeof spec - n - 1, "{}", width > 0 ? width : 0);
  n += width > 0 ? r.size : 0;
  if (precision >= 0) {
    spec[n++] = '.';
    r = fmt::format_to_n(spec + n, sizeof spec - n - 1, "{}", precision);
    n += r.size;
  }
  spec[n++] = conv;
  out->append(fmt::sprintf(fmt::string_view(spec, n), d));
}

// Decodes the arguments of f into vals. Returns true when they cover args
// exactly; *consumed is how many bytes decoded, *count how many values.
bool Decode(const Format &f, std::string_view args, ls_arg *vals, size_t *count, size_t *consumed) {
  const auto *p = reinterpret_cast<const uint8_t *>(args.data());
  const auto *end = p + args.size();
  size_t i = 0, used = 0;
  bool ok = true;
  for (char t : f.sig) {
    size_t n = ls_arg_get(t, p + used, end, &vals[i]);
    if (!n) {
      ok = false;
      break;
    }
    used += n;
    i++;
  }
  *count = i;
  *consumed = used;
  return ok && used == args.size();
}

void AppendQuotedRaw(std::string_view s, std::string *out) {
  out->push_back('"');
  for (char c : s) {
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendDoubleShortest(double d, std::string *out) {
  if (std::isnan(d)) {
    out->append(std::signbit(d) ? "-nan" : "nan");
  } else if (std::isinf(d)) {
    out->append(d < 0 ? "-inf" : "inf");
  } else {
    fmt::format_to(std::back_inserter(*out), "{}", d);
  }
}

void AppendMismatch(const Format &f, std::string_view args, std::string *out) {
  out->append("[logsink: format/argument mismatch] fmt=");
  AppendQuotedRaw(f.fmt, out);
  out->append(" args=");
  AppendRawArgs(f.ok ? &f : nullptr, args, out);
}

}  // namespace

void Compile(std::string_view fmt, Format *out) {
  out->fmt.assign(fmt);
  out->specs.clear();
  out->sig.clear();
  out->ok = false;
  size_t pos = 0;
  ls_fmt_spec s;
  int r;
  while ((r = ls_fmt_next(out->fmt.data(), out->fmt.size(), &pos, &s)) > 0) {
    out->specs.push_back(s);
    if (s.type == 0) continue;
    if (s.width == LS_FMT_STAR) out->sig.push_back(LS_ARG_INT);
    if (s.precision == LS_FMT_STAR) out->sig.push_back(LS_ARG_INT);
    out->sig.push_back(s.type);
  }
  out->ok = r == 0 && out->sig.size() <= LS_FMT_MAX_ARGS;
}

void FormatOne(const ls_fmt_spec &spec, unsigned flags, int width, int precision, uint64_t u,
               double d, std::string_view s, std::string *out) {
  width = Clamp(width);
  precision = Clamp(precision);
  // proto's ls_fmt_next already mapped the conversion to its argument type;
  // switching on the type keeps one list of conversions (in proto).
  switch (spec.type) {
    case LS_ARG_INT: {
      int64_t v = static_cast<int64_t>(Narrow(spec.length, u, true));
      uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      FormatInteger(out, spec.conv, flags, width, precision, v < 0, mag);
      break;
    }
    case LS_ARG_UINT:
      FormatInteger(out, spec.conv, flags, width, precision, false, Narrow(spec.length, u, false));
      break;
    case LS_ARG_DOUBLE:
      FormatDouble(out, spec.conv, flags, width, precision, d);
      break;
    case LS_ARG_CHAR: {
      std::string tmp;
      if (u > 0x10ffff) u = 0xfffd;
      AppendUtf8(&tmp, static_cast<char32_t>(u));
      AppendPadded(out, tmp, flags, width);
      break;
    }
    case LS_ARG_STR: {
      if (precision >= 0 && s.size() > static_cast<size_t>(precision)) s = s.substr(0, precision);
      AppendPadded(out, s, flags, width);
      break;
    }
    case LS_ARG_PTR: {
      if (u == 0) {
        AppendPadded(out, "(nil)", flags, width);
      } else {
        // glibc prints %p as %#lx.
        FormatInteger(out, 'x', (flags & (LS_FMT_MINUS | LS_FMT_ZERO)) | LS_FMT_HASH, width,
                      precision, false, u);
      }
      break;
    }
    default:
      break;
  }
}

bool RenderMessage(const Format &f, std::string_view args, std::string *out) {
  ls_arg vals[LS_FMT_MAX_ARGS];
  size_t count = 0, consumed = 0;
  if (!f.ok || !Decode(f, args, vals, &count, &consumed)) {
    AppendMismatch(f, args, out);
    return false;
  }
  size_t start = out->size();
  try {
    size_t lit = 0, ai = 0;
    for (const ls_fmt_spec &s : f.specs) {
      out->append(f.fmt, lit, s.start - lit);
      lit = s.end;
      if (s.type == 0) {
        out->push_back('%');
        continue;
      }
      unsigned flags = s.flags;
      int width = s.width, precision = s.precision;
      if (width == LS_FMT_STAR) {
        int64_t w = static_cast<int64_t>(vals[ai++].u);
        if (w < 0) {
          flags |= LS_FMT_MINUS;
          w = w < -kMaxWidth ? kMaxWidth : -w;
        }
        width = static_cast<int>(w > kMaxWidth ? kMaxWidth : w);
      }
      if (precision == LS_FMT_STAR) {
        int64_t pr = static_cast<int64_t>(vals[ai++].u);
        precision = pr < 0 ? LS_FMT_NONE : static_cast<int>(pr > kMaxWidth ? kMaxWidth : pr);
      }
      const ls_arg &a = vals[ai++];
      std::string_view sv;
      if (a.type == LS_ARG_STR) sv = std::string_view(reinterpret_cast<const char *>(a.s), a.len);
      FormatOne(s, flags, width, precision, a.u, a.f, sv, out);
    }
    out->append(f.fmt, lit, std::string::npos);
  } catch (const std::exception &) {
    out->resize(start);
    AppendMismatch(f, args, out);
    return false;
  }
  return true;
}

void AppendTruncated(uint64_t n, std::string *out) {
  fmt::format_to(std::back_inserter(*out), "\xe2\x80\xa6[truncated {} bytes]", n);
}

void RenderUnknownSite(uint32_t id, std::string_view args, std::string *out) {
  fmt::format_to(std::back_inserter(*out), "[unknown format #{}] args=", id);
  AppendRawArgs(nullptr, args, out);
}

void AppendHex(std::string_view bytes, std::string *out, size_t max_bytes) {
  size_t n = bytes.size() < max_bytes ? bytes.size() : max_bytes;
  for (size_t i = 0; i < n; i++) {
    auto c = static_cast<unsigned char>(bytes[i]);
    out->push_back(kLowerHex[c >> 4]);
    out->push_back(kLowerHex[c & 15]);
  }
  if (n < bytes.size()) out->append("\xe2\x80\xa6");
}

namespace {

// Decodes args against f (as far as they match: none when f is unusable),
// writes "[" and calls each(arg) for every decoded argument with sep between
// them. Returns the bytes consumed; *count is the number of arguments.
template <typename Each>
size_t AppendArgList(const Format *f, std::string_view args, const char *sep, std::string *out,
                     size_t *count, Each each) {
  ls_arg vals[LS_FMT_MAX_ARGS];
  size_t consumed = 0;
  *count = 0;
  if (f && f->ok) Decode(*f, args, vals, count, &consumed);
  out->push_back('[');
  for (size_t i = 0; i < *count; i++) {
    if (i) out->append(sep);
    each(vals[i]);
  }
  return consumed;
}

// An integer argument in decimal, signed or not as its type says.
void AppendInteger(const ls_arg &a, std::string *out) {
  if (a.type == LS_ARG_INT)
    fmt::format_to(std::back_inserter(*out), "{}", static_cast<int64_t>(a.u));
  else
    fmt::format_to(std::back_inserter(*out), "{}", a.u);
}

}  // namespace

void AppendRawArgs(const Format *f, std::string_view args, std::string *out) {
  size_t count;
  size_t consumed = AppendArgList(f, args, ", ", out, &count, [out](const ls_arg &a) {
    out->push_back(a.type);
    out->push_back(':');
    switch (a.type) {
      case LS_ARG_INT:
      case LS_ARG_UINT:
        AppendInteger(a, out);
        break;
      case LS_ARG_DOUBLE:
        AppendDoubleShortest(a.f, out);
        break;
      case LS_ARG_CHAR:
        fmt::format_to(std::back_inserter(*out), "U+{:04X}", a.u);
        break;
      case LS_ARG_STR:
        AppendQuotedRaw(std::string_view(reinterpret_cast<const char *>(a.s), a.len), out);
        break;
      case LS_ARG_PTR:
        fmt::format_to(std::back_inserter(*out), "{:#x}", a.u);
        break;
    }
  });
  if (consumed < args.size()) {
    if (count) out->append(", ");
    out->append("hex:");
    AppendHex(args.substr(consumed), out);
  }
  out->push_back(']');
}

size_t AppendJsonArgs(const Format *f, std::string_view args, std::string *out) {
  size_t count;
  size_t consumed = AppendArgList(f, args, ",", out, &count, [out](const ls_arg &a) {
    // Numbers stay JSON numbers; anything JSON has no number for (a
    // non-finite double, a pointer) and text become JSON strings.
    if (a.type == LS_ARG_INT || a.type == LS_ARG_UINT) return AppendInteger(a, out);
    if (a.type == LS_ARG_DOUBLE && std::isfinite(a.f)) return AppendDoubleShortest(a.f, out);
    if (a.type == LS_ARG_STR)
      return AppendJsonString(out, std::string_view(reinterpret_cast<const char *>(a.s), a.len));
    std::string text;
    if (a.type == LS_ARG_DOUBLE) {
      AppendDoubleShortest(a.f, &text);
    } else if (a.type == LS_ARG_PTR) {
      fmt::format_to(std::back_inserter(text), "{:#x}", a.u);
    } else if (a.type == LS_ARG_CHAR) {
      AppendUtf8(&text, a.u > 0x10ffff ? 0xfffd : static_cast<char32_t>(a.u));
    } else {
      return;
    }
    AppendJsonString(out, text);
  });
  out->push_back(']');
  return consumed;
}

const Format &FormatCache::Get(uint32_t id, std::string_view fmt) {
  if (id == 0) {
    if (!inline_valid_ || inline_.fmt != fmt) {
      Compile(fmt, &inline_);
      inline_valid_ = true;
    }
    return inline_;
  }
  constexpr uint32_t kDirect = 1u << 20;
  std::unique_ptr<Format> *slot;
  if (id < kDirect) {
    if (id >= by_id_.size()) by_id_.resize(id + 1);
    slot = &by_id_[id];
  } else {
    slot = &big_ids_[id];
  }
  if (!*slot) {
    *slot = std::make_unique<Format>();
    Compile(fmt, slot->get());
  }
  return **slot;
}

}  // namespace logsink::render
