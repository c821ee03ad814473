// The native half of lib/condition.js: waits (which release and re-acquire a Mutex) and notifies
// that find waiters; JavaScript skips the addon when the condition's hint says nobody waits.
#include "exports.h"
#include "handle.h"
#include "primitives/condition.h"
#include "primitives/mutex.h"
#include "region_identity.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

// conditionWait(conditionHandle, mutexHandle, timeoutMs) -> settlement, blocking this thread;
// conditionWaitAsync(conditionHandle, mutexHandle, record) -> NOT_OWNER, CORRUPT,
// TOO_MANY_WAITERS (in a region: no room to count the wait), or the queued wait's handle. A
// Promise wait settles only once it holds the mutex again, so that the code after
// `await condition.waitAsync(mutex)` always runs holding it.
struct Wait {
  using Step = ConditionWord::AwaitStep;
  static constexpr std::size_t kLastArg = 2;
  // The handles, which the pending wait's record holds through the Condition and the Mutex, keep
  // the words valid. The waiter acts as the mutex's holder: in a region, its region identity.
  static auto arguments(const Napi::CallbackInfo& info, ThreadId self) {
    const MutexWord mutex(words_of(info, 1, MutexWord::kWordCount));
    return std::make_tuple(ConditionWord(words_of(info, 0, ConditionWord::kWordCount)), mutex,
                           acting_thread(info.Env(), mutex.address(), self));
  }
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
  exports.Set("conditionWait", Napi::Function::New(env, blocking_wait<Wait>, "conditionWait"));
  exports.Set("conditionWaitAsync",
              Napi::Function::New(env, promise_wait<Wait>, "conditionWaitAsync"));
  exports.Set("conditionNotifyOne", Napi::Function::New(env, notify_one, "conditionNotifyOne"));
  exports.Set("conditionNotifyAll", Napi::Function::New(env, notify_all, "conditionNotifyAll"));

  const LayoutConstant own[] = {
      {"NO_WAITERS", ConditionWord::kNoWaiters},
      {"MAY_HAVE_WAITERS", ConditionWord::kMayHaveWaiters},
      {"WAITER_SHIFT", ConditionWord::kWaiterShift},
      {"PENDING_SHIFT", ConditionWord::kPendingShift},
      {"EPOCH_SHIFT", ConditionWord::kEpochShift},
      {"MOST_WAITERS", ConditionWord::kMostWaiters},
  };
  exports.Set("conditionLayout", new_layout<ConditionWord>(env, own));
});

}  // namespace

}  // namespace parklock::binding
