// The native half of lib/rwlock.js: only the contended paths. JavaScript takes and releases the
// lock itself, with Atomics on the same words, while nobody is parked.
#include "errors.h"
#include "exports.h"
#include "handle.h"
#include "primitives/rwlock_steps.h"
#include "region_identity.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

using Mode = RwLockWords::Mode;

// rwlockLockSlow(handle, timeoutMs), rwlockLockSharedSlow(...) and rwlockLockUpgradableSlow(...)
// -> settlement, blocking this thread; rwlockLockAsync(handle, record),
// rwlockLockSharedAsync(...) and rwlockLockUpgradableAsync(...) -> ACQUIRED, OWNER_DIED, CORRUPT,
// or the queued wait's handle.
template <Mode kMode>
struct Lock {
  using Step = RwLockWords::LockStep;
  static constexpr std::size_t kLastArg = 1;
  // The handle, which the pending wait's record holds through the RWLock, keeps the words valid.
  static auto arguments(const Napi::CallbackInfo& info, ThreadId self) {
    const RwLockWords lock(words_of(info, 0, RwLockWords::kWordCount));
    return std::make_tuple(lock, kMode, acting_thread(info.Env(), lock.address(), self));
  }
};

// rwlockUpgradeSlow(handle, timeoutMs) -> ACQUIRED (upgraded) | TIMED_OUT | NOT_OWNER | CORRUPT,
// blocking this thread while other readers hold the lock; rwlockUpgradeAsync(handle, record) ->
// ACQUIRED (upgraded), NOT_OWNER, CORRUPT, or the queued wait's handle.
struct Upgrade {
  using Step = RwLockWords::UpgradeStep;
  static constexpr std::size_t kLastArg = 1;
  static auto arguments(const Napi::CallbackInfo& info, ThreadId self) {
    const RwLockWords lock(words_of(info, 0, RwLockWords::kWordCount));
    return std::make_tuple(lock, acting_thread(info.Env(), lock.address(), self));
  }
};

// rwlockTakeOver(handle, mode) -> OWNER_DIED if the write lock was held by a thread that has ended
// and is now this thread's in `mode` (0 shared, 1 exclusive, 2 upgradable); ACQUIRED if an
// upgradable read hold of a thread that has ended was in the way and the lock is this thread's
// now; else 0. For a try-lock whose fast path found the lock taken.
Napi::Value take_over(const Napi::CallbackInfo& info) {
  RwLockWords lock(words_of(info, 0, RwLockWords::kWordCount));
  const std::int32_t number = info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : -1;
  if (number < 0 || number > 2) throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "bad mode");
  const Mode mode = number == 0   ? Mode::kShared
                    : number == 1 ? Mode::kExclusive
                                  : Mode::kUpgradable;
  ThreadContext& context = ThreadContext::of(info.Env());
  ThreadId ended = kNoThread;
  const Outcome outcome = lock.try_lock_from_ended(
      mode, acting_thread(info.Env(), lock.address(), context.thread()), &ended);
  if (outcome == Outcome::kTimedOut) return Napi::Number::New(info.Env(), 0);
  return context.settled_value(info.Env(), outcome, ended);
}

// rwlockReleaseWriteSlow(handle) -> true; throws if the state is corrupt. JavaScript comes here
// after it checked and cleared the owner word and its CAS writer -> 0 failed.
Napi::Value release_write_slow(const Napi::CallbackInfo& info) {
  RwLockWords lock(words_of(info, 0, RwLockWords::kWordCount));
  if (lock.release_exclusive_slow() == RwLockWords::UnlockStatus::kUnlocked) {
    return Napi::Boolean::New(info.Env(), true);
  }
  throw_corrupt(info.Env(), "rwlock");
}

// A release's result as JavaScript receives it: true, or false for a thread that holds nothing
// to release; a corrupt state throws.
Napi::Value released(Napi::Env env, RwLockWords::UnlockStatus status) {
  switch (status) {
    case RwLockWords::UnlockStatus::kUnlocked:
      return Napi::Boolean::New(env, true);
    case RwLockWords::UnlockStatus::kNotOwner:
      return Napi::Boolean::New(env, false);
    case RwLockWords::UnlockStatus::kCorrupt:
      break;
  }
  throw_corrupt(env, "rwlock");
}

