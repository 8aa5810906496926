// cmd_verify.cc: `logctl verify`: RingReader::Verify, printing every problem
// with its file offset; exit 1 on corruption.
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "commands.h"
#include "common.h"
#include "logsink/render/escape.h"
#include "progress.h"

namespace logsink::logctl {
namespace {

class VerifyReporter : public storage::Reporter {
 public:
  void Corruption(uint64_t off, std::string_view reason) override {
    if (!verifying) return;
    std::string line;
    render::AppendTerminalSafe(&line, reason);
    std::printf("offset %" PRIu64 ": %s\n", off, line.c_str());
    problems++;
  }
  void Lost(uint64_t) override {}
  uint64_t problems = 0;
  // Verify's own pass reports every problem once, the string table's
  // included: what the reader reports as it opens the file is left out.
  bool verifying = false;
};

}  // namespace

int RunVerify(Options &o) {
  std::string path;
  if (!RingPath(o.file, o.socket, &path)) return kExitError;
  VerifyReporter rep;
  std::unique_ptr<storage::RingReader> r;
  if (int rc = OpenRing(path, &rep, &r)) return rc;
  rep.verifying = true;
  storage::Status s;
  {
    // stdout carries the problems found, so the line goes only where it
    // does not mix with them: not when stdout is that terminal.
    Progress progress("verify", isatty(STDOUT_FILENO) == 1, "slots");
    if (progress.enabled()) {
      progress.set_last(r->layout().block_count - 1);
      s = r->Verify([&](uint64_t done, uint64_t) { progress.Update(done - 1); });
    } else {
      s = r->Verify();
    }
  }
  if (!s.ok() || rep.problems) {
    std::printf("%s: CORRUPT: %" PRIu64 " problem(s)%s%s\n", path.c_str(), rep.problems,
                s.ok() ? "" : ": ", s.ok() ? "" : s.ToString().c_str());
    return kExitError;
  }
  storage::RingReader::Summary sum;
  s = r->Summarize(&sum);
  // Counted, not newest - oldest + 1: the kept tiers number their records
  // with gaps.
  uint64_t records = s.ok() ? sum.records : 0;
  // The format version too: an older one this build reads (FORMAT.md,
  // "Versions") reads as it is.
  std::printf("%s: OK: %" PRIu64 " records in %" PRIu64 " blocks, %" PRIu64
              " strings, format version %u\n",
              path.c_str(), records, sum.blocks_used, sum.strings, r->format_version());
  return kExitOk;
}

}  // namespace logsink::logctl
