// A three-state mutex in one 32-bit word of caller-owned (possibly shared) memory.
//
// Shared-memory layout (kBytes = 4, kAlign = 4; zero is an unlocked mutex):
//
//   bits   field  values
//   -----  -----  --------------------------------------------------------------------------------
//   0..1   state  0 kUnlocked      nobody holds it (then the whole word is 0)
//                 1 kLocked        held; no waiter has parked since it was last released
//                 2 kLockedParked  held, and waiters may be parked: the holder's unlock must take
//                                  the slow path and wake one
//                 3                never written: a word with it is corrupt
//   2..31  owner  the holder's ThreadId (kOwnerShift); 0 while unlocked
//
// Keeping the owner in the state word makes ownership exact at no cost: acquiring and recording
// the owner is one compare-and-swap, and so is checking the owner and releasing. No instant exists
// in which the mutex is held but names no owner, or names a thread that has already released it.
//
// Lock (a) CAS 0 -> self|1: that is the whole fast path. Otherwise (b) spin briefly while the
// state is 1, (c) CAS the state 1 -> 2 to announce a waiter, (d) park on the word while its state
// still reads 2, and (e) after a wake-up go back to (a). A condition variable's waiter, woken to
// re-acquire (notified, or requeued and then woken by a release), also spins briefly in state 2
// before it parks, and takes the lock with state 2, since waiters were parked when it last looked.
//
// Unlock (a) CAS self|1 -> 0: fast path. Otherwise the state is 2 and (b) the slow path dequeues
// the longest waiter under the bucket lock and either
//   - releases the lock (word 0) and wakes the waiter to compete for it with any newcomer
//     (barging: a running thread can take the lock at once, which is what makes a mutex fast), or
//   - when the parking lot says it is time to be fair (UnparkInfo::be_fair: a randomized timer per
//     bucket, due about once per millisecond of contention), hands the lock to it directly: the
//     word becomes waiter|2 (waiter|1 if nobody else waits) without ever being free.
// So barging is allowed but bounded: no waiter, blocking or asynchronous, waits much longer than
// the fairness interval beyond its turn in the FIFO queue.
//
// The one subtle invariant: when waiters stay parked after a release (word 0), the waiter woken
// by that release is told so (kReleasedWithMoreWaiters) and must make the state 2 before it leaves
// the lock loop in any way, acquiring or not. Otherwise a newcomer that took the lock with
// 0 -> self|1 would release it on the fast path and the remaining waiters would sleep forever.
//
// Owner death (owner_death.h). A word whose owner field names a thread that has ended is still
// held: nothing else could tell a waiter that the data may be half-updated. Whoever finds it on
// the slow path takes it over with one CAS that keeps the state bits (state 2 stays 2, so the
// waiters still get woken) and reports kOwnerDied; with waiters queued when the thread ends,
// recover_from_ended_owner() hands it to the oldest one instead (token kHandedOff carrying the
// ended owner). A waiter that gives such a hand-off away puts the ended owner back and recovers
// again, so the report is never lost.
//
// JavaScript runs both fast paths itself with Atomics on the same word (lib/mutex.js), using the
// layout constants the binding exports.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <system_error>

#include "lot/atomic_ref.h"
#include "lot/deadline.h"
#include "lot/parking_lot.h"
#include "lot/thread_id.h"
#include "lot/wait_step.h"
#include "primitives/int32_words.h"
#include "primitives/lock_wait.h"
#include "primitives/thread_field.h"

namespace parklock {

// What a lock step is allowed: a blocking waiter's deadline, and whether it is a condition
// variable's waiter woken to re-acquire (it spins longer, and takes the lock marked contended).
struct LockTerms {
  Deadline deadline = Deadline::never();
  bool notified = false;
};

class MutexWord : public Int32Words<1> {
 public:
  enum State : std::int32_t { kUnlocked = 0, kLocked = 1, kLockedParked = 2 };

