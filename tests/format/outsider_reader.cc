// outsider_reader.cc: a reader of the logsink ring file written from
// proto/FORMAT.md and render/RENDERING.md alone (and PROTOCOL.md "Arguments"
// for the argument encoding), without any of logsink's code or headers: the
// test that the documents are enough to read the file and show its records.
// It prints, in reading order (tier 2, tier 1, tier 0, each oldest block
// first), one JSON object per record, and reports on stderr every check of
// the documents a part of the file fails. It reads format versions 5 to 8
// (FORMAT.md, "Versions"; under version 7's FIELD_KEYS it checks that the
// block summary holds every field's key); a site with fields (FORMAT.md
// "Fields") prints its message's format as "fmt" and its typed values as
// "fields" (RENDERING.md, "Named fields"), as do the NAME=VALUE strings of
// a trailing "%.0s" run.
//
//   outsider_reader [--strict] [--no-args] RING
//
// --strict: exit 1 when anything was reported (a file written and closed
// cleanly has nothing to report). Exit 2 when the file cannot be read at all.
#include <fcntl.h>
#include <lz4.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

// Ordered: "fields" keeps the order of the site's field list.
using json = nlohmann::ordered_json;

int g_reports = 0;

template <typename... A>
void Report(const char *fmt, A... a) {
  g_reports++;
  std::fprintf(stderr, "outsider_reader: ");
  std::fprintf(stderr, fmt, a...);
  std::fputc('\n', stderr);
}

// ---- primitives ("All integers are little-endian", CRC32C) ----

uint32_t Crc32c(const uint8_t *p, size_t n) {
  static uint32_t table[256];
  static bool ready = false;
  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      table[i] = c;
    }
    ready = true;
  }
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint64_t Le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
uint16_t U16(const uint8_t *p) { return static_cast<uint16_t>(Le(p, 2)); }
uint32_t U32(const uint8_t *p) { return static_cast<uint32_t>(Le(p, 4)); }
uint64_t U64(const uint8_t *p) { return Le(p, 8); }

// A bounded cursor over bytes; any read past the end sets ok = false.
struct Cur {
  const uint8_t *p;
  const uint8_t *end;
  bool ok = true;

  size_t left() const { return static_cast<size_t>(end - p); }
  uint8_t u8() {
    if (p >= end) return ok = false, 0;
    return *p++;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
      if (p >= end) return ok = false, 0;
      uint8_t b = *p++;
      if (i == 9 && b > 1) return ok = false, 0;  // more than 64 bits
      v |= uint64_t(b & 0x7F) << (7 * i);
      if (!(b & 0x80)) return v;
    }
    return ok = false, 0;
  }
  int64_t zigzag() {
    uint64_t u = varint();
    return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
  }
  std::string bytes(uint64_t n) {
    if (n > left()) return ok = false, std::string();
    std::string s(reinterpret_cast<const char *>(p), n);
    p += n;
    return s;
  }
  std::string str() {
    uint64_t n = varint();
    if (!ok) return {};
    return bytes(n);
  }
};

// ---- the file ----

struct File {
  int fd = -1;
  uint64_t size = 0;
  bool Read(uint64_t off, void *buf, size_t n) const {
    if (off > size || n > size - off) return false;
    size_t got = 0;
    while (got < n) {
      ssize_t r = pread(fd, static_cast<char *>(buf) + got, n - got, static_cast<off_t>(off + got));
      if (r <= 0) return false;
      got += static_cast<size_t>(r);
    }
    return true;
  }
};

// "Version 7 (this document) ... readers of version 7 read all three".
constexpr uint32_t kVersionMin = 5, kVersionMax = 8;
uint32_t g_version = 0;  // the file's

struct Superblock {
  uint32_t version = 0;
  uint64_t generation = 0, file_size = 0;
  uint32_t block_size = 0, block_count = 0;
  uint64_t strtab_off = 0, strtab_size = 0, blocks_off = 0, created = 0, tail_hint = 0;
  uint8_t identity[16] = {};
  uint32_t kept_blocks = 0, error_blocks = 0;
  uint32_t dict_size = 0;
  uint64_t index_size = 0;  // the summary index: this reader reads every block instead
};

// One copy: nullopt when its magic or CRC does not match (version checked by
// the caller, so that two copies naming different versions can be told).
std::optional<Superblock> ParseSuperblock(const uint8_t *b) {
  if (std::memcmp(b, "LSRING\r\n", 8) != 0) return std::nullopt;
  if (U32(b + 12) != Crc32c(b + 16, 128 - 16)) return std::nullopt;
  Superblock s;
  s.version = U32(b + 8);
  s.generation = U64(b + 16);
  s.file_size = U64(b + 24);
  s.block_size = U32(b + 32);
  s.block_count = U32(b + 36);
  s.strtab_off = U64(b + 40);
  s.strtab_size = U64(b + 48);
  s.blocks_off = U64(b + 56);
  s.created = U64(b + 64);
  s.tail_hint = U64(b + 72);
  std::memcpy(s.identity, b + 80, 16);
  s.kept_blocks = U32(b + 96);
  s.error_blocks = U32(b + 100);
  s.dict_size = U32(b + 104);
  s.index_size = U64(b + 112);
  for (int i = 108; i < 128; i++)
    if ((i < 112 || i >= 120) && b[i] != 0)
      Report("superblock (generation %llu): reserved byte %d is not zero",
             (unsigned long long)s.generation, i);
  return s;
}

// ---- the string table ----

struct Site {
  uint32_t id = 0;
  uint32_t line = 0;
  int level = 0;
  bool fields = false;  // flag FIELDS (string table 0x01, inline level byte bit 3)
  std::string fmt, file;
};

constexpr size_t kEntryHead = 20;

// The entry at off if it is valid after an entry of id prev_id; its length in *len.
std::optional<Site> StrtabEntry(const std::vector<uint8_t> &t, size_t off, uint32_t prev_id,
                                size_t *len) {
  if (t.size() - off < kEntryHead) return std::nullopt;
  const uint8_t *e = t.data() + off;
  Site s;
  s.id = U32(e + 4);
  s.line = U32(e + 8);
  s.level = e[12];
  uint16_t fmt_len = U16(e + 14), file_len = U16(e + 16);
  if (s.id <= prev_id || s.level > 7 || fmt_len > 4096 || file_len > 1024) return std::nullopt;
  size_t n = kEntryHead + fmt_len + file_len;
  if (n > t.size() - off) return std::nullopt;
  if (U32(e) != Crc32c(e + 4, n - 4)) return std::nullopt;
  // "flags: 0x01 FIELDS ...; other bits 0 (an entry with another bit set is
  // not valid)"
  if (e[13] & ~0x01u) return std::nullopt;
  s.fields = e[13] & 0x01;
  if (U16(e + 18) != 0)
    Report("string table: entry id %u at offset %zu: reserved %u (0)", s.id, off, U16(e + 18));
  s.fmt.assign(reinterpret_cast<const char *>(e + kEntryHead), fmt_len);
  s.file.assign(reinterpret_cast<const char *>(e + kEntryHead + fmt_len), file_len);
  *len = n;
  return s;
}

