#include "owner_death.h"

#include <utility>
#include <vector>

namespace parklock {

void recover_locks_of_ended_thread(ThreadId ended) noexcept {
  // Collected first and acted on after: a recovery wakes waiters, which takes bucket locks.
  std::vector<std::pair<const void*, OwnerRecovery>> queues;
  parking_lot::for_each_recoverable(
      [&](const void* address, OwnerRecovery recovery) { queues.emplace_back(address, recovery); });
  for (auto [address, recovery] : queues) recovery(address, ended);
}

}  // namespace parklock
