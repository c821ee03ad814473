// The native half of lib/mutex.js: only the contended paths. JavaScript runs the uncontended lock
// and unlock itself, on the same words, with Atomics.
#include "errors.h"
#include "exports.h"
#include "handle.h"
#include "primitives/mutex.h"
#include "region_identity.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

// mutexLockSlow(handle, timeoutMs) -> settlement, blocking this thread;
// mutexLockAsync(handle, record) -> ACQUIRED, OWNER_DIED, CORRUPT, or the queued wait's handle.
struct Lock {
  using Step = MutexWord::LockStep;
  static constexpr std::size_t kLastArg = 1;
  // The handle, which the pending wait's record holds through the Mutex, keeps the word valid.
  static auto arguments(const Napi::CallbackInfo& info, ThreadId self) {
    const MutexWord mutex(words_of(info, 0, MutexWord::kWordCount));
    return std::make_tuple(mutex, acting_thread(info.Env(), mutex.address(), self));
  }
};

// mutexTakeOver(handle) -> OWNER_DIED if the mutex was held by a thread that has ended and is now
// this thread's, else 0. For a try-lock whose fast path found the mutex taken.
Napi::Value take_over(const Napi::CallbackInfo& info) {
  MutexWord mutex(words_of(info, 0, MutexWord::kWordCount));
  ThreadContext& context = ThreadContext::of(info.Env());
  ThreadId ended = kNoThread;
  if (!mutex.take_from_ended_owner(acting_thread(info.Env(), mutex.address(), context.thread()),
                                   &ended)) {
    return Napi::Number::New(info.Env(), 0);
  }
  return context.settled_value(info.Env(), Outcome::kOwnerDied, ended);
}

// mutexUnlockSlow(handle) -> true, or false if this thread does not hold the lock; throws if the
// word is corrupt. JavaScript comes here when its fast-path CAS failed.
Napi::Value unlock_slow(const Napi::CallbackInfo& info) {
  MutexWord mutex(words_of(info, 0, MutexWord::kWordCount));
  const ThreadId self =
      acting_thread(info.Env(), mutex.address(), ThreadContext::of(info.Env()).thread());
  switch (mutex.unlock_slow(self)) {
    case MutexWord::UnlockStatus::kUnlocked:
      return Napi::Boolean::New(info.Env(), true);
    case MutexWord::UnlockStatus::kNotOwner:
      return Napi::Boolean::New(info.Env(), false);
    case MutexWord::UnlockStatus::kCorrupt:
      break;
  }
  throw_corrupt(info.Env(), "mutex");
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("mutexLockSlow", Napi::Function::New(env, blocking_wait<Lock>, "mutexLockSlow"));
  exports.Set("mutexUnlockSlow", Napi::Function::New(env, unlock_slow, "mutexUnlockSlow"));
  exports.Set("mutexLockAsync", Napi::Function::New(env, promise_wait<Lock>, "mutexLockAsync"));
  exports.Set("mutexTakeOver", Napi::Function::New(env, take_over, "mutexTakeOver"));

  const LayoutConstant own[] = {
      {"UNLOCKED", MutexWord::kUnlocked},          {"LOCKED", MutexWord::kLocked},
      {"LOCKED_PARKED", MutexWord::kLockedParked}, {"STATE_MASK", MutexWord::kStateMask},
      {"OWNER_SHIFT", MutexWord::kOwnerShift},
  };
  exports.Set("mutexLayout", new_layout<MutexWord>(env, own));
});

}  // namespace

}  // namespace parklock::binding
