// text_record.cc: see text_record.h.
#include "text_record.h"

#include <algorithm>
#include <cstring>

#include "logsink/proto/codec.h"
#include "logsink/proto/fields.h"
#include "logsink/proto/format.h"
#include "logsink/proto/text_kinds.h"

namespace logsink::daemon {
namespace {

static_assert(size_t(TextKind::kCount) == LS_TEXT_KIND_COUNT, "one kind per table row");
static_assert(int(TextKind::kKernel) == LS_TEXT_KERNEL, "same order as proto/text_kinds.h");

void PutStr(std::string *out, std::string_view s) {
  uint8_t v[LS_VARINT_MAX];
  out->append(reinterpret_cast<const char *>(v), ls_put_varint(v, s.size()));
  out->append(s);
}

}  // namespace

const char *TextKindFile(TextKind k) { return ls_text_kinds[size_t(k)].file; }

uint32_t TextSites::FieldSite(TextKind kind, uint8_t facility, uint8_t level, uint32_t uid) {
  const ls_text_kind_info &k = ls_text_kinds[size_t(kind)];
  fmt_.assign(k.fmt);
  fmt_.push_back(LS_FIELDS_SEP);
  for (const TextField &f : list_.fields()) {
    if (fmt_.back() != LS_FIELDS_SEP) fmt_.push_back(' ');
    fmt_.append(f.name);
    fmt_.append("=%s");
  }
  key_.clear();
  key_.push_back(char(kind));
  key_.push_back(char(facility));
  key_.push_back(char(level));
  key_.append(fmt_);
  if (auto it = field_ids_.find(key_); it != field_ids_.end()) return it->second;
  // A new name set: within the bounds, so that no sender fills the string
  // table (or this cache) with name sets; root (and the kernel) only under
  // the global one.
  if (field_ids_.size() >= kMaxTextFieldSites) return 0;
  uint32_t *mine = nullptr;
  if (uid != 0) {
    mine = &sites_by_uid_[uid];
    if (*mine >= kMaxTextFieldSitesPerUid) return 0;
  }
  storage::Site site;
  site.level = level;
  site.line = facility;
  site.fmt = fmt_;
  site.file = k.file;
  site.flags = LS_ST_F_FIELDS;
  const uint32_t id = writer_->Intern(site);
  if (id == 0) return 0;  // the string table is full: asked again next time
  field_ids_.emplace(key_, id);
  if (mine) ++*mine;
  if (field_counters_.sites) ++*field_counters_.sites;
  return id;
}

storage::Status TextSites::Append(const storage::Source &src, TextKind kind, uint8_t facility,
                                  uint8_t level, uint64_t ts_ns, const TextFields &f,
                                  uint64_t truncated) {
  facility = std::min(facility, kMaxFacility);
  if (facility == 0 && src.uid != 0) {  // only root (and the kernel) may speak as kern
    facility = 1;
    if (kern_refused_) ++*kern_refused_;
  }
  level = std::min<uint8_t>(level, 7);
  const ls_text_kind_info &k = ls_text_kinds[size_t(kind)];
  storage::Site site;
  site.level = level;
  site.line = facility;
  site.fmt = k.fmt;
  site.file = k.file;
  uint32_t &plain = ids_[size_t(kind)][facility][level];
  // The string table never forgets an entry, so a cached id stays valid; a
  // full table (0) is asked again each time, as a new entry cannot appear.
  if (plain == 0) plain = writer_->Intern(site);

  // Named fields: the kind's own (SD-PARAMs, the kernel's dictionary) or
  // the stream's. Without a site for them the record is stored whole as
  // the plain kind (the raw SD or dictionary keeps them).
  list_.Clear();
  if (kind == TextKind::kRfc5424) SdFields(f.sd, &list_);
  if (kind == TextKind::kKernel) KmsgDictFields(f.kdict, &list_);
  if (f.fields)
    for (const TextField &x : *f.fields) list_.Add({}, x.name, x.value, Unescape::kNone);
  if (list_.bad_names() && field_counters_.bad_names)
    *field_counters_.bad_names += list_.bad_names();
  uint32_t id = plain;
  bool with_fields = false;
  last_fallback_ = false;
  if (list_.size() > 0) {
    const uint32_t fid = list_.too_many() ? 0 : FieldSite(kind, facility, level, src.uid);
    if (fid != 0) {
      id = fid;
      with_fields = true;
    } else {
      last_fallback_ = true;
      if (field_counters_.fallback) ++*field_counters_.fallback;
    }
  }

  args_.clear();
  PutStr(&args_, f.msg);
  if (kind == TextKind::kRfc3164 || kind == TextKind::kRfc5424) {
    PutStr(&args_, f.timestamp);
    PutStr(&args_, f.hostname);
  }
  if (kind == TextKind::kRfc5424) {
    PutStr(&args_, f.msgid);
    PutStr(&args_, f.sd);
  }
  if (kind == TextKind::kKernel) {
    PutStr(&args_, f.kseq);
    PutStr(&args_, f.kusec);
    PutStr(&args_, f.kdict);
  }
  if (with_fields)
    for (const TextField &x : list_.fields()) PutStr(&args_, x.value);
  char sig[LS_FMT_MAX_ARGS + 1];
  const char *signature = k.sig;
  if (with_fields) {
    const size_t n = std::strlen(k.sig);
    std::memcpy(sig, k.sig, n);
    std::memset(sig + n, LS_ARG_STR, list_.size());
    sig[n + list_.size()] = 0;
    signature = sig;
  }
  storage::RecordIn in;
  in.source = &src;
  in.tid = 0;
  in.site_id = id;
  in.inline_site = id == 0 ? &site : nullptr;
  in.signature = signature;
  in.ts_ns = ts_ns;
  in.args = reinterpret_cast<const uint8_t *>(args_.data());
  in.args_len = args_.size();
  in.truncated = truncated;
  // A record too big for a block is cut here, as the writer would cut it,
  // so the caller knows (last_cut) before the writer (or its thread) has it.
  storage::Status st = writer_->FitToBlock(in, &cut_args_, &last_cut_);
  if (!st.ok()) return st;
  if (last_cut_) {
    in.args = reinterpret_cast<const uint8_t *>(cut_args_.data());
    in.args_len = cut_args_.size();
    in.truncated += last_cut_;
  }
  return writer_->Append(in);
}

}  // namespace logsink::daemon
