// Parking a thread for a lock that records its owner, watching for a self-deadlock it cannot
// refuse up front.
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

#include "function_ref.h"
#include "interrupt.h"
#include "parking_lot.h"

namespace parklock {

// How a lock's park ended, with the watch's verdict applied.
struct LockPark {
  enum class Outcome {
    kRetry,         // the word changed before the thread could queue: look again
    kTimedOut,      // the deadline passed (the waiter left; on_leave ran)
    kInterrupted,   // the thread is being stopped (the waiter left, or passed on what it got)
    kSelfDeadlock,  // the lock was handed to one of this thread's own asynchronous waits
    kWoken,         // woken with `token`, which the lock must act on
  };
  Outcome outcome;
  WakeToken token = 0;
};

// Parks on `key` as parking_lot::park() does, watching `held_by_this_thread`. A token received
// while the thread is being stopped is handed to `abandon` (which passes it on) and reported as
// kInterrupted.
LockPark park_for_lock(const void* key, FunctionRef<bool()> validate,
                       const parking_lot::ParkOptions& options,
                       FunctionRef<bool()> held_by_this_thread,
                       FunctionRef<void(WakeToken)> abandon);

}  // namespace parklock
