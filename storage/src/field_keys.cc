// field_keys.cc: a block's field keys (field_keys.h).
#include "field_keys.h"

#include <algorithm>
#include <charconv>

#include "logsink/proto/args.h"
#include "logsink/proto/fields.h"
#include "logsink/proto/format.h"
#include "logsink/proto/text_kinds.h"

namespace logsink::storage::internal {

uint64_t FieldValueKey(std::string_view name, std::string_view text) {
  // FNV-1a over 'f', NAME, '=', TEXT: BloomHash of the concatenation,
  // without building it.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint8_t b) { h = (h ^ b) * 0x100000001b3ull; };
  mix(LS_BLOOM_KEY_FIELD);
  for (char c : name) mix(uint8_t(c));
  mix('=');
  for (char c : text) mix(uint8_t(c));
  return h;
}

uint64_t FieldAnyKey(std::string_view name) { return BloomStr(LS_BLOOM_KEY_FIELD_ANY, name); }

FieldPlan FieldPlan::Of(const Site &site) {
  FieldPlan plan;
  const std::string_view fmt = site.fmt;
  // As render::Compile reads a site: FIELDS and a list that checks (trusted
  // names allowed: only the daemon writes them).
  if ((site.flags & LS_ST_F_FIELDS) && ls_fields_check(fmt.data(), fmt.size(), 1) > 0) {
    char sig[LS_FMT_MAX_ARGS + 1], msg_sig[LS_FMT_MAX_ARGS + 1];
    const size_t msg = ls_fields_message_len(fmt.data(), fmt.size());
    const int n = ls_fmt_signature(fmt.data(), fmt.size(), sig, sizeof sig);
    const int nmsg = ls_fmt_signature(fmt.data(), msg, msg_sig, sizeof msg_sig);
    if (n < 0 || nmsg < 0) return plan;
    plan.sig.assign(sig, size_t(n));
    size_t pos = msg;
    ls_field f;
    size_t arg = size_t(nmsg);
    while (ls_field_next(fmt.data(), fmt.size(), msg, &pos, &f) > 0) {
      std::string name(f.name, f.name_len);
      const uint64_t any = FieldAnyKey(name);
      plan.fields.push_back({std::move(name), arg++, f.type, f.conv.length, any});
    }
    plan.kind = Kind::kTyped;
    return plan;
  }
  // A format ending in "%.0s" (not "%%.0s"): format 5's NAME=VALUE strings
  // may be there (RENDERING.md), except in the free-text kinds, whose
  // "%.0s" arguments are the kind's.
  constexpr std::string_view kHidden = "%.0s";
  if (fmt.size() >= kHidden.size() && fmt.substr(fmt.size() - kHidden.size()) == kHidden &&
      ls_text_kind_of(site.file.data(), site.file.size()) < 0) {
    size_t pct = 0;
    for (size_t i = fmt.size() - kHidden.size(); i > 0 && fmt[i - 1] == '%'; i--) pct++;
    if (pct % 2 == 0) plan.kind = Kind::kUnkeyed;
  }
  return plan;
}

bool FieldValueText(char type, int length, const ls_arg &a, std::string *out) {
  // The same text as render::AppendFieldText (decimal integers narrowed by
  // their length modifier, true/false), written here because storage sits
  // below render; tests/render/field_keys_render_test.cc holds the two to
  // the same text over every type.
  char buf[24];
  std::to_chars_result r{};
  switch (type) {
    case LS_FIELD_STR:
      out->append(reinterpret_cast<const char *>(a.s), a.len);
      return true;
    case LS_FIELD_INT:
      r = std::to_chars(buf, buf + sizeof buf, int64_t(ls_arg_narrow(length, a.u, 1)));
      break;
    case LS_FIELD_UINT:
      r = std::to_chars(buf, buf + sizeof buf, ls_arg_narrow(length, a.u, 0));
      break;
    case LS_FIELD_BOOL:
      out->append(ls_arg_narrow(length, a.u, a.type == LS_ARG_INT) ? "true" : "false");
      return true;
    default:
      return false;  // double, character, pointer: not keyed
  }
  out->append(buf, r.ptr);
  return true;
}

void FieldKeys::Clear() {
  spoiled_ = false;
  keys_ = 0;
  names_.clear();
}

void FieldKeys::Add(uint64_t any, uint64_t value, bool keyed) {
  if (spoiled_) return;
  auto it =
      std::find_if(names_.begin(), names_.end(), [any](const Name &n) { return n.any == any; });
  if (it == names_.end()) {
    names_.push_back({any, !keyed, {}});
    it = names_.end() - 1;
    if (keyed) it->values.push_back(value);
    keys_++;
  } else if (!it->collapsed) {
    if (!keyed) {
      keys_ -= it->values.size() - 1;
      it->values.clear();
      it->collapsed = true;
    } else if (std::find(it->values.begin(), it->values.end(), value) == it->values.end()) {
      it->values.push_back(value);
      keys_++;
    }
  }
  if (keys_ > LS_BLK_FIELD_KEYS_MAX) Shrink();
}

void FieldKeys::Shrink() {
  while (keys_ > LS_BLK_FIELD_KEYS_MAX) {
    Name *most = nullptr;
    for (Name &n : names_)
      if (!n.collapsed && (!most || n.values.size() > most->values.size())) most = &n;
    if (!most || most->values.size() <= 1) {  // one key per name, still too many
      spoiled_ = true;
      names_.clear();
      keys_ = 0;
      return;
    }
    keys_ -= most->values.size() - 1;
    most->values.clear();
    most->values.shrink_to_fit();
    most->collapsed = true;
  }
}

void FieldKeys::AddRecord(const FieldPlan &plan, const uint8_t *args, size_t len) {
  if (plan.kind == FieldPlan::Kind::kUnkeyed) return Spoil();
  ForEachFieldKey(plan, args, len, &tmp_,
                  [this](uint64_t any, uint64_t value, bool keyed) { Add(any, value, keyed); });
}

void FieldKeys::Apply(BlockHeader *h) const {
  if (spoiled_) {
    h->flags &= ~LS_BLK_F_FIELD_KEYS;
    return;
  }
  for (const Name &n : names_) {
    if (n.collapsed) {
      BloomAdd(h->bloom.data(), n.any);
    } else {
      for (uint64_t v : n.values) BloomAdd(h->bloom.data(), v);
    }
  }
  h->flags |= LS_BLK_F_FIELD_KEYS;
}

}  // namespace logsink::storage::internal
