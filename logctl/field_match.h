// field_match.h: reading by named field, as journalctl does: the FIELD=VALUE
// matches of the reading commands (`logctl user=alice`, `logctl _PID=42`)
// and -F FIELD's list of distinct values. A field is a record's named field
// (render/fields.h: a site's typed fields, or the NAME=VALUE strings of a
// format-5 "%.0s" record) or a trusted one (_PID, _UID, ...), which a reader
// derives from the record's source and no client can write. A value matches
// when its text (render::AppendFieldText; the trusted ones' as
// render::TrustedField gives it) equals VALUE byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "logsink/render/fields.h"
#include "logsink/render/render.h"
#include "logsink/storage/record.h"
#include "logsink/storage/record_filter.h"

namespace logsink::logctl {

// Whether name is a field to match or list: a field name as proto/fields.h
// allows one (1 to 64 letters, digits, '_', '.', '@', '-'; not '.', '@' or
// '-' first), and, when it starts with '_', one of the trusted fields. Else
// false with the reason in *why.
bool CheckFieldName(std::string_view name, std::string *why);

// A record's fields, looked up by name. One per thread (it keeps compiled
// formats and the fields of the record loaded last).
class FieldLookup {
 public:
  // Makes rec the record the lookups below read (rec must outlive them).
  void Load(const storage::Record &rec) {
    rec_ = &rec;
    have_fields_ = false;
  }
  // The loaded record's value of name as text, or null when it has no such
  // field (valid until the next call). A name starting with '_' is a trusted
  // field, derived from the record's source, never one of its stored fields.
  const std::string *Text(std::string_view name);
  // The same value as a JSON value (-F with --json): typed fields as
  // render::AppendFieldJson writes them, format-5 strings as JSON strings,
  // _PID, _UID, _GID and _TID as numbers, the other trusted ones as strings.
  // Appends to *out.
  bool Json(std::string_view name, std::string *out);

 private:
  const render::FieldValue *Find(std::string_view name);

  const storage::Record *rec_ = nullptr;
  bool have_fields_ = false;
  render::FormatCache formats_;
  std::vector<render::FieldValue> fields_;
  std::string tmp_;
};

// FIELD=VALUE matches, as journalctl takes them: values of one field OR,
// different fields AND, and "+" between groups ORs the groups.
class FieldMatcher {
 public:
  using Term = storage::RecordFilter::FieldTerm;
  using Group = std::vector<Term>;

  // One FIELD=VALUE word (split at its first '='), added to the current
  // group. False with the reason in *why when FIELD is not a field name.
  bool Add(std::string_view word, std::string *why);
  // "+": the next matches form a new group. False when the current group
  // is empty (a "+" first, or two in a row).
  bool NewGroup(std::string *why);
  // After the last word: false when the last group is empty (a "+" last).
  bool Finish(std::string *why) const;

  bool empty() const { return groups_.empty(); }
  // The groups, for the reader's filter (RecordFilter::field_groups: its
  // summaries pass over blocks that cannot match).
  const std::vector<Group> &groups() const { return groups_; }
  // Whether rec passes: some group whose every field has one of its values.
  // Thread-safe as long as each thread has its own lookup.
  bool Match(const storage::Record &rec, FieldLookup *lookup) const;

 private:
  std::vector<Group> groups_;
  bool open_ = false;  // the last group takes the next match
};

// -F FIELD: the distinct values of a field, in the order they are first
// seen, one line each (terminal-safe text, or a JSON value per line).
// Distinct by their text. Bounded: at most kMaxValues values and kMaxBytes
// bytes of them are kept; the value past either is not listed and full()
// becomes true (the caller stops reading and warns).
class FieldLister {
 public:
  static constexpr size_t kMaxValues = 100000;
  static constexpr size_t kMaxBytes = size_t{64} << 20;

  FieldLister(std::string name, bool json) : name_(std::move(name)), json_(json) {}
  // Appends rec's value of the field and '\n' to *out if it was not seen
  // yet: true. False when rec has no such field, its value was seen, or
  // the list is full.
  bool Add(const storage::Record &rec, FieldLookup *lookup, std::string *out);
  bool full() const { return full_; }
  // Why it is full: "100000 distinct values" or "64 MiB of distinct values".
  std::string full_reason() const;
  const std::string &name() const { return name_; }

 private:
  std::string name_;
  bool json_;
  bool full_ = false;
  bool full_of_bytes_ = false;  // (else full of values)
  size_t bytes_ = 0;
  std::unordered_set<std::string> seen_;
};

}  // namespace logsink::logctl
