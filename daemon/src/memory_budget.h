// memory_budget.h: the memory bound of all connection state (config:
// limits.max_memory and max_memory_per_uid). Each connection holds a
// MemoryCharge for what it holds now; a charge that would pass a bound is
// refused, and the connection is closed for it (Err::kMemory).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace logsink::daemon {

struct MemoryBudget {
  MemoryBudget() = default;
  MemoryBudget(const MemoryBudget &) = delete;
  MemoryBudget &operator=(const MemoryBudget &) = delete;
  uint64_t limit = 64ull << 20;
  uint64_t per_uid_limit = 16ull << 20;  // not applied to uid 0
  uint64_t own_used = 0;
  uint64_t *used = &own_used;  // the server points it at Counters::memory_used
  std::unordered_map<uint32_t, uint64_t> by_uid;

  bool Charge(uint32_t uid, uint64_t n);
  void Release(uint32_t uid, uint64_t n);
};

// What one holder (a connection of uid) has charged to a budget; released
// when it goes.
class MemoryCharge {
 public:
  MemoryCharge(MemoryBudget *budget, uint32_t uid) : budget_(budget), uid_(uid) {}
  ~MemoryCharge() {
    if (charged_) budget_->Release(uid_, charged_);
  }
  MemoryCharge(const MemoryCharge &) = delete;
  MemoryCharge &operator=(const MemoryCharge &) = delete;

  // Charges more, or releases some, so that `now` bytes are charged. False
  // when a bound would be passed: the charge is then unchanged and *why says
  // which bound.
  bool Hold(uint64_t now, std::string *why);

 private:
  MemoryBudget *budget_;
  uint32_t uid_;
  uint64_t charged_ = 0;
};

}  // namespace logsink::daemon