  using OwnerField = ThreadField<State, 2>;
  static constexpr int kOwnerShift = OwnerField::kShift;
  static constexpr std::int32_t kStateMask = OwnerField::kStateMask;
  static constexpr ThreadId kOwnerLimit = OwnerField::kLimit;

  // Tokens a waiter receives from the unlock slow path.
  enum Wake : WakeToken {
    kReleased = 1 * kTokenSpaceSize,  // the lock is free; compete for it
    kReleasedWithMoreWaiters,         // the lock is free and others still wait: set the state to 2
    kHandedOff,                       // the lock is now yours
  };

  // kOwnerDied: acquired, and the previous owner had ended holding the lock.
  using LockStatus = parklock::LockStatus;
  enum class UnlockStatus { kUnlocked, kNotOwner, kCorrupt };

  // The word of `thread` holding the lock in a state; a word's state; a word's owner.
  static constexpr auto held_by = OwnerField::pack;
  static constexpr auto state_of = OwnerField::state_of;
  static constexpr auto owner_of = OwnerField::thread_of;

  explicit MutexWord(std::int32_t* word) noexcept : word_(word) {}

  bool try_lock(ThreadId self) noexcept {
    std::int32_t expected = kUnlocked;
    return word().compare_exchange_strong(expected, held_by(self, kLocked),
                                          std::memory_order_acquire, std::memory_order_relaxed);
  }

  // Where a status is kOwnerDied, `*ended_owner` (if given) is set to the owner that ended.
  LockStatus lock(ThreadId self, Deadline deadline = Deadline::never(),
                  ThreadId* ended_owner = nullptr) {
    if (try_lock(self)) return LockStatus::kAcquired;
    return lock_slow(self, deadline, ended_owner);
  }

  UnlockStatus unlock(ThreadId self) noexcept {
    std::int32_t expected = held_by(self, kLocked);
    if (word().compare_exchange_strong(expected, kUnlocked, std::memory_order_release,
                                       std::memory_order_relaxed)) {
      return UnlockStatus::kUnlocked;
    }
    return unlock_slow(self);
  }

  // The contended part of lock(): the caller's try_lock failed. `self` must be the calling thread's
  // current_thread_id(): a parked waiter is handed the lock under the identity of the thread that
  // parked, and only that identity can then unlock it.
  // kInterrupted: the thread's interrupt (interrupt.h) was requested.
  LockStatus lock_slow(ThreadId self, Deadline deadline, ThreadId* ended_owner = nullptr);

  // A try-lock that found the lock taken: takes it over if its owner has ended (true, with the
  // ended owner in `*ended_owner`). Never waits.
  bool take_from_ended_owner(ThreadId self, ThreadId* ended_owner) noexcept;

  // The WaitSite::recover of mutex waiters: hands the mutex at `address`, if `ended` holds it, to
  // its oldest waiter.
  static void recover_from_ended_owner(const void* address, ThreadId ended) noexcept;

  // Who holds the mutex at `address` (kNoThread if nobody): WaitSite::holder.
  static ThreadId holder_at(const void* address) noexcept;

  // WaitSite::look_again: the oldest waiter here competes for what another process released,
  // with one waiter of each other process that has some, and marks the state 2 if it loses.
  static void look_again(const void* address) noexcept;

  // The site of mutex waiters (parking_lot.h).
  static const WaitSite kWaitSite;

  // Marks the state contended if the mutex is held (true), so that its holder's unlock wakes the
  // waiters a condition variable is about to move onto it; false if it is unlocked (or corrupt).
  bool mark_parked_if_locked() noexcept;

  // The contended part of unlock(): checks that `self` holds the lock and wakes a waiter.
  UnlockStatus unlock_slow(ThreadId self) noexcept;

