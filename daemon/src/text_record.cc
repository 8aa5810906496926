// text_record.cc: see text_record.h.
#include "text_record.h"

#include <algorithm>

#include "logsink/proto/codec.h"

namespace logsink::daemon {
namespace {

struct KindInfo {
  const char *file;
  const char *fmt;  // the text first; the rest render as nothing
  const char *sig;  // its signature (proto/printf.h), one 's' per argument
};

constexpr KindInfo kKinds[] = {
    {"text", "%s", "s"},
    {"stdout", "%s", "s"},
    {"stderr", "%s", "s"},
    {"syslog:rfc3164", "%s%.0s%.0s", "sss"},
    {"syslog:rfc5424", "%s%.0s%.0s%.0s%.0s", "sssss"},
    {"syslog:raw", "%s", "s"},
    {"kernel", "%s%.0s%.0s%.0s", "ssss"},
};
static_assert(sizeof kKinds / sizeof kKinds[0] == size_t(TextKind::kCount));

void PutStr(std::string *out, std::string_view s) {
  uint8_t v[LS_VARINT_MAX];
  out->append(reinterpret_cast<const char *>(v), ls_put_varint(v, s.size()));
  out->append(s);
}

}  // namespace

const char *TextKindFile(TextKind k) { return kKinds[size_t(k)].file; }

storage::Status TextSites::Append(const storage::Source &src, TextKind kind, uint8_t facility,
                                  uint8_t level, uint64_t ts_ns, const TextFields &f,
                                  uint64_t truncated) {
  facility = std::min(facility, kMaxFacility);
  level = std::min<uint8_t>(level, 7);
  const KindInfo &k = kKinds[size_t(kind)];
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