std::map<uint32_t, Site> LoadStrtab(const std::vector<uint8_t> &t) {
  std::map<uint32_t, Site> sites;
  size_t last_nonzero = 0;  // one past the last non-zero byte
  for (size_t i = t.size(); i > 0; i--)
    if (t[i - 1] != 0) {
      last_nonzero = i;
      break;
    }
  uint32_t prev = 0;
  size_t off = 0;
  while (off < last_nonzero) {
    size_t len = 0;
    if (auto s = StrtabEntry(t, off, prev, &len)) {
      prev = s->id;
      sites[s->id] = *s;
      off += len;
      continue;
    }
    // Damage: skip byte by byte to the next valid entry; none: the table ends.
    size_t next = off + 1;
    for (; next < last_nonzero; next++)
      if (StrtabEntry(t, next, prev, &len)) break;
    if (next >= last_nonzero) {
      Report(
          "string table: %zu damaged bytes at offset %zu after the last valid entry (id %u) end "
          "the table",
          last_nonzero - off, off, prev);
      break;
    }
    Report("string table: %zu damaged bytes at offset %zu skipped", next - off, off);
    off = next;
  }
  return sites;
}

// ---- arguments (PROTOCOL.md "Arguments", RENDERING.md "Parsing the format") ----

// The signature of fmt ("isuf..."), or nullopt when the format is refused.
std::optional<std::string> Signature(const std::string &f) {
  std::string sig;
  size_t i = 0, n = f.size();
  // "A format that starts with byte 0x1E is a brace format": "one letter
  // per argument ... up to the next 0x1E", then its text up to the first
  // 0x1F, whose field list's conversions follow (FORMAT.md, "Brace formats").
  if (n > 0 && f[0] == '\x1e') {
    for (i = 1; i < n && f[i] != '\x1e'; i++) {
      const char *letters = "iubcfFsp", *wire = "iuucffsp";
      const char *at = f[i] ? std::strchr(letters, f[i]) : nullptr;
      if (!at) return std::nullopt;
      sig += wire[at - letters];
    }
    if (i >= n) return std::nullopt;
    while (i < n && f[i] != '\x1f') i++;
  }
  auto number = [&](bool *bad) {
    uint64_t v = 0;
    while (i < n && f[i] >= '0' && f[i] <= '9') {
      if (v > 100000) *bad = true;
      v = v * 10 + uint64_t(f[i] - '0');
      i++;
    }
  };
  while (i < n) {
    if (f[i] != '%') {
      i++;
      continue;
    }
    size_t start = i++;
    if (i < n && f[i] == '%') {
      i++;
      continue;
    }
    bool bad = false;
    while (i < n && std::strchr("-+ #0'", f[i])) i++;
    if (i < n && f[i] == '*') {
      sig += 'i';
      i++;
    } else {
      number(&bad);
    }
    if (i < n && f[i] == '$') return std::nullopt;
    if (i < n && f[i] == '.') {
      i++;
      if (i < n && f[i] == '*') {
        sig += 'i';
        i++;
      } else {
        number(&bad);
      }
    }
    if (bad) return std::nullopt;
    if (i + 1 < n && ((f[i] == 'h' && f[i + 1] == 'h') || (f[i] == 'l' && f[i + 1] == 'l'))) {
      i += 2;
    } else if (i < n && std::strchr("hlqjztL", f[i])) {
      i++;
    }
    if (i >= n) return std::nullopt;  // ends inside a conversion
    char c = f[i++];
    if (c == '%') return std::nullopt;  // something between % and %
    if (std::strchr("di", c)) {
      sig += 'i';
    } else if (std::strchr("uoxX", c)) {
      sig += 'u';
    } else if (std::strchr("fFeEgGaA", c)) {
      sig += 'f';
    } else if (c == 'c') {
      sig += 'c';
    } else if (c == 's' || c == 'm') {
      sig += 's';
    } else if (c == 'p') {
      sig += 'p';
    } else {
      return std::nullopt;  // %n and unknown conversions
    }
    (void)start;
  }
  if (sig.size() > 64) return std::nullopt;
  return sig;
}

// The arguments by the signature as typed JSON values, as far as they
// decode ("the arguments that decode by the signature", RENDERING.md
// "Records that do not render"); *c is left at the first byte not decoded
// and *all says whether every argument decoded.
json DecodeArgs(const std::string &sig, Cur *cur, bool *all) {
  json a = json::array();
  *all = false;
  for (char t : sig) {
    Cur c = *cur;
    switch (t) {
      case 'i':
        a.push_back(c.zigzag());
        break;
      case 'u':
        a.push_back(c.varint());
        break;
      case 'p': {
        char hex[24];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(c.varint()));
        a.push_back(hex);
        break;
      }
      case 'c': {
        // JSON shows the character (RENDERING.md, "Arguments and narrowing").
        uint64_t cp = c.varint();
        if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
        std::string u;
        if (cp < 0x80) {
          u += static_cast<char>(cp);
        } else if (cp < 0x800) {
          u += static_cast<char>(0xC0 | (cp >> 6));
          u += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          u += static_cast<char>(0xE0 | (cp >> 12));
          u += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          u += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          u += static_cast<char>(0xF0 | (cp >> 18));
          u += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
          u += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          u += static_cast<char>(0x80 | (cp & 0x3F));
        }
        a.push_back(u);
        break;
      }
      case 'f': {
        if (c.left() < 8) return a;
        uint64_t bits = U64(c.p);
        c.p += 8;
        double d;
        std::memcpy(&d, &bits, 8);
        // RENDERING.md, "JSON": finite doubles are numbers, the others the
        // strings the message shows ("nan" by the sign bit only).
        if (std::isnan(d))
          a.push_back(std::signbit(d) ? "-nan" : "nan");
        else if (std::isinf(d))
          a.push_back(d < 0 ? "-inf" : "inf");
        else
          a.push_back(d);
        break;
      }
      case 's':
        a.push_back(c.str());
        break;
    }
    if (!c.ok) {
      a.erase(a.size() - 1);
      return a;
    }
    *cur = c;
  }
  *all = true;
  return a;
}

