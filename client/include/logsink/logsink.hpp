// logsink.hpp: the C++ API of liblogsink (C++17, header-only over the C
// library of logsink.h): `{}` formats checked at compile time by fmt, the
// argument types taken at compile time.
//
//   #include <logsink/logsink.hpp>
//   ls_client *c = ls_open(nullptr, "web", nullptr);
//   LS_FMT(c, LS_INFO, "GET {} took {:.3f} s", path, seconds);
//   LS_FMT(c, LS_WARNING, "disk {} full" LS_FIELDS("user={} req={}"), disk, user, req);
//   LS_FMT_ERR("no route to {}", host);            // the default client
//
// What a call costs: the call site is a static ls_site made at compile time
// (its format holds the argument types, proto/braces.h), interned once per
// connection as with LS_LOG; a call checks the site's level (one load and
// a branch while it is off), takes a timestamp, and copies its arguments
// into the thread's buffer, encoded by code the compiler generated for
// their types: no format is parsed at run time, nothing is formatted in the
// program. Readers (logctl, the forwarder) render the record exactly as
// fmt::format would print the same format and values (render/RENDERING.md,
// "Brace formats"), with widths and precisions above 4096 clamped.
//
// Formats: a string literal in fmt's syntax (that of C++20 std::format):
// `{}`, `{0}`, `{:>8}`, `{:#x}`, `{:.{}f}`..., no named arguments. It is
// checked against the arguments when the program compiles (FMT_STRING):
// a format that does not match its arguments does not compile, nor does
// `{:}` or a named width or precision (`{:{w}}`), which fmt 9's check
// lets through but LS_FMT cannot log. The level
// is a constant (LS_ERR, LS_INFO, ...); the client nullptr is the default
// client, as for LS_LOG.
//
// Arguments and how they show: signed and unsigned integers of any width
// (as 64-bit: `{:x}` of int -1 shows "-1", as fmt prints it), bool, char
// (a character; signed and unsigned char are integers, as in fmt), float
// and double (long double as double), strings (const char *, std::string,
// std::string_view, char arrays; a null const char * shows "(null)"),
// pointers (void * and other object pointers, nullptr: shown as 0x...),
// enums (as their underlying integer), and any type T for which
// logsink::arg_traits<T> is specialized with a static function `convert`
// returning one of these (say, a std::string):
//
//   template <> struct logsink::arg_traits<Point> {
//     static std::string convert(const Point &p) { return fmt::format("({}, {})", p.x, p.y); }
//   };
//
// Fields: LS_FIELDS("name={} ...") after the message names the last
// arguments, one `name={}` each (`name:bool={}` not needed: a bool argument
// is a bool field); the names follow LS_FIELDS's rules in logsink.h.
//
// A daemon older than brace formats gets the site as a printf format of the
// same arguments (the text, then each value: "GET {} took {:.3f} s %s %g"),
// so the values are kept. Records larger than max_record_bytes have their
// strings cut as LS_LOG cuts them. Not in the census of call sites until
// they fire (`logctl sites --all`). Needs <fmt/format.h> (Debian's
// libfmt-dev) at compile time only; links with liblogsink alone.
#ifndef LOGSINK_LOGSINK_HPP
#define LOGSINK_LOGSINK_HPP

#include <fmt/format.h>
#include <logsink/logsink.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace logsink {

// Specialize with `static R convert(const T &)`, R one of the supported
// types (above), to log a T.
template <typename T, typename = void>
struct arg_traits {};

