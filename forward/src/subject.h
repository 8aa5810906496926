// subject.h: NATS subject templates. `--subject logs.{host}.{app}.{level}`
// names each record's subject from its fields, so that consumers subscribe
// to what they need (logs.*.nginx.err) without reading everything. A field
// value becomes one subject token: bytes other than printable ASCII, and
// the characters NATS gives a meaning in subjects (. * > and space), become
// '_'; an empty value becomes '_'.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace logsink::forward {

// The fields a template may name.
struct SubjectFields {
  std::string_view host;   // this host's name
  std::string_view app;    // the app label, else the process name
  std::string_view comm;   // the process name
  std::string_view level;  // emerg alert crit err warning notice info debug
  unsigned uid = 0;
};

// This host's name, as {host} and the messages name it ("-" when unknown).
std::string HostName();

class SubjectTemplate {
 public:
  // False with *error for an unknown field, an unclosed brace, or a field
  // that does not fill a whole token (logs.x{app}: the stream's wildcard
  // could not capture it).
  bool Parse(const std::string &text, std::string *error);
  // True when the template names no field (one subject for every record).
  bool fixed() const { return fixed_; }
  // True when every field it names is {host}: one subject for every record
  // of this host, so batches can use it (Finish() renders it up front).
  bool host_only() const { return host_only_; }
  // The subject of a record with these fields.
  void Render(const SubjectFields &f, std::string *out) const;
  // The subject filter that captures every rendered subject (each field
  // token becomes *): what --create-stream gives the stream.
  const std::string &wildcard() const { return wildcard_; }

  static const char *FieldNames() { return "host app comm level uid"; }

 private:
  enum class Kind { kText, kHost, kApp, kComm, kLevel, kUid };
  struct Part {
    Kind kind;
    std::string text;
  };
  std::vector<Part> parts_;
  bool fixed_ = true, host_only_ = false;
  std::string wildcard_;
};

}  // namespace logsink::forward
