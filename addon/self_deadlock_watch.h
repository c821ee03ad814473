// The watch a blocking lock keeps for a self-deadlock it cannot refuse up front.
//
// A thread that blocks on a lock while one of its own asynchronous waits is queued on the same
// lock can be handed the lock through that waiter, which cannot run while the thread is blocked:
// the blocked wait would then wait for itself forever. Locks that record their owner (the mutex,
// the write side of the RWLock) let the blocked wait notice: it is given an Interrupt that asks
// the real interrupt and then whether the lock names this thread, polled at the real interrupt's
// interval. Without a real interrupt there is nothing to poll with, and no asynchronous wait of
// the thread either (only the binding has both), so there is no watch.
//
// The real interrupt is asked FIRST, and its answer kept: after a hand-off to this very waiter the
// lock names this thread too, and a thread being stopped must still pass that lock on, while a
// thread that is not being stopped simply takes it.
#pragma once

#include "function_ref.h"
#include "parking_lot.h"

namespace parklock {

class SelfDeadlockWatch {
 public:
  // `held_by_this_thread` must outlive the watch (name the lambda, then build the watch from it).
  SelfDeadlockWatch(const Interrupt* interrupt, FunctionRef<bool()> held_by_this_thread) noexcept
      : interrupt_(interrupt),
        held_by_this_thread_(held_by_this_thread),
        watch_{interrupt != nullptr ? interrupt->poll_interval : Clock::duration{}, poll_} {}
  SelfDeadlockWatch(const SelfDeadlockWatch&) = delete;
  SelfDeadlockWatch& operator=(const SelfDeadlockWatch&) = delete;

  // What to park with (ParkOptions::interrupt): null when there is no real interrupt.
  const Interrupt* interrupt() const noexcept { return interrupt_ != nullptr ? &watch_ : nullptr; }

  // Whether the real interrupt was requested at the latest poll. A park that ended as
  // kInterrupted, or woke with ParkResult::interrupted, without it saw the lock name this thread.
  bool interrupt_requested() const noexcept { return interrupt_requested_; }

 private:
  bool poll() {
    interrupt_requested_ = interrupt_->requested();
    return interrupt_requested_ || held_by_this_thread_();
  }

  const Interrupt* const interrupt_;
  FunctionRef<bool()> held_by_this_thread_;
  bool interrupt_requested_ = false;
  // Declared before watch_, which refers to it.
  struct Poll {
    SelfDeadlockWatch* self;
    bool operator()() const { return self->poll(); }
  } poll_{this};
  const Interrupt watch_;
};

}  // namespace parklock
