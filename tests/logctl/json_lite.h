// json_lite.h: a strict little JSON parser for the logctl tests: checks that
// a line is valid JSON (RFC 8259) and gives access to its values.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace jsonlite {

struct Value {
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject } type = kNull;
  bool b = false;
  std::string num;  // the number's text
  std::string str;  // decoded string (UTF-8)
  std::vector<Value> arr;
  std::map<std::string, Value> obj;

  bool has(const std::string &k) const { return type == kObject && obj.count(k); }
  const Value &operator[](const std::string &k) const { return obj.at(k); }
  long long i() const { return std::stoll(num); }
  unsigned long long u() const { return std::stoull(num); }
};

class Parser {
 public:
  explicit Parser(const std::string &s) : s_(s) {}
  // Parses the whole input as one value; false on any error.
  bool Parse(Value *v) {
    Ws();
    if (!ParseValue(v, 0)) return false;
    Ws();
    return i_ == s_.size();
  }

 private:
  void Ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      i_++;
  }
  bool Lit(const char *w) {
    size_t n = std::char_traits<char>::length(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  static void PutUtf8(std::string *o, uint32_t cp) {
    if (cp < 0x80) {
      o->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      o->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      o->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      o->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      o->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      o->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      o->push_back(static_cast<char>(0xf0 | (cp >> 18)));
      o->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      o->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      o->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }
  bool Hex4(uint32_t *v) {
    if (i_ + 4 > s_.size()) return false;
    *v = 0;
    for (int k = 0; k < 4; k++) {
      char c = s_[i_++];
      *v <<= 4;
      if (c >= '0' && c <= '9')
        *v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        *v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        *v |= c - 'A' + 10;
      else
        return false;
    }
    return true;
  }
  // Validates UTF-8 of one multi-byte sequence starting at i_.
  bool Utf8(std::string *o) {
    auto c = static_cast<unsigned char>(s_[i_]);
    size_t n = c >= 0xc2 && c <= 0xdf   ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
    if (!n || i_ + n > s_.size()) return false;
    uint32_t cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
    for (size_t k = 1; k < n; k++) {
      auto d = static_cast<unsigned char>(s_[i_ + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    o->append(s_, i_, n);
    i_ += n;
    return true;
  }
  bool String(std::string *o) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    i_++;
    while (i_ < s_.size()) {
      auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        i_++;
        return true;
      }
      if (c < 0x20) return false;
      if (c >= 0x80) {
        if (!Utf8(o)) return false;
        continue;
      }
      if (c != '\\') {
        o->push_back(static_cast<char>(c));
        i_++;
        continue;
      }
      if (++i_ >= s_.size()) return false;
      char e = s_[i_++];
      switch (e) {
        case '"':
          o->push_back('"');
          break;
        case '\\':
          o->push_back('\\');
          break;
        case '/':
          o->push_back('/');
          break;
        case 'b':
          o->push_back('\b');
          break;
        case 'f':
          o->push_back('\f');
          break;
        case 'n':
          o->push_back('\n');
          break;
        case 'r':
          o->push_back('\r');
          break;
        case 't':
          o->push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t lo;
            if (!Lit("\\u") || !Hex4(&lo) || lo < 0xdc00 || lo > 0xdfff) return false;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return false;
          }
          PutUtf8(o, cp);
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }
  bool Number(std::string *o) {
    size_t st = i_;
    if (i_ < s_.size() && s_[i_] == '-') i_++;
    if (i_ >= s_.size()) return false;
    if (s_[i_] == '0') {
      i_++;
    } else if (s_[i_] >= '1' && s_[i_] <= '9') {
      while (i_ < s_.size() && isdigit(static_cast<unsigned char>(s_[i_]))) i_++;
    } else {
      return false;
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      i_++;
      size_t d = i_;
      while (i_ < s_.size() && isdigit(static_cast<unsigned char>(s_[i_]))) i_++;
      if (i_ == d) return false;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      i_++;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) i_++;
      size_t d = i_;
      while (i_ < s_.size() && isdigit(static_cast<unsigned char>(s_[i_]))) i_++;
      if (i_ == d) return false;
    }
    o->assign(s_, st, i_ - st);
    return true;
  }
  bool ParseValue(Value *v, int depth) {
    if (depth > 64 || i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{') {
      v->type = Value::kObject;
      i_++;
      Ws();
      if (i_ < s_.size() && s_[i_] == '}') return i_++, true;
      for (;;) {
        Ws();
        std::string k;
        if (!String(&k)) return false;
        Ws();
        if (i_ >= s_.size() || s_[i_++] != ':') return false;
        Ws();
        Value child;
        if (!ParseValue(&child, depth + 1)) return false;
        if (v->obj.count(k)) return false;  // duplicate keys: reject in tests
        v->obj[k] = std::move(child);
        Ws();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == ',') {
          i_++;
          continue;
        }
        if (s_[i_] == '}') return i_++, true;
        return false;
      }
    }
    if (c == '[') {
      v->type = Value::kArray;
      i_++;
      Ws();
      if (i_ < s_.size() && s_[i_] == ']') return i_++, true;
      for (;;) {
        Ws();
        Value child;
        if (!ParseValue(&child, depth + 1)) return false;
        v->arr.push_back(std::move(child));
        Ws();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == ',') {
          i_++;
          continue;
        }
        if (s_[i_] == ']') return i_++, true;
        return false;
      }
    }
    if (c == '"') return v->type = Value::kString, String(&v->str);
    if (Lit("true")) return v->type = Value::kBool, v->b = true, true;
    if (Lit("false")) return v->type = Value::kBool, v->b = false, true;
    if (Lit("null")) return v->type = Value::kNull, true;
    v->type = Value::kNumber;
    return Number(&v->num);
  }
  const std::string &s_;
  size_t i_ = 0;
};

inline bool Parse(const std::string &s, Value *v) { return Parser(s).Parse(v); }

}  // namespace jsonlite
