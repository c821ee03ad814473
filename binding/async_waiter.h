// An asynchronous wait: a parking-lot waiter whose wake-up settles a Promise on its own thread.
//
// Lifetime. The thread's context keeps every pending waiter in its table (JS thread only). While a
// waiter is queued in the parking lot, or a wake-up for it is on its way to the JS thread, it also
// holds a reference to itself (`in_flight_`), because the waker only has a raw pointer. That self
// reference is dropped by whoever ends the flight: a successful cancel (JS thread), the JS-thread
// delivery, or the waker itself when the thread is already gone.
#pragma once

#include <memory>
#include <optional>

#include "parking_lot.h"

namespace parklock::binding {

class ThreadContext;

// How an asynchronous wait ends; the number reaches JavaScript, which interprets it per primitive.
using Settlement = int;

class AsyncWaiter : public Waiter {
 public:
  AsyncWaiter(std::shared_ptr<ThreadContext> context, double id, std::int64_t request = 0);

  double id() const { return id_; }

  // JS thread: a wake-up with `token` arrived. Returns the settlement, or nothing if the waiter
  // queued itself again (it was woken to compete and lost).
  virtual std::optional<Settlement> resume(WakeToken token) = 0;

  // Any thread: the waiting thread is gone (or gives up) but the waker handed it `token`; pass on
  // whatever the token obliges it to, so that no wake-up is lost.
  virtual void abandon(WakeToken token) noexcept = 0;

  // JS thread: takes the waiter out of the parking lot (a cancel, or its thread's teardown),
  // running the primitive's grant step for a departure (parking_lot::Grant); false if its wake-up
  // is already on its way.
  virtual bool remove() noexcept { return parking_lot::cancel(*this); }

  // JS thread: the waiter was taken out of the parking lot by a cancel (timeout, abort) before any
  // wake-up by remove(). Returns its settlement, or nothing if it queued itself
  // again to finish some duty first (a condition-variable wait must re-lock its mutex before it can
  // settle).
  virtual std::optional<Settlement> on_cancelled();

  // JS thread: asked to stop waiting after its wake-up was already on its way.
  void request_cancel() { cancel_requested_ = true; }
  bool cancel_requested() const { return cancel_requested_; }

 protected:
  // JS thread: the settlement of a wait that acquired a lock whose owner `ended` holding it.
  Settlement owner_died(ThreadId ended);

 private:
  friend class ThreadContext;

  void on_unparked(WakeToken token) noexcept override;

  const std::shared_ptr<ThreadContext> context_;
  const double id_;
  bool cancel_requested_ = false;  // JS thread only
  WakeToken token_ = 0;            // written by the waker, read by the JS-thread delivery
  std::shared_ptr<AsyncWaiter> in_flight_;
};

}  // namespace parklock::binding
