// memory_budget.cc: see memory_budget.h.
#include "memory_budget.h"

#include <fmt/format.h>

namespace logsink::daemon {

bool MemoryBudget::Charge(uint32_t uid, uint64_t n) {
  uint64_t &mine = by_uid[uid];
  if (*used + n > limit || (uid != 0 && mine + n > per_uid_limit)) {
    if (mine == 0) by_uid.erase(uid);
    return false;
  }
  *used += n;
  mine += n;
  return true;
}

void MemoryBudget::Release(uint32_t uid, uint64_t n) {
  *used -= n;
  auto it = by_uid.find(uid);
  if (it != by_uid.end() && (it->second -= n) == 0) by_uid.erase(it);
}

bool MemoryCharge::Hold(uint64_t now, std::string *why) {
  if (now <= charged_) {
    budget_->Release(uid_, charged_ - now);
    charged_ = now;
    return true;
  }
  if (!budget_->Charge(uid_, now - charged_)) {
    auto it = budget_->by_uid.find(uid_);
    *why = fmt::format(
        "its state would hold {} bytes, past max_memory ({}) or max_memory_per_uid ({}; uid {} "
        "holds {})",
        now, budget_->limit, budget_->per_uid_limit, uid_,
        it == budget_->by_uid.end() ? 0 : it->second);
    return false;
  }
  charged_ = now;
  return true;
}

}  // namespace logsink::daemon