// rwlockDowngrade(handle) -> true once this thread's write hold is a read hold, or false if this
// thread does not hold the write lock; throws if the state is corrupt.
Napi::Value downgrade(const Napi::CallbackInfo& info) {
  RwLockWords lock(words_of(info, 0, RwLockWords::kWordCount));
  const ThreadId self =
      acting_thread(info.Env(), lock.address(), ThreadContext::of(info.Env()).thread());
  return released(info.Env(), lock.downgrade(self));
}

// rwlockReleaseUpgradableSlow(handle) -> true; throws if the state is corrupt. JavaScript comes
// here after it checked and cleared the owner word and found waiters parked.
Napi::Value release_upgradable_slow(const Napi::CallbackInfo& info) {
  RwLockWords lock(words_of(info, 0, RwLockWords::kWordCount));
  if (lock.release_upgradable_slow() == RwLockWords::UnlockStatus::kUnlocked) {
    return Napi::Boolean::New(info.Env(), true);
  }
  throw_corrupt(info.Env(), "rwlock");
}

// rwlockUnlockSharedSlow(handle) -> true, or false if no reader holds the lock (or only the
// upgradable one); throws if the state is corrupt.
Napi::Value unlock_shared_slow(const Napi::CallbackInfo& info) {
  RwLockWords lock(words_of(info, 0, RwLockWords::kWordCount));
  return released(info.Env(), lock.unlock_shared_slow());
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("rwlockLockSlow",
              Napi::Function::New(env, blocking_wait<Lock<Mode::kExclusive>>, "rwlockLockSlow"));
  exports.Set("rwlockLockSharedSlow",
              Napi::Function::New(env, blocking_wait<Lock<Mode::kShared>>, "rwlockLockSharedSlow"));
  exports.Set(
      "rwlockLockUpgradableSlow",
      Napi::Function::New(env, blocking_wait<Lock<Mode::kUpgradable>>, "rwlockLockUpgradableSlow"));
  exports.Set("rwlockReleaseUpgradableSlow",
              Napi::Function::New(env, release_upgradable_slow, "rwlockReleaseUpgradableSlow"));
  exports.Set("rwlockUpgradeSlow",
              Napi::Function::New(env, blocking_wait<Upgrade>, "rwlockUpgradeSlow"));
  exports.Set("rwlockUpgradeAsync",
              Napi::Function::New(env, promise_wait<Upgrade>, "rwlockUpgradeAsync"));
  exports.Set("rwlockReleaseWriteSlow",
              Napi::Function::New(env, release_write_slow, "rwlockReleaseWriteSlow"));
  exports.Set("rwlockUnlockSharedSlow",
              Napi::Function::New(env, unlock_shared_slow, "rwlockUnlockSharedSlow"));
  exports.Set("rwlockLockAsync",
              Napi::Function::New(env, promise_wait<Lock<Mode::kExclusive>>, "rwlockLockAsync"));
  exports.Set("rwlockLockSharedAsync",
              Napi::Function::New(env, promise_wait<Lock<Mode::kShared>>, "rwlockLockSharedAsync"));
  exports.Set(
      "rwlockLockUpgradableAsync",
      Napi::Function::New(env, promise_wait<Lock<Mode::kUpgradable>>, "rwlockLockUpgradableAsync"));
  exports.Set("rwlockTakeOver", Napi::Function::New(env, take_over, "rwlockTakeOver"));
  exports.Set("rwlockDowngrade", Napi::Function::New(env, downgrade, "rwlockDowngrade"));

  const LayoutConstant own[] = {
      {"STATE_INDEX", RwLockWords::kStateIndex},
      {"OWNER_INDEX", RwLockWords::kOwnerIndex},
      {"WRITER", RwLockWords::kWriter},
      {"PARKED", RwLockWords::kParked},
      {"UPGRADABLE", RwLockWords::kUpgradable},
      {"DRAINING", RwLockWords::kDraining},
      {"READER_SHIFT", RwLockWords::kReaderShift},
      {"ONE_READER", RwLockWords::kOneReader},
      {"MAX_READERS", RwLockWords::kMaxReaders},
      // What inspect() reports as a waiter's request.
      {"SHARED_REQUEST", RwLockWords::kSharedRequest},
      {"UPGRADE_REQUEST", RwLockWords::kUpgradeRequest},
  };
  exports.Set("rwlockLayout", new_layout<RwLockWords>(env, own));
});

}  // namespace

}  // namespace parklock::binding
