// field_keys.h: the field keys of a block's summary filter (FORMAT.md,
// "Block summaries"): what a site's fields are (FieldPlan), the keys of one
// field's value, and the keys one block collects (FieldKeys), bounded, so
// that `logctl user=alice` passes over the blocks without alice. The writer
// adds them, Verify checks them, SummaryFilter looks them up. Internal to the
// storage library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "block.h"
#include "logsink/proto/args.h"
#include "logsink/proto/printf.h"
#include "logsink/storage/record.h"

namespace logsink::storage::internal {

// The key of NAME=TEXT (LS_BLOOM_KEY_FIELD) and of NAME alone
// (LS_BLOOM_KEY_FIELD_ANY: a value not keyed).
uint64_t FieldValueKey(std::string_view name, std::string_view text);
uint64_t FieldAnyKey(std::string_view name);

// What a site's records carry as fields, as readers find them
// (render/RENDERING.md, "Named fields").
struct FieldPlan {
  enum class Kind : uint8_t {
    kNone,     // no fields (most sites)
    kTyped,    // FIELDS and a list that parses: the fields below
    kUnkeyed,  // a format ending in "%.0s" outside the free-text kinds: a
               // format-5 NAME=VALUE string may be there, not keyed here
  };
  struct Field {
    std::string name;
    size_t arg = 0;    // its index in the signature
    char type = 0;     // LS_FIELD_*
    int length = 0;    // the conversion's length modifier
    uint64_t any = 0;  // FieldAnyKey(name)
  };
  Kind kind = Kind::kNone;
  std::string sig;  // the whole format's signature (kTyped)
  std::vector<Field> fields;

  static FieldPlan Of(const Site &site);
};

// The text a reader matches (render::AppendFieldText) for the value of a
// field of type `type` (LS_FIELD_*, length modifier `length`) held in a, or
// false for a type whose values are not keyed (double, character, pointer:
// their field gets the NAME-alone key).
bool FieldValueText(char type, int length, const ls_arg &a, std::string *out);

// Calls key(any, value, keyed) for every field of a record of plan's site
// with those argument bytes: its NAME-alone key, and its value key when
// keyed (else value is 0: the NAME-alone key stands for it). Nothing
// for arguments that do not parse by the signature (readers show no fields
// then). Names starting with '_' are skipped: a reader never matches a
// stored one (the trusted fields come from the record's source).
template <typename F>
void ForEachFieldKey(const FieldPlan &plan, const uint8_t *args, size_t len, std::string *tmp,
                     F &&key);

// The field keys of one block: each field name with its distinct values,
// at most LS_BLK_FIELD_KEYS_MAX keys in all. Past that, the name with the
// most values gives them up for its NAME-alone key, until the keys fit
// again; a block of more names than that, or holding a record whose fields
// cannot be keyed, gets no field keys at all (and no FIELD_KEYS flag).
class FieldKeys {
 public:
  void Clear();
  // A record whose fields a reader may find and this cannot key.
  void Spoil() { spoiled_ = true; }
  // One field: its NAME-alone key, its value key when keyed.
  void Add(uint64_t any, uint64_t value, bool keyed);
  // Adds a record's keys (plan: its site's).
  void AddRecord(const FieldPlan &plan, const uint8_t *args, size_t len);
  // Puts the keys into h's filter and sets LS_BLK_F_FIELD_KEYS, unless spoiled.
  void Apply(BlockHeader *h) const;
  bool spoiled() const { return spoiled_; }

 private:
  struct Name {
    uint64_t any = 0;              // FieldAnyKey(name)
    bool collapsed = false;        // its values gave way to `any`
    std::vector<uint64_t> values;  // distinct value keys (when not collapsed)
  };
  void Shrink();
  bool spoiled_ = false;
  size_t keys_ = 0;  // sum over names_ of (collapsed ? 1 : values.size())
  std::vector<Name> names_;
  std::string tmp_;
};

template <typename F>
void ForEachFieldKey(const FieldPlan &plan, const uint8_t *args, size_t len, std::string *tmp,
                     F &&key) {
  if (plan.kind != FieldPlan::Kind::kTyped) return;
  ls_arg vals[LS_FMT_MAX_ARGS];
  const uint8_t *p = args, *end = args + len;
  for (size_t i = 0; i < plan.sig.size(); i++) {
    const size_t used = ls_arg_get(plan.sig[i], p, end, &vals[i]);
    if (used == 0) return;
    p += used;
  }
  if (p != end) return;
  for (const FieldPlan::Field &f : plan.fields) {
    if (f.name[0] == '_') continue;
    tmp->clear();
    if (FieldValueText(f.type, f.length, vals[f.arg], tmp))
      key(f.any, FieldValueKey(f.name, *tmp), true);
    else
      key(f.any, uint64_t{0}, false);
  }
}

}  // namespace logsink::storage::internal
