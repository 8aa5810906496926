// records.cc: owned ring records and a recording Reporter (see records.h).
#include "common/records.h"

#include <memory>

namespace logsink::test {

OwnedRecord Copy(const storage::Record &r) {
  return OwnedRecord{.kind = r.kind,
                     .seq = r.seq,
                     .block_seq = r.block_seq,
                     .ts_ns = r.ts_ns,
                     .tid = r.tid,
                     .source_id = r.source_id,
                     .pid = r.pid,
                     .uid = r.uid,
                     .gid = r.gid,
                     .app = std::string(r.app),
                     .comm = std::string(r.comm),
                     .unit = std::string(r.unit),
                     .site_id = r.site_id,
                     .site_known = r.site_known,
                     .level = r.site.level,
                     .site_flags = r.site.flags,
                     .line = r.site.line,
                     .fmt = std::string(r.site.fmt),
                     .file = std::string(r.site.file),
                     .args = std::string(r.args),
                     .truncated = r.truncated,
                     .dropped_count = r.dropped_count,
                     .dropped_since_ns = r.dropped_since_ns};
}

void RecordingReporter::Corruption(uint64_t off, std::string_view why) {
  bad.push_back(Bad{off, std::string(why)});
}

void RecordingReporter::Lost(uint64_t n) {
  lost += n;
  lost_events++;
}

std::string RecordingReporter::Dump() const {
  std::string s;
  for (const auto &b : bad) s += std::to_string(b.off) + ": " + b.why + "\n";
  return s;
}

storage::Status AppendRecord(storage::RingWriter *w, const storage::Source &src, uint32_t site,
                             std::string_view sig, std::string_view args, uint64_t ts_ns,
                             uint64_t tid) {
  storage::RecordIn in;
  in.source = &src;
  in.tid = tid;
  in.site_id = site;
  in.signature = sig;
  in.ts_ns = ts_ns;
  in.args = reinterpret_cast<const uint8_t *>(args.data());
  in.args_len = args.size();
  return w->Append(in);
}

storage::Status ReadAllRecords(storage::RingReader *r, std::vector<OwnedRecord> *out) {
  storage::Record rec;
  for (;;) {
    storage::Status s = r->Next(&rec);
    if (s.code() == storage::Status::Code::kNotFound) return storage::Status::OK();
    if (!s.ok()) return s;
    out->push_back(Copy(rec));
  }
}

storage::Status ReadRingFile(const std::string &path, storage::Reporter *rep,
                             std::vector<OwnedRecord> *out) {
  std::unique_ptr<storage::RingReader> r;
  storage::Status s = storage::RingReader::Open(storage::Env::Default(), path, rep, &r);
  if (!s.ok()) return s;
  s = r->SeekOldest();
  if (s.code() == storage::Status::Code::kNotFound) return storage::Status::OK();
  if (!s.ok()) return s;
  return ReadAllRecords(r.get(), out);
}

}  // namespace logsink::test
