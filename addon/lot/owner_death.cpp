#include "lot/owner_death.h"

#include <utility>
#include <vector>

#include "across_processes/shared_region.h"

namespace parklock {

void recover_locks_of_ended_thread(ThreadId ended) noexcept {
  // Collected first and acted on after: a recovery wakes waiters, which takes bucket locks. A
  // key in a region is kept mapped meanwhile: its waiters may leave, and their thread end, first.
  struct Queue {
    const void* key;
    const WaitSite* site;
    shared_region::RegionUse region;
  };
  std::vector<Queue> queues;
  parking_lot::for_each_recoverable([&](const void* key, const WaitSite& site) {
    queues.push_back({key, &site, shared_region::RegionUse::of(key)});
  });
  for (const Queue& queue : queues) queue.site->recover(queue.key, ended);
  // What the thread held in regions other processes share, it held as its region identities.
  if (!shared_region::is_region_identity(ended)) {
    shared_region::end_identities_of(ended, recover_locks_of_ended_thread);
  }
}

}  // namespace parklock
