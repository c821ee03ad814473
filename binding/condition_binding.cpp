// The native half of lib/condition.js: waits (which release and re-acquire a Mutex) and notifies
// that find waiters; JavaScript skips the addon when the condition's hint says nobody waits.
#include "condition_binding.h"

#include "condition.h"
#include "errors.h"
#include "mutex.h"
#include "owner_death.h"
#include "settlement.h"
#include "shared_words.h"
#include "thread_context.h"

namespace parklock::binding {

namespace {

// An asynchronous wait goes through two queues: the condition's until notified (or cancelled),
// then the mutex's until it holds the mutex again. Only then does its Promise settle, so that the
// code after `await condition.waitAsync(mutex)` always runs holding the mutex.
class ConditionAsyncWaiter final : public AsyncWaiter {
 public:
  ConditionAsyncWaiter(std::shared_ptr<ThreadContext> context, double id, std::int32_t* condition,
                       std::int32_t* mutex)
      : AsyncWaiter(std::move(context), id, ConditionWord::request_for(MutexWord(mutex))),
        condition_(condition),
        mutex_(mutex) {}

  // A cancel that lost the race with a notification changes nothing: notified wins, and the
  // mutex must be re-acquired either way.
  std::optional<Settlement> resume(WakeToken token) override {
    if (grant_of(token) == MutexWord::kHandedOff) {
      const ThreadId ended = ended_owner_of(token);
      return ended == kNoThread ? outcome_ : owner_died(ended);
    }
    return relock(token == MutexWord::kReleasedWithMoreWaiters);
  }

  std::optional<Settlement> on_cancelled() override {
    // Still waiting for a notification: the wait ends as cancelled. Already requeued onto the
    // mutex: it had been notified, and only its place in the mutex's queue is lost.
    if (address() == condition_) outcome_ = settled::kCancelled;
    return relock(false);
  }

  void abandon(WakeToken token) noexcept override {
    ConditionWord(condition_).abandon_wake(MutexWord(mutex_), thread(), token);
  }

  bool remove() noexcept override {
    return ConditionWord(condition_).cancel(*this, MutexWord(mutex_));
  }

 private:
  std::optional<Settlement> relock(bool must_mark_parked) {
    ThreadId ended = kNoThread;
    switch (MutexWord(mutex_).lock_or_enqueue(thread(), *this, must_mark_parked, &ended)) {
      case MutexWord::AsyncStep::kAcquired:
        return outcome_;
      case MutexWord::AsyncStep::kOwnerDied:
        return owner_died(ended);
      case MutexWord::AsyncStep::kCorrupt:
        return settled::kCorrupt;
      case MutexWord::AsyncStep::kQueued:
        break;
    }
    return std::nullopt;
  }

  std::int32_t* const condition_;
  std::int32_t* const mutex_;
  Settlement outcome_ = settled::kAcquired;  // JS thread only
};

Settlement from_wait_status(ConditionWord::WaitStatus status, ThreadContext& context,
                            ThreadId ended) {
  switch (status) {
    case ConditionWord::WaitStatus::kNotified:
      return settled::kAcquired;
    case ConditionWord::WaitStatus::kTimedOut:
    case ConditionWord::WaitStatus::kInterrupted:
      return settled::kTimedOut;
    case ConditionWord::WaitStatus::kOwnerDied:
      return context.report_ended_owner(ended);
    case ConditionWord::WaitStatus::kAlreadyHeld:
      return settled::kAlreadyHeld;
    case ConditionWord::WaitStatus::kNotOwner:
      return settled::kNotOwner;
    case ConditionWord::WaitStatus::kCorrupt:
      break;
  }
  return settled::kCorrupt;
}

// conditionWait(conditionArray, index, mutexArray, index, timeoutMs) -> settlement; blocks.
Napi::Value wait(const Napi::CallbackInfo& info) {
  ConditionWord condition(shared_words(info, 0, ConditionWord::kWordCount));
  MutexWord mutex(shared_words(info, 2, MutexWord::kWordCount));
  const Deadline deadline = Deadline::after_ms(timeout_ms(info, 4));
  ThreadContext& context = ThreadContext::of(info.Env());
  ThreadId ended = kNoThread;
  const ConditionWord::WaitStatus status =
      condition.wait(mutex, context.thread(), deadline, &ended);
  if (status == ConditionWord::WaitStatus::kInterrupted) return info.Env().Undefined();
  return Napi::Number::New(info.Env(), from_wait_status(status, context, ended));
}

// conditionWaitAsync(conditionArray, index, mutexArray, index, id) -> PENDING or NOT_OWNER.
Napi::Value wait_async(const Napi::CallbackInfo& info) {
  std::int32_t* condition = shared_words(info, 0, ConditionWord::kWordCount);
  std::int32_t* mutex = shared_words(info, 2, MutexWord::kWordCount);
  if (!info[4].IsNumber()) throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "bad wait id");
  ThreadContext& context = ThreadContext::of(info.Env());
  MutexWord held(mutex);
  if (!held.is_locked() || held.owner_thread() != context.thread()) {
    return Napi::Number::New(info.Env(), settled::kNotOwner);
  }
  auto waiter = std::make_shared<ConditionAsyncWaiter>(
      context.shared_from_this(), info[4].As<Napi::Number>().DoubleValue(), condition, mutex);
  std::optional<Settlement> now = context.begin(waiter, [&]() -> std::optional<Settlement> {
    ConditionWord(condition).enqueue(*waiter);
    // Queued first, released second: a notifier holding the mutex always finds this waiter.
    if (held.unlock(context.thread()) != MutexWord::UnlockStatus::kUnlocked) {
      // Corrupt mutex word: take the waiter out again (it was never released to anyone).
      if (waiter->remove()) return settled::kCorrupt;
    }
    return std::nullopt;
  });
  return Napi::Number::New(info.Env(), now.value_or(settled::kPending));
}

Napi::Value notify_one(const Napi::CallbackInfo& info) {
  ConditionWord condition(shared_words(info, 0, ConditionWord::kWordCount));
  return Napi::Number::New(info.Env(), static_cast<double>(condition.notify_one()));
}

Napi::Value notify_all(const Napi::CallbackInfo& info) {
  ConditionWord condition(shared_words(info, 0, ConditionWord::kWordCount));
  return Napi::Number::New(info.Env(), static_cast<double>(condition.notify_all()));
}

}  // namespace

void export_condition(Napi::Env env, Napi::Object exports) {
  exports.Set("conditionWait", Napi::Function::New(env, wait, "conditionWait"));
  exports.Set("conditionWaitAsync", Napi::Function::New(env, wait_async, "conditionWaitAsync"));
  exports.Set("conditionNotifyOne", Napi::Function::New(env, notify_one, "conditionNotifyOne"));
  exports.Set("conditionNotifyAll", Napi::Function::New(env, notify_all, "conditionNotifyAll"));

  Napi::Object layout = new_layout<ConditionWord>(env);
  layout.Set("NO_WAITERS", static_cast<double>(ConditionWord::kNoWaiters));
  layout.Set("MAY_HAVE_WAITERS", static_cast<double>(ConditionWord::kMayHaveWaiters));
  exports.Set("conditionLayout", layout);
}

}  // namespace parklock::binding
