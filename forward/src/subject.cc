// subject.cc: see subject.h.
#include "subject.h"

#include <unistd.h>

namespace logsink::forward {
namespace {

void AppendToken(std::string_view v, std::string *out) {
  if (v.empty()) {
    out->push_back('_');
    return;
  }
  for (char ch : v) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool ok = c > 0x20 && c < 0x7f && c != '.' && c != '*' && c != '>';
    out->push_back(ok ? ch : '_');
  }
}

}  // namespace

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "-";
  return buf;
}

bool SubjectTemplate::Parse(const std::string &text, std::string *error) {
  parts_.clear();
  fixed_ = true;
  host_only_ = false;
  wildcard_.clear();
  if (text.empty()) {
    *error = "the subject is empty";
    return false;
  }
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find('{', pos);
    size_t close_stray = text.find('}', pos);
    if (close_stray != std::string::npos && close_stray < open) {
      *error = "a '}' without its '{' in the subject " + text;
      return false;
    }
    if (open == std::string::npos) {
      parts_.push_back({Kind::kText, text.substr(pos)});
      break;
    }
    if (open > pos) parts_.push_back({Kind::kText, text.substr(pos, open - pos)});
    size_t close = text.find('}', open);
    if (close == std::string::npos) {
      *error = "an unclosed '{' in the subject " + text;
      return false;
    }
    std::string name = text.substr(open + 1, close - open - 1);
    Kind k;
    if (name == "host")
      k = Kind::kHost;
    else if (name == "app")
      k = Kind::kApp;
    else if (name == "comm")
      k = Kind::kComm;
    else if (name == "level")
      k = Kind::kLevel;
    else if (name == "uid")
      k = Kind::kUid;
    else {
      *error =
          "unknown field {" + name + "} in the subject " + text + " (known: " + FieldNames() + ")";
      return false;
    }
    bool token_start = open == 0 || text[open - 1] == '.';
    bool token_end = close + 1 == text.size() || text[close + 1] == '.';
    if (!token_start || !token_end) {
      *error =
          "the field {" + name + "} must be a whole token (between dots) of the subject " + text;
      return false;
    }
    parts_.push_back({k, ""});
    fixed_ = false;
    pos = close + 1;
  }
  host_only_ = !fixed_;
  for (const Part &p : parts_) {
    wildcard_ += p.kind == Kind::kText ? p.text : "*";
    if (p.kind != Kind::kText && p.kind != Kind::kHost) host_only_ = false;
  }
  return true;
}

void SubjectTemplate::Render(const SubjectFields &f, std::string *out) const {
  out->clear();
  for (const Part &p : parts_) {
    switch (p.kind) {
      case Kind::kText:
        out->append(p.text);
        break;
      case Kind::kHost:
        AppendToken(f.host, out);
        break;
      case Kind::kApp:
        AppendToken(f.app, out);
        break;
      case Kind::kComm:
        AppendToken(f.comm, out);
        break;
      case Kind::kLevel:
        AppendToken(f.level, out);
        break;
      case Kind::kUid:
        out->append(std::to_string(f.uid));
        break;
    }
  }
}

}  // namespace logsink::forward
