// Per-thread addon state: one per Node environment (the main thread and each worker).
//
// It owns the thread's single threadsafe function, through which every asynchronous wait of the
// thread is settled on the thread itself. The function is referenced (keeps the event loop alive)
// exactly while the thread has pending asynchronous waits: a Promise from lockAsync() inside a
// worker always settles, and a thread with none pending exits normally.
//
// Teardown. An environment cleanup hook marks the context closed, takes every queued waiter of
// the thread out of the parking lot and releases the threadsafe function. A waker on another
// thread checks `closed_` under `lock_` before it calls the threadsafe function, so no call ever
// reaches a released function; wake-ups that find the context closed are abandoned (passed on).
// The context itself is reference counted by its waiters, so a waker never touches freed memory.
#pragma once

#include <napi.h>

#include <memory>
#include <mutex>
#include <unordered_map>

#include "async_waiter.h"
#include "function_ref.h"
#include "interrupt.h"
#include "parking_lot.h"
#include "thread_id.h"

namespace parklock::binding {

class ThreadContext : public std::enable_shared_from_this<ThreadContext> {
 public:
  // Creates the context of the calling thread's environment. `on_settle(id, settlement)` is called
  // on this thread when a wait ends; `probe` is any JavaScript function (called to find out
  // whether the thread is being terminated); `node_thread_id` is the thread's Node threadId.
  static void install(Napi::Env env, Napi::Function on_settle, Napi::Function probe,
                      double node_thread_id);
  static ThreadContext& of(Napi::Env env);

  ~ThreadContext();

  ThreadId thread() const { return thread_; }

  // JS thread: starts the wait of a new waiter with `first_step`, which either settles it at once
  // or queues it in the parking lot (returning nothing); then it settles through on_settle.
  std::optional<Settlement> begin(const std::shared_ptr<AsyncWaiter>& waiter,
                                  FunctionRef<std::optional<Settlement>()> first_step);

  // JS thread: stops the wait `id`. If it was still queued it has settled now, and the result is
  // its settlement: usually kCancelled, but a wait that had already been given what it waited for
  // (a notified condition wait re-locking its mutex) keeps it. Nothing if it will still settle
  // through on_settle (its wake-up was already on its way, or it has a duty to finish first).
  std::optional<Settlement> cancel(double id);

  // Any thread: a waker dequeued `waiter` with `token`.
  void deliver(AsyncWaiter& waiter, WakeToken token) noexcept;

  // JS thread: a wait is about to settle as kOwnerDied because `ended` had ended holding the lock
  // it acquired. Records who, for take_ended_owner(), and returns kOwnerDied.
  Settlement report_ended_owner(ThreadId ended);
  // JS thread: the Node threadId of the owner last reported (nothing if it was not a Node thread).
  std::optional<double> take_ended_owner();

 private:
  ThreadContext(Napi::Env env, Napi::Function on_settle, Napi::Function probe);

  static void call_js(napi_env env, napi_value js_callback, void* context, void* data);
  static void cleanup(void* context);
  void settle_on_js_thread(napi_env env, napi_value on_settle, AsyncWaiter& waiter);
  void close();
  void update_keep_alive();

  const ThreadId thread_;
  napi_env env_;
  napi_threadsafe_function tsfn_ = nullptr;
  Napi::FunctionReference probe_;
  struct TerminationProbe {
    ThreadContext* context;
    bool operator()() const;
  } termination_probe_{this};
  // worker.terminate() of a thread blocked in a synchronous wait: every wait of this thread polls
  // whether JavaScript can still run here (interrupt.h), from install() to close().
  const Interrupt termination_;
  std::unique_ptr<InterruptScope> termination_scope_;

  std::mutex lock_;      // guards closed_ and every call of the threadsafe function
  bool closed_ = false;  // guarded by lock_

  // JS thread only.
  std::unordered_map<double, std::shared_ptr<AsyncWaiter>> pending_;
  bool keeping_alive_ = false;
  ThreadId ended_owner_ = kNoThread;
  // The installed context is kept alive by this self reference until the environment's cleanup.
  std::shared_ptr<ThreadContext> self_;
};

}  // namespace parklock::binding
