#include "primitives/mutex.h"

#include "across_processes/shared_region.h"
#include "lot/owner_death.h"
#include "primitives/spin.h"
#include "primitives/wake_stats.h"

namespace parklock {

Attempt MutexWord::try_acquire_or_mark(ThreadId self, std::int32_t seen, bool must_mark_parked) {
  if (seen == kUnlocked) {
    // Barging: whoever gets here first takes it, woken waiter or newcomer.
    const std::int32_t mine = held_by(self, must_mark_parked ? kLockedParked : kLocked);
    return word().compare_exchange_weak(seen, mine, std::memory_order_acquire,
                                        std::memory_order_relaxed)
               ? Attempt::kAcquired
               : Attempt::kRetry;
  }
  switch (state_of(seen)) {
    case kLocked:
      return word().compare_exchange_weak(seen, (seen & ~kStateMask) | kLockedParked,
                                          std::memory_order_relaxed)
                 ? Attempt::kContended
                 : Attempt::kRetry;
    case kLockedParked:
      return Attempt::kContended;
    default:  // owner bits without a state, or state 3
      return Attempt::kCorrupt;
  }
}

MutexWord::LockStatus MutexWord::lock_slow(ThreadId self, Deadline deadline,
                                           ThreadId* ended_owner) {
  LockStep step(*this, self);
  return with_ended_owner(wait_blocking(step, deadline), step, ended_owner);
}

bool MutexWord::take_from_ended_owner(ThreadId self, ThreadId* ended_owner) noexcept {
  std::int32_t seen = word().load(std::memory_order_relaxed);
  for (;;) {
    const State state = state_of(seen);
    if (state != kLocked && state != kLockedParked) return false;
    const ThreadId owner = owner_of(seen);
    if (owner == self || !shared_region::owner_ended(address(), owner)) return false;
    // The state stays: with state 2 the parked waiters are still woken by this thread's unlock.
    if (word().compare_exchange_weak(seen, held_by(self, state), std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
      if (ended_owner != nullptr) *ended_owner = owner;
      return true;
    }
  }
}

void MutexWord::recover_from_ended_owner(const void* address, ThreadId ended) noexcept {
  MutexWord mutex(const_cast<std::int32_t*>(static_cast<const std::int32_t*>(address)));
  if (owner_of(mutex.word().load(std::memory_order_relaxed)) != ended) return;
  parking_lot::unpark_one(address, [&](const UnparkInfo& info) -> WakeToken {
    std::int32_t seen = mutex.word().load(std::memory_order_relaxed);
    for (;;) {
      const State state = state_of(seen);
      // Taken over meanwhile by a thread that found it on its slow path: the waiter dequeued
      // here wakes to compete and finds the state still 2, so it parks again.
      if ((state != kLocked && state != kLockedParked) || owner_of(seen) != ended) return kReleased;
      // Nobody to hand it to: the next thread that wants it takes it over lazily.
      if (!info.unparked) return kReleased;
      const std::int32_t theirs = held_by(info.thread, info.has_more ? kLockedParked : kLocked);
      if (mutex.word().compare_exchange_weak(seen, theirs, std::memory_order_acq_rel,
                                             std::memory_order_relaxed)) {
        return with_ended_owner(kHandedOff, ended);
      }
    }
  });
}

bool MutexWord::mark_parked_if_locked() noexcept {
  for (;;) {
    std::int32_t seen = word().load(std::memory_order_relaxed);
    switch (state_of(seen)) {
      case kLockedParked:
        return true;
      case kLocked:
        if (word().compare_exchange_weak(seen, (seen & ~kStateMask) | kLockedParked,
                                         std::memory_order_relaxed)) {
          return true;
        }
        continue;
      default:
        return false;
    }
  }
}

const WaitSite MutexWord::kWaitSite{"mutex", &key_is_address, &MutexWord::holder_at,
                                    &MutexWord::recover_from_ended_owner, &MutexWord::look_again};

void MutexWord::look_again(const void* address) noexcept {
  parking_lot::unpark_here(address, kReleasedWithMoreWaiters);
}

ThreadId MutexWord::holder_at(const void* address) noexcept {
  const std::int32_t seen =
      atomic_ref<const std::int32_t>(*static_cast<const std::int32_t*>(address))
          .load(std::memory_order_relaxed);
  return seen == kUnlocked ? kNoThread : owner_of(seen);
}

void MutexWord::on_waiter_left(bool queue_empty) noexcept {
  if (!queue_empty) return;
  // Only the state bits change: a CAS, because the holder may be releasing on its slow path (it
  // then stores a new word under this same lock, after us) and an ended owner may be taken over.
  std::int32_t seen = word().load(std::memory_order_relaxed);
  while (state_of(seen) == kLockedParked &&
         !word().compare_exchange_weak(seen, (seen & ~kStateMask) | kLocked,
                                       std::memory_order_relaxed)) {
  }
}

bool MutexWord::cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  const auto left = [this](bool queue_empty) { on_waiter_left(queue_empty); };
  const parking_lot::Grant on_leave{nullptr, left};
  return parking_lot::cancel(
      waiter, [&](const void*) { return &on_leave; }, deferred);
}

MutexWord::UnlockStatus MutexWord::unlock_slow(ThreadId self) noexcept {
  for (;;) {
    std::int32_t seen = word().load(std::memory_order_relaxed);
    if (seen == kUnlocked || owner_of(seen) != self) return UnlockStatus::kNotOwner;
    if (state_of(seen) == kLockedParked) break;
    if (state_of(seen) != kLocked) return UnlockStatus::kCorrupt;
    if (word().compare_exchange_weak(seen, kUnlocked, std::memory_order_release,
                                     std::memory_order_relaxed)) {
      return UnlockStatus::kUnlocked;
    }
  }
  // Only the holder changes a word whose state is 2, so it stays as seen until the release below,
  // which happens under the bucket lock: a thread validating its park sees either 2 (and is found
  // here) or the new value (and does not park).
  parking_lot::unpark_one(address(), [this](const UnparkInfo& info) -> WakeToken {
    if (info.unparked && info.be_fair) {
      word().store(held_by(info.thread, info.has_more ? kLockedParked : kLocked),
                   std::memory_order_release);
      return kHandedOff;
    }
    word().store(kUnlocked, std::memory_order_release);
    return info.has_more ? kReleasedWithMoreWaiters : kReleased;
  });
  return UnlockStatus::kUnlocked;
}

Outcome MutexWord::lock_or_enqueue(ThreadId self, Waiter& waiter, bool must_mark_parked,
                                   ThreadId* ended_owner, const LockTerms& terms) {
  // Only a blocking waiter spins: a Promise wait's thread has its event loop to run.
  const int spin_limit = !waiter.blocking() ? 0
                         : terms.notified   ? kNotifiedSpinLimit
                                            : spin_policy().limit;
  int spins = 0;
  for (;;) {
    const std::int32_t seen = word().load(std::memory_order_relaxed);
    if (state_of(seen) == kLocked && !must_mark_parked) {
      // A try-lock whose time is up leaves without marking the lock contended, which would only
      // send the holder's unlock down the slow path for nobody.
      if (terms.deadline.expired()) return Outcome::kTimedOut;
      if (spins < spin_limit) {
        spin_pause(spins++);
        continue;
      }
    }
    const Attempt attempt = try_acquire_or_mark(self, seen, must_mark_parked);
    if (attempt == Attempt::kRetry) continue;
    if (attempt == Attempt::kAcquired) return Outcome::kAcquired;
    if (attempt == Attempt::kCorrupt) return Outcome::kCorrupt;
    // The state is 2 now, so whatever happens next the holder will wake a waiter: any duty to
    // mark the lock contended is done and leaving on timeout is safe.
    must_mark_parked = false;
    // Never wait for an owner that has ended: take the lock over and report it.
    if (take_from_ended_owner(self, ended_owner)) return Outcome::kOwnerDied;
    if (terms.deadline.expired()) return Outcome::kTimedOut;
    // A condition variable's waiter spins before it queues, even though the state says waiters
    // are parked: it was woken because the lock was released, or is about to be by the notifier,
    // which notify_all() counts on to keep a few wake-ups under way. Having seen waiters parked,
    // it takes the lock with state 2, so that its own unlock wakes the next one. Plain waiters
    // queue at once in state 2: among threads that hammer one lock, spinning woken waiters only
    // take the cores its holders need.
    if (terms.notified && spins < spin_limit) {
      spin_pause(spins++);
      must_mark_parked = true;
      continue;
    }
    const auto must_wait = [this] {
      return state_of(word().load(std::memory_order_relaxed)) == kLockedParked;
    };
    if (parking_lot::enqueue(address(), waiter, must_wait, &kWaitSite)) return Outcome::kPending;
    spins = 0;
  }
}

MutexWord::LockStep::LockStep(MutexWord mutex, ThreadId self, bool notified) noexcept
    : mutex_(mutex), self_(self), notified_(notified) {}

Outcome MutexWord::LockStep::start(Waiter& waiter) {
  // A blocking wait for a lock this thread holds would never end. A Promise wait queues behind
  // its own thread's hold like any other: that thread can release while it waits.
  const std::int32_t seen = mutex_.word().load(std::memory_order_relaxed);
  const State state = state_of(seen);
  if (waiter.blocking() && (state == kLocked || state == kLockedParked) &&
      owner_of(seen) == self_) {
    return Outcome::kAlreadyHeld;
  }
  if (notified_ && waiter.blocking()) wake_stats::record(wake_stats::Event::kWoken);
  woken_ = notified_;
  return step(waiter, false);
}

Outcome MutexWord::LockStep::resume(Waiter& waiter, WakeToken token) {
  if (grant_of(token) == kHandedOff) {
    if (waiter.blocking()) wake_stats::record(wake_stats::Event::kHandedOff);
    set_ended_owner(ended_owner_of(token));
    return ended_owner() == kNoThread ? Outcome::kAcquired : Outcome::kOwnerDied;
  }
  if (waiter.blocking()) wake_stats::record(wake_stats::Event::kWoken);
  woken_ = true;
  // A waiter whose deadline passed while it was being woken still competes once: the step only
  // checks the deadline after the state is 2, which is what passing the wake-up on requires.
  return step(waiter, token == kReleasedWithMoreWaiters);
}

Outcome MutexWord::LockStep::step(Waiter& waiter, bool must_mark_parked) {
  ThreadId ended = kNoThread;
  const LockTerms terms{deadline(), notified_};
  const Outcome outcome = mutex_.lock_or_enqueue(self_, waiter, must_mark_parked, &ended, terms);
  if (outcome == Outcome::kPending && woken_ && waiter.blocking()) {
    wake_stats::record(wake_stats::Event::kFutile);
  }
  set_ended_owner(ended);
  return outcome;
}

void MutexWord::LockStep::abandon(Waiter& /*waiter*/, WakeToken token) noexcept {
  mutex_.abandon_wake(self_, token);
}

bool MutexWord::LockStep::cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept {
  return mutex_.cancel(waiter, deferred);
}

std::optional<LockWatch> MutexWord::LockStep::watch(const Waiter& /*waiter*/) const {
  return LockWatch{{&kWaitSite, mutex_.address()}, /*for_the_lock=*/true};
}

void MutexWord::abandon_wake(ThreadId self, WakeToken token) noexcept {
  if (grant_of(token) == kHandedOff) {
    const ThreadId ended = ended_owner_of(token);
    if (ended == kNoThread) {
      unlock(self);
      return;
    }
    // The report that the owner ended must reach whoever takes the lock next: the lock goes back
    // to the ended owner, and is recovered again from there.
    std::int32_t seen = word().load(std::memory_order_relaxed);
    while (owner_of(seen) == self &&
           !word().compare_exchange_weak(seen, held_by(ended, state_of(seen)),
                                         std::memory_order_release, std::memory_order_relaxed)) {
    }
    recover_from_ended_owner(address(), ended);
    return;
  }
  if (token != kReleasedWithMoreWaiters) return;
  for (;;) {
    switch (try_acquire_or_mark(self, word().load(std::memory_order_relaxed), true)) {
      case Attempt::kAcquired:
        // We now hold it with state 2, so this release wakes the next waiter.
        unlock(self);
        return;
      case Attempt::kRetry:
        continue;
      case Attempt::kContended:
      case Attempt::kCorrupt:
        return;
    }
  }
}

}  // namespace parklock
