#include "mutex.h"

#include "lock_wait.h"
#include "owner_death.h"
#include "spin.h"
#include "wake_stats.h"

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
  return lock_unless_held(self, deadline, false, ended_owner);
}

MutexWord::LockStatus MutexWord::lock_unless_held(ThreadId self, Deadline deadline, bool notified,
                                                  ThreadId* ended_owner) {
  const std::int32_t initial = word().load(std::memory_order_relaxed);
  const State state = state_of(initial);
  if ((state == kLocked || state == kLockedParked) && owner_of(initial) == self) {
    return LockStatus::kAlreadyHeld;
  }
  return lock_loop(self, deadline, false, notified, ended_owner);
}

MutexWord::LockStatus MutexWord::lock_after_wake(ThreadId self, WakeToken token,
                                                 ThreadId* ended_owner) {
  if (grant_of(token) == kHandedOff) {
    wake_stats::record(wake_stats::Event::kHandedOff);
    return handed_over(token, ended_owner);
  }
  return lock_loop(self, Deadline::never(), token == kReleasedWithMoreWaiters, true, ended_owner);
}

MutexWord::LockStatus MutexWord::lock_after_notify(ThreadId self, ThreadId* ended_owner) {
  return lock_unless_held(self, Deadline::never(), true, ended_owner);
}

bool MutexWord::take_from_ended_owner(ThreadId self, ThreadId* ended_owner) noexcept {
  std::int32_t seen = word().load(std::memory_order_relaxed);
  for (;;) {
    const State state = state_of(seen);
    if (state != kLocked && state != kLockedParked) return false;
    const ThreadId owner = owner_of(seen);
    if (owner == self || !thread_ended(owner)) return false;
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

MutexWord::LockStatus MutexWord::lock_loop(ThreadId self, Deadline deadline, bool must_mark_parked,
                                           bool notified, ThreadId* ended_owner) {
  // Whether this thread is competing after a wake-up (for the benchmarks' counts only).
  bool woken = notified;
  if (woken) wake_stats::record(wake_stats::Event::kWoken);
  // A lock handed to one of this thread's own asynchronous waits while it blocks here would
  // never be released, and neither would a lock in a cycle of blocked threads: the blocked wait
  // watches for both (lock_wait.h) and reports a deadlock.
  const LockIdentity lock{&kWaitSite, address()};
  const auto must_wait = [this] {
    return state_of(word().load(std::memory_order_relaxed)) == kLockedParked;
  };
  const auto left = [this](bool queue_empty) { on_waiter_left(queue_empty); };
  const parking_lot::Grant on_leave{nullptr, left};
  const auto abandon = [&](WakeToken token) { abandon_wake(self, token); };
  parking_lot::ParkOptions options;
  options.deadline = deadline;
  options.site = &kWaitSite;
  options.on_leave = &on_leave;
  const int spin_limit = notified ? kNotifiedSpinLimit : spin_policy().limit;
  int spins = 0;
  for (;;) {
    const std::int32_t seen = word().load(std::memory_order_relaxed);
    if (state_of(seen) == kLocked && !must_mark_parked) {
      // A try-lock whose time is up leaves without marking the lock contended, which would only
      // send the holder's unlock down the slow path for nobody.
      if (deadline.expired()) return LockStatus::kTimedOut;
      if (spins < spin_limit) {
        spin_pause(spins++);
        continue;
      }
    }
    const Attempt attempt = try_acquire_or_mark(self, seen, must_mark_parked);
    if (attempt == Attempt::kRetry) continue;
    if (attempt != Attempt::kContended) return final_status(attempt);
    // The state is 2 now, so whatever happens next the holder will wake a waiter: any duty to
    // mark the lock contended is done and leaving on timeout is safe.
    must_mark_parked = false;
    // Never wait for an owner that has ended: take the lock over and report it.
    if (take_from_ended_owner(self, ended_owner)) return LockStatus::kOwnerDied;
    if (deadline.expired()) return LockStatus::kTimedOut;
    // A condition variable's waiter spins before it parks on the mutex, even though the state
    // says waiters are parked: it was woken because the lock was released, or is about to be by
    // the notifier, which notify_all() counts on to keep a few wake-ups under way; parking would
    // cost it a whole wake-up later. Having seen waiters parked, it takes the lock with state 2 if
    // it gets it, so that its own unlock wakes the next one and the chain of wake-ups goes on.
    // Plain mutex waiters park at once in state 2: among threads that hammer one lock, spinning
    // woken waiters only take the cores its holders need.
    if (notified && spins < spin_limit) {
      spin_pause(spins++);
      must_mark_parked = true;
      continue;
    }

    const LockPark parked =
        park_for_lock(address(), must_wait, options, self, lock, Waiting::kForTheLock, abandon);
    if (parked.retry) continue;
    if (woken) wake_stats::record(wake_stats::Event::kFutile);
    if (parked.status) return *parked.status;
    if (grant_of(parked.token) == kHandedOff) {
      wake_stats::record(wake_stats::Event::kHandedOff);
      return handed_over(parked.token, ended_owner);
    }
    woken = true;
    wake_stats::record(wake_stats::Event::kWoken);
    // A waiter whose deadline passed while it was being woken still competes once: the loop only
    // checks the deadline after the state is 2, which is what passing the wake-up on requires.
    must_mark_parked = parked.token == kReleasedWithMoreWaiters;
    spins = 0;
  }
}

const WaitSite MutexWord::kWaitSite{"mutex", &key_is_address, &MutexWord::holder_at,
                                    &MutexWord::recover_from_ended_owner};

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

AsyncStep MutexWord::lock_or_enqueue(ThreadId self, Waiter& waiter, bool must_mark_parked,
                                     ThreadId* ended_owner) {
  for (;;) {
    const std::int32_t seen = word().load(std::memory_order_relaxed);
    const Attempt attempt = try_acquire_or_mark(self, seen, must_mark_parked);
    if (attempt == Attempt::kRetry) continue;
    if (attempt != Attempt::kContended) return final_step(attempt);
    must_mark_parked = false;
    if (take_from_ended_owner(self, ended_owner)) return AsyncStep::kOwnerDied;
    const auto must_wait = [this] {
      return state_of(word().load(std::memory_order_relaxed)) == kLockedParked;
    };
    if (parking_lot::enqueue(address(), waiter, must_wait, &kWaitSite)) {
      return AsyncStep::kQueued;
    }
  }
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
