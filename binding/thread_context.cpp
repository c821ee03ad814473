#include "thread_context.h"

#include <chrono>
#include <utility>

#include "node_thread_ids.h"
#include "settlement.h"

namespace parklock::binding {

namespace {
// How often a thread blocked in a synchronous wait checks whether it is being terminated: the
// bound on how long worker.terminate() waits for it.
constexpr auto kTerminationPollInterval = std::chrono::milliseconds(20);
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

std::optional<Settlement> ThreadContext::begin(
    const std::shared_ptr<AsyncWaiter>& waiter,
    FunctionRef<std::optional<Settlement>()> first_step) {
  // In flight before the first step: once queued, a waker may deliver it at any moment.
  waiter->in_flight_ = waiter;
  std::optional<Settlement> settlement = first_step();
  if (settlement) {
    waiter->in_flight_.reset();
    return settlement;
  }
  pending_.emplace(waiter->id(), waiter);
  update_keep_alive();
  return std::nullopt;
}

std::optional<Settlement> ThreadContext::cancel(double id) {
  auto found = pending_.find(id);
  if (found == pending_.end()) return std::nullopt;
  std::shared_ptr<AsyncWaiter> waiter = found->second;
  if (!waiter->remove()) {
    waiter->request_cancel();
    return std::nullopt;
  }
  std::optional<Settlement> settlement = waiter->on_cancelled();
  if (!settlement) return std::nullopt;
  waiter->in_flight_.reset();
  pending_.erase(found);
  update_keep_alive();
  return settlement;
}

void ThreadContext::deliver(AsyncWaiter& waiter, WakeToken token) noexcept {
  {
    std::lock_guard<std::mutex> guard(lock_);
    waiter.token_ = token;
    if (!closed_ &&
        napi_call_threadsafe_function(tsfn_, &waiter, napi_tsfn_nonblocking) == napi_ok) {
      return;
    }
  }
  // The thread is gone: nobody will take what the token gives, so pass it on here.
  std::shared_ptr<AsyncWaiter> last_reference = std::move(waiter.in_flight_);
  waiter.abandon(token);
}

void ThreadContext::call_js(napi_env env, napi_value on_settle, void* /*context*/, void* data) {
  auto& waiter = *static_cast<AsyncWaiter*>(data);
  std::shared_ptr<AsyncWaiter> keep = std::move(waiter.in_flight_);
  ThreadContext& context = *waiter.context_;
  bool closed;
  {
    std::lock_guard<std::mutex> guard(context.lock_);
    closed = context.closed_;
  }
  // Without an environment the threadsafe function is being drained at teardown. A thread that is
  // being terminated can still get here, but could not settle the Promise: a lock granted now
  // would never be released, so pass the wake-up on instead. (Termination requested after this
  // check, before the Promise settles, leaves what was granted held, like any thread terminated
  // while holding a lock.)
  if (env == nullptr || closed || context.termination_probe_()) {
    waiter.abandon(waiter.token_);
    return;
  }
  waiter.in_flight_ = keep;  // resume() may queue it again
  context.settle_on_js_thread(env, on_settle, waiter);
}

void ThreadContext::settle_on_js_thread(napi_env env, napi_value on_settle, AsyncWaiter& waiter) {
  std::optional<Settlement> settlement = waiter.resume(waiter.token_);
  if (!settlement) return;  // queued again: it is in flight once more
  std::shared_ptr<AsyncWaiter> keep = std::move(waiter.in_flight_);
  const double id = waiter.id();
  pending_.erase(id);
  update_keep_alive();

  Napi::Env js(env);
  napi_value argv[] = {Napi::Number::New(js, id), Napi::Number::New(js, *settlement)};
  napi_value result;
  napi_call_function(env, js.Undefined(), on_settle, 2, argv, &result);
}

void ThreadContext::update_keep_alive() {
  const bool wanted = !pending_.empty();
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

Settlement ThreadContext::report_ended_owner(ThreadId ended) {
  ended_owner_ = ended;
  return settled::kOwnerDied;
}

std::optional<double> ThreadContext::take_ended_owner() {
  const ThreadId ended = std::exchange(ended_owner_, kNoThread);
  return node_thread_id_of(ended);
}

void ThreadContext::cleanup(void* data) {
  static_cast<ThreadContext*>(data)->close();
}

void ThreadContext::close() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    closed_ = true;
  }
  // Waiters still queued leave the lot; those already dequeued are in flight and are abandoned
  // by whoever holds them (the waker, or the drain of the threadsafe function below).
  for (auto& [id, waiter] : pending_) {
    if (waiter->remove()) {
      waiter->in_flight_.reset();
    }
  }
  pending_.clear();
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