namespace detail {

// ---- the wire types of PROTOCOL.md, "Arguments" ----------------------------

// The value a supported argument is logged as, or void.
template <typename T, typename = void>
struct norm {
  using type = void;
};
template <typename T>
struct norm<T, std::enable_if_t<std::is_integral_v<T> && std::is_signed_v<T> &&
                                !std::is_same_v<T, char> && !std::is_same_v<T, bool>>> {
  using type = int64_t;
};
template <typename T>
struct norm<T, std::enable_if_t<std::is_integral_v<T> && std::is_unsigned_v<T> &&
                                !std::is_same_v<T, char> && !std::is_same_v<T, bool>>> {
  using type = uint64_t;
};
template <>
struct norm<char> {
  using type = char;
};
template <>
struct norm<bool> {
  using type = bool;
};
template <>
struct norm<float> {
  using type = float;
};
template <>
struct norm<double> {
  using type = double;
};
template <>
struct norm<long double> {
  using type = double;
};
template <typename T>
struct norm<T, std::enable_if_t<std::is_enum_v<T>>> {
  using type = typename norm<std::underlying_type_t<T>>::type;
};
template <>
struct norm<const char *> {
  using type = std::string_view;
};
template <>
struct norm<char *> {
  using type = std::string_view;
};
template <>
struct norm<std::string> {
  using type = std::string_view;
};
template <>
struct norm<std::string_view> {
  using type = std::string_view;
};
template <size_t N>
struct norm<char[N]> {
  using type = std::string_view;
};
template <size_t N>
struct norm<const char[N]> {
  using type = std::string_view;
};
template <>
struct norm<std::nullptr_t> {
  using type = const void *;
};
template <typename T>
struct norm<T *, std::enable_if_t<!std::is_same_v<std::remove_cv_t<T>, char>>> {
  using type = const void *;
};
// A type with arg_traits: what its convert returns, normalized.
template <typename T, typename = void>
struct has_traits : std::false_type {};
template <typename T>
struct has_traits<T, std::void_t<decltype(arg_traits<T>::convert(std::declval<const T &>()))>>
    : std::true_type {};
template <typename T>
struct norm<T, std::enable_if_t<has_traits<T>::value>> {
  using conv = std::decay_t<decltype(arg_traits<T>::convert(std::declval<const T &>()))>;
  using type = typename norm<conv>::type;
};

template <typename T>
using norm_t = typename norm<std::remove_cv_t<std::remove_reference_t<T>>>::type;

// The type letter of a normalized type (proto/braces.h).
template <typename N>
constexpr char letter() {
  if constexpr (std::is_same_v<N, int64_t>) return 'i';
  if constexpr (std::is_same_v<N, uint64_t>) return 'u';
  if constexpr (std::is_same_v<N, bool>) return 'b';
  if constexpr (std::is_same_v<N, char>) return 'c';
  if constexpr (std::is_same_v<N, double>) return 'f';
  if constexpr (std::is_same_v<N, float>) return 'F';
  if constexpr (std::is_same_v<N, std::string_view>) return 's';
  if constexpr (std::is_same_v<N, const void *>) return 'p';
  return 0;
}

// A field's printf conversion for a type letter (proto/fields.h).
constexpr const char *field_conv(char t) {
  switch (t) {
    case 'i':
      return "=%lld";
    case 'u':
      return "=%llu";
    case 'b':
      return ":bool=%llu";
    case 'c':
      return "=%c";
    case 'f':
    case 'F':
      return "=%f";
    case 's':
      return "=%s";
    default:
      return "=%p";
  }
}

constexpr size_t cstrlen(const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}

// The site's format, made at compile time from the literal (Text::get())
// and the argument letters: 0x1E letters 0x1E message [0x1F fields], the
// fields' `name={}` turned into `name=%conv` of their arguments' types.
template <typename Text, char... L>
struct site_format {
  static constexpr const char *text = Text::get();
  static constexpr size_t text_len = cstrlen(text);
  static constexpr size_t msg_len = [] {
    size_t i = 0;
    while (i < text_len && text[i] != '\x1f') i++;
    return i;
  }();
  static constexpr size_t nfields = [] {
    size_t n = 0;
    for (size_t i = msg_len; i < text_len; i++) n += text[i] == '{';
    return n;
  }();
  static constexpr std::array<char, sizeof...(L) + 1> letters = {L..., 0};
  static constexpr size_t nargs = sizeof...(L);
  static_assert(nfields <= nargs, "LS_FMT: more fields than arguments");
  static constexpr size_t nmsg = nargs - nfields;
  // Writes the format to out (nullptr: only counts); returns its bytes.
  static constexpr size_t write(char *out) {
    size_t o = 0;
    auto put = [&](char c) {
      if (out) out[o] = c;
      o++;
    };
    put('\x1e');
    for (size_t i = 0; i < nmsg; i++) put(letters[i]);
    put('\x1e');
    for (size_t i = 0; i < msg_len; i++) put(text[i]);
    size_t f = nmsg;
    for (size_t i = msg_len; i < text_len; i++) {
      if (text[i] == '=' && i + 1 < text_len && text[i + 1] == '{') continue;
      if (text[i] == '{') {
        for (const char *c = field_conv(letters[f++]); *c; c++) put(*c);
        i++; /* its '}' */
      } else {
        put(text[i]);
      }
    }
    put('\0');
    return o;
  }
};

template <typename F>
constexpr auto make_format() {
  std::array<char, F::write(nullptr)> out{};
  F::write(out.data());
  return out;
}
template <typename F>
inline constexpr auto format_v = make_format<F>();

// Each field of the literal must be `name={}`: checked at compile time.
template <typename Text>
constexpr bool fields_ok() {
  constexpr const char *t = Text::get();
  size_t i = 0;
  while (t[i] && t[i] != '\x1f') i++;
  if (!t[i]) return true;
  for (i++; t[i]; i++) {
    if (t[i] == '{' && (t[i + 1] != '}' || t[i - 1] != '=')) return false;
    if (t[i] == '}' && t[i - 1] != '{') return false;
  }
  return true;
}

// Where a spec's fill-and-align ends: t[k] is the first byte after ':'.
// The fill is any one character (UTF-8), '}' included, when an align
// ('<', '>', '^') follows it.
constexpr bool is_align(char c) { return c == '<' || c == '>' || c == '^'; }
constexpr size_t after_fill_align(const char *t, size_t k) {
  const unsigned char c = static_cast<unsigned char>(t[k]);
  const size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
  for (size_t j = 0; j < n; j++)
    if (!t[k + j]) return k;
  if (is_align(t[k + n])) return k + n + 1;
  if (is_align(t[k])) return k + 1;
  return k;
}

// No `{:}` or `{N:}` (fmt 9's compile-time check lets it through, its
// formatting throws, and proto/braces.h refuses it); `{:}<5}` is a fill.
template <typename Text>
constexpr bool no_empty_spec() {
  constexpr const char *t = Text::get();
  for (size_t i = 0; t[i]; i++) {
    if (t[i] == '{' && t[i + 1] == '{') {
      i++;
      continue;
    }
    if (t[i] != '{') continue;
    size_t k = i + 1;
    while (t[k] >= '0' && t[k] <= '9') k++;
    if (t[k] == ':' && t[k + 1] == '}' && after_fill_align(t, k + 1) == k + 1) return false;
  }
  return true;
}

// No named width or precision (`{:{w}}`, `{:.{p}}`): fmt 9's compile-time
// check lets them through, but LS_FMT passes no named arguments, and
// proto/braces.h refuses them (the client would count the call as an error
// at run time). Only the message is read: LS_FIELDS's list (after 0x1F)
// holds `name={}` alone.
template <typename Text>
constexpr bool no_named_nested() {
  constexpr const char *t = Text::get();
  for (size_t i = 0; t[i] && t[i] != '\x1f'; i++) {
    if (t[i] != '{') continue;
    if (t[i + 1] == '{') {
      i++;
      continue;
    }
    size_t j = i + 1;
    while (t[j] && t[j] != ':' && t[j] != '}') j++;  // the argument id
    if (t[j] == ':') j = after_fill_align(t, j + 1);
    while (t[j] && t[j] != '}') {  // the rest of the spec, nested fields included
      if (t[j] == '{') {
        if (t[j + 1] != '}' && !(t[j + 1] >= '0' && t[j + 1] <= '9')) return false;
        while (t[j] && t[j] != '}') j++;
      }
      if (t[j]) j++;
    }
    if (!t[j]) break;
    i = j;
  }
  return true;
}

// ---- conversion and encoding -------------------------------------------------

template <typename T>
constexpr decltype(auto) convert(const T &v) {
  if constexpr (has_traits<T>::value)
    return arg_traits<T>::convert(v);
  else
    return (v);
}

// The normalized value of an argument (after arg_traits).
template <typename N, typename T>
inline N value(const T &v) {
  using D = std::remove_cv_t<std::remove_reference_t<T>>;
  if constexpr (std::is_same_v<N, std::string_view>) {
    if constexpr (std::is_pointer_v<D>) {
      return v ? std::string_view(v) : std::string_view("(null)");
    } else if constexpr (std::is_array_v<D>) {
      return std::string_view(v, ::strnlen(v, sizeof v));
    } else {
      return std::string_view(v);
    }
  } else if constexpr (std::is_same_v<N, const void *>) {
    return static_cast<const void *>(v);
  } else if constexpr (std::is_enum_v<D>) {
    return static_cast<N>(static_cast<std::underlying_type_t<D>>(v));
  } else {
    return static_cast<N>(v);
  }
}

// Worst-case bytes of a value (a string: its exact bytes).
inline size_t varint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}
template <typename N>
inline size_t worst(const N &v) {
  if constexpr (std::is_same_v<N, std::string_view>)
    return varint_len(v.size()) + v.size();
  else if constexpr (std::is_floating_point_v<N>)
    return 8;
  else
    return 10;
}
template <typename N>
inline size_t least(const N &) {
  if constexpr (std::is_same_v<N, std::string_view>)
    return 1;
  else if constexpr (std::is_floating_point_v<N>)
    return 8;
  else
    return 10;
}

