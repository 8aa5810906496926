// render_ref.h: the client tests' reference renderer: decodes a record's
// argument bytes with proto/args.h by the format's signature and renders the
// format one conversion at a time with snprintf on the decoded values, so a
// test can compare it with snprintf of the original format and arguments.
#pragma once

#include <cstdio>
#include <cstring>
#include <cwchar>
#include <optional>
#include <string>
#include <vector>

#include "logsink/proto/args.h"
#include "logsink/proto/printf.h"

namespace logsink::test {

// Decodes all arguments of fmt from bytes; nullopt when they do not parse exactly.
inline std::optional<std::vector<ls_arg>> DecodeArgs(const std::string &fmt,
                                                     const std::string &bytes) {
  char sig[LS_FMT_MAX_ARGS + 1];
  if (ls_fmt_signature(fmt.data(), fmt.size(), sig, sizeof sig) < 0) return std::nullopt;
  const auto *p = reinterpret_cast<const uint8_t *>(bytes.data());
  const uint8_t *end = p + bytes.size();
  std::vector<ls_arg> out;
  for (const char *s = sig; *s; s++) {
    ls_arg a{};
    size_t n = ls_arg_get(*s, p, end, &a);
    if (!n) return std::nullopt;
    p += n;
    out.push_back(a);
  }
  if (p != end) return std::nullopt;
  return out;
}

// snprintf of one conversion with 0..2 leading '*' ints.
template <class T>
std::string Fmt1(const std::string &f, const std::vector<int> &stars, T v) {
  char buf[8192];
  int n;
  if (stars.empty())
    n = snprintf(buf, sizeof buf, f.c_str(), v);
  else if (stars.size() == 1)
    n = snprintf(buf, sizeof buf, f.c_str(), stars[0], v);
  else
    n = snprintf(buf, sizeof buf, f.c_str(), stars[0], stars[1], v);
  if (n < 0) return "<snprintf error>";
  return std::string(buf, std::min<size_t>(size_t(n), sizeof buf - 1));
}

// Renders fmt with the decoded args. nullopt on a mismatch.
inline std::optional<std::string> Render(const std::string &fmt, const std::vector<ls_arg> &args) {
  std::string out;
  size_t pos = 0, last = 0, ai = 0;
  ls_fmt_spec s;
  int r;
  while ((r = ls_fmt_next(fmt.data(), fmt.size(), &pos, &s)) > 0) {
    out.append(fmt, last, s.start - last);
    last = s.end;
    if (s.type == 0) {
      out += '%';
      continue;
    }
    std::vector<int> stars;
    if (s.width == LS_FMT_STAR) stars.push_back(int(int64_t(args.at(ai++).u)));
    if (s.precision == LS_FMT_STAR) stars.push_back(int(int64_t(args.at(ai++).u)));
    const ls_arg &a = args.at(ai++);
    // The spec up to its length modifier, then a length and conversion that
    // match the decoded C type.
    std::string head = fmt.substr(s.start, s.end - s.start - 1);
    while (!head.empty() && strchr("hlLqjzt", head.back())) head.pop_back();
    switch (a.type) {
      case LS_ARG_INT:
        out += Fmt1(head + "ll" + s.conv, stars, (long long)int64_t(a.u));
        break;
      case LS_ARG_UINT:
        out += Fmt1(head + "ll" + s.conv, stars, (unsigned long long)a.u);
        break;
      case LS_ARG_DOUBLE:
        out += Fmt1(head + s.conv, stars, a.f);
        break;
      case LS_ARG_CHAR:
        if (s.length == LS_LEN_L)
          out += Fmt1(head + "lc", stars, wint_t(a.u));
        else
          out += Fmt1(head + "c", stars, int(a.u));
        break;
      case LS_ARG_STR: {
        std::string v(reinterpret_cast<const char *>(a.s), a.len);
        out += Fmt1(head + "s", stars, v.c_str());
        break;
      }
      case LS_ARG_PTR:
        out += Fmt1(head + "p", stars, reinterpret_cast<void *>(uintptr_t(a.u)));
        break;
      default:
        return std::nullopt;
    }
  }
  if (r < 0 || ai != args.size()) return std::nullopt;
  out.append(fmt, last, std::string::npos);
  return out;
}

// snprintf into a std::string (the expected rendering).
template <class... A>
std::string Snprintf(const char *fmt, A... a) {
  char buf[16384];
  int n = snprintf(buf, sizeof buf, fmt, a...);
  if (n < 0) return "<snprintf error>";
  return std::string(buf, std::min<size_t>(size_t(n), sizeof buf - 1));
}

}  // namespace logsink::test
