// ring_check.h: ring read-back for GoogleTest tests that fails the test on
// corruption: a record the reader had to drop is a test failure, never
// "fewer records".
#pragma once

#include <string>
#include <vector>

#include "common/records.h"

namespace logsink::test {

// All records of the ring file, oldest first. ADD_FAILUREs when the file
// cannot be read or the reader reports any corruption; rep (optional) also
// receives what the reader reported (losses from overwriting are normal).
std::vector<OwnedRecord> ReadRing(const std::string &path, RecordingReporter *rep = nullptr);

// The sequence number the next record will get (0 for an empty ring): the
// newest record only (a binary search over block headers), cheap enough to
// poll. ADD_FAILUREs when the file cannot be read.
uint64_t NextRecordSeq(const std::string &path);

// The records from r's position to the end; ADD_FAILUREs on a status other
// than the end. Corruption goes to r's Reporter, which the caller judges.
std::vector<OwnedRecord> ReadAll(storage::RingReader *r);

}  // namespace logsink::test
