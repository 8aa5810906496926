// context.cc: see context.h.
#include "context.h"

#include <spdlog/spdlog.h>

namespace logsink::daemon {

void WriteFailed(Context *ctx, const storage::Status &s) {
  ctx->counters->write_errors++;
  ctx->log_limit.Log(kLogKindWrite, spdlog::level::err, "ring write failed: {}", s.ToString());
}

}  // namespace logsink::daemon
