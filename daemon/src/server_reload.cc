// server_reload.cc: the loop's signals (signals.h): SIGTERM and SIGINT
// start the stop, SIGHUP reloads the configuration and applies its live
// settings (see server.h).
#include <spdlog/spdlog.h>

#include <csignal>

#include "logsink/config/settings.h"
#include "server.h"

namespace logsink::daemon {

void Server::OnSignal(uv_signal_t *sig, int signum) {
  auto *s = static_cast<Server *>(sig->data);
  s->signal_this_turn_ = true;  // MeasureTurn: this turn's idle time is not exact
  if (signum == SIGHUP) {
    if (s->stopping_) return;
    config::Config next;
    if (s->reload_ && s->reload_(&next)) s->ApplyLive(next);
    return;
  }
  s->Shutdown(signum);
}

// The live settings (settings.h) are copied as a whole; what follows from
// their new values is done here. A changed setting that is not live is
// reported and kept until a restart.
void Server::ApplyLive(const config::Config &n) {
  for (const config::Setting *s : config::Changed(cfg_, n))
    if (!s->live)
      spdlog::warn("SIGHUP: {} changed; it takes effect after a restart", config::SettingName(*s));
  const bool stall_changed = n.stall_timeout_ms != cfg_.stall_timeout_ms;
  config::CopyLive(n, &cfg_);

  spdlog::set_level(spdlog::level::from_str(cfg_.log_level));
  durability_.Reload();  // the fsync policy and timer, the gap of a waiting flush
  if (stall_changed) StartStallTimer();
  if (syslog_) syslog_->set_max_app(cfg_.max_app);
  ApplyConfigLevels();
  // New charges are checked against the new bounds.
  ctx_.memory.limit = cfg_.max_memory;
  ctx_.memory.per_uid_limit = cfg_.max_memory_per_uid;
  ctx_.shm_memory.limit = cfg_.shm_max_memory;
  ctx_.shm_memory.per_uid_limit = cfg_.shm_max_memory_per_uid;
  spdlog::info("SIGHUP: configuration reloaded (log_level {}, flush_interval {} ms, fsync {})",
               cfg_.log_level, cfg_.flush_interval_ms,
               config::FormatFsync(cfg_.fsync, cfg_.fsync_interval_ms));
}

}  // namespace logsink::daemon