// ---- named fields (FORMAT.md "Fields", RENDERING.md "Named fields") ----

struct Field {
  std::string name;
  char type;      // the conversion's signature letter (isufcp), or 'b' for :bool
  int bits = 32;  // the length modifier's width: hh 8, h 16, none 32, others 64
};

// A site with FIELDS: its message (the format before the first 0x1F) and its
// field list, or nullopt when the format does not split so ("read as a
// plain format").
struct Split {
  std::string message;
  std::vector<Field> fields;
};

bool NameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '@' || c == '-';
}

std::optional<Split> SplitFields(const std::string &f) {
  const size_t sep = f.find('\x1f');
  if (sep == std::string::npos) return std::nullopt;
  Split out;
  out.message = f.substr(0, sep);
  size_t i = sep + 1, n = f.size();
  // field (' ' field)*
  for (;;) {
    Field fd;
    size_t start = i;
    while (i < n && NameChar(f[i])) i++;
    fd.name = f.substr(start, i - start);
    // "1..64 bytes of A-Z a-z 0-9 _ . @ -, the first not . @ -"
    if (fd.name.empty() || fd.name.size() > 64 || std::strchr(".@-", fd.name[0]))
      return std::nullopt;
    // "unique in the site"
    for (const Field &o : out.fields)
      if (o.name == fd.name) return std::nullopt;
    bool is_bool = false;
    if (f.compare(i, 5, ":bool") == 0) {
      is_bool = true;
      i += 5;
    }
    if (i + 1 >= n || f[i] != '=' || f[i + 1] != '%') return std::nullopt;
    i += 2;
    // "[length] conversion ... without flags, width or precision"
    if (f.compare(i, 2, "hh") == 0) {
      fd.bits = 8;
      i += 2;
    } else if (f.compare(i, 2, "ll") == 0) {
      fd.bits = 64;
      i += 2;
    } else if (i < n && f[i] != '\0' && std::strchr("hlqjztL", f[i])) {
      fd.bits = f[i] == 'h' ? 16 : 64;
      i++;
    }
    if (i >= n) return std::nullopt;
    const char c = f[i++];
    if (c == '\0') return std::nullopt;
    if (std::strchr("di", c))
      fd.type = 'i';
    else if (std::strchr("uoxX", c))
      fd.type = 'u';
    else if (std::strchr("fFeEgGaA", c))
      fd.type = 'f';
    else if (c == 'c')
      fd.type = 'c';
    else if (c == 's' || c == 'm')
      fd.type = 's';
    else if (c == 'p')
      fd.type = 'p';
    else
      return std::nullopt;
    // ":bool makes an integer a bool": on another conversion the document
    // says nothing; taken as a malformed list.
    if (is_bool) {
      if (fd.type != 'i' && fd.type != 'u') return std::nullopt;
      fd.type = 'b';
    }
    out.fields.push_back(fd);
    if (i == n) break;
    if (f[i] != ' ') return std::nullopt;
    i++;
  }
  return out;
}

// The typed value of a field from its decoded argument: "An integer field's
// value is its argument narrowed by the length modifier, as the message would
// print it"; ":bool": "0 false, anything else true".
json FieldValue(const Field &fd, const json &arg) {
  if (!arg.is_number_integer()) return arg;
  const bool is_signed = arg.is_number_integer() && !arg.is_number_unsigned();
  uint64_t v = is_signed ? static_cast<uint64_t>(arg.get<int64_t>()) : arg.get<uint64_t>();
  const bool signed_conv = fd.type == 'i' || (fd.type == 'b' && is_signed);
  if (fd.bits < 64) {
    const uint64_t mask = (uint64_t{1} << fd.bits) - 1;
    v &= mask;
    if (signed_conv && (v >> (fd.bits - 1)) != 0) v |= ~mask;
  }
  if (fd.type == 'b') return v != 0;
  if (signed_conv) return static_cast<int64_t>(v);
  return v;
}

