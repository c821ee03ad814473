#include "thread_context.h"

#include <chrono>
#include <utility>
#include <vector>

#include "errors.h"
#include "node_thread_ids.h"

namespace parklock::binding {

namespace {

// How often a thread blocked in a synchronous wait checks whether it is being terminated: the
// bound on how long worker.terminate() waits for it.
constexpr auto kTerminationPollInterval = std::chrono::milliseconds(20);

// Marks the objects start() wrapped a waiter in, so that cancel() never unwraps another addon's
// pointer from an object that was not one of our records.
constexpr napi_type_tag kRecordTag = {0x1f4b9e7d3c2a6580, 0xd95c0e3b7a41f268};

}  // namespace

ThreadContext::ThreadContext(Napi::Env env, Napi::Function on_settle, Napi::Function probe)
    : thread_(current_thread_id()), env_(env), probe_(Napi::Persistent(probe)) {
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_threadsafe_function(
                                     env, on_settle, nullptr, Napi::String::New(env, "parklock"), 0,
                                     1, nullptr, nullptr, this, &ThreadContext::call_js, &tsfn_));
  // Idle until the first asynchronous wait: a thread with nothing pending must be free to exit.
  NAPI_THROW_IF_FAILED_VOID(env, napi_unref_threadsafe_function(env, tsfn_));
}

ThreadContext::~ThreadContext() = default;

void ThreadContext::install(Napi::Env env, Napi::Function on_settle, Napi::Function probe,
                            double node_thread_id) {
  void* existing = nullptr;
  napi_get_instance_data(env, &existing);
  if (existing != nullptr) return;  // the module was loaded twice in one environment
  std::shared_ptr<ThreadContext> context(new ThreadContext(env, on_settle, probe));
  remember_node_thread_id(context->thread(), node_thread_id);
  context->self_ = context;
  NAPI_THROW_IF_FAILED_VOID(env, napi_set_instance_data(env, context.get(), nullptr, nullptr));
  // Registered after the threadsafe function was created, so (cleanup hooks run last-in,
  // first-out) it runs while that function is still alive.
  NAPI_THROW_IF_FAILED_VOID(env,
                            napi_add_env_cleanup_hook(env, &ThreadContext::cleanup, context.get()));
}

ThreadContext& ThreadContext::of(Napi::Env env) {
  void* data = nullptr;
  napi_get_instance_data(env, &data);
  if (data == nullptr) {
    throw Napi::Error::New(env, "parklock: the addon was not initialised in this thread");
  }
  return *static_cast<ThreadContext*>(data);
}

Napi::Value ThreadContext::start(Napi::Env env, Napi::Value record,
                                 std::unique_ptr<AsyncOperation> operation) {
  // Tagging fails on an object that was a record before, so no record is ever wrapped twice; and
  // both steps come before the wait can queue, so a refusal leaves nothing behind.
  if (!record.IsObject() || napi_type_tag_object(env, record, &kRecordTag) != napi_ok) {
    throw_type_error(env, "ERR_INVALID_ARG_TYPE", "expected a fresh wait record object");
  }
  auto* waiter = new AsyncWaiter(shared_from_this(), thread_, std::move(operation));
  if (napi_wrap(env, record, waiter, nullptr, nullptr, nullptr) != napi_ok) {
    delete waiter;
    throw_type_error(env, "ERR_INVALID_ARG_TYPE", "expected a fresh wait record object");
  }
  const Settlement now = waiter->start();
  if (now != settled::kPending) {
    const ThreadId ended = waiter->ended_owner();
    napi_remove_wrap(env, record, nullptr);
    delete waiter;
    return settled_value(env, now, ended);
  }
  // Queued: a waker may dequeue it at any moment, but its delivery runs on this thread, after
  // this call has returned.
  napi_create_reference(env, record, 1, &waiter->record_);
  link(*waiter);
  return Napi::Number::New(env, settled::kPending);
}

Napi::Value ThreadContext::cancel(Napi::Env env, Napi::Value record) {
  bool tagged = false;
  if (!record.IsObject() ||
      napi_check_object_type_tag(env, record, &kRecordTag, &tagged) != napi_ok || !tagged) {
    throw_type_error(env, "ERR_INVALID_ARG_TYPE", "expected a wait record");
  }
  void* data = nullptr;
  // Unwrapped: the wait has settled already.
  if (napi_unwrap(env, record, &data) != napi_ok || data == nullptr) return env.Undefined();
  auto& waiter = *static_cast<AsyncWaiter*>(data);
  if (!remove(waiter)) {
    waiter.request_cancel();
    return env.Undefined();
  }
  const Settlement settlement = waiter.on_cancelled();
  if (settlement == settled::kPending) return env.Undefined();
  const ThreadId ended = waiter.ended_owner();
  release_record(waiter);
  delete &waiter;
  return settled_value(env, settlement, ended);
}

bool ThreadContext::remove(AsyncWaiter& waiter) {
  if (!parking_lot::cancel(waiter)) return false;
  waiter.after_removed();
  return true;
}

void ThreadContext::link(AsyncWaiter& waiter) {
  waiter.prev_ = nullptr;
  waiter.next_ = pending_;
  if (pending_ != nullptr) pending_->prev_ = &waiter;
  pending_ = &waiter;
  ++pending_count_;
  update_keep_alive();
}

