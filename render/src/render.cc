// render.cc: the type-safe message renderer (see render.h).
#include "logsink/render/render.h"

#include <fmt/args.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <exception>

#include "logsink/proto/args.h"
#include "logsink/proto/fields.h"
#include "logsink/proto/format.h"
#include "logsink/render/escape.h"

namespace logsink::render {
namespace {

constexpr char kLowerHex[] = "0123456789abcdef";
constexpr char kUpperHex[] = "0123456789ABCDEF";

int Clamp(int v) { return v > kMaxWidth ? kMaxWidth : v; }

// Narrows a value to the width printf's length modifier gives it (args.h).
uint64_t Narrow(int length, uint64_t v, bool is_signed) {
  return ls_arg_narrow(length, v, is_signed);
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

// C semantics of d i u o x X with flags, width and precision, and of a
// non-null %p (conv 'p'): glibc prints it as %#lx that keeps the '+' and ' '
// flags.
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
      case 'p':
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
  char prefix[3];
  size_t np = 0;
  if (conv == 'd' || conv == 'i' || conv == 'p') {
    if (negative)
      prefix[np++] = '-';
    else if (flags & LS_FMT_PLUS)
      prefix[np++] = '+';
    else if (flags & LS_FMT_SPACE)
      prefix[np++] = ' ';
  }
  if (conv == 'p' || ((conv == 'x' || conv == 'X') && (flags & LS_FMT_HASH) && !was_zero)) {
    prefix[np++] = '0';
    prefix[np++] = conv == 'X' ? 'X' : 'x';
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

// No double has more significant decimal digits than this (2^-1074 has 751,
// the most is 767): past them its exact expansion has ended and every further
// digit is 0.
constexpr int kExactDigits = 767;

// The first n >= 1 significant decimal digits of a (finite, >= 0), rounded to
// nearest with ties to even as glibc does, into *digits (exactly n of them);
// returns the decimal exponent of the first one (0 for a == 0). fmt makes the
// digits (its precision is exact up to kExactDigits); the rest are zeros.
int SignificantDigits(double a, int n, std::string *digits) {
  char buf[kExactDigits + 32];
  const int asked = n < kExactDigits ? n : kExactDigits;
  auto r = fmt::format_to_n(buf, sizeof buf, "{:.{}e}", a, asked - 1);
  const char *end = buf + (r.size < sizeof buf ? r.size : sizeof buf);
  const char *q = buf;
  digits->clear();
  for (; q < end && *q != 'e'; q++)
    if (*q != '.') digits->push_back(*q);
  int exp = 0;
  bool neg = q + 1 < end && q[1] == '-';
  for (q += 2; q < end; q++) exp = exp * 10 + (*q - '0');
  if (static_cast<int>(digits->size()) < n) digits->append(n - digits->size(), '0');
  return neg ? -exp : exp;
}

// Appends the fixed-point form of 0.d1d2d3... x 10^(exp + 1) with prec
// fraction digits, digits past the given ones being 0 (no rounding here).
void AppendFixedDigits(std::string_view digits, int exp, int prec, std::string *b) {
  auto digit = [&](int64_t i) {
    return i >= 0 && static_cast<uint64_t>(i) < digits.size() ? digits[i] : '0';
  };
  if (exp < 0) {
    b->push_back('0');
  } else {
    for (int i = 0; i <= exp; i++) b->push_back(digit(i));
  }
  if (prec > 0) {
    b->push_back('.');
    for (int k = 1; k <= prec; k++) b->push_back(digit(int64_t{exp} + k));
  }
}

// Appends "e+XX": the exponent with a sign and at least two digits.
void AppendExponent(int exp, char e, std::string *b) {
  b->push_back(e);
  b->push_back(exp < 0 ? '-' : '+');
  unsigned v = exp < 0 ? 0u - static_cast<unsigned>(exp) : static_cast<unsigned>(exp);
  if (v < 10) b->push_back('0');
  fmt::format_to(std::back_inserter(*b), "{}", v);
}

// %f of a (finite, >= 0) without sign or padding.
void FixedBody(double a, int prec, bool hash, std::string *b) {
  // fmt's fixed precision is exact as long as it makes at most kExactDigits
  // digits (integer digits and prec fraction digits); a double has at most 309
  // integer digits, and none below 1.
  if (prec <= kExactDigits - 309 || (a < 1 && prec <= kExactDigits)) {
    fmt::format_to(std::back_inserter(*b), "{:.{}f}", a, prec);
  } else {
    // Round the exact expansion at the last fraction digit asked for: that is
    // n significant digits after the first (exponent exp).
    std::string digits;
    int exp = SignificantDigits(a, kExactDigits, &digits);
    // Here prec > 458 and a >= 1, or prec > 767 and a >= 2^-1074 (or 0):
    // n >= 445, and only below kExactDigits is there anything to round.
    const int n = exp + 1 + prec;
    if (n < kExactDigits) exp = SignificantDigits(a, n > 1 ? n : 1, &digits);
    AppendFixedDigits(digits, exp, prec, b);
  }
  if (prec == 0 && hash) b->push_back('.');
}

// %e of a (finite, >= 0) without sign or padding.
void ExpBody(double a, int prec, bool hash, bool upper, std::string *b) {
  std::string digits;
  int exp = SignificantDigits(a, prec + 1, &digits);
  b->push_back(digits[0]);
  if (prec > 0 || hash) b->push_back('.');
  b->append(digits, 1, std::string::npos);
  AppendExponent(exp, upper ? 'E' : 'e', b);
}

// %g of a (finite, >= 0) without sign or padding: P significant digits
// (precision, 6 if absent, 1 if 0) in %f style when the exponent X of the %e
// form is in [-4, P), else in %e style; without '#' the trailing zeros of the
// fraction go, and the decimal point with them.
void GeneralBody(double a, int prec, bool hash, bool upper, std::string *b) {
  const int p = prec < 0 ? 6 : prec == 0 ? 1 : prec;
  std::string digits;
  int exp = SignificantDigits(a, p, &digits);
  const size_t start = b->size();
  const bool fixed = exp < p && exp >= -4;
  if (fixed) {
    AppendFixedDigits(digits, exp, p - 1 - exp, b);
  } else {
    b->push_back(digits[0]);
    if (p > 1) {
      b->push_back('.');
      b->append(digits, 1, std::string::npos);
    }
  }
  if (hash && !fixed && exp == p && p > 1 &&
      digits.find_first_not_of('0', 1) == std::string::npos) {
    // glibc's quirk: when %#g chose %f style for a value below 10^P and
    // rounding carried it to 10^P (style e), it prints "1.e+P" without the
    // P - 1 zeros C asks for. Whether it carried shows in the exact digits.
    std::string exact;
    if (SignificantDigits(a, kExactDigits, &exact) == p - 1) {
      b->resize(start + 2);  // "1."
      AppendExponent(exp, upper ? 'E' : 'e', b);
      return;
    }
  }
  if (hash) {
    if (b->find('.', start) == std::string::npos) b->push_back('.');
  } else if (b->find('.', start) != std::string::npos) {
    while (b->back() == '0') b->pop_back();
    if (b->back() == '.') b->pop_back();
  }
  if (!fixed) AppendExponent(exp, upper ? 'E' : 'e', b);
}

// %a of a (finite, >= 0) without sign, "0x" or padding, as glibc prints a
// double: a leading 1 (0 for zero and subnormals, whose exponent is -1022),
// the 52 fraction bits as 13 hex digits without their trailing zeros, or
// rounded to nearest (ties to even) at the precision, and a decimal exponent.
// Rounding may make the leading digit 2 (1 for a subnormal).
void HexBody(double a, int prec, bool hash, bool upper, std::string *b) {
  const char *hex = upper ? kUpperHex : kLowerHex;
  uint64_t bits;
  memcpy(&bits, &a, sizeof bits);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
  int lead = biased == 0 ? 0 : 1;
  const int exp = biased == 0 ? (frac == 0 ? 0 : -1022) : biased - 1023;
  int d[13];
  for (int i = 0; i < 13; i++) d[i] = static_cast<int>((frac >> (48 - 4 * i)) & 15);
  int nd = 13;
  while (nd > 0 && d[nd - 1] == 0) nd--;
  if (prec >= 0 && prec < nd) {
    const int last = prec > 0 ? d[prec - 1] : lead;
    const bool more = (d[prec] & 7) != 0 || prec + 1 < nd;
    if (d[prec] >= 8 && (more || (last & 1))) {
      int i = prec - 1;
      for (; i >= 0 && d[i] == 15; i--) d[i] = 0;
      if (i >= 0)
        d[i]++;
      else
        lead++;
    }
    nd = prec;
  }
  const int shown = prec < 0 ? nd : prec;
  b->push_back(hex[lead]);
  if (shown > 0 || hash) b->push_back('.');
  for (int i = 0; i < nd; i++) b->push_back(hex[d[i]]);
  if (shown > nd) b->append(shown - nd, '0');
  b->push_back(upper ? 'P' : 'p');
  b->push_back(exp < 0 ? '-' : '+');
  fmt::format_to(std::back_inserter(*b), "{}", exp < 0 ? -exp : exp);
}

// f F e E g G a A as glibc prints a double (in the C locale: '.' as the
// decimal point, the ' flag has no effect), with our own layout of sign,
// prefix and padding; the digits come from fmt (decimal) or the bits (hex).
void FormatDouble(std::string *out, char conv, unsigned flags, int width, int precision, double d) {
  const bool upper = conv == 'F' || conv == 'E' || conv == 'G' || conv == 'A';
  const bool hash = (flags & LS_FMT_HASH) != 0;
  const bool finite = std::isfinite(d);
  const double a = std::fabs(d);
  char head[3];
  size_t nh = 0;
  if (std::signbit(d))
    head[nh++] = '-';
  else if (flags & LS_FMT_PLUS)
    head[nh++] = '+';
  else if (flags & LS_FMT_SPACE)
    head[nh++] = ' ';
  std::string body;
  if (!finite) {
    body = std::isnan(d) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
  } else {
    switch (conv) {
      case 'f':
      case 'F':
        FixedBody(a, precision < 0 ? 6 : precision, hash, &body);
        break;
      case 'e':
      case 'E':
        ExpBody(a, precision < 0 ? 6 : precision, hash, upper, &body);
        break;
      case 'g':
      case 'G':
        GeneralBody(a, precision, hash, upper, &body);
        break;
      default:  // a A
        head[nh++] = '0';
        head[nh++] = upper ? 'X' : 'x';
        HexBody(a, precision, hash, upper, &body);
        break;
    }
  }
  const size_t len = nh + body.size();
  const size_t w = width > 0 ? static_cast<size_t>(width) : 0;
  const size_t pad = w > len ? w - len : 0;
  const bool zero_pad = finite && (flags & LS_FMT_ZERO) && !(flags & LS_FMT_MINUS);
  if (!(flags & LS_FMT_MINUS) && !zero_pad) Pad(out, pad, ' ');
  out->append(head, nh);
  if (zero_pad) Pad(out, pad, '0');
  out->append(body);
  if (flags & LS_FMT_MINUS) Pad(out, pad, ' ');
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

// The text fmt is handed for a brace format: every field numbered, its
// width and precision numbers (nested ones resolved from vals, which may be
// null when none is nested) clamped to kMaxWidth. Throws fmt::format_error
// for a nested width or precision that is negative or not an integer.
void BraceText(const Format &f, const ls_arg *vals, std::string *text) {
  auto number = [&](long n, int arg) -> long {
    if (arg >= 0) {
      // fmt takes only integers here when it formats (a bool or char
      // passes its compile-time check, then throws)
      if (f.types[arg] == 'b' || f.types[arg] == 'c')
        throw fmt::format_error("width/precision is not integer");
      const ls_arg &a = vals[arg];
      const bool negative = f.types[arg] == 'i' && static_cast<int64_t>(a.u) < 0;
      if (negative) throw fmt::format_error("negative width or precision");
      return a.u > static_cast<uint64_t>(kMaxWidth) ? kMaxWidth : static_cast<long>(a.u);
    }
    return n > kMaxWidth ? kMaxWidth : n;
  };
  size_t lit = 0;
  for (const ls_brace_field &bf : f.brace_fields) {
    text->append(f.fmt, lit, bf.start - lit);
    lit = bf.end;
    std::string spec;
    if (bf.fill_len) spec.append(f.fmt, bf.fill, bf.fill_len);
    if (bf.align) spec.push_back(bf.align);
    if (bf.sign) spec.push_back(bf.sign);
    if (bf.hash) spec.push_back('#');
    if (bf.zero) spec.push_back('0');
    if (bf.width != LS_BRACE_NONE || bf.width_arg >= 0) {
      const long w = number(bf.width, bf.width_arg);
      // A nested width of 0 is fmt's "no width": written as none.
      if (w > 0) fmt::format_to(std::back_inserter(spec), "{}", w);
    }
    if (bf.precision != LS_BRACE_NONE || bf.precision_arg >= 0)
      fmt::format_to(std::back_inserter(spec), ".{}", number(bf.precision, bf.precision_arg));
    if (bf.locale) spec.push_back('L');
    if (bf.ptype) spec.push_back(bf.ptype);
    // fmt refuses "{0:}": an empty spec goes without its ':'.
    fmt::format_to(std::back_inserter(*text), "{{{}{}{}}}", bf.arg, spec.empty() ? "" : ":", spec);
  }
  text->append(f.fmt, lit, std::string::npos);
}

// A brace format's message (proto/braces.h): its type letters begin the
// signature (ls_fmt_signature's: a 0x1F left in msg, a field list the site
// does not split, adds its conversions after them), its text's fields are
// kept for RenderBraces, and the text for fmt is built here when it depends
// on no value. False when it does not parse.
bool CompileBraces(std::string_view msg, Format *out) {
  ls_braces b;
  char sig[LS_FMT_MAX_ARGS + 1];
  if (ls_braces_split(msg.data(), msg.size(), &b) != 1 ||
      ls_fmt_signature(msg.data(), msg.size(), sig, sizeof sig) < 0)
    return false;
  out->braces = true;
  out->types.assign(msg.substr(b.types, b.ntypes));
  out->sig = sig;
  out->fmt.assign(msg.substr(b.text, b.text_len));
  ls_brace_iter it;
  ls_brace_field bf;
  int r;
  ls_brace_begin(&it, msg.data(), &b);
  bool nested = false;
  while ((r = ls_brace_next(&it, &bf)) > 0) {
    out->brace_fields.push_back(bf);
    nested = nested || bf.width_arg >= 0 || bf.precision_arg >= 0;
  }
  if (r != 0) return false;
  if (!nested) {
    BraceText(*out, nullptr, &out->brace_text);
    out->brace_text_ready = true;
  }
  return true;
}

// The message of a brace format with its values: the text is given to fmt
// again with every field numbered, its width and precision numbers (nested
// ones resolved from their arguments) clamped to kMaxWidth, so what shows is
// what fmt::format prints for the same text and values (RENDERING.md, "Brace
// formats"). Throws fmt::format_error for a spec that does not suit its
// value, and for a nested width or precision that is negative or not an
// integer.
void RenderBraces(const Format &f, const ls_arg *vals, std::string *out) {
  fmt::dynamic_format_arg_store<fmt::format_context> store;
  for (size_t i = 0; i < f.types.size(); i++) {
    const ls_arg &a = vals[i];
    switch (f.types[i]) {
      case 'i':
        store.push_back(static_cast<int64_t>(a.u));
        break;
      case 'u':
        store.push_back(a.u);
        break;
      case 'b':
        store.push_back(a.u != 0);
        break;
      case 'c':
        store.push_back(static_cast<char>(a.u));
        break;
      case 'f':
        store.push_back(a.f);
        break;
      case 'F':
        store.push_back(static_cast<float>(a.f));
        break;
      case 's':
        store.push_back(fmt::string_view(reinterpret_cast<const char *>(a.s), a.len));
        break;
      default:  // 'p'
        store.push_back(reinterpret_cast<const void *>(static_cast<uintptr_t>(a.u)));
        break;
    }
  }
  if (f.brace_text_ready) {
    fmt::vformat_to(std::back_inserter(*out), f.brace_text, store);
    return;
  }
  std::string text;
  BraceText(f, vals, &text);
  fmt::vformat_to(std::back_inserter(*out), text, store);
}

}  // namespace

void Compile(std::string_view fmt, Format *out, uint8_t site_flags) {
  out->specs.clear();
  out->sig.clear();
  out->fields.clear();
  out->braces = false;
  out->types.clear();
  out->brace_fields.clear();
  out->brace_text.clear();
  out->brace_text_ready = false;
  out->ok = false;
  // A site with fields: the message is what comes before 0x1F, the field
  // list's conversions follow its arguments. A reader takes trusted ('_')
  // names too: only the daemon can have written them.
  size_t msg = fmt.size();
  if ((site_flags & LS_ST_F_FIELDS) && ls_fields_check(fmt.data(), fmt.size(), 1) > 0)
    msg = ls_fields_message_len(fmt.data(), fmt.size());
  size_t pos = 0;
  ls_fmt_spec s;
  int r = 0;
  if (!fmt.empty() && fmt[0] == LS_BRACES_MARK) {
    if (!CompileBraces(fmt.substr(0, msg), out)) return;
  } else {
    out->fmt.assign(fmt.substr(0, msg));
  }
  while (!out->braces && (r = ls_fmt_next(out->fmt.data(), out->fmt.size(), &pos, &s)) > 0) {
    out->specs.push_back(s);
    if (s.type == 0) continue;
    if (s.width == LS_FMT_STAR) out->sig.push_back(LS_ARG_INT);
    if (s.precision == LS_FMT_STAR) out->sig.push_back(LS_ARG_INT);
    out->sig.push_back(s.type);
  }
  if (r == 0 && msg < fmt.size()) {
    ls_field f;
    size_t at = msg;
    while ((r = ls_field_next(fmt.data(), fmt.size(), msg, &at, &f)) > 0) {
      out->fields.push_back(
          {std::string(f.name, f.name_len), f.type, out->sig.size(), f.conv.length});
      out->sig.push_back(f.arg_type);
    }
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
        FormatInteger(out, 'p', flags, width, precision, false, u);
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
  if (f.braces) {
    try {
      RenderBraces(f, vals, out);
    } catch (const std::exception &) {
      out->resize(start);
      AppendMismatch(f, args, out);
      return false;
    }
    return true;
  }
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

namespace {

// One argument as AppendJsonArgs writes it.
void AppendJsonValue(const ls_arg &a, std::string *out) {
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
}

}  // namespace

size_t AppendJsonArgs(const Format *f, std::string_view args, std::string *out) {
  size_t count;
  size_t consumed =
      AppendArgList(f, args, ",", out, &count, [out](const ls_arg &a) { AppendJsonValue(a, out); });
  out->push_back(']');
  return consumed;
}

bool AppendJsonArgsExact(const Format *f, std::string_view args, std::string *out) {
  constexpr uint64_t kExact = 1ull << 53;  // every integer up to it is a double
  bool big = false;
  size_t count;
  AppendArgList(f, args, ",", out, &count, [out, &big](const ls_arg &a) {
    if (a.type != LS_ARG_INT && a.type != LS_ARG_UINT) return AppendJsonValue(a, out);
    int64_t i = static_cast<int64_t>(a.u);
    big |= a.type == LS_ARG_INT ? (i > int64_t(kExact) || i < -int64_t(kExact)) : a.u > kExact;
    out->push_back('"');
    AppendInteger(a, out);
    out->push_back('"');
  });
  out->push_back(']');
  return big;
}

void AppendArgJson(const ls_arg &a, std::string *out) { AppendJsonValue(a, out); }

uint64_t NarrowInteger(int length, uint64_t v, bool is_signed) {
  return Narrow(length, v, is_signed);
}

void AppendArgText(const ls_arg &a, std::string *out) {
  switch (a.type) {
    case LS_ARG_INT:
    case LS_ARG_UINT:
      return AppendInteger(a, out);
    case LS_ARG_DOUBLE:
      return AppendDoubleShortest(a.f, out);
    case LS_ARG_CHAR:
      return AppendUtf8(out, a.u > 0x10ffff ? 0xfffd : static_cast<char32_t>(a.u));
    case LS_ARG_STR:
      out->append(reinterpret_cast<const char *>(a.s), a.len);
      return;
    case LS_ARG_PTR:
      fmt::format_to(std::back_inserter(*out), "{:#x}", a.u);
      return;
    default:
      return;
  }
}

const Format &FormatCache::Get(uint32_t id, std::string_view fmt, uint8_t site_flags) {
  if (id == 0) {
    if (!inline_valid_ || inline_full_ != fmt || inline_flags_ != site_flags) {
      Compile(fmt, &inline_, site_flags);
      inline_full_.assign(fmt);
      inline_flags_ = site_flags;
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
    Compile(fmt, slot->get(), site_flags);
  }
  return **slot;
}

}  // namespace logsink::render
