// The upgradable read side of the RWLock (rwlock.h): its hold, its release (also of a thread that
// ended holding it), and the upgrade to the write lock, which drains (rwlock_drain.cpp).
#include "across_processes/shared_region.h"
#include "lot/owner_death.h"
#include "primitives/rwlock.h"
#include "primitives/rwlock_steps.h"

namespace parklock {

RwLockWords::UnlockStatus RwLockWords::unlock_upgradable(ThreadId self) noexcept {
  const std::int32_t seen = state().load(std::memory_order_relaxed);
  if (is_corrupt(seen)) return UnlockStatus::kCorrupt;
  // An upgrade under way is the holder's own wait (an asynchronous one): it must end first.
  if ((seen & kUpgradable) == 0 || (seen & kDraining) != 0 ||
      owner().load(std::memory_order_relaxed) != self) {
    return UnlockStatus::kNotOwner;
  }
  // The owner word first, as a writer does: an upgradable reader that acquires right after the
  // release below writes its own id.
  owner().store(kNoThread, std::memory_order_relaxed);
  return release_upgradable_slow();
}

RwLockWords::UnlockStatus RwLockWords::release_upgradable_slow() noexcept {
  const std::int32_t seen = state().load(std::memory_order_relaxed);
  if ((seen & kUpgradable) == 0 || is_corrupt(seen)) return UnlockStatus::kCorrupt;
  release_upgradable_hold();
  return UnlockStatus::kUnlocked;
}

void RwLockWords::release_upgradable_hold() noexcept {
  if (in_region()) {
    release_upgradable_in_region();
    return;
  }
  for (;;) {
    std::int32_t seen = state().load(std::memory_order_relaxed);
    // The draining bit is this hold's too (beside an upgradable hold only its holder sets it).
    const std::int32_t released = kUpgradable | (seen & kDraining) | kOneReader;
    // Parked waiters may be grantable now (an upgradable reader at the head; readers behind it).
    if ((seen & kParked) != 0) {
      release_and_grant(released);
      return;
    }
    if (state().compare_exchange_weak(seen, seen - released, std::memory_order_release,
                                      std::memory_order_relaxed)) {
      return;
    }
  }
}

bool RwLockWords::release_ended_upgrader(ThreadId self) noexcept {
  if ((state().load(std::memory_order_acquire) & kUpgradable) == 0) return false;
  ThreadId holder = owner().load(std::memory_order_acquire);
  if (holder == kNoThread || holder == self || !shared_region::owner_ended(address(), holder)) {
    return false;
  }
  // The same claim as take_from_ended_owner(): one CAS away from the ended thread's name.
  if (!owner().compare_exchange_strong(holder, kNoThread, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
    return false;
  }
  if ((state().load(std::memory_order_relaxed) & kUpgradable) == 0) {
    // The upgradable hold seen above was released since, and the name is a writer's that ended
    // (or in a region a draining writer's): it goes back, for take_from_ended_owner() (or
    // end_ended_drain()) to find.
    ThreadId none = kNoThread;
    owner().compare_exchange_strong(none, holder, std::memory_order_relaxed);
    return true;
  }
  release_upgradable_hold();
  return true;
}

RwLockWords::UpgradeMark RwLockWords::upgrade_or_mark() noexcept {
  // One decision on one word: the only reader becomes the writer; otherwise the draining bit
  // keeps new readers out. The parked bit stays exactly when waiters remain.
  UpgradeMark mark = UpgradeMark::kCorrupt;
  const auto decide = [&](std::int32_t seen, bool keep_parked) -> std::int32_t {
    if (is_corrupt(seen) || (seen & kUpgradable) == 0) {
      mark = UpgradeMark::kCorrupt;
      return seen;
    }
    if (readers_of(seen) == 1) {
      mark = UpgradeMark::kUpgraded;
      return kWriter | (keep_parked ? kParked : 0);
    }
    mark = UpgradeMark::kMarked;
    return (seen | kDraining) & (keep_parked ? ~0 : ~kParked);
  };
  for (;;) {
    std::int32_t seen = state().load(std::memory_order_relaxed);
    if ((seen & kParked) == 0) {
      const std::int32_t next = decide(seen, /*keep_parked=*/false);
      if (next == seen || state().compare_exchange_weak(seen, next, std::memory_order_acquire,
                                                        std::memory_order_relaxed)) {
        return mark;
      }
      continue;
    }
    // With waiters parked, a grant decides on the word under the bucket lock: the upgrade must
    // not come between its decision and its update.
    const auto finish = [&](bool queue_empty) {
      std::int32_t word = state().load(std::memory_order_relaxed);
      for (;;) {
        const std::int32_t next = decide(word, !queue_empty);
        if (next == word || state().compare_exchange_weak(word, next, std::memory_order_acq_rel,
                                                          std::memory_order_relaxed)) {
          return;
        }
      }
    };
    parking_lot::unpark_filter(address(), parking_lot::Grant{nullptr, finish});
    return mark;
  }
}

Outcome RwLockWords::upgrade_slow(ThreadId self, Deadline deadline) {
  UpgradeStep step(*this, self);
  return wait_blocking(step, deadline);
}

Outcome RwLockWords::upgrade_or_enqueue(ThreadId self, Waiter& waiter, Deadline deadline) {
  if (!holds_upgradable(self)) {
    return is_corrupt(state().load(std::memory_order_relaxed)) ? Outcome::kCorrupt
                                                               : Outcome::kNotOwner;
  }
  switch (upgrade_or_mark()) {
    case UpgradeMark::kUpgraded:
      return Outcome::kAcquired;
    case UpgradeMark::kCorrupt:
      return Outcome::kCorrupt;
    case UpgradeMark::kMarked:
      break;
  }
  return drain_or_enqueue(self, waiter, deadline);
}

}  // namespace parklock
