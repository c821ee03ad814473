#include "thread_context.h"

#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include "errors.h"
#include "node_thread_ids.h"

namespace parklock::binding {

namespace {

// How often a thread blocked in a synchronous wait checks whether it is being terminated: the
// bound on how long worker.terminate() waits for it.
constexpr auto kTerminationPollInterval = std::chrono::milliseconds(20);

// A wait's handle is -(generation * kSlotSpan + slot): negative, so that it is never taken for a
// settlement, and exact in a double while the generation stays below kGenerations.
constexpr double kSlotSpan = 4294967296.0;  // 2^32
constexpr std::uint32_t kGenerations = 1U << 21;

}  // namespace

ThreadContext::ThreadContext(Napi::Env env, Napi::Function on_settle, Napi::Function probe)
    : thread_(current_thread_id()),
      env_(env),
      probe_(Napi::Persistent(probe)),
      termination_{kTerminationPollInterval, termination_probe_} {
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
  context->termination_scope_ = std::make_unique<InterruptScope>(&context->termination_);
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

Napi::Value ThreadContext::start(Napi::Env env, Napi::Value record, std::unique_ptr<WaitStep> step,
                                 const HandleRegions& regions) {
  if (!record.IsObject()) throw_type_error(env, "ERR_INVALID_ARG_TYPE", "expected a wait record");
  auto* waiter = new AsyncWaiter(shared_from_this(), thread_, std::move(step));
  const Outcome now = waiter->start();
  if (now != Outcome::kPending) {
    const ThreadId ended = waiter->ended_owner();
    delete waiter;
    return settled_value(env, now, ended);
  }
  // Queued: a waker may dequeue it at any moment, but its delivery runs on this thread, after
  // this call has returned.
  waiter->hold_regions(regions);
  napi_create_reference(env, record, 1, &waiter->record_);
  return Napi::Number::New(env, occupy_slot(*waiter));
}

Napi::Value ThreadContext::cancel(Napi::Env env, Napi::Value wait) {
  if (!wait.IsNumber()) throw_type_error(env, "ERR_INVALID_ARG_TYPE", "expected a wait handle");
  AsyncWaiter* found = pending_waiter(wait.As<Napi::Number>().DoubleValue());
  if (found == nullptr) return env.Undefined();
  AsyncWaiter& waiter = *found;
  if (!remove(waiter)) {
    waiter.request_cancel();
    return env.Undefined();
  }
  const Outcome settlement = waiter.on_cancelled();
  if (settlement == Outcome::kPending) return env.Undefined();
  const ThreadId ended = waiter.ended_owner();
  release_record(waiter);
  delete &waiter;
  return settled_value(env, settlement, ended);
}

bool ThreadContext::remove(AsyncWaiter& waiter) {
  return waiter.remove();
}

double ThreadContext::occupy_slot(AsyncWaiter& waiter) {
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  Slot& entry = slots_[slot];
  // Generation 0 is never handed out, so no handle is -0 or a small number.
  entry.generation = entry.generation + 1 == kGenerations ? 1 : entry.generation + 1;
  entry.waiter = &waiter;
  waiter.slot_ = slot;
  ++pending_count_;
  update_keep_alive();
  return -(static_cast<double>(entry.generation) * kSlotSpan + slot);
}

AsyncWaiter* ThreadContext::pending_waiter(double wait) const {
  const double code = -wait;
  // Compared as a double first: NaN, fractions and huge values must not reach the conversions.
  if (!(code >= kSlotSpan && code < kGenerations * kSlotSpan) || std::floor(code) != code) {
    return nullptr;
  }
  const auto generation = static_cast<std::uint32_t>(std::floor(code / kSlotSpan));
  const auto slot = static_cast<std::size_t>(code - generation * kSlotSpan);
  if (slot >= slots_.size() || slots_[slot].generation != generation) return nullptr;
  return slots_[slot].waiter;
}

napi_value ThreadContext::release_record(AsyncWaiter& waiter) {
  slots_[waiter.slot_].waiter = nullptr;
  free_slots_.push_back(waiter.slot_);
  --pending_count_;
  update_keep_alive();
  napi_value record = nullptr;
  napi_get_reference_value(env_, waiter.record_, &record);
  napi_delete_reference(env_, waiter.record_);
  waiter.record_ = nullptr;
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
  Outcome settlement = waiter.resume(waiter.token_);
  if (settlement == Outcome::kPending) return;  // queued again: it is in flight once more
  if (settlement != Outcome::kInterrupted && !waiter.regions_intact()) {
    settlement = Outcome::kRegionLost;
  }
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

Napi::Value ThreadContext::settled_value(Napi::Env env, Outcome settlement, ThreadId ended) {
  if (settlement == Outcome::kInterrupted) return env.Undefined();
  if (settlement == Outcome::kOwnerDied) ended_owner_ = ended;
  return Napi::Number::New(env, static_cast<int>(settlement));
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
  parking_lot::Wakeups wakeups;
  {
    // Cleanup hooks run without one, and dropping a record makes a handle to it.
    Napi::HandleScope scope(Napi::Env{env_});
    // Held across the walk: a waker that finds closed_ deletes its (in-flight) waiter, so it must
    // wait until the walk no longer touches it. Nothing here can call deliver() (which takes
    // lock_): the wake-ups of the waiters the removals let through are delivered below.
    std::lock_guard<std::mutex> guard(lock_);
    closed_ = true;
    for (const Slot& slot : slots_) {
      if (slot.waiter == nullptr) continue;
      AsyncWaiter& waiter = *slot.waiter;
      // Still queued: it leaves the lot, and is this thread's to delete. Otherwise it is in
      // flight, and whoever holds it abandons it (the waker, or the drain below).
      if (waiter.remove(&wakeups)) removed.push_back(&waiter);
      release_record(waiter);
    }
  }
  for (AsyncWaiter* waiter : removed) delete waiter;
  parking_lot::deliver(wakeups);
  napi_release_threadsafe_function(tsfn_, napi_tsfn_abort);
  termination_scope_.reset();
  probe_.Reset();
  napi_set_instance_data(env_, nullptr, nullptr, nullptr);
  // No JavaScript of this thread runs any more, so nothing it holds will be released by it: the
  // locks it holds now belong to an ended owner, and the waiters queued behind them are served.
  end_thread(thread_);
  self_.reset();  // may destroy this context: touch nothing after
}

}  // namespace parklock::binding
