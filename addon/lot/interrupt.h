// How a thread blocked in the parking lot is asked to give up (a worker being terminated).
//
// The request is a property of the thread, not of a call: whoever owns the thread (the binding,
// for a Node environment) opens an InterruptScope around its blocking calls, and every wait made
// inside it, however deep in a primitive, polls that interrupt while it sleeps. So no primitive
// passes interrupts along, and the parking lot's contract does not mention them: only the
// thread parker (thread_parker.h) reads current_interrupt().
//
// Scopes nest: an inner scope (a lock's self-deadlock watch) usually asks the outer one first.
#pragma once

#include <chrono>

#include "lot/deadline.h"
#include "lot/function_ref.h"

namespace parklock {

// `requested` is polled every `poll_interval` while the thread sleeps, outside any lock. It refers
// to a callable that must outlive the Interrupt: name the lambda, then build the Interrupt from it.
struct Interrupt {
  Clock::duration poll_interval;
  FunctionRef<bool()> requested;
};

// The innermost interrupt the calling thread has open, or null.
const Interrupt* current_interrupt() noexcept;

// Makes `interrupt` (which must outlive the scope; null: none) the calling thread's current one
// until the scope ends.
class InterruptScope {
 public:
  explicit InterruptScope(const Interrupt* interrupt) noexcept;
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  const Interrupt* const outer_;
};

}  // namespace parklock
