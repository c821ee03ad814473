#include "owner_death.h"

#include <utility>
#include <vector>

#include "shared_region.h"

namespace parklock {

void recover_locks_of_ended_thread(ThreadId ended) noexcept {
  // Collected first and acted on after: a recovery wakes waiters, which takes bucket locks.
  std::vector<std::pair<const void*, const WaitSite*>> queues;
  parking_lot::for_each_recoverable(
      [&](const void* key, const WaitSite& site) { queues.emplace_back(key, &site); });
  for (auto [key, site] : queues) site->recover(key, ended);
  // What the thread held in regions other processes share, it held as its region identities.
  if (!shared_region::is_region_identity(ended)) {
    shared_region::end_identities_of(ended, recover_locks_of_ended_thread);
  }
}

}  // namespace parklock
