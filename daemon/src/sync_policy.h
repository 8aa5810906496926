// sync_policy.h: the one rule for "what counts as synced" under the [ring]
// fsync policy: which of the writer's pwrites an fdatasync must cover.
#pragma once

#include <cstdint>

#include "logsink/config/config.h"
#include "logsink/storage/ring.h"

namespace logsink::daemon {

class SyncPolicy {
 public:
  // Takes the policy and counts everything written so far as synced (at
  // start: recovery wrote nothing new; on SIGHUP: the next write starts over).
  void Reset(config::FsyncPolicy policy, const storage::WriterStats &st) {
    policy_ = policy;
    synced_ = Writes(st);
  }

  // True when writes the last call did not see need an fdatasync; they are
  // then counted as handed to it.
  bool Due(const storage::WriterStats &st) {
    uint64_t w = Writes(st);
    if (w == synced_) return false;
    synced_ = w;
    return true;
  }

  config::FsyncPolicy policy() const { return policy_; }

 private:
  // "block" syncs sealed blocks only (a partial block is rewritten until it is
  // sealed, so syncing each flush would cost a sync per flush interval);
  // "interval" syncs whatever was written, sealed or partial.
  uint64_t Writes(const storage::WriterStats &st) const {
    return policy_ == config::FsyncPolicy::kBlock ? st.blocks_written
                                                  : st.blocks_written + st.flushes;
  }

  config::FsyncPolicy policy_ = config::FsyncPolicy::kNever;
  uint64_t synced_ = 0;
};

}  // namespace logsink::daemon
