// fields.cc: a record's named fields (fields.h).
#include "logsink/render/fields.h"

#include <fmt/format.h>

#include "logsink/proto/fields.h"
#include "logsink/proto/text_kinds.h"
#include "logsink/render/filter.h"

namespace logsink::render {
namespace {

// Adds v, or gives an earlier field of its name v's value.
void Put(const FieldValue &v, std::vector<FieldValue> *out) {
  for (FieldValue &e : *out) {
    if (e.name == v.name) {
      e = v;
      return;
    }
  }
  out->push_back(v);
}

// The "%.0s" NAME=VALUE strings of format 5 (RENDERING.md, "Named
// fields"): NAME a letter or '_', then letters, digits, '_', '.', '-'.
bool OldFieldName(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (size_t i = 0; i < s.size(); i++) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool more = (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (!(alpha || (i > 0 && more))) return false;
  }
  return true;
}

// '_' and then only upper case, digits and '_' (_PID, _SYSTEMD_UNIT): the
// form of a trusted field, which no client's string may pass for.
bool TrustedForm(std::string_view s) {
  if (s.empty() || s[0] != '_') return false;
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

void OldFields(const storage::Record &rec, std::vector<FieldValue> *out) {
  // Trailing "%.0s" conversions, not "%%.0s" (a literal '%').
  std::string_view fmt = rec.site.fmt;
  size_t k = 0;
  constexpr std::string_view kHidden = "%.0s";
  while (fmt.size() >= kHidden.size() && fmt.substr(fmt.size() - kHidden.size()) == kHidden) {
    size_t pct = 0;  // '%' right before this one: an odd count makes it literal
    for (size_t i = fmt.size() - kHidden.size(); i > 0 && fmt[i - 1] == '%'; i--) pct++;
    if (pct % 2) break;
    fmt.remove_suffix(kHidden.size());
    k++;
  }
  if (k == 0) return;
  char sig[LS_FMT_MAX_ARGS + 1];
  const int n = ls_fmt_signature(rec.site.fmt.data(), rec.site.fmt.size(), sig, sizeof sig);
  if (n < int(k)) return;
  const auto *p = reinterpret_cast<const uint8_t *>(rec.args.data());
  const uint8_t *end = p + rec.args.size();
  for (int i = 0; i < n; i++) {
    ls_arg a{};
    const size_t used = ls_arg_get(sig[i], p, end, &a);
    if (used == 0) break;  // cut or malformed: no more fields
    p += used;
    if (i < n - int(k) || sig[i] != LS_ARG_STR) continue;
    std::string_view s(reinterpret_cast<const char *>(a.s), a.len);
    const size_t eq = s.find('=');
    if (eq == std::string_view::npos || !OldFieldName(s.substr(0, eq)) ||
        TrustedForm(s.substr(0, eq)))
      continue;
    FieldValue v;
    v.name = s.substr(0, eq);
    v.type = LS_FIELD_STR;
    v.arg = a;
    v.arg.s = a.s + eq + 1;
    v.arg.len = a.len - eq - 1;
    Put(v, out);
  }
}

}  // namespace

void RecordFields(const storage::Record &rec, const Format &f, std::vector<FieldValue> *out) {
  out->clear();
  if (rec.kind != storage::Record::Kind::kRecord || !rec.site_known) return;
  // A free-text kind's "%.0s" arguments are its own (the syslog header, the
  // kernel's): its fields are those of a FIELDS site that splits, if any.
  const bool free_text = ls_text_kind_of(rec.site.file.data(), rec.site.file.size()) >= 0;
  if (f.fields.empty()) {
    if (!free_text) OldFields(rec, out);
    return;
  }
  if (!f.ok) return;
  ls_arg vals[LS_FMT_MAX_ARGS];
  const auto *p = reinterpret_cast<const uint8_t *>(rec.args.data());
  const uint8_t *end = p + rec.args.size();
  for (size_t i = 0; i < f.sig.size(); i++) {
    const size_t used = ls_arg_get(f.sig[i], p, end, &vals[i]);
    if (used == 0) return;  // arguments that do not match: no fields
    p += used;
  }
  if (p != end) return;
  for (const FieldDef &d : f.fields) {
    ls_arg a = vals[d.arg];
    // Integers as the message would show them: narrowed by their length.
    if (a.type == LS_ARG_INT || a.type == LS_ARG_UINT)
      a.u = NarrowInteger(d.length, a.u, a.type == LS_ARG_INT);
    Put({d.name, d.type, a}, out);
  }
}

void AppendFieldText(const FieldValue &v, std::string *out) {
  if (v.type == LS_FIELD_BOOL) {
    out->append(v.arg.u ? "true" : "false");
    return;
  }
  AppendArgText(v.arg, out);
}

void AppendFieldJson(const FieldValue &v, std::string *out) {
  if (v.type == LS_FIELD_BOOL) {
    out->append(v.arg.u ? "true" : "false");
    return;
  }
  AppendArgJson(v.arg, out);
}

const std::vector<std::string_view> &TrustedFieldNames() {
  static const std::vector<std::string_view> names = {"_PID",          "_UID",     "_GID", "_COMM",
                                                      "_SYSTEMD_UNIT", "_BOOT_ID", "_TID"};
  return names;
}

bool TrustedField(const storage::Record &rec, std::string_view name, std::string *value) {
  value->clear();
  if (name == "_PID") {
    fmt::format_to(std::back_inserter(*value), "{}", rec.pid);
  } else if (name == "_UID") {
    fmt::format_to(std::back_inserter(*value), "{}", rec.uid);
  } else if (name == "_GID") {
    fmt::format_to(std::back_inserter(*value), "{}", rec.gid);
  } else if (name == "_COMM") {
    value->assign(rec.comm);
  } else if (name == "_SYSTEMD_UNIT") {
    if (rec.unit.empty()) return false;
    value->assign(rec.unit);
  } else if (name == "_BOOT_ID") {
    if (rec.boot_id == BootId{}) return false;  // a block without a boot (JSON's "")
    *value = BootIdHex(rec.boot_id);
  } else if (name == "_TID") {
    fmt::format_to(std::back_inserter(*value), "{}", rec.tid);
  } else {
    return false;
  }
  return true;
}

}  // namespace logsink::render
