// cmd_verify.cc: `logctl verify`: RingReader::Verify, printing every problem
// with its file offset; exit 1 on corruption.
#include <cinttypes>
#include <cstdio>

#include "commands.h"
#include "common.h"
#include "escape.h"

namespace logsink::logctl {
namespace {

class VerifyReporter : public storage::Reporter {
 public:
  void Corruption(uint64_t off, std::string_view reason) override {
    std::string line;
    render::AppendTerminalSafe(&line, reason);
    std::printf("offset %" PRIu64 ": %s\n", off, line.c_str());
    problems++;
  }
  void Lost(uint64_t) override {}
  uint64_t problems = 0;
};

}  // namespace

int RunVerify(Options &o) {
  std::string path;
  if (!RingPath(o.file, o.socket, &path)) return kExitError;
  VerifyReporter rep;
  std::unique_ptr<storage::RingReader> r;
  if (int rc = OpenRing(path, &rep, &r)) return rc;
  storage::Status s = r->Verify();
  if (!s.ok() || rep.problems) {
    std::printf("%s: CORRUPT: %" PRIu64 " problem(s)%s%s\n", path.c_str(), rep.problems,
                s.ok() ? "" : ": ", s.ok() ? "" : s.ToString().c_str());
    return kExitError;
  }
  storage::RingReader::Summary sum;
  s = r->Summarize(&sum);
  uint64_t records = s.ok() ? sum.newest_seq - sum.oldest_seq + 1 : 0;
  std::printf("%s: OK: %" PRIu64 " records in %" PRIu64 " blocks, %" PRIu64 " strings\n",
              path.c_str(), records, sum.blocks_used, sum.strings);
  return kExitOk;
}

}  // namespace logsink::logctl