// Version-5 style fields (RENDERING.md, "Named fields", the second way): the
// format ends with a run of "%.0s" conversions whose string arguments read
// NAME=VALUE. Returns the fields ({} when none).
bool OldFieldName(const std::string &s) {
  if (s.empty() || s.size() > 64) return false;
  for (size_t i = 0; i < s.size(); i++) {
    const char c = s[i];
    const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    const bool more = (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (!(alpha || (i > 0 && more))) return false;
  }
  return true;
}

json OldFields(const std::string &f, const std::string &sig, const json &args) {
  json out = json::object();
  // Count the trailing "%.0s" conversions: a "%.0s" preceded by an odd run of
  // '%' is literal text ("%%.0s").
  size_t k = 0, end = f.size();
  while (end >= 4 && f.compare(end - 4, 4, "%.0s") == 0) {
    size_t pct = 0;
    for (size_t i = end - 4; i > 0 && f[i - 1] == '%'; i--) pct++;
    if (pct % 2) break;
    end -= 4;
    k++;
  }
  if (k == 0 || k > sig.size()) return out;
  for (size_t i = sig.size() - k; i < args.size(); i++) {
    const std::string &s = args[i].get_ref<const std::string &>();
    const size_t eq = s.find('=');
    if (eq == std::string::npos || !OldFieldName(s.substr(0, eq))) continue;
    // "each name once, in the order of its first appearance, with its last value"
    out[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return out;
}

// FORMAT.md, "Free-text records": these files' "%.0s" arguments are their
// kind's, never fields; their fields are a FIELDS site's list, if it splits.
bool FreeTextKind(const std::string &file) {
  for (const char *k :
       {"text", "stdout", "stderr", "syslog:rfc3164", "syslog:rfc5424", "syslog:raw", "kernel"})
    if (file == k) return true;
  return false;
}

// ---- blocks ----

constexpr size_t kHeader = 176;

struct Header {
  uint64_t seq, first_record, base_ts, max_ts;
  uint32_t used, count, flags, opened, raw;
  uint8_t codec, levels, tier;
  uint64_t min_filter, max_filter;
  uint8_t boot[16];
  uint64_t open_mono, open_real;
  uint8_t filter[64];
};

struct Tier {
  int index;
  uint32_t first_slot, slots;
};

struct Reader {
  File file;
  Superblock sb;
  std::map<uint32_t, Site> sites;
  bool print_args = true;
  std::map<uint64_t, json> sources;  // "Source ids are unique within a file"
  uint64_t records = 0;
  uint64_t codec_blocks[4] = {};
  // The dictionary region's dictionary ("Dictionary"), when it is valid.
  ZSTD_DDict *dict = nullptr;
  uint32_t dict_id = 0;
  ~Reader() { ZSTD_freeDDict(dict); }

  uint64_t SlotOffset(const Tier &t, uint64_t seq) const {
    return sb.blocks_off + (t.first_slot + seq % t.slots) * uint64_t(sb.block_size);
  }

  // The block in the tier's slot `slot` if it passes the header checks and
  // (crc) the CRC (everything but decoding); why not in *why.
  std::optional<Header> CheckSlot(const Tier &t, uint32_t slot, std::vector<uint8_t> *buf,
                                  std::string *why, bool crc = true) const {
    buf->resize(sb.block_size);
    if (!file.Read(sb.blocks_off + (uint64_t(t.first_slot) + slot) * sb.block_size, buf->data(),
                   sb.block_size)) {
      *why = "short read";
      return std::nullopt;
    }
    const uint8_t *b = buf->data();
    if (U32(b) != 0x4B42534Cu) {
      bool zero = true;
      for (uint8_t x : *buf) zero = zero && x == 0;
      *why = zero ? "never written" : "bad magic";
      return std::nullopt;
    }
    Header h;
    h.seq = U64(b + 8);
    h.first_record = U64(b + 16);
    h.base_ts = U64(b + 24);
    h.max_ts = U64(b + 32);
    h.used = U32(b + 40);
    h.count = U32(b + 44);
    h.flags = U32(b + 48);
    h.opened = U32(b + 52);
    h.raw = U32(b + 56);
    h.codec = b[60];
    h.levels = b[61];
    h.tier = b[62];
    h.min_filter = U64(b + 64);
    h.max_filter = U64(b + 72);
    std::memcpy(h.boot, b + 80, 16);
    h.open_mono = U64(b + 96);
    h.open_real = U64(b + 104);
    std::memcpy(h.filter, b + 112, 64);
    if (h.used < kHeader || h.used > sb.block_size) return *why = "used out of range", std::nullopt;
    if (h.tier != t.index) return *why = "tier byte " + std::to_string(h.tier), std::nullopt;
    if (h.codec > 3) return *why = "unknown codec " + std::to_string(h.codec), std::nullopt;
    if (h.codec == 0 && h.raw != h.used - kHeader)
      return *why = "raw != used - 176 for codec none", std::nullopt;
    if (h.codec != 0 && uint64_t(h.raw) > 32ull * sb.block_size)
      return *why = "raw above 32 x block_size", std::nullopt;
    if (crc && U32(b + 4) != Crc32c(b + 8, h.used - 8)) return *why = "CRC mismatch", std::nullopt;
    if (h.seq % t.slots != slot)
      return *why = "sequence " + std::to_string(h.seq) + " not of this slot", std::nullopt;
    return h;
  }

  // "Tail": the tier's newest valid block, or nullopt when it has none.
  std::optional<uint64_t> Newest(const Tier &t) const {
    std::vector<uint8_t> buf;
    std::string why;
    auto valid_seq = [&](uint32_t slot) -> std::optional<uint64_t> {
      auto h = CheckSlot(t, slot, &buf, &why);
      if (!h) return std::nullopt;
      return h->seq;
    };
    // "a binary search over the headers": the probes and the steps forward
    // check the header only (the CRC is not part of the search).
    auto header_seq = [&](uint32_t slot) -> std::optional<uint64_t> {
      auto h = CheckSlot(t, slot, &buf, &why, false);
      if (!h) return std::nullopt;
      return h->seq;
    };
    std::optional<uint32_t> anchor;
    uint64_t anchor_seq = 0;
    for (uint32_t s = 0; s < 8 && s < t.slots; s++)
      if (auto q = valid_seq(s)) {
        anchor = s, anchor_seq = *q;
        break;
      }
    uint64_t newest;
    uint32_t newest_slot;
    if (anchor) {
      // Slots anchor + d (wrapping) hold anchor_seq + d up to the newest:
      // the largest such d by binary search.
      uint32_t lo = 0, hi = t.slots;  // true at lo, false from hi on
      while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        auto q = header_seq((*anchor + mid) % t.slots);
        if (q && *q == anchor_seq + mid)
          lo = mid;
        else
          hi = mid;
      }
      newest = anchor_seq + lo;
      newest_slot = (*anchor + lo) % t.slots;
      // "Step forward": to the next slot's block, or over one slot to the
      // block after that.
      for (uint32_t step = 0; step + 2 < t.slots; step++) {
        uint32_t next = (newest_slot + 1) % t.slots;
        if (auto q = header_seq(next); q && *q == newest + 1) {
          newest++, newest_slot = next;
          continue;
        }
        uint32_t after = (newest_slot + 2) % t.slots;
        auto q = header_seq(after);
        if (!q || *q != newest + 2) break;
        newest += 2, newest_slot = after;
      }
      // "Then walk back": the newest block whose CRC matches (at worst the anchor).
      while (newest > anchor_seq && !valid_seq(newest_slot)) {
        newest--;
        newest_slot = (newest_slot + t.slots - 1) % t.slots;
      }
    } else {
      std::optional<uint64_t> best;
      for (uint32_t s = 0; s < t.slots; s++)
        if (auto q = valid_seq(s); q && (!best || *q > *best)) best = q;
      if (!best) return std::nullopt;
      newest = *best;
    }
    // Cross-check against a pass over every slot (the binary search relies on
    // the ring being in order; in a healthy file both agree).
    std::optional<uint64_t> best;
    for (uint32_t s = 0; s < t.slots; s++)
      if (auto q = valid_seq(s); q && (!best || *q > *best)) best = q;
    if (best && *best != newest)
      Report("tier %d: tail search found block %llu, the largest valid sequence number is %llu",
             t.index, (unsigned long long)newest, (unsigned long long)*best);
    return newest;
  }

  // Decoded entries of a checked block, or nullopt (reported) when the
  // payload does not decode to exactly raw bytes.
  std::optional<std::vector<uint8_t>> Payload(const Header &h,
                                              const std::vector<uint8_t> &buf) const {
    const uint8_t *src = buf.data() + kHeader;
    size_t n = h.used - kHeader;
    std::vector<uint8_t> out(h.raw);
    if (h.codec == 0) return std::vector<uint8_t>(src, src + n);
    if (h.codec == 1 || h.codec == 3) {
      unsigned long long cs = ZSTD_getFrameContentSize(src, n);
      if (cs != h.raw) {
        Report("block %llu: zstd frame content size %llu, raw %u", (unsigned long long)h.seq, cs,
               h.raw);
        return std::nullopt;
      }
      if (ZSTD_findFrameCompressedSize(src, n) != n) {
        Report("block %llu: the payload is not exactly one zstd frame", (unsigned long long)h.seq);
        return std::nullopt;
      }
      size_t r;
      if (h.codec == 3) {
        // "its frame header names the dictionary's id, which must be the
        // region's id"
        if (!dict || ZSTD_getDictID_fromFrame(src, n) != dict_id) {
          Report("block %llu: codec 3 without the file's dictionary (frame names %u, region %u)",
                 (unsigned long long)h.seq, ZSTD_getDictID_fromFrame(src, n), dict_id);
          return std::nullopt;
        }
        ZSTD_DCtx *dctx = ZSTD_createDCtx();
        r = ZSTD_decompress_usingDDict(dctx, out.data(), out.size(), src, n, dict);
        ZSTD_freeDCtx(dctx);
      } else {
        r = ZSTD_decompress(out.data(), out.size(), src, n);
      }
      if (ZSTD_isError(r) || r != h.raw) {
        Report("block %llu: zstd payload does not decode to %u bytes", (unsigned long long)h.seq,
               h.raw);
        return std::nullopt;
      }
      return out;
    }
    int r = LZ4_decompress_safe(reinterpret_cast<const char *>(src),
                                reinterpret_cast<char *>(out.data()), static_cast<int>(n),
                                static_cast<int>(h.raw));
    if (r < 0 || uint32_t(r) != h.raw) {
      Report("block %llu: lz4 payload does not decode to %u bytes", (unsigned long long)h.seq,
             h.raw);
      return std::nullopt;
    }
    return out;
  }

  // "What is trusted": the record's filter time is its timestamp unless that
  // is more than 60 s before the block's opened time, which then stands in.
  uint64_t FilterTime(const Header &h, uint64_t ts) const {
    if (h.opened == 0) return ts;
    uint64_t opened_ns = sb.created + uint64_t(h.opened - 1) * 1000000000ull;
    if (opened_ns > 60000000000ull && ts < opened_ns - 60000000000ull) return opened_ns;
    return ts;
  }

  static uint64_t Fnv(char type, const std::string &v) {
    uint64_t h = 0xcbf29ce484222325ull;
    auto add = [&](uint8_t b) { h = (h ^ b) * 0x100000001b3ull; };
    add(static_cast<uint8_t>(type));
    for (char c : v) add(static_cast<uint8_t>(c));
    return h;
  }
  static bool FilterHas(const uint8_t *f, char type, const std::string &v) {
    uint64_t h = Fnv(type, v);
    uint32_t lo = static_cast<uint32_t>(h), hi = static_cast<uint32_t>(h >> 32) | 1;
    for (uint32_t i = 0; i < 3; i++) {
      uint32_t bit = (lo + i * hi) % 512;
      if (!(f[bit / 8] & (1u << (bit % 8)))) return false;
    }
    return true;
  }
  // "Block summaries": a field's value key ('f' NAME '=' its text: a
  // string's bytes, an integer in decimal, true/false) or its name key ('F'
  // NAME, the only one a double, a character or a pointer gets).
  static bool FieldKeyed(const uint8_t *f, const Field &fd, const json &v) {
    if (FilterHas(f, 'F', fd.name)) return true;
    std::string text;
    if (fd.type == 'b')
      text = v.get<bool>() ? "true" : "false";
    else if (fd.type == 'i' || fd.type == 'u')
      text = v.dump();
    else if (fd.type == 's')
      text = v.get<std::string>();
    else
      return false;
    return FilterHas(f, 'f', fd.name + "=" + text);
  }
  // A format ending in "%.0s" that is not "%%.0s".
  static bool EndsInHidden(const std::string &fmt) {
    if (fmt.size() < 4 || fmt.compare(fmt.size() - 4, 4, "%.0s") != 0) return false;
    size_t pct = 0;
    for (size_t i = fmt.size() - 4; i > 0 && fmt[i - 1] == '%'; i--) pct++;
    return pct % 2 == 0;
  }
  static std::string U32Bytes(uint64_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; i++) s[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
  }

  // The block's records as JSON; last_record is updated to the last one's
  // sequence number. Violations are reported (and end the block's entries).
  std::vector<json> Entries(const Tier &t, const Header &h, const std::vector<uint8_t> &e) {
    std::vector<json> out;
    Cur c{e.data(), e.data() + e.size()};
    std::optional<uint64_t> source;
    uint64_t tid = 0, ts = h.base_ts, k = 0, gaps = 0;
    std::string boot;
    for (uint8_t x : h.boot) {
      char hex[3];
      std::snprintf(hex, sizeof hex, "%02x", x);
      boot += hex;
    }
    if (boot == std::string(32, '0')) boot.clear();
    uint8_t levels = 0;
    uint64_t min_ft = UINT64_MAX, max_ft = 0, max_ts = 0;
    auto where = [&] {
      return "tier " + std::to_string(t.index) + " block " + std::to_string(h.seq);
    };
    while (c.left() > 0) {
      size_t entry_off = static_cast<size_t>(c.p - e.data());
      uint64_t len = c.varint();
      if (!c.ok || len < 1 || len > c.left()) {
        Report("%s: entry at payload offset %zu: bad length", where().c_str(), entry_off);
        break;
      }
      Cur b{c.p, c.p + len};
      c.p += len;
      uint8_t head = b.u8();
      int kind = head & 3, flags = head & 0x7C;
      if (head & 0x80) {
        Report("%s: entry at payload offset %zu: head bit 7 set", where().c_str(), entry_off);
        break;
      }
      if (kind == 1) {
        json s;
        uint64_t id = b.varint();
        s["pid"] = b.varint();
        s["uid"] = b.varint();
        s["gid"] = b.varint();
        s["app"] = b.str();
        s["comm"] = b.str();
        s["unit"] = b.str();
        if (!b.ok || b.left() != 0) {
          Report("%s: SOURCE at payload offset %zu does not decode exactly", where().c_str(),
                 entry_off);
          break;
        }
        if (flags)
          Report("%s: SOURCE at payload offset %zu has flags 0x%x", where().c_str(), entry_off,
                 flags);
        auto it = sources.find(id);
        if (it != sources.end() && it->second != s)
          Report("%s: source %llu declared again with other values", where().c_str(),
                 (unsigned long long)id);
        sources[id] = s;
        // The summary's source filter must hold its keys.
        bool ok = FilterHas(h.filter, 'u', U32Bytes(s["uid"].get<uint64_t>())) &&
                  FilterHas(h.filter, 'p', U32Bytes(s["pid"].get<uint64_t>())) &&
                  FilterHas(h.filter, 'a', s["app"].get<std::string>()) &&
                  FilterHas(h.filter, 'c', s["comm"].get<std::string>()) &&
                  (s["unit"].get<std::string>().empty() ||
                   FilterHas(h.filter, 'n', s["unit"].get<std::string>()));
        if (!ok)
          Report("%s: source filter misses a key of source %llu", where().c_str(),
                 (unsigned long long)id);
        continue;
      }
      if (kind != 0 && kind != 2) {
        Report("%s: entry at payload offset %zu: unknown kind %d", where().c_str(), entry_off,
               kind);
        break;
      }
      uint64_t gap = 0;
      if (flags & 0x40) {
        gap = b.varint();
        if (t.index == 0)
          Report("%s: GAP in tier 0 (record %llu)", where().c_str(), (unsigned long long)k);
        if (k == 0) Report("%s: GAP on the block's first record", where().c_str());
        if (gap < 1) Report("%s: GAP of 0", where().c_str());
      }
      if (flags & 0x04) source = b.varint();
      json r;
      uint64_t truncated = 0;
      if (kind == 0) {
        if (flags & 0x08) tid = b.varint();
        if (flags & 0x10) truncated = b.varint();
      } else if (flags & ~0x44) {
        Report("%s: DROPPED with flags 0x%x", where().c_str(), flags);
      }
      std::optional<Site> site;
      uint64_t site_id = 0;
      if (kind == 0) {
        if (flags & 0x20) {
          Site s;
          // "An inline site's level byte holds the level in bits 0-2 and
          // FIELDS ... in bit 3 (0x08); bits 4-7 are written 0 and ignored
          // by readers."
          const uint8_t lb = b.u8();
          s.level = lb & 7;
          s.fields = lb & 0x08;
          s.line = static_cast<uint32_t>(b.varint());
          s.fmt = b.str();
          s.file = b.str();
          site = s;
        } else {
          site_id = b.varint();
          if (auto it = sites.find(static_cast<uint32_t>(site_id)); it != sites.end())
            site = it->second;
        }
      }
      ts += static_cast<uint64_t>(b.zigzag());
      gaps += gap;
      uint64_t seq = h.first_record + k + gaps;
      r["seq"] = seq;
      r["ts_ns"] = ts;
      r["filter_ns"] = FilterTime(h, ts);
      r["kind"] = kind == 0 ? "record" : "dropped";
      if (!source) {
        Report("%s: record %llu has no source", where().c_str(), (unsigned long long)seq);
      } else if (auto it = sources.find(*source); it == sources.end()) {
        Report("%s: record %llu names undeclared source %llu", where().c_str(),
               (unsigned long long)seq, (unsigned long long)*source);
      } else {
        for (auto &[key, v] : it->second.items()) r[key] = v;
        r["source"] = *source;
      }
      if (kind == 0) {
        r["tid"] = tid;
        // A site with fields whose format splits: its message and fields.
        std::optional<Split> split;
        if (site && site->fields) split = SplitFields(site->fmt);
        if (site) {
          r["level"] = site->level;
          r["fmt"] = split ? split->message : site->fmt;
          if (split) r["fields_site"] = true;  // (for the test's coverage)
          r["file"] = site->file;
          r["line"] = site->line;
        } else {
          // "Records that do not render": an unknown site is at level info.
          r["level"] = 6;
          r["unknown_site"] = true;
        }
        if (!(flags & 0x20)) r["site"] = site_id;
        if (flags & 0x20) r["inline"] = true;
        if (flags & 0x10) r["truncated"] = truncated;
        Cur a{b.p, b.end};
        auto hex_of = [](const uint8_t *q, const uint8_t *e) {
          std::string hex;
          for (; q < e; q++) {
            char x[3];
            std::snprintf(x, sizeof x, "%02x", *q);
            hex += x;
          }
          return hex;
        };
        if (print_args && site) {
          auto sig = Signature(site->fmt);
          bool all = false;
          // A refused format: no argument decodes, all the bytes are raw.
          json args = sig ? DecodeArgs(*sig, &a, &all) : json::array();
          r["args"] = args;
          if (!all || a.left() != 0) {
            // "the undecoded bytes, all of them, in args_raw" (none: no key)
            if (a.left() != 0) r["args_raw"] = hex_of(a.p, a.end);
            r["mismatch"] = true;
          }
          if ((h.flags & 2) && !split && !FreeTextKind(site->file) && EndsInHidden(site->fmt))
            Report("%s: record %llu: a \"%%.0s\" format under FIELD_KEYS", where().c_str(),
                   (unsigned long long)seq);
          // Named fields: a free-text kind's only from a list that splits.
          // "A record has its fields only when its arguments match the
          // whole signature exactly"; the "%.0s" strings of the arguments
          // that decode.
          if (sig && (split || !FreeTextKind(site->file))) {
            json fields = json::object();
            if (split && all && a.left() == 0) {
              // "The record's arguments are the message's, then one per field in order"
              const size_t first = sig->size() - split->fields.size();
              auto msig = Signature(split->message);
              if (!msig || msig->size() != first)
                Report("%s: record %llu: the message's signature is not the whole one's start",
                       where().c_str(), (unsigned long long)seq);
              for (size_t i = 0; i < split->fields.size(); i++) {
                const Field &fd = split->fields[i];
                fields[fd.name] = FieldValue(fd, args[first + i]);
                if ((h.flags & 2) && fd.name[0] != '_' &&
                    !FieldKeyed(h.filter, fd, fields[fd.name]))
                  Report("%s: record %llu: FIELD_KEYS, but the filter lacks field %s's key",
                         where().c_str(), (unsigned long long)seq, fd.name.c_str());
              }
            } else if (!split) {
              fields = OldFields(site->fmt, *sig, args);
            }
            if (!fields.empty()) r["fields"] = fields;
          }
        } else if (print_args) {
          r["args"] = json::array();
          r["args_raw"] = hex_of(a.p, a.end);
          r["mismatch"] = true;
        }
        if (!b.ok) {
          Report("%s: record %llu does not decode", where().c_str(), (unsigned long long)seq);
          break;
        }
        levels |= static_cast<uint8_t>(site ? 1u << site->level : 0u);
      } else {
        r["level"] = 4;
        r["dropped"] = b.varint();
        r["dropped_since_ns"] = b.varint();
        if (!b.ok || b.left() != 0) {
          Report("%s: DROPPED record %llu does not decode exactly", where().c_str(),
                 (unsigned long long)seq);
          break;
        }
        levels |= 1u << 4;
      }
      r["boot_id"] = boot;
      // RENDERING.md, "Time": the block's monotonic time plus the timestamp
      // minus the block's realtime; 0 without a pair or before the boot,
      // 2^64 - 1 past the top.
      uint64_t mono = 0;
      if (h.open_real != 0 && ts < h.open_real) {
        const uint64_t back = h.open_real - ts;
        mono = back > h.open_mono ? 0 : h.open_mono - back;
        if (back > h.open_mono) r["before_boot"] = true;
      } else if (h.open_real != 0) {
        const uint64_t ahead = ts - h.open_real;
        mono = ahead > ~0ull - h.open_mono ? ~0ull : h.open_mono + ahead;
      }
      r["monotonic_ns"] = mono;
      r["tier"] = t.index;
      r["block"] = h.seq;
      if (h.opened != 0) r["opened_ns"] = sb.created + uint64_t(h.opened - 1) * 1000000000ull;
      uint64_t ft = FilterTime(h, ts);
      min_ft = std::min(min_ft, ft);
      max_ft = std::max(max_ft, ft);
      max_ts = std::max(max_ts, ts);
      out.push_back(std::move(r));
      k++;
    }
    if (k != h.count)
      Report("%s: header counts %u records, the entries hold %llu", where().c_str(), h.count,
             (unsigned long long)k);
    if ((levels & ~h.levels) != 0)
      Report("%s: level summary 0x%02x misses levels 0x%02x", where().c_str(), h.levels,
             levels & ~h.levels);
    if (k > 0 && (min_ft < h.min_filter || max_ft > h.max_filter))
      Report("%s: filter time summary [%llu, %llu] does not cover [%llu, %llu]", where().c_str(),
             (unsigned long long)h.min_filter, (unsigned long long)h.max_filter,
             (unsigned long long)min_ft, (unsigned long long)max_ft);
    if (k > 0 && max_ts != h.max_ts)
      Report("%s: header's largest timestamp %llu, the records' %llu", where().c_str(),
             (unsigned long long)h.max_ts, (unsigned long long)max_ts);
    return out;
  }

  void ReadTier(const Tier &t) {
    auto newest = Newest(t);
    if (!newest) {
      // No valid block: report the slots that are not just never written.
      std::vector<uint8_t> buf;
      for (uint32_t slot = 0; slot < t.slots; slot++) {
        std::string why;
        if (!CheckSlot(t, slot, &buf, &why) && why != "never written")
          Report("tier %d slot %u (offset %llu): no valid block in the tier, skipped: %s", t.index,
                 slot, (unsigned long long)SlotOffset(t, slot), why.c_str());
      }
      return;
    }
    uint64_t oldest = *newest + 1 >= t.slots ? *newest + 1 - t.slots : 0;
    std::vector<uint8_t> buf;
    // The previous block read (none after a skipped one).
    bool have_prev = false, have_last = false;
    uint64_t prev_first = 0, prev_last = 0, prev_count = 0;
    uint32_t prev_opened = 0;
    for (uint64_t seq = oldest; seq <= *newest; seq++) {
      uint32_t slot = static_cast<uint32_t>(seq % t.slots);
      std::string why;
      auto h = CheckSlot(t, slot, &buf, &why);
      if (!h || h->seq != seq) {
        Report("tier %d slot %u (offset %llu): block %llu expected, skipped: %s", t.index, slot,
               (unsigned long long)SlotOffset(t, seq), (unsigned long long)seq,
               h ? ("holds block " + std::to_string(h->seq)).c_str() : why.c_str());
        have_prev = have_last = false;
        continue;
      }
      auto payload = Payload(*h, buf);
      if (!payload) {
        have_prev = have_last = false;
        continue;
      }
      if (h->seq != *newest && !(h->flags & 1))
        Report("tier %d block %llu: not SEALED but not the newest", t.index,
               (unsigned long long)h->seq);
      codec_blocks[h->codec]++;
      // Fields the document fixes: reserved bytes, unknown flags, the zero
      // rest of the slot, opened times that only grow.
      if (buf[63] != 0)
        Report("tier %d block %llu: reserved byte 63 is %u", t.index, (unsigned long long)seq,
               buf[63]);
      // "bit 1 FIELD_KEYS": version 7's.
      if (h->flags & ~(g_version >= 7 ? 3u : 1u))
        Report("tier %d block %llu: unknown flags 0x%x", t.index, (unsigned long long)seq,
               h->flags);
      for (size_t i = h->used; i < buf.size(); i++)
        if (buf[i] != 0) {
          Report("tier %d block %llu: byte %zu past used (%u) is not zero", t.index,
                 (unsigned long long)seq, i, h->used);
          break;
        }
      if (have_prev && h->opened != 0 && h->opened < prev_opened)
        Report("tier %d block %llu: opened %u below the previous block's %u", t.index,
               (unsigned long long)seq, h->opened, prev_opened);
      if (h->opened != 0) prev_opened = h->opened;
      std::vector<json> recs = Entries(t, *h, *payload);
      if (have_prev) {
        if (t.index == 0 && h->first_record != prev_first + prev_count)
          Report("tier 0 block %llu: first record %llu, the previous block ends before %llu",
                 (unsigned long long)h->seq, (unsigned long long)h->first_record,
                 (unsigned long long)(prev_first + prev_count));
        if (t.index != 0 && have_last && h->first_record <= prev_last)
          Report("tier %d block %llu: first record %llu not above the previous block's last %llu",
                 t.index, (unsigned long long)h->seq, (unsigned long long)h->first_record,
                 (unsigned long long)prev_last);
      }
      have_prev = true;
      prev_first = h->first_record;
      prev_count = h->count;
      if (!recs.empty()) have_last = true, prev_last = recs.back()["seq"].get<uint64_t>();
      for (json &r : recs) {
        std::puts(r.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
        records++;
      }
    }
  }
};

}  // namespace

int main(int argc, char **argv) {
  bool strict = false, args = true;
  const char *path = nullptr;
  for (int i = 1; i < argc; i++) {
    std::string_view a = argv[i];
    if (a == "--strict")
      strict = true;
    else if (a == "--no-args")
      args = false;
    else if (!path && !a.starts_with("-"))
      path = argv[i];
    else {
      std::fprintf(stderr, "usage: outsider_reader [--strict] [--no-args] RING\n");
      return 2;
    }
  }
  if (!path) {
    std::fprintf(stderr, "usage: outsider_reader [--strict] [--no-args] RING\n");
    return 2;
  }
  Reader rd;
  rd.print_args = args;
  rd.file.fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (rd.file.fd < 0 || fstat(rd.file.fd, &st) != 0) {
    std::fprintf(stderr, "outsider_reader: %s: %s\n", path, std::strerror(errno));
    return 2;
  }
  rd.file.size = static_cast<uint64_t>(st.st_size);

  // Superblock: the valid copy with the higher generation.
  std::optional<Superblock> best;
  std::vector<uint32_t> versions;
  for (int copy = 0; copy < 2; copy++) {
    uint8_t b[128];
    if (!rd.file.Read(uint64_t(copy) * 4096, b, sizeof b)) continue;
    auto s = ParseSuperblock(b);
    if (!s) {
      Report("superblock copy %c: magic or CRC does not match", 'A' + copy);
      continue;
    }
    versions.push_back(s->version);
    if (s->version < kVersionMin || s->version > kVersionMax) continue;
    if (s->generation % 2 != uint64_t(copy))
      Report("superblock copy %c holds generation %llu", 'A' + copy,
             (unsigned long long)s->generation);
    if (!best || s->generation > best->generation) best = s;
  }
  // "two such copies naming different versions are reported as damage;
  // copies naming two versions this reader reads are not (the upgrade)"
  auto readable = [](uint32_t v) { return v >= kVersionMin && v <= kVersionMax; };
  if (versions.size() == 2 && versions[0] != versions[1] &&
      !(readable(versions[0]) && readable(versions[1])))
    Report("superblock copies name versions %u and %u", versions[0], versions[1]);
  if (!best) {
    if (!versions.empty())
      std::fprintf(stderr,
                   "outsider_reader: %s: format version %u, this reader reads versions %u to %u\n",
                   path, versions[0], kVersionMin, kVersionMax);
    else
      std::fprintf(stderr, "outsider_reader: %s: no valid superblock\n", path);
    return 2;
  }
  Superblock &sb = best.value();
  rd.sb = sb;
  g_version = sb.version;
  bool pow2 = sb.block_size >= 4096 && sb.block_size <= (1u << 20) &&
              (sb.block_size & (sb.block_size - 1)) == 0;
  uint64_t tiers_slots = uint64_t(sb.kept_blocks) + sb.error_blocks;
  // "dict_size is 32768 when (file_size - dict_off - 32768) / block_size is
  // at least 64, else 0"
  const uint64_t dict_off = sb.strtab_off + sb.strtab_size;
  const uint32_t want_dict = pow2 && sb.file_size >= dict_off + 32768 &&
                                     (sb.file_size - dict_off - 32768) / sb.block_size >= 64
                                 ? 32768
                                 : 0;
  // "index_size, when dict_size is not 0: with rest = file_size - index_off
  // and n = rest / (block_size + 128) + 1, size = n * 128 rounded up to a
  // multiple of 4096; index_size = size when rest >= size and (rest - size)
  // / block_size is at least 64, else 0"
  const uint64_t index_off = dict_off + sb.dict_size;
  uint64_t want_index = 0;
  if (pow2 && sb.dict_size && sb.file_size > index_off) {
    const uint64_t rest = sb.file_size - index_off;
    const uint64_t size = ((rest / (sb.block_size + 128) + 1) * 128 + 4095) / 4096 * 4096;
    if (rest >= size && (rest - size) / sb.block_size >= 64) want_index = size;
  }
  if (!pow2 || sb.strtab_off != 8192 || sb.dict_size != want_dict || sb.index_size != want_index ||
      sb.blocks_off != index_off + sb.index_size || sb.block_count < 2 ||
      sb.file_size != rd.file.size ||
      sb.blocks_off + uint64_t(sb.block_count) * sb.block_size > sb.file_size ||
      (sb.file_size - sb.blocks_off) / sb.block_size != sb.block_count || sb.kept_blocks == 1 ||
      sb.error_blocks == 1 || tiers_slots >= sb.block_count) {
    std::fprintf(stderr, "outsider_reader: %s: impossible geometry\n", path);
    return 2;
  }

  std::vector<uint8_t> strtab(sb.strtab_size);
  if (!rd.file.Read(sb.strtab_off, strtab.data(), strtab.size())) {
    std::fprintf(stderr, "outsider_reader: %s: short string table\n", path);
    return 2;
  }
  rd.sites = LoadStrtab(strtab);
  if (sb.dict_size) {
    std::vector<uint8_t> region(sb.dict_size);
    if (!rd.file.Read(dict_off, region.data(), region.size())) {
      std::fprintf(stderr, "outsider_reader: %s: short dictionary region\n", path);
      return 2;
    }
    const uint8_t *d = region.data();
    const uint32_t len = U32(d + 8), id = U32(d + 12);
    if (U32(d) == 0) {
      // "A region whose magic is 0 holds no dictionary."
    } else if (U32(d) != 0x4344534Cu || len == 0 || len > sb.dict_size - 32 ||
               U32(d + 4) != Crc32c(d + 8, 24 + len) || id == 0 || len < 8 ||
               U32(d + 32) != 0xEC30A437u || U32(d + 32 + 4) != id) {
      Report("the dictionary region does not check (%u bytes)", len);
    } else {
      rd.dict = ZSTD_createDDict(d + 32, len);
      rd.dict_id = id;
      if (!rd.dict) Report("zstd refuses the dictionary %u", id);
    }
  }

  uint32_t t0 = sb.block_count - sb.kept_blocks - sb.error_blocks;
  std::vector<Tier> tiers = {
      {0, 0, t0}, {1, t0, sb.kept_blocks}, {2, t0 + sb.kept_blocks, sb.error_blocks}};
  for (int i = 2; i >= 0; i--)
    if (tiers[size_t(i)].slots > 0) rd.ReadTier(tiers[size_t(i)]);
  std::fprintf(
      stderr,
      "outsider_reader: %s: version %u, generation %llu, %u blocks of %u (tiers %u/%u/%u), "
      "%zu sites, %llu records, blocks by codec none/zstd/lz4/zstd+dict %llu/%llu/%llu/%llu, "
      "%d reports\n",
      path, sb.version, (unsigned long long)sb.generation, sb.block_count, sb.block_size, t0,
      sb.kept_blocks, sb.error_blocks, rd.sites.size(), (unsigned long long)rd.records,
      (unsigned long long)rd.codec_blocks[0], (unsigned long long)rd.codec_blocks[1],
      (unsigned long long)rd.codec_blocks[2], (unsigned long long)rd.codec_blocks[3], g_reports);
  return strict && g_reports > 0 ? 1 : 0;
}
