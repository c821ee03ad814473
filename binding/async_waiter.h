// A Promise wait: a parking-lot waiter whose wake-up resumes its WaitStep (wait_step.h) on its own
// thread and settles the Promise when the step finishes. One waiter class runs every primitive's
// step; the binding restates no protocol.
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

#include "across_processes/shared_region.h"
#include "handle.h"
#include "lot/parking_lot.h"
#include "lot/wait_step.h"

namespace parklock::binding {

class AsyncWaiter;

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
  AsyncWaiter(std::shared_ptr<WakeSink> sink, ThreadId thread, std::unique_ptr<WaitStep> step);
  ~AsyncWaiter() override;

  Outcome start() { return step_->start(*this); }
  // A wake-up with `token` arrived; a wait whose cancel came too late lets its step decide.
  Outcome resume(WakeToken token) {
    return cancel_requested_ ? step_->resume_cancelled(*this, token) : step_->resume(*this, token);
  }
  void abandon(WakeToken token) noexcept { step_->abandon(*this, token); }
  bool remove(parking_lot::Wakeups* deferred = nullptr) noexcept {
    return step_->cancel(*this, deferred);
  }
  Outcome on_cancelled() { return step_->on_cancelled(*this); }

  // JS thread: asked to stop waiting after its wake-up was already on its way.
  void request_cancel() { cancel_requested_ = true; }

  // The owner that ended holding the lock a kOwnerDied outcome acquired.
  ThreadId ended_owner() const { return step_->ended_owner(); }

  WakeSink& sink() const { return *sink_; }

  // JS thread, once the wait has queued (its caller holds the memory): a use of each region its
  // words lie in (a Condition's and its Mutex's may differ), kept until the waiter is deleted.
  // The wait's record keeps the memory alive while JavaScript runs, but a wake-up can still be on
  // its way to a thread whose teardown frees its buffers first; the step it resumes or gives back
  // then touches the words.
  void hold_regions(const HandleRegions& regions) noexcept;
  // Whether the files of those regions still hold what was mapped (shared_region::intact()), as
  // a blocking wait asks of its handles (handles_intact()).
  bool regions_intact() const noexcept;

 private:
  friend class ThreadContext;

  void on_unparked(WakeToken token) noexcept override;

  const std::shared_ptr<WakeSink> sink_;  // kept alive for wakers on other threads
  const std::unique_ptr<WaitStep> step_;
  std::array<shared_region::RegionUse, 2> regions_;  // see hold_regions()
  bool cancel_requested_ = false;                    // JS thread only
  WakeToken token_ = 0;  // written by the waker, read by the JS-thread delivery

  // JS thread only: the JavaScript record of the wait while it is pending, and its slot in
  // ThreadContext's table of pending waits.
  napi_ref record_ = nullptr;
  std::uint32_t slot_ = 0;
};

}  // namespace parklock::binding
