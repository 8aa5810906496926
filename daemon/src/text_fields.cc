// text_fields.cc: see text_fields.h.
#include "text_fields.h"

#include "logsink/proto/fields.h"
#include "syslog_parse.h"

namespace logsink::daemon {
namespace {

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUnescaped(std::string_view v, Unescape u, std::string *out) {
  for (size_t i = 0; i < v.size(); i++) {
    const char c = v[i];
    if (c == '\\' && i + 1 < v.size()) {
      const char n = v[i + 1];
      if (u == Unescape::kSd && (n == '"' || n == '\\' || n == ']')) {
        out->push_back(n);
        i++;
        continue;
      }
      int hi, lo;
      if (u == Unescape::kKernel && n == 'x' && i + 3 < v.size() && (hi = Hex(v[i + 2])) >= 0 &&
          (lo = Hex(v[i + 3])) >= 0) {
        out->push_back(char(hi * 16 + lo));
        i += 3;
        continue;
      }
    }
    out->push_back(c);
  }
}

}  // namespace

void TextFieldList::Clear() {
  buf_.clear();
  offs_.clear();
  views_.clear();
  too_many_ = false;
  bad_names_ = 0;
}

bool TextFieldList::Has(std::string_view name) const {
  for (const Off &o : offs_)
    if (std::string_view(buf_).substr(o.name, o.name_len) == name) return true;
  return false;
}

void TextFieldList::Add(std::string_view prefix, std::string_view name, std::string_view value,
                        Unescape u) {
  const size_t at = buf_.size();
  if (!prefix.empty()) {
    buf_.append(prefix);
    buf_.push_back('.');
  }
  buf_.append(name);
  const std::string_view full = std::string_view(buf_).substr(at);
  if (!ls_field_name_ok(full.data(), full.size(), 0)) {
    bad_names_++;
    buf_.resize(at);
    return;
  }
  // Bounded: at most kMaxTextFields names are compared.
  if (Has(full)) {
    buf_.resize(at);
    return;
  }
  if (offs_.size() >= kMaxTextFields) {
    too_many_ = true;
    buf_.resize(at);
    return;
  }
  const size_t v = buf_.size();
  AppendUnescaped(value, u, &buf_);
  offs_.push_back({uint32_t(at), uint32_t(v - at), uint32_t(v), uint32_t(buf_.size() - v)});
}

const std::vector<TextField> &TextFieldList::fields() {
  views_.clear();
  for (const Off &o : offs_)
    views_.push_back({std::string_view(buf_).substr(o.name, o.name_len),
                      std::string_view(buf_).substr(o.value, o.value_len)});
  return views_;
}

void SdFields(std::string_view sd, TextFieldList *out) {
  SdParams it(sd);
  SdParam p;
  while (it.Next(&p)) out->Add(p.id, p.name, p.value, Unescape::kSd);
}

void KmsgDictFields(std::string_view dict, TextFieldList *out) {
  while (!dict.empty()) {
    const size_t e = dict.find('\n');
    const std::string_view line = dict.substr(0, e);
    dict.remove_prefix(e == std::string_view::npos ? dict.size() : e + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    out->Add({}, line.substr(0, eq), line.substr(eq + 1), Unescape::kKernel);
  }
}

}  // namespace logsink::daemon
