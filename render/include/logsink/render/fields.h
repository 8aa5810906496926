// fields.h: a record's named fields, as readers show and match them
// (render/RENDERING.md, "Named fields"): a site's typed fields (format 6,
// proto/fields.h), else the NAME=VALUE strings of the trailing "%.0s"
// conversions a format-5 Python client wrote; and the trusted fields a
// reader derives from the record's source (_PID, _UID, ...).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "logsink/proto/args.h"
#include "logsink/render/render.h"
#include "logsink/storage/record.h"

namespace logsink::render {

struct FieldValue {
  std::string_view name;  // into the Format or the record's arguments
  char type = 0;          // LS_FIELD_* (the "%.0s" strings: LS_FIELD_STR)
  ls_arg arg{};           // the decoded argument
};

// The fields of rec (f compiled from its site), in order, each name once:
// a repeated name keeps its first place and its last value. Empty for a
// DROPPED report, an unknown site, arguments that do not decode, and a
// free-text kind's site without a field list (its "%.0s" arguments are the
// kind's own; one with FIELDS has the list's fields, the daemon's way of
// storing an SD-PARAM, a kernel dictionary entry or a stream's field).
void RecordFields(const storage::Record &rec, const Format &f, std::vector<FieldValue> *out);

// A field's value as text (matching, -F, verbose, short-fields): a bool as
// true/false, the rest as AppendArgText. And as a JSON value: a bool as
// true/false, the rest as AppendArgJson.
void AppendFieldText(const FieldValue &v, std::string *out);
void AppendFieldJson(const FieldValue &v, std::string *out);

// The trusted fields, derived from the record's source and block, never
// stored by a client: _PID, _UID, _GID, _COMM, _SYSTEMD_UNIT, _BOOT_ID (32
// hex digits), _TID. Returns false for another name (or _SYSTEMD_UNIT of a
// record without one).
bool TrustedField(const storage::Record &rec, std::string_view name, std::string *value);
// Their names, in that order.
const std::vector<std::string_view> &TrustedFieldNames();

}  // namespace logsink::render
