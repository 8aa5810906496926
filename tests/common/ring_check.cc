// ring_check.cc: ring read-back that fails the test on corruption.
#include "common/ring_check.h"

#include <gtest/gtest.h>

namespace logsink::test {

std::vector<OwnedRecord> ReadRing(const std::string &path, RecordingReporter *rep) {
  RecordingReporter local;
  if (!rep) rep = &local;
  size_t before = rep->corruptions();
  std::vector<OwnedRecord> out;
  storage::Status s = ReadRingFile(path, rep, &out);
  if (!s.ok()) ADD_FAILURE() << "reading " << path << ": " << s.ToString();
  if (rep->corruptions() > before)
    ADD_FAILURE() << path << ": the reader dropped corrupt data:\n" << rep->Dump();
  return out;
}

uint64_t NextRecordSeq(const std::string &path) {
  RecordingReporter rep;
  std::unique_ptr<storage::RingReader> r;
  storage::Status s = storage::RingReader::Open(storage::Env::Default(), path, &rep, &r);
  if (s.ok()) s = r->SeekLast(1);
  storage::Record rec;
  if (s.ok()) s = r->Next(&rec);
  if (s.IsNotFound()) return 0;
  if (!s.ok()) {
    ADD_FAILURE() << "reading " << path << ": " << s.ToString();
    return 0;
  }
  return rec.seq + 1;
}

std::vector<OwnedRecord> ReadAll(storage::RingReader *r) {
  std::vector<OwnedRecord> out;
  storage::Status s = ReadAllRecords(r, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

}  // namespace logsink::test
