// The RWLock's owner death (rwlock.h, owner_death.h).
//
// Named holders only. A state with the writer bit whose owner word names a thread that has ended is
// still held: nothing else could tell the next holder that the data may be half-updated. Whoever
// finds it on the slow path, in any mode, takes it over and reports kOwnerDied: a writer or
// upgradable reader by one CAS of the owner word ended -> self; a reader by one CAS of the owner
// word ended -> 0, which alone makes it the claimant (no writer can take a state with the writer
// bit, and nobody else writes the owner word of a held lock); then a reader or an upgradable reader
// turns the writer bit into its read hold, keeping the parked bit. Every claim CASes the owner
// word, so exactly one thread takes over. With waiters queued when the thread ends,
// recover_from_ended_owner() claims the owner word the same way and releases the write hold to the
// oldest waiters, the first of which gets a grant carrying the ended owner; if the queue emptied
// meanwhile, the writer bit stays and the owner word names the ended thread again, for the next
// acquirer to find. A writer that gives such a grant away puts the ended owner back and recovers
// again, so the report is never lost (a reader giving one away just releases its hold). An
// upgradable read hold whose thread ended is released (a read hold changed nothing), by whoever
// finds it on the slow path or by the end of that thread. Plain read holds are not recorded per
// thread, so a reader that ends holding one is not detected. In memory other processes share the
// owner word names region identities, which end with their process (shared_region.h); there the
// waiters take a lock over themselves (rwlock_across_processes.cpp).
#include "across_processes/shared_region.h"
#include "lot/owner_death.h"
#include "primitives/rwlock.h"

namespace parklock {

Outcome RwLockWords::try_lock_from_ended(Mode mode, ThreadId self, ThreadId* ended_owner) noexcept {
  if (take_from_ended_owner(mode, self, ended_owner)) return Outcome::kOwnerDied;
  if (!release_ended_upgrader(self) && !end_ended_drain(self)) return Outcome::kTimedOut;
  const bool acquired = mode == Mode::kShared      ? try_lock_shared()
                        : mode == Mode::kExclusive ? try_lock(self)
                                                   : try_lock_upgradable(self);
  return acquired ? Outcome::kAcquired : Outcome::kTimedOut;
}

bool RwLockWords::take_from_ended_owner(Mode mode, ThreadId self, ThreadId* ended_owner) noexcept {
  // Acquire: a state that a recovery's grant-less finish wrote (writer bit, owner word put back
  // just before) comes with that owner word.
  if ((state().load(std::memory_order_acquire) & kWriter) == 0) return false;
  ThreadId holder = owner().load(std::memory_order_acquire);
  // The owner word names a thread only while that thread holds the write lock or the upgradable
  // read lock (a holder clears it before releasing, and stores it only after taking its bit), and
  // an ended thread never releases: so an owner word naming an ended thread means that thread
  // holds the lock, and one CAS of the owner word away from that name decides who takes it over.
  if (holder == self || !shared_region::owner_ended(address(), holder)) return false;
  const ThreadId claimed = mode == Mode::kShared ? kNoThread : self;
  if (!owner().compare_exchange_strong(holder, claimed, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
    return false;
  }
  std::int32_t seen = state().load(std::memory_order_relaxed);
  if ((seen & kWriter) == 0) {
    // The write hold seen above was released since, and the name is an upgradable reader's (or in
    // a region a draining writer's) that ended: not a write lock to take over. The name goes back
    // (nobody else writes the owner word while either holds it) for release_ended_upgrader() (or
    // end_ended_drain()).
    ThreadId mine = claimed;
    owner().compare_exchange_strong(mine, holder, std::memory_order_relaxed);
    return false;
  }
  if (mode != Mode::kExclusive) {
    // The writer bit is this thread's now (nobody else acts on it), and only the parked bit can
    // change beside it: the write hold becomes this thread's read hold.
    const std::int32_t mine = mode == Mode::kShared ? kOneReader : kUpgradable | kOneReader;
    while (!state().compare_exchange_weak(seen, (seen & kParked) | mine, std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
    }
  }
  if (ended_owner != nullptr) *ended_owner = holder;
  return true;
}

bool RwLockWords::end_ended_drain(ThreadId self) noexcept {
  // Only in a region does a writer's drain name its writer (begin_drain_in_region()); an
  // upgrader's drain ends with its hold (release_ended_upgrader()).
  if ((state().load(std::memory_order_acquire) & (kDraining | kUpgradable)) != kDraining) {
    return false;
  }
  ThreadId drainer = owner().load(std::memory_order_acquire);
  if (drainer == kNoThread || drainer == self || !shared_region::owner_ended(address(), drainer)) {
    return false;
  }
  // The same claim as take_from_ended_owner(): one CAS away from the ended writer's name.
  if (!owner().compare_exchange_strong(drainer, kNoThread, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
    return false;
  }
  end_drain_in_region(nullptr);
  return true;
}

void RwLockWords::recover_from_ended_owner(const void* address, ThreadId ended) noexcept {
  RwLockWords lock(const_cast<std::int32_t*>(static_cast<const std::int32_t*>(address)));
  // Without the parked bit nobody waits: the next thread that wants the lock takes it over.
  const std::int32_t seen = lock.state().load(std::memory_order_acquire);
  if ((seen & kParked) == 0) return;
  // In a region nobody grants: the waiters here look again, and take the lock over themselves.
  if (lock.in_region()) {
    if (holder_at(address) == ended) look_again(address);
    return;
  }
  if ((seen & kUpgradable) != 0) {
    lock.release_ended_upgrader(kNoThread);
    return;
  }
  if ((seen & kWriter) == 0) return;
  // Claimed as a reader would claim it; lost if a thread on its slow path took it over first.
  ThreadId expected = ended;
  if (!lock.owner().compare_exchange_strong(expected, kNoThread, std::memory_order_acquire,
                                            std::memory_order_relaxed)) {
    return;
  }
  lock.release_and_grant(kWriter, ended);
}

}  // namespace parklock
