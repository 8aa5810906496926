// text_record.cc: see text_record.h.
#include "text_record.h"

#include <algorithm>

#include "logsink/proto/codec.h"
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
  uint32_t &id = ids_[size_t(kind)][facility][level];
  // The string table never forgets an entry, so a cached id stays valid; a
  // full table (0) is asked again each time, as a new entry cannot appear.
  if (id == 0) id = writer_->Intern(site);

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
  storage::RecordIn in;
  in.source = &src;
  in.tid = 0;
  in.site_id = id;
  in.inline_site = id == 0 ? &site : nullptr;
  in.signature = k.sig;
  in.ts_ns = ts_ns;
  in.args = reinterpret_cast<const uint8_t *>(args_.data());
  in.args_len = args_.size();
  in.truncated = truncated;
  return writer_->Append(in);
}

}  // namespace logsink::daemon
