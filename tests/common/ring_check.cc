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

std::vector<OwnedRecord> ReadAll(storage::RingReader *r) {
  std::vector<OwnedRecord> out;
  storage::Status s = ReadAllRecords(r, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

}  // namespace logsink::test
