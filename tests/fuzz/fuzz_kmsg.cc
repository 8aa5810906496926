// fuzz_kmsg.cc: the daemon's /dev/kmsg record parser (daemon/src/kmsg_parse.h)
// on arbitrary bytes. Invariants: it never crashes; level and facility are
// in range; the text is never longer than the input; parsing is deterministic.
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "kmsg_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view in(reinterpret_cast<const char *>(data), size);
  logsink::daemon::KmsgRecord a, b;
  const bool ok = logsink::daemon::ParseKmsg(in, &a);
  FUZZ_CHECK(ok == logsink::daemon::ParseKmsg(in, &b));
  if (!ok) return 0;
  FUZZ_CHECK(a.level <= 7 && a.facility <= 23);
  FUZZ_CHECK(a.text.size() + a.dict.size() <= size);
  FUZZ_CHECK(a.text == b.text && a.dict == b.dict && a.seq == b.seq && a.usec == b.usec);
  return 0;
}
