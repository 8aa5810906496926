// context.cc: see context.h.
#include "context.h"

#include <spdlog/spdlog.h>

#include "logsink/proto/codec.h"

namespace logsink::daemon {

void WriteFailed(Context *ctx, const storage::Status &s) {
  ctx->counters->write_errors++;
  ctx->log_limit.Log(kLogKindWrite, spdlog::level::err, "ring write failed: {}", s.ToString());
}

std::string_view CutAppLabel(Context *ctx, std::string_view app, uint32_t max) {
  if (app.size() <= max) return app;
  ctx->counters->app_truncated++;
  return app.substr(0, ls_utf8_cut(reinterpret_cast<const uint8_t *>(app.data()), app.size(), max));
}

std::string_view DropPartialChar(std::string_view text, uint64_t *cut) {
  const size_t keep =
      ls_utf8_trim_partial(reinterpret_cast<const uint8_t *>(text.data()), text.size());
  *cut += text.size() - keep;
  return text.substr(0, keep);
}

}  // namespace logsink::daemon
