// What the locks that record their owner (the mutex, the RWLock) share on their slow paths: the
// vocabulary of a lock attempt, and parking for the lock while watching for a self-deadlock that
// cannot be refused up front, or a deadlock with other threads (waits_for.h).
//
// A thread that blocks on a lock while one of its own asynchronous waits is queued on the same
// lock can be handed the lock through that waiter, which cannot run while the thread is blocked:
// the blocked wait would then wait for itself forever. Locks that record their owner (the mutex,
// the write side of the RWLock, and the mutex a condition variable re-acquires) let the blocked
// wait notice: while it sleeps, an interrupt scope asks the thread's own interrupt and then
// whether the lock names this thread, at the thread interrupt's poll interval. A thread without an
// interrupt (plain C++ threads) has nothing to poll with, and no asynchronous waits either (only
// the binding has both), so it is not watched.
//
// The thread's own interrupt is asked FIRST, and its answer kept: after a hand-off to this very
// waiter the lock names this thread too, and a thread being stopped must still pass that lock
// on, while a thread that is not being stopped simply takes it.
#pragma once

#include <optional>

#include "function_ref.h"
#include "interrupt.h"
#include "owner_death.h"
#include "parking_lot.h"
#include "wait_step.h"
#include "waits_for.h"

namespace parklock {

// How a lock wait ended (wait_step.h): kOwnerDied acquired from an owner that ended holding the
// lock (owner_death.h); kAlreadyHeld: the calling thread holds it (or one of its Promise waits
// was handed it while the thread blocked here); kDeadlock: the thread gave up a cycle of blocked
// lock waits (waits_for.h; take_deadlock_cycle() says which).
using LockStatus = Outcome;

// What one step of a thread that does not hold the lock did with the word it read: acquired it,
// lost a race (read the word again), announced itself as a waiter, or found a corrupt word.
enum class Attempt { kAcquired, kRetry, kContended, kCorrupt };

// The status an attempt that ends the lock loop returns (kAcquired or kCorrupt).
constexpr LockStatus final_status(Attempt attempt) noexcept {
  return attempt == Attempt::kAcquired ? LockStatus::kAcquired : LockStatus::kCorrupt;
}

// How a lock's park ended, with the watch's verdict applied: `retry` (the word changed before the
// thread could queue: look again), a final `status` (the waiter left, or passed on what it got),
// or neither: woken with `token`, which the lock must act on.
struct LockPark {
  bool retry = false;
  std::optional<LockStatus> status;
  WakeToken token = 0;
};

// How a park relates to `lock`: waiting for it (published in the waits-for graph, waits_for.h),
// or waiting for something else with the lock released (a condition variable's wait for a
// notification), where only a self-deadlock is watched for.
enum class Waiting { kForTheLock, kWithTheLockReleased };

// Parks `self` on `key` as parking_lot::park() does, watching `lock`'s owner for a self-deadlock
// and, if `waiting` for it, for a deadlock with other threads. A token received while the thread
// is being stopped is handed to `abandon` (which passes it on) and reported as kInterrupted.
LockPark park_for_lock(const void* key, FunctionRef<bool()> validate,
                       const parking_lot::ParkOptions& options, ThreadId self,
                       const LockIdentity& lock, Waiting waiting,
                       FunctionRef<void(WakeToken)> abandon);

}  // namespace parklock
