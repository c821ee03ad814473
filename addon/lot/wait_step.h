// One wait protocol per primitive, run two ways.
//
// A primitive writes each of its waits once, as a WaitStep: start() finishes at once or queues
// the waiter in the parking lot; resume() acts on the token a waker handed it and finishes or
// queues it again; abandon() passes on what a token obliged a waiter that gives up; cancel()
// takes a queued waiter out with the primitive's departure grant (parking_lot::Grant).
// - wait_blocking() runs a step on the calling thread: its waiter is a BlockingWaiter, which
//   sleeps on the thread parker between steps, and leaves on the deadline or the thread's
//   interrupt.
// - The binding runs the same step for a Promise: its waiter's wake-up is a callback that
//   resumes the step on the waiting thread's event loop.
// A step may spin before it queues only for a blocking waiter (Waiter::blocking()).
#pragma once

#include <cstdint>
#include <optional>

#include "lot/deadline.h"
#include "lot/parking_lot.h"
#include "lot/thread_id.h"
#include "lot/waits_for.h"

namespace parklock {

// How a wait ended: the one vocabulary from the core to JavaScript, which receives these numbers
// (the binding exports them as `settled`; lib/outcomes.js reads them).
enum class Outcome : int {
  kInterrupted = 0,  // the thread is being stopped: never reaches JavaScript
  kAcquired = 1,     // got what it waited for
  kTimedOut = 2,     // a blocking wait's deadline passed
  kCancelled = 3,    // a Promise wait was cancelled (timeout, abort)
  kAlreadyHeld = 4,  // a lock was requested by its holder
  kCorrupt = 5,      // the shared word holds a value no operation writes
  kPending = 6,      // queued: the wait goes on (never reaches JavaScript)
  kNotEqual = 7,     // a futex wait found another value than expected
  kNotOwner = 8,     // a wait that needs a held lock found it not held
  kOwnerDied = 9,    // acquired, and the previous owner had ended holding it (ended_owner())
  kLeader = 10,      // a barrier's last arrival; the caller that runs a once's initializer
  kDeadlock = 11,    // this thread gives up a cycle of blocked lock waits (waits_for.h)
  kRegionLost = 12,  // the binding's: the words' region file was truncated or overwritten meanwhile
                     // (shared_region::intact()), so whatever the wait came to cannot be trusted
  // No room to count one more wait in memory other processes share (a Condition's, condition.h).
  kTooManyWaiters = 13,
};

// A blocking wait for a lock that records its owner watches, while it sleeps, for the lock being
// handed to this thread's own Promise wait, which cannot run while the thread blocks
// (kAlreadyHeld), and, if it waits for the lock itself, for a deadlock with other threads
// (kDeadlock). It asks at the poll interval of the thread's interrupt, and asks that interrupt
// first: after a hand-off to this very waiter the lock names this thread too, and a thread being
// stopped must still pass it on. A thread without an interrupt (a plain C++ thread) has no
// Promise waits and is not watched.
struct LockWatch {
  LockIdentity lock;
  bool for_the_lock;  // false: a condition variable's wait, with the lock released
};

class WaitStep {
 public:
  WaitStep() = default;
  WaitStep(const WaitStep&) = delete;
  WaitStep& operator=(const WaitStep&) = delete;
  virtual ~WaitStep() = default;

  // The waiter's Waiter::request(), fixed for the whole wait.
  virtual std::int64_t request() const { return 0; }

  // The identity the waiter waits as (its Waiter::thread(), which a lock handed over to it
  // records as its owner): in memory other processes share, its region identity
  // (shared_region.h); kNoThread: the waiting thread's own.
  virtual ThreadId acts_as() const noexcept { return kNoThread; }
  // The identity a waiter of this step on the thread `thread` waits as.
  ThreadId waiter_thread(ThreadId thread) const noexcept {
    const ThreadId identity = acts_as();
    return identity != kNoThread ? identity : thread;
  }

  // Finishes now, or queues `waiter` and returns kPending.
  virtual Outcome start(Waiter& waiter) = 0;

  // `waiter` was woken with `token`: finishes, or queues it again (kPending).
  virtual Outcome resume(Waiter& waiter, WakeToken token) = 0;

  // Any thread, no bucket lock held: a waiter woken with `token` gives up (cancelled, timed out,
  // its thread stopping); passes on whatever the token obliged it to, so no wake-up is lost.
  virtual void abandon(Waiter& waiter, WakeToken token) noexcept = 0;

  // Takes `waiter` out of its queue with the primitive's departure grant, in one critical section;
  // false if its wake-up is already on its way. `deferred`: as for parking_lot::cancel().
  virtual bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept;

  // Taken out by a cancel before any wake-up: the outcome, or kPending if it queued itself again
  // to finish a duty first (a condition variable's waiter re-locks its mutex).
  virtual Outcome on_cancelled(Waiter& /*waiter*/) { return Outcome::kCancelled; }

  // Woken with `token` after its cancel was asked for, too late to take it out.
  virtual Outcome resume_cancelled(Waiter& waiter, WakeToken token) {
    abandon(waiter, token);
    return on_cancelled(waiter);
  }

  // Whether a blocking waiter keeps sleeping past the deadline where it is queued now (a
  // condition variable's waiter moved to its mutex has been notified: only its turn remains).
  virtual bool waits_past_deadline(const Waiter& /*waiter*/) const { return false; }

  // What a blocking wait watches while it sleeps (LockWatch), if anything.
  virtual std::optional<LockWatch> watch(const Waiter& /*waiter*/) const { return std::nullopt; }

  // The owner that had ended holding the lock a kOwnerDied outcome acquired.
  ThreadId ended_owner() const noexcept { return ended_owner_; }

 protected:
  // A blocking wait's deadline (never for a Promise wait, which a JavaScript timer cancels).
  Deadline deadline() const noexcept { return deadline_; }
  void set_ended_owner(ThreadId ended) noexcept { ended_owner_ = ended; }

 private:
  friend Outcome wait_blocking(WaitStep&, Deadline, std::optional<WakeToken>);

  Deadline deadline_ = Deadline::never();
  ThreadId ended_owner_ = kNoThread;
};

// Runs `step` on the calling thread until it finishes, the deadline passes (kTimedOut, or what
// on_cancelled() says), or the thread's interrupt is requested (kInterrupted). With `woken`, the
// wait begins as a waiter someone else queued and woke with that token (resume()).
Outcome wait_blocking(WaitStep& step, Deadline deadline,
                      std::optional<WakeToken> woken = std::nullopt);

// `outcome`, with the owner a kOwnerDied outcome names stored in `*ended_owner` (if given).
inline Outcome with_ended_owner(Outcome outcome, const WaitStep& step,
                                ThreadId* ended_owner) noexcept {
  if (outcome == Outcome::kOwnerDied && ended_owner != nullptr) *ended_owner = step.ended_owner();
  return outcome;
}

}  // namespace parklock
