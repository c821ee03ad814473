// The RWLock's lock wait as a WaitStep (rwlock_steps.h): the queue's grant, then for a writer
// refused beside readers the drain (rwlock_drain.cpp).
#include "primitives/rwlock_steps.h"

#include <optional>

#include "lot/owner_death.h"

namespace parklock {

namespace {
// A wake-up of the draining writer: it was granted the drain, or the readers it waits for left.
constexpr bool is_drain_wake(WakeToken token) noexcept {
  return grant_of(token) == RwLockWords::kGrantedDrain ||
         grant_of(token) == RwLockWords::kReadersLeft;
}
}  // namespace

std::int64_t RwLockWords::LockStep::request() const {
  if (upgrade_) return kUpgradeRequest;
  switch (mode_) {
    case Mode::kExclusive:
      return exclusive_request(self_);
    case Mode::kShared:
      return kSharedRequest;
    case Mode::kUpgradable:
      break;
  }
  return upgradable_request(self_);
}

Outcome RwLockWords::LockStep::start(Waiter& waiter) {
  if (upgrade_) {
    // The draining bit beside this thread's own hold is set only by its Promise upgrade, which
    // must end first: a blocking upgrade would wait for it forever.
    if (waiter.blocking() && lock_.holds_upgradable(self_) &&
        (lock_.state().load(std::memory_order_relaxed) & kDraining) != 0) {
      return Outcome::kNotOwner;
    }
    return lock_.upgrade_or_enqueue(self_, waiter, deadline());
  }
  // Whatever a blocking wait waits for here, it would wait for its own write or upgradable hold.
  // A Promise wait queues behind its own thread's hold like any other: that thread can release
  // while it waits.
  if (waiter.blocking() && lock_.is_named_holder(self_)) return Outcome::kAlreadyHeld;
  return lock_or_drain(waiter, /*woken=*/false);
}

Outcome RwLockWords::LockStep::lock_or_drain(Waiter& waiter, bool woken) {
  // Only a blocking writer drains before it queues: a Promise writer queues at once, which keeps
  // later readers out as well, and spins never.
  // A competitor (woken) must leave the lock marked for the waiters behind it, which a drain
  // begun without a grant would not: it marks the lock and queues, like a reader's arrival.
  if (mode_ == Mode::kExclusive && (lock_.begin_drain_in_region(self_) ||
                                    (waiter.blocking() && !woken && lock_.begin_drain(self_)))) {
    draining_ = true;
    return lock_.drain_or_enqueue(self_, waiter, deadline());
  }
  ThreadId ended = kNoThread;
  const Outcome outcome = lock_.lock_or_enqueue(self_, waiter, &ended, deadline(), woken);
  set_ended_owner(ended);
  return outcome;
}

// A wake-up on the lock's queue is a grant: the state already counts this waiter, and the grant
// may carry the writer that ended holding the lock. A writer granted the drain waits on as the
// draining writer, whose wake-ups mean "look again". In a region every wake-up means "look
// again" (rwlock_across_processes.cpp): the waiter competes, or the draining writer looks at the
// readers.
Outcome RwLockWords::LockStep::resume(Waiter& waiter, WakeToken token) {
  if ((token == kLookAgain || token == kCompete) && !draining_) {
    return lock_or_drain(waiter, /*woken=*/true);
  }
  if (is_drain_wake(token) || token == kLookAgain) {
    draining_ = true;
    return lock_.drain_or_enqueue(self_, waiter, deadline());
  }
  set_ended_owner(ended_owner_of(token));
  return ended_owner() == kNoThread ? Outcome::kAcquired : Outcome::kOwnerDied;
}

// A drain's wake-up obliges nothing, but the drain must end: it keeps readers out. A wake-up to
// look again obliges nothing (every waiter of this process was woken with it).
void RwLockWords::LockStep::abandon(Waiter& /*waiter*/, WakeToken token) noexcept {
  if (is_drain_wake(token) || (token == kLookAgain && draining_)) {
    lock_.end_drain(self_);
  } else {
    lock_.abandon_wake(self_, token);
  }
}

// Leaving without a grant may unblock the waiters queued behind this one, or, for the draining
// writer, the waiters it kept out. An upgrader's teardown (`deferred`) leaves them to the release
// of its thread's upgradable hold, which the thread's end brings (owner_death.h).
bool RwLockWords::LockStep::cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  if (!draining_) return lock_.cancel(waiter, deferred);
  if (!parking_lot::cancel(waiter)) return false;
  lock_.end_drain(self_, deferred, /*grant=*/!upgrade_ || deferred == nullptr);
  return true;
}

// A lock granted to one of this thread's own Promise waits while it blocks here would never be
// released, and neither would a lock in a cycle of blocked threads: the blocked wait watches for
// both (wait_step.h). The upgrader holds the lock it waits on, and a draining writer has the lock
// reserved (in a region, named as its holder): they have nothing to watch.
std::optional<LockWatch> RwLockWords::LockStep::watch(const Waiter& /*waiter*/) const {
  if (upgrade_ || draining_) return std::nullopt;
  return LockWatch{{&kWaitSite, lock_.address()}, /*for_the_lock=*/true};
}

}  // namespace parklock
