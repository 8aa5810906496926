// records.cc: owned ring records and a recording Reporter (see records.h).
#include "common/records.h"

#include <memory>

namespace logsink::test {

OwnedRecord Copy(const storage::Record &r) {
  OwnedRecord o;
  o.kind = r.kind;
  o.seq = r.seq;
  o.block_seq = r.block_seq;
  o.ts_ns = r.ts_ns;
  o.tid = r.tid;
  o.source_id = r.source_id;
  o.pid = r.pid;
  o.uid = r.uid;
  o.gid = r.gid;
  o.app = std::string(r.app);
  o.comm = std::string(r.comm);
  o.unit = std::string(r.unit);
  o.site_id = r.site_id;
  o.site_known = r.site_known;
  o.level = r.site.level;
  o.line = r.site.line;
  o.fmt = std::string(r.site.fmt);
  o.file = std::string(r.site.file);
  o.args = std::string(r.args);
  o.truncated = r.truncated;
  o.dropped_count = r.dropped_count;
  o.dropped_since_ns = r.dropped_since_ns;
  return o;
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
