// signals.cc: holding, releasing and ignoring the loop's signals (see signals.h).
#include "signals.h"

namespace logsink::daemon {
namespace {

sigset_t LoopSignalSet() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kLoopSignals) sigaddset(&set, s);
  return set;
}

}  // namespace

void HoldLoopSignals() {
  const sigset_t set = LoopSignalSet();
  sigprocmask(SIG_BLOCK, &set, nullptr);
}

void ReleaseLoopSignals() {
  const sigset_t set = LoopSignalSet();
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

void IgnoreLoopSignals() {
  for (int s : kLoopSignals) std::signal(s, SIG_IGN);
}

}  // namespace logsink::daemon
