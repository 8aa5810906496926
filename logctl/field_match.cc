// field_match.cc: FIELD=VALUE matches and -F's values (see field_match.h).
#include "field_match.h"

#include <algorithm>

#include "logsink/proto/fields.h"
#include "logsink/render/escape.h"

namespace logsink::logctl {
namespace {

bool Trusted(std::string_view name) {
  const auto &names = render::TrustedFieldNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string TrustedList() {
  std::string s;
  for (std::string_view n : render::TrustedFieldNames()) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

}  // namespace

bool CheckFieldName(std::string_view name, std::string *why) {
  std::string shown;
  render::AppendTerminalSafe(&shown, name);
  if (!name.empty() && name[0] == '_') {
    if (Trusted(name)) return true;
    *why = "'" + shown + "' is not a trusted field (a name starting with '_' is one of " +
           TrustedList() + ")";
    return false;
  }
  if (ls_field_name_ok(name.data(), name.size(), 0)) return true;
  *why = "'" + shown + "' is not a field name (1 to " + std::to_string(LS_FIELD_NAME_MAX) +
         " letters, digits, '_', '.', '@' or '-', not starting with '.', '@' or '-')";
  return false;
}

const render::FieldValue *FieldLookup::Find(std::string_view name) {
  if (!have_fields_) {
    have_fields_ = true;
    fields_.clear();
    const storage::Record &r = *rec_;
    if (r.kind == storage::Record::Kind::kRecord && r.site_known)
      render::RecordFields(r, formats_.Get(r.site_id, r.site.fmt, r.site.flags), &fields_);
  }
  for (const render::FieldValue &v : fields_)
    if (v.name == name) return &v;
  return nullptr;
}

const std::string *FieldLookup::Text(std::string_view name) {
  if (!name.empty() && name[0] == '_') {
    // Trusted: never a stored field of that name (a format-5 client could
    // have written "_PID=1" as a "%.0s" string).
    return render::TrustedField(*rec_, name, &tmp_) ? &tmp_ : nullptr;
  }
  const render::FieldValue *v = Find(name);
  if (!v) return nullptr;
  tmp_.clear();
  render::AppendFieldText(*v, &tmp_);
  return &tmp_;
}

bool FieldLookup::Json(std::string_view name, std::string *out) {
  if (!name.empty() && name[0] == '_') {
    if (!render::TrustedField(*rec_, name, &tmp_)) return false;
    if (name == "_PID" || name == "_UID" || name == "_GID" || name == "_TID")
      out->append(tmp_);
    else
      render::AppendJsonString(out, tmp_);
    return true;
  }
  const render::FieldValue *v = Find(name);
  if (!v) return false;
  render::AppendFieldJson(*v, out);
  return true;
}

bool FieldMatcher::Add(std::string_view word, std::string *why) {
  const size_t eq = word.find('=');
  const std::string_view name = word.substr(0, eq);
  if (eq == std::string_view::npos || !CheckFieldName(name, why)) {
    if (eq == std::string_view::npos) *why = "a match is FIELD=VALUE";
    return false;
  }
  if (!open_) {
    groups_.emplace_back();
    open_ = true;
  }
  Group &g = groups_.back();
  auto t = std::find_if(g.begin(), g.end(), [&](const Term &x) { return x.name == name; });
  if (t == g.end()) {
    g.push_back(Term{std::string(name), {}});
    t = g.end() - 1;
  }
  const std::string_view value = word.substr(eq + 1);
  if (std::find(t->values.begin(), t->values.end(), value) == t->values.end())
    t->values.emplace_back(value);
  return true;
}

bool FieldMatcher::NewGroup(std::string *why) {
  if (!open_) {
    *why = "'+' stands between two groups of FIELD=VALUE matches";
    return false;
  }
  open_ = false;
  return true;
}

bool FieldMatcher::Finish(std::string *why) const {
  if (!groups_.empty() && !open_) {
    *why = "'+' stands between two groups of FIELD=VALUE matches";
    return false;
  }
  return true;
}

bool FieldMatcher::Match(const storage::Record &rec, FieldLookup *lookup) const {
  if (groups_.empty()) return true;
  lookup->Load(rec);
  for (const Group &g : groups_) {
    bool all = true;
    for (const Term &t : g) {
      const std::string *text = lookup->Text(t.name);
      if (!text || std::find(t.values.begin(), t.values.end(), *text) == t.values.end()) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

bool FieldLister::Add(const storage::Record &rec, FieldLookup *lookup, std::string *out) {
  if (full_) return false;
  lookup->Load(rec);
  const std::string *text = lookup->Text(name_);
  if (!text || seen_.count(*text)) return false;
  if (seen_.size() >= kMaxValues || bytes_ + text->size() > kMaxBytes) {
    full_ = true;
    full_of_bytes_ = seen_.size() < kMaxValues;
    return false;
  }
  bytes_ += text->size();
  seen_.insert(*text);
  if (json_) {
    lookup->Json(name_, out);
  } else {
    render::AppendTerminalSafe(out, *text);
  }
  out->push_back('\n');
  return true;
}

std::string FieldLister::full_reason() const {
  return full_of_bytes_ ? std::to_string(kMaxBytes >> 20) + " MiB of distinct values"
                        : std::to_string(kMaxValues) + " distinct values";
}

}  // namespace logsink::logctl