inline unsigned char *put_varint(unsigned char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return p;
}

// How many bytes of s fit `room`, whole UTF-8 characters. Out of line:
// a cut is rare, and inlined into a call with a string literal GCC's
// -Warray-bounds takes the loop for a read past the literal (it cannot see
// that s.size() > room rules that out) and fails -Werror builds.
[[gnu::noinline, gnu::cold]] inline size_t utf8_cut(std::string_view s, size_t room) {
  if (s.size() <= room) return s.size();
  size_t n = room;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) n--;
  return n;
}

// Writes one value; `room` bounds a string (its prefix included), whose
// cut bytes go to *trunc.
template <typename N>
inline unsigned char *put(unsigned char *p, const N &v, size_t room, uint64_t *trunc) {
  if constexpr (std::is_same_v<N, int64_t>) {
    return put_varint(p, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  } else if constexpr (std::is_same_v<N, uint64_t>) {
    return put_varint(p, v);
  } else if constexpr (std::is_same_v<N, bool>) {
    *p = v ? 1 : 0;
    return p + 1;
  } else if constexpr (std::is_same_v<N, char>) {
    return put_varint(p, static_cast<unsigned char>(v));
  } else if constexpr (std::is_floating_point_v<N>) {
    const double d = static_cast<double>(v);
    std::memcpy(p, &d, 8);
    return p + 8;
  } else if constexpr (std::is_same_v<N, std::string_view>) {
    size_t keep = v.size();
    if (varint_len(keep) + keep > room) {
      keep = utf8_cut(v, room > varint_len(v.size()) ? room - varint_len(v.size()) : 0);
      *trunc += v.size() - keep;
    }
    p = put_varint(p, keep);
    std::memcpy(p, v.data(), keep);
    return p + keep;
  } else {
    return put_varint(p, reinterpret_cast<uintptr_t>(v));
  }
}

template <typename... N, size_t... I>
inline void encode(ls__slot &slot, const std::tuple<N...> &vals, size_t need,
                   std::index_sequence<I...>) {
  unsigned char *p = slot.args;
  uint64_t trunc = 0;
  if (need <= slot.cap) {
    ((p = put(p, std::get<I>(vals), SIZE_MAX, &trunc)), ...);
  } else {
    // Cut strings to fit: each gets what is left minus the least the
    // values after it need (as LS_LOG does).
    const size_t least_after[] = {0, least(std::get<I>(vals))...};
    size_t rest = 0;
    for (size_t k = 1; k < sizeof least_after / sizeof *least_after; k++) rest += least_after[k];
    unsigned char *const end = slot.args + slot.cap;
    (((rest -= least_after[I + 1]),
      (p = put(p, std::get<I>(vals),
               static_cast<size_t>(end - p) > rest ? static_cast<size_t>(end - p) - rest : 0,
               &trunc))),
     ...);
  }
  ls__slot_close(&slot, static_cast<size_t>(p - slot.args), trunc);
}

// One call of a site: the arguments converted, sized, encoded in place.
template <typename... A>
inline void emit(ls_client *c, ls_site *site, const A &...args) {
  // What arg_traits returned is held here for the call's duration.
  std::tuple<decltype(convert(args))...> converted{convert(args)...};
  std::apply(
      [&](const auto &...cv) {
        std::tuple<norm_t<decltype(cv)>...> vals{value<norm_t<decltype(cv)>>(cv)...};
        size_t need = 0;
        std::apply([&](const auto &...v) { need = (size_t{0} + ... + worst(v)); }, vals);
        ls__slot slot;
        if (ls__slot_open(c, site, need, &slot) == 1)
          encode(slot, vals, need, std::index_sequence_for<A...>{});
      },
      converted);
}

// The static site of one LS_FMT, and its compile-time checks.
template <typename Text, int Level, typename... A>
struct site {
  static_assert((!std::is_same_v<norm_t<A>, void> && ...),
                "LS_FMT: an argument of a type logsink does not log (specialize "
                "logsink::arg_traits for it)");
  static_assert(fields_ok<Text>(), "LS_FMT: each field of LS_FIELDS must be `name={}`");
  static_assert(cstrlen(Text::get()) == Text::size(),
                "LS_FMT: the format holds a 0 byte (the site would keep only what is before it)");
  static_assert(no_empty_spec<Text>(),
                "LS_FMT: `{:}` (an empty spec after ':'): fmt 9 throws on it when it "
                "formats; write `{}`");
  static_assert(no_named_nested<Text>(),
                "LS_FMT: a named width or precision (`{:{w}}`): LS_FMT has no named "
                "arguments; write `{:{}}` with the value among the arguments");
  static_assert(Level >= 0 && Level <= 7, "LS_FMT: the level must be LS_EMERG .. LS_DEBUG");
  static inline ls_site value = {format_v<site_format<Text, letter<norm_t<A>>()...>>.data(),
                                 Text::file(),
                                 Text::line(),
                                 Level,
                                 nullptr,
                                 0,
                                 0};
};

}  // namespace detail
}  // namespace logsink

