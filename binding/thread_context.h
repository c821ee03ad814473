// Per-thread addon state: one per Node environment (the main thread and each worker).
//
// It owns the thread's single threadsafe function, through which every asynchronous wait of the
// thread is settled on the thread itself, by calling onSettle(record, settlement) with the record
// JavaScript passed when the wait started. The function is referenced (keeps the event loop
// alive) exactly while the thread has pending asynchronous waits: a Promise from lockAsync()
// inside a worker always settles, and a thread with none pending exits normally.
//
// Pending waits. The context's table of slots is the one registry of them: each queued (or
// in-flight) waiter occupies a slot and holds a reference to its record. A wait's handle, which
// the start call returns and cancel() takes, names its slot and the slot's generation, so a handle
// of a wait that has ended (or a made-up number) finds nothing, even once the slot is reused. The
// table and the references are touched only on the JS thread.
//
// Teardown. An environment cleanup hook marks the context closed, takes every queued waiter of
// the thread out of the parking lot, drops every record and releases the threadsafe function. A
// waker on another thread checks `closed_` under `lock_` before it calls the threadsafe function,
// so no call ever reaches a released function; wake-ups that find the context closed are
// abandoned (passed on). The context itself is reference counted by its waiters, so a waker never
// touches freed memory.
#pragma once

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "async_waiter.h"
#include "lot/interrupt.h"
#include "lot/parking_lot.h"
#include "lot/thread_id.h"

namespace parklock::binding {

class ThreadContext final : public WakeSink, public std::enable_shared_from_this<ThreadContext> {
 public:
  // Creates the context of the calling thread's environment. `on_settle(record, settlement)` is
  // called on this thread when a wait ends; `probe` is any JavaScript function (called to find
  // out whether the thread is being terminated); `node_thread_id` is the thread's Node threadId.
  static void install(Napi::Env env, Napi::Function on_settle, Napi::Function probe,
                      double node_thread_id);
  static ThreadContext& of(Napi::Env env);

  ~ThreadContext();

  ThreadId thread() const { return thread_; }

  // JS thread: starts an asynchronous wait for `record` (any object, passed to on_settle). Returns
  // its settlement (> 0) if it ended at once; else the wait's handle (< 0), and it settles later
  // through on_settle.
  Napi::Value start(Napi::Env env, Napi::Value record, std::unique_ptr<WaitStep> step,
                    const HandleRegions& regions);

  // JS thread: stops the wait whose handle is `wait`. If it was still queued it has ended now,
  // and the result is its settlement: usually kCancelled, but a wait that had already been given
  // what it waited for (a notified condition wait re-locking its mutex) keeps it. Undefined if it
  // will still settle through on_settle (its wake-up was already on its way, or it has a duty to
  // finish first) or has already settled.
  Napi::Value cancel(Napi::Env env, Napi::Value wait);

  // Any thread: a waker dequeued `waiter` with `token`.
  void deliver(AsyncWaiter& waiter, WakeToken token) noexcept override;

  // JS thread: `settlement` as the value JavaScript receives. For kOwnerDied, records `ended` for
  // take_ended_owner() first; kInterrupted becomes undefined (the pending termination exception
  // unwinds the caller).
  Napi::Value settled_value(Napi::Env env, Outcome settlement, ThreadId ended);
  // JS thread: the Node threadId of the owner last reported (nothing if it was not a Node thread).
  std::optional<double> take_ended_owner();

 private:
  ThreadContext(Napi::Env env, Napi::Function on_settle, Napi::Function probe);

  static void call_js(napi_env env, napi_value js_callback, void* context, void* data);
  static void cleanup(void* context);
  void settle(napi_env env, napi_value on_settle, AsyncWaiter& waiter);
  // Takes a queued waiter out of the parking lot: false if a wake-up is already on its way.
  static bool remove(AsyncWaiter& waiter);
  // Gives `waiter` a slot; returns its handle.
  double occupy_slot(AsyncWaiter& waiter);
  // The waiter whose handle is `wait`, if it is still pending.
  AsyncWaiter* pending_waiter(double wait) const;
  // Frees the waiter's slot and drops its record; returns the record.
  napi_value release_record(AsyncWaiter& waiter);
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
  struct Slot {
    AsyncWaiter* waiter = nullptr;  // null: free
    std::uint32_t generation = 0;   // counts the waits the slot has held
  };
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::size_t pending_count_ = 0;
  bool keeping_alive_ = false;
  ThreadId ended_owner_ = kNoThread;
  // The installed context is kept alive by this self reference until the environment's cleanup.
  std::shared_ptr<ThreadContext> self_;
};

}  // namespace parklock::binding
