// The native half of lib/condition.js: waits (which release and re-acquire a Mutex) and notifies
// that find waiters; JavaScript skips the addon when the condition's hint says nobody waits.
#include "condition.h"
#include "exports.h"
#include "handle.h"
#include "mutex.h"
#include "owner_death.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

// conditionWait(conditionHandle, mutexHandle, timeoutMs) -> settlement; blocks.
struct Wait {
  static constexpr std::size_t kTimeoutArg = 2;
  Wait(const Napi::CallbackInfo& info, ThreadId)
      : condition(words_of(info, 0, ConditionWord::kWordCount)),
        mutex(words_of(info, 1, MutexWord::kWordCount)) {}
  ConditionWord::WaitStatus run(BlockingWait& wait) {
    return condition.wait(mutex, wait.self, wait.deadline, &wait.ended);
  }
  ConditionWord condition;
  MutexWord mutex;
};

// conditionWaitAsync(conditionHandle, mutexHandle, record) -> NOT_OWNER, CORRUPT, or the queued
// wait's handle.
//
// The wait goes through two queues: the condition's until notified (or cancelled), then the
// mutex's until it holds the mutex again. Only then does its Promise settle, so that the code
// after `await condition.waitAsync(mutex)` always runs holding the mutex.
class WaitAsync final : public WaitStep {
 public:
  static constexpr std::size_t kRecordArg = 2;
  WaitAsync(const Napi::CallbackInfo& info, ThreadId)
      : condition_(words_of(info, 0, ConditionWord::kWordCount)),
        mutex_(words_of(info, 1, MutexWord::kWordCount)) {}

  std::int64_t request() const override { return ConditionWord::request_for(MutexWord(mutex_)); }

  Settlement start(Waiter& waiter) override {
    MutexWord held(mutex_);
    if (!held.is_locked() || held.owner_thread() != waiter.thread()) return settled::kNotOwner;
    ConditionWord(condition_).enqueue(waiter);
    // Queued first, released second: a notifier holding the mutex always finds this waiter.
    if (held.unlock(waiter.thread()) != MutexWord::UnlockStatus::kUnlocked) {
      // Corrupt mutex word: take the waiter out again (it was never released to anyone).
      if (cancel(waiter, nullptr)) return settled::kCorrupt;
    }
    return settled::kPending;
  }

  // A cancel that lost the race with a notification changes nothing: notified wins, and the
  // mutex must be re-acquired either way.
  Settlement resume(Waiter& waiter, WakeToken token) override {
    if (grant_of(token) == MutexWord::kHandedOff) {
      set_ended_owner(ended_owner_of(token));
      return ended_owner() == kNoThread ? outcome_ : settled::kOwnerDied;
    }
    return relock(waiter, token == MutexWord::kReleasedWithMoreWaiters);
  }

  Settlement resume_cancelled(Waiter& waiter, WakeToken token) override {
    return resume(waiter, token);
  }

  Settlement on_cancelled(Waiter& waiter) override {
    // Still waiting for a notification: the wait ends as cancelled. Already requeued onto the
    // mutex: it had been notified, and only its place in the mutex's queue is lost.
    if (waiter.address() == condition_) outcome_ = settled::kCancelled;
    return relock(waiter, false);
  }

  void abandon(Waiter& waiter, WakeToken token) noexcept override {
    ConditionWord(condition_).abandon_wake(MutexWord(mutex_), waiter.thread(), token);
  }

  // From the condition's queue, or the mutex's once notify_all() moved it there.
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept override {
    return ConditionWord(condition_).cancel(waiter, MutexWord(mutex_), deferred);
  }

 private:
  Settlement relock(Waiter& waiter, bool must_mark_parked) {
    ThreadId ended = kNoThread;
    const Settlement settlement = settlement_of(
        MutexWord(mutex_).lock_or_enqueue(waiter.thread(), waiter, must_mark_parked, &ended));
    set_ended_owner(ended);
    return settlement == settled::kAcquired ? outcome_ : settlement;
  }

  // Kept valid by the handles, which the pending wait's record holds through the Condition and
  // the Mutex.
  std::int32_t* const condition_;
  std::int32_t* const mutex_;
  Settlement outcome_ = settled::kAcquired;  // JS thread only
};

Napi::Value notify_one(const Napi::CallbackInfo& info) {
  ConditionWord condition(words_of(info, 0, ConditionWord::kWordCount));
  return Napi::Number::New(info.Env(), static_cast<double>(condition.notify_one()));
}

Napi::Value notify_all(const Napi::CallbackInfo& info) {
  ConditionWord condition(words_of(info, 0, ConditionWord::kWordCount));
  return Napi::Number::New(info.Env(), static_cast<double>(condition.notify_all()));
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("conditionWait", Napi::Function::New(env, blocking_call<Wait>, "conditionWait"));
  exports.Set("conditionWaitAsync",
              Napi::Function::New(env, start_async<WaitAsync>, "conditionWaitAsync"));
  exports.Set("conditionNotifyOne", Napi::Function::New(env, notify_one, "conditionNotifyOne"));
  exports.Set("conditionNotifyAll", Napi::Function::New(env, notify_all, "conditionNotifyAll"));

  Napi::Object layout = new_layout<ConditionWord>(env);
  layout.Set("NO_WAITERS", static_cast<double>(ConditionWord::kNoWaiters));
  layout.Set("MAY_HAVE_WAITERS", static_cast<double>(ConditionWord::kMayHaveWaiters));
  exports.Set("conditionLayout", layout);
});

}  // namespace

}  // namespace parklock::binding