// LS_FMT(client, level, fmt, ...): logs a record with a `{}` format (see
// the top of this file). The statement has no value; errors and drops are
// counted in ls_stats as for LS_LOG.
// The format is the first of the macro's variable arguments (so that a
// call without arguments needs no GNU comma elision); log_at receives it
// again, as a literal it does not use.
#define LS_FMT(client, level, ...)                                                  \
  do {                                                                              \
    struct ls__fmt_text {                                                           \
      static constexpr const char *get() { return LS__FIRST(__VA_ARGS__); }         \
      static constexpr size_t size() { return sizeof(LS__FIRST(__VA_ARGS__)) - 1; } \
      static constexpr const char *file() { return __FILE__; }                      \
      static constexpr int line() { return __LINE__; }                              \
    };                                                                              \
    if (LS__LEVEL_ON(level))                                                        \
      ::logsink::detail::log_at<ls__fmt_text, (level)>(                             \
          (client), FMT_STRING(LS__FIRST(__VA_ARGS__)), __VA_ARGS__);               \
  } while (0)

namespace logsink::detail {
// LS_FMT's call: checks the format against the normalized argument types
// (fmt's compile-time check, no code at run time) and logs.
template <typename Text, int Level, typename S, size_t N, typename... A>
inline void log_at(ls_client *c, S fs, const char (&)[N], const A &...args) {
  (void)fmt::format_string<norm_t<A>...>(fs);
  using Site = site<Text, Level, A...>;
  emit(c, &Site::value, args...);
}
}  // namespace logsink::detail

// Default-client shorthands.
#define LS_FMT_EMERG(...) LS_FMT(nullptr, LS_EMERG, __VA_ARGS__)
#define LS_FMT_ALERT(...) LS_FMT(nullptr, LS_ALERT, __VA_ARGS__)
#define LS_FMT_CRIT(...) LS_FMT(nullptr, LS_CRIT, __VA_ARGS__)
#define LS_FMT_ERR(...) LS_FMT(nullptr, LS_ERR, __VA_ARGS__)
#define LS_FMT_WARNING(...) LS_FMT(nullptr, LS_WARNING, __VA_ARGS__)
#define LS_FMT_WARN(...) LS_FMT(nullptr, LS_WARNING, __VA_ARGS__)
#define LS_FMT_NOTICE(...) LS_FMT(nullptr, LS_NOTICE, __VA_ARGS__)
#define LS_FMT_INFO(...) LS_FMT(nullptr, LS_INFO, __VA_ARGS__)
#define LS_FMT_DEBUG(...) LS_FMT(nullptr, LS_DEBUG, __VA_ARGS__)

#endif
