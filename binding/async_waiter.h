// An asynchronous wait: a parking-lot waiter whose wake-up settles a Promise on its own thread.
// There is one waiter class; what differs between primitives is its AsyncOperation.
//
// Lifetime. A waiter is made on its JS thread and deleted exactly once, by whoever ends it:
// - the JS thread, when it settles (delivered, or cancelled while still queued);
// - the thread's teardown (ThreadContext::close), for a waiter it takes out of the queue;
// - for a waiter whose wake-up finds its thread gone: the waker, or the drain of the threadsafe
//   function, after passing on what the wake-up gave (abandon()).
// The JavaScript record of the wait (`record`) is referenced only from the JS thread: it is
// created when the wait queues and deleted when it settles, is cancelled, or at teardown, never
// by the deleting thread of the last case.
#pragma once

#include <node_api.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "parking_lot.h"
#include "settlement.h"

namespace parklock::binding {

class AsyncWaiter;

// What one primitive contributes to an asynchronous wait; runs on the wait's JS thread unless
// noted. A settlement of kOwnerDied names the ended owner through AsyncWaiter::set_ended_owner().
class AsyncOperation {
 public:
  virtual ~AsyncOperation() = default;

  // The waiter's Waiter::request(), fixed for the whole wait.
  virtual std::int64_t request() const { return 0; }

  // Settles at once, or queues `waiter` in the parking lot (kPending).
  virtual Settlement start(AsyncWaiter& waiter) = 0;

  // A wake-up with `token` arrived. Returns the settlement, or kPending if the waiter queued
  // itself again (it was woken to compete and lost).
  virtual Settlement resume(AsyncWaiter& waiter, WakeToken token) = 0;

  // Any thread: the waiting thread is gone (or gives up) but the waker handed it `token`; pass on
  // whatever the token obliges it to, so that no wake-up is lost.
  virtual void abandon(AsyncWaiter& waiter, WakeToken token) noexcept = 0;

  // JS thread: takes the waiter out of the parking lot (a cancel, or its thread's teardown)
  // through its primitive, which runs its grant step for a departure in the same critical section
  // (parking_lot::Grant); false if its wake-up is already on its way. `deferred`: as for
  // parking_lot::cancel().
  virtual bool remove(AsyncWaiter& waiter, parking_lot::Wakeups* deferred) noexcept;

  // The waiter was taken out by a cancel (timeout, abort) before any wake-up. Returns its
  // settlement, or kPending if it queued itself again to finish some duty first (a
  // condition-variable wait must re-lock its mutex before it settles).
  virtual Settlement on_cancelled(AsyncWaiter& /*waiter*/) { return settled::kCancelled; }
};

// Where a waker hands a dequeued waiter (its thread's context).
class WakeSink {
 public:
  // Any thread, no bucket lock held.
  virtual void deliver(AsyncWaiter& waiter, WakeToken token) noexcept = 0;

 protected:
  ~WakeSink() = default;
};

class AsyncWaiter final : public Waiter {
 public:
  AsyncWaiter(std::shared_ptr<WakeSink> sink, ThreadId thread,
              std::unique_ptr<AsyncOperation> operation);
  ~AsyncWaiter() override;

  Settlement start() { return operation_->start(*this); }
  Settlement resume(WakeToken token) { return operation_->resume(*this, token); }
  void abandon(WakeToken token) noexcept { operation_->abandon(*this, token); }
  bool remove(parking_lot::Wakeups* deferred = nullptr) noexcept {
    return operation_->remove(*this, deferred);
  }
  Settlement on_cancelled() { return operation_->on_cancelled(*this); }

  // JS thread: asked to stop waiting after its wake-up was already on its way.
  void request_cancel() { cancel_requested_ = true; }
  bool cancel_requested() const { return cancel_requested_; }

  // JS thread: the owner that ended holding the lock a kOwnerDied settlement acquired.
  void set_ended_owner(ThreadId ended) { ended_owner_ = ended; }
  ThreadId ended_owner() const { return ended_owner_; }

  WakeSink& sink() const { return *sink_; }

 private:
  friend class ThreadContext;

  void on_unparked(WakeToken token) noexcept override;

  const std::shared_ptr<WakeSink> sink_;  // kept alive for wakers on other threads
  const std::unique_ptr<AsyncOperation> operation_;
  bool cancel_requested_ = false;  // JS thread only
  ThreadId ended_owner_ = kNoThread;
  WakeToken token_ = 0;  // written by the waker, read by the JS-thread delivery

  // JS thread only: the JavaScript record of the wait while it is pending, and its slot in
  // ThreadContext's table of pending waits.
  napi_ref record_ = nullptr;
  std::uint32_t slot_ = 0;
};

}  // namespace parklock::binding