  // The lock protocol, one step: acquires now (kAcquired; kOwnerDied from an owner that ended),
  // or queues `waiter` (its wake-up token is one of Wake) and returns kPending; kTimedOut,
  // kCorrupt. `must_mark_parked`: the caller was woken with kReleasedWithMoreWaiters. Spins first
  // only for a blocking waiter; never sleeps.
  Outcome lock_or_enqueue(ThreadId self, Waiter& waiter, bool must_mark_parked,
                          ThreadId* ended_owner = nullptr, const LockTerms& terms = LockTerms{});

  // A lock wait as a WaitStep (wait_step.h), blocking or Promise.
  class LockStep;

  // A waiter that received `token` but no longer wants the lock (timed out, cancelled, its thread
  // is gone) passes on whatever the token obliged it to: a lock handed to `self` is unlocked, and
  // the duty to mark the state as contended is fulfilled.
  void abandon_wake(ThreadId self, WakeToken token) noexcept;

  // Takes a queued asynchronous waiter out of this mutex's queue (false if a wake-up is already on
  // its way), clearing the contended state if it was the last waiter.
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred = nullptr) noexcept;

  // A waiter's departure without a wake-up (the `finish` of its on_leave Grant), under the bucket
  // lock: the last one out turns state 2 back into 1, so that the holder's unlock takes the fast
  // path again instead of waking nobody.
  void on_waiter_left(bool queue_empty) noexcept;

  bool is_locked() const noexcept { return word().load(std::memory_order_relaxed) != kUnlocked; }
  ThreadId owner_thread() const noexcept {
    return owner_of(word().load(std::memory_order_relaxed));
  }
  const void* address() const noexcept { return word_; }

 private:
  atomic_ref<std::int32_t> word() const noexcept { return atomic_ref<std::int32_t>(*word_); }

  Attempt try_acquire_or_mark(ThreadId self, std::int32_t seen, bool must_mark_parked);

  std::int32_t* word_;
};

// `notified`: a condition variable's waiter woken to re-acquire.
class MutexWord::LockStep final : public WaitStep {
 public:
  LockStep(MutexWord mutex, ThreadId self, bool notified = false) noexcept;
  Outcome start(Waiter& waiter) override;
  Outcome resume(Waiter& waiter, WakeToken token) override;
  void abandon(Waiter& waiter, WakeToken token) noexcept override;
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept override;
  std::optional<LockWatch> watch(const Waiter& waiter) const override;
  ThreadId acts_as() const noexcept override { return self_; }

 private:
  Outcome step(Waiter& waiter, bool must_mark_parked);

  MutexWord mutex_;
  const ThreadId self_;
  const bool notified_;
  bool woken_ = false;  // competing after a wake-up (for wake_stats only)
};

// A self-contained mutex for C++ code (BasicLockable / TimedLockable), built on MutexWord.
class Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // Throws std::system_error (resource_deadlock_would_occur) if this thread already holds it.
  // A lock whose previous owner ended holding it is acquired like any other here; MutexWord
  // reports that case to callers that can act on it.
  void lock() {
    if (word().lock(current_thread_id()) == MutexWord::LockStatus::kAlreadyHeld) {
      throw std::system_error(std::make_error_code(std::errc::resource_deadlock_would_occur));
    }
  }
  bool try_lock() noexcept { return word().try_lock(current_thread_id()); }
  template <typename Rep, typename Period>
  bool try_lock_for(std::chrono::duration<Rep, Period> timeout) {
    auto self = current_thread_id();
    if (word().try_lock(self)) return true;
    const auto status = word().lock_slow(self, Deadline::at(Clock::now() + timeout));
    return status == MutexWord::LockStatus::kAcquired ||
           status == MutexWord::LockStatus::kOwnerDied;
  }
  void unlock() noexcept { word().unlock(current_thread_id()); }

 private:
  MutexWord word() noexcept { return MutexWord(&word_); }
  alignas(MutexWord::kAlign) std::int32_t word_ = MutexWord::kUnlocked;
};

}  // namespace parklock