napi_value ThreadContext::release_record(AsyncWaiter& waiter) {
  if (waiter.prev_ != nullptr) waiter.prev_->next_ = waiter.next_;
  if (waiter.next_ != nullptr) waiter.next_->prev_ = waiter.prev_;
  if (pending_ == &waiter) pending_ = waiter.next_;
  waiter.prev_ = waiter.next_ = nullptr;
  --pending_count_;
  update_keep_alive();
  napi_value record = nullptr;
  if (waiter.record_ != nullptr) {
    napi_get_reference_value(env_, waiter.record_, &record);
    if (record != nullptr) napi_remove_wrap(env_, record, nullptr);
    napi_delete_reference(env_, waiter.record_);
    waiter.record_ = nullptr;
  }
  return record;
}

void ThreadContext::deliver(AsyncWaiter& waiter, WakeToken token) noexcept {
  {
    std::lock_guard<std::mutex> guard(lock_);
    waiter.token_ = token;
    if (!closed_) {
      // Never fails while the function is not released, which happens only after closed_ is set.
      napi_call_threadsafe_function(tsfn_, &waiter, napi_tsfn_nonblocking);
      return;
    }
  }
  // The thread is gone, and close() has dropped the waiter's record: nobody will take what the
  // token gives, so pass it on here. (Outside lock_: the waiter may hold the last reference to
  // this context.)
  waiter.abandon(token);
  delete &waiter;
}

void ThreadContext::call_js(napi_env env, napi_value on_settle, void* /*context*/, void* data) {
  auto& waiter = *static_cast<AsyncWaiter*>(data);
  auto& context = static_cast<ThreadContext&>(waiter.sink());
  bool closed;
  {
    std::lock_guard<std::mutex> guard(context.lock_);
    closed = context.closed_;
  }
  // Without an environment the threadsafe function is being drained at teardown, and close() has
  // dropped the record.
  if (env == nullptr || closed) {
    waiter.abandon(waiter.token_);
    delete &waiter;
    return;
  }
  // A thread that is being terminated could not settle the Promise: a lock granted now would
  // never be released, so pass the wake-up on instead. (Termination requested after this check,
  // before the Promise settles, leaves what was granted held, like any thread terminated while
  // holding a lock.)
  if (context.termination_probe_()) {
    waiter.abandon(waiter.token_);
    context.release_record(waiter);
    delete &waiter;
    return;
  }
  context.settle(env, on_settle, waiter);
}

void ThreadContext::settle(napi_env env, napi_value on_settle, AsyncWaiter& waiter) {
  const Settlement settlement = waiter.resume(waiter.token_);
  if (settlement == settled::kPending) return;  // queued again: it is in flight once more
  const ThreadId ended = waiter.ended_owner();
  napi_value record = release_record(waiter);
  delete &waiter;
  if (record == nullptr) return;
  Napi::Env js(env);
  napi_value argv[] = {record, settled_value(js, settlement, ended)};
  napi_value result;
  napi_call_function(env, js.Undefined(), on_settle, 2, argv, &result);
}

void ThreadContext::update_keep_alive() {
  const bool wanted = pending_count_ != 0;
  if (wanted == keeping_alive_) return;
  keeping_alive_ = wanted;
  if (wanted) {
    napi_ref_threadsafe_function(env_, tsfn_);
  } else {
    napi_unref_threadsafe_function(env_, tsfn_);
  }
}

bool ThreadContext::TerminationProbe::operator()() const {
  napi_value undefined;
  napi_value result;
  napi_get_undefined(context->env_, &undefined);
  return napi_call_function(context->env_, undefined, context->probe_.Value(), 0, nullptr,
                            &result) == napi_pending_exception;
}

Interrupt ThreadContext::interrupt() {
  return Interrupt{kTerminationPollInterval, termination_probe_};
}

Napi::Value ThreadContext::settled_value(Napi::Env env, Settlement settlement, ThreadId ended) {
  if (settlement == settled::kInterrupted) return env.Undefined();
  if (settlement == settled::kOwnerDied) ended_owner_ = ended;
  return Napi::Number::New(env, settlement);
}

std::optional<double> ThreadContext::take_ended_owner() {
  const ThreadId ended = std::exchange(ended_owner_, kNoThread);
  return node_thread_id_of(ended);
}

void ThreadContext::cleanup(void* data) {
  static_cast<ThreadContext*>(data)->close();
}

void ThreadContext::close() {
  std::vector<AsyncWaiter*> removed;
  {
    // Cleanup hooks run without one, and dropping a record makes a handle to it.
    Napi::HandleScope scope(Napi::Env{env_});
    // Held across the walk: a waker that finds closed_ deletes its (in-flight) waiter, so it must
    // wait until the walk no longer touches it. Nothing here can call deliver() (which takes
    // lock_): after_removed() may, and runs below.
    std::lock_guard<std::mutex> guard(lock_);
    closed_ = true;
    while (pending_ != nullptr) {
      AsyncWaiter& waiter = *pending_;
      // Still queued: it leaves the lot, and is this thread's to delete. Otherwise it is in
      // flight, and whoever holds it abandons it (the waker, or the drain below).
      if (parking_lot::cancel(waiter)) removed.push_back(&waiter);
      release_record(waiter);
    }
  }
  for (AsyncWaiter* waiter : removed) {
    waiter->after_removed();
    delete waiter;
  }
  napi_release_threadsafe_function(tsfn_, napi_tsfn_abort);
  probe_.Reset();
  napi_set_instance_data(env_, nullptr, nullptr, nullptr);
  // No JavaScript of this thread runs any more, so nothing it holds will be released by it: the
  // locks it holds now belong to an ended owner, and the waiters queued behind them are served.
  end_thread(thread_);
  self_.reset();  // may destroy this context: touch nothing after
}

}  // namespace parklock::binding
