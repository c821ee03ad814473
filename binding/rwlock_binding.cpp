// The native half of lib/rwlock.js: only the contended paths. JavaScript takes and releases the
// lock itself, with Atomics on the same words, while nobody is parked.
#include "errors.h"
#include "exports.h"
#include "handle.h"
#include "owner_death.h"
#include "rwlock.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

using Mode = RwLockWords::Mode;

// rwlockLockSlow(handle, timeoutMs), rwlockLockSharedSlow(...) and rwlockLockUpgradableSlow(...)
// -> ACQUIRED | OWNER_DIED | TIMED_OUT | ALREADY_HELD | DEADLOCK | CORRUPT; block this thread.
template <Mode kMode>
struct LockSlow {
  static constexpr std::size_t kTimeoutArg = 1;
  LockSlow(const Napi::CallbackInfo& info, ThreadId)
      : lock(words_of(info, 0, RwLockWords::kWordCount)) {}
  RwLockWords::LockStatus run(BlockingWait& wait) {
    switch (kMode) {
      case Mode::kExclusive:
        return lock.lock_slow(wait.self, wait.deadline, &wait.ended);
      case Mode::kShared:
        return lock.lock_shared_slow(wait.self, wait.deadline, &wait.ended);
      case Mode::kUpgradable:
        break;
    }
    return lock.lock_upgradable_slow(wait.self, wait.deadline, &wait.ended);
  }
  RwLockWords lock;
};

// rwlockLockAsync(handle, record), rwlockLockSharedAsync(...) and rwlockLockUpgradableAsync(...)
// -> ACQUIRED, OWNER_DIED, CORRUPT, or the queued wait's handle.
template <Mode kMode>
class LockAsync final : public WaitStep {
 public:
  static constexpr std::size_t kRecordArg = 1;
  LockAsync(const Napi::CallbackInfo& info, ThreadId self)
      : words_(words_of(info, 0, RwLockWords::kWordCount)), self_(self) {}

  std::int64_t request() const override {
    switch (kMode) {
      case Mode::kExclusive:
        return RwLockWords::exclusive_request(self_);
      case Mode::kShared:
        return RwLockWords::kSharedRequest;
      case Mode::kUpgradable:
        break;
    }
    return RwLockWords::upgradable_request(self_);
  }

  Settlement start(Waiter& waiter) override {
    ThreadId ended = kNoThread;
    const Settlement settlement =
        settlement_of(RwLockWords(words_).lock_or_enqueue(waiter, &ended));
    set_ended_owner(ended);
    return settlement;
  }

  // The only wake-up is a grant: the lock is this wait's, unless it was cancelled meanwhile. The
  // grant may carry the writer that ended holding the lock.
  Settlement resume(Waiter& /*waiter*/, WakeToken token) override {
    set_ended_owner(ended_owner_of(token));
    return ended_owner() == kNoThread ? settled::kAcquired : settled::kOwnerDied;
  }

  void abandon(Waiter& waiter, WakeToken token) noexcept override {
    RwLockWords(words_).abandon_wake(waiter.thread(), token);
  }

  // Leaving without a grant may unblock the waiters queued behind this one.
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept override {
    return RwLockWords(words_).cancel(waiter, deferred);
  }

 private:
  // Kept valid by the handle, which the pending wait's record holds through the RWLock.
  std::int32_t* const words_;
  const ThreadId self_;
};

// The upgrade of an upgradable read hold, blocking and asynchronous.

// rwlockUpgradeSlow(handle, timeoutMs) -> ACQUIRED (upgraded) | TIMED_OUT | NOT_OWNER | CORRUPT;
// blocks this thread while other readers hold the lock.
struct UpgradeSlow {
  static constexpr std::size_t kTimeoutArg = 1;
  UpgradeSlow(const Napi::CallbackInfo& info, ThreadId)
      : lock(words_of(info, 0, RwLockWords::kWordCount)) {}
  RwLockWords::UpgradeStatus run(BlockingWait& wait) {
    return lock.upgrade_slow(wait.self, wait.deadline);
  }
  RwLockWords lock;
};

// rwlockUpgradeAsync(handle, record) -> ACQUIRED (upgraded), NOT_OWNER, CORRUPT, or the queued
// wait's handle. Each wake-up means "look again": the upgrader is the only waiter of its queue.
class UpgradeAsync final : public WaitStep {
 public:
  static constexpr std::size_t kRecordArg = 1;
  UpgradeAsync(const Napi::CallbackInfo& info, ThreadId)
      : words_(words_of(info, 0, RwLockWords::kWordCount)) {}

  std::int64_t request() const override { return RwLockWords::kUpgradeRequest; }

  Settlement start(Waiter& waiter) override {
    return settlement_of(RwLockWords(words_).upgrade_or_enqueue(waiter));
  }

  Settlement resume(Waiter& waiter, WakeToken /*token*/) override {
    return settlement_of(RwLockWords(words_).upgrade_or_enqueue(waiter));
  }

  // The wake-up obliges nothing, but the upgrade's mark must go: it keeps readers out.
  void abandon(Waiter&, WakeToken) noexcept override { RwLockWords(words_).end_upgrade_wait(); }

  // A teardown (`deferred`) leaves the readers kept out to the release of the thread's upgradable
  // hold, which its end brings (owner_death.h) and which grants them.
  bool cancel(Waiter& waiter, parking_lot::Wakeups* deferred) noexcept override {
    if (!parking_lot::cancel(waiter)) return false;
    RwLockWords(words_).end_upgrade_wait(deferred == nullptr);
    return true;
  }

 private:
  std::int32_t* const words_;
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
  const ThreadId self = context.thread();
  ThreadId ended = kNoThread;
  if (lock.take_from_ended_owner(mode, self, &ended)) {
    return context.settled_value(info.Env(), settled::kOwnerDied, ended);
  }
  if (lock.release_ended_upgrader(self)) {
    const bool acquired = mode == Mode::kShared      ? lock.try_lock_shared()
                          : mode == Mode::kExclusive ? lock.try_lock(self)
                                                     : lock.try_lock_upgradable(self);
    if (acquired) return context.settled_value(info.Env(), settled::kAcquired, kNoThread);
  }
  return Napi::Number::New(info.Env(), 0);
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
  return released(info.Env(), lock.downgrade(ThreadContext::of(info.Env()).thread()));
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
  exports.Set("rwlockLockSlow", Napi::Function::New(env, blocking_call<LockSlow<Mode::kExclusive>>,
                                                    "rwlockLockSlow"));
  exports.Set(
      "rwlockLockSharedSlow",
      Napi::Function::New(env, blocking_call<LockSlow<Mode::kShared>>, "rwlockLockSharedSlow"));
  exports.Set("rwlockLockUpgradableSlow",
              Napi::Function::New(env, blocking_call<LockSlow<Mode::kUpgradable>>,
                                  "rwlockLockUpgradableSlow"));
  exports.Set("rwlockReleaseUpgradableSlow",
              Napi::Function::New(env, release_upgradable_slow, "rwlockReleaseUpgradableSlow"));
  exports.Set("rwlockUpgradeSlow",
              Napi::Function::New(env, blocking_call<UpgradeSlow>, "rwlockUpgradeSlow"));
  exports.Set("rwlockUpgradeAsync",
              Napi::Function::New(env, start_async<UpgradeAsync>, "rwlockUpgradeAsync"));
  exports.Set("rwlockReleaseWriteSlow",
              Napi::Function::New(env, release_write_slow, "rwlockReleaseWriteSlow"));
  exports.Set("rwlockUnlockSharedSlow",
              Napi::Function::New(env, unlock_shared_slow, "rwlockUnlockSharedSlow"));
  exports.Set("rwlockLockAsync", Napi::Function::New(env, start_async<LockAsync<Mode::kExclusive>>,
                                                     "rwlockLockAsync"));
  exports.Set(
      "rwlockLockSharedAsync",
      Napi::Function::New(env, start_async<LockAsync<Mode::kShared>>, "rwlockLockSharedAsync"));
  exports.Set("rwlockLockUpgradableAsync",
              Napi::Function::New(env, start_async<LockAsync<Mode::kUpgradable>>,
                                  "rwlockLockUpgradableAsync"));
  exports.Set("rwlockTakeOver", Napi::Function::New(env, take_over, "rwlockTakeOver"));
  exports.Set("rwlockDowngrade", Napi::Function::New(env, downgrade, "rwlockDowngrade"));

  Napi::Object layout = new_layout<RwLockWords>(env);
  layout.Set("STATE_INDEX", static_cast<double>(RwLockWords::kStateIndex));
  layout.Set("OWNER_INDEX", static_cast<double>(RwLockWords::kOwnerIndex));
  layout.Set("WRITER", RwLockWords::kWriter);
  layout.Set("PARKED", RwLockWords::kParked);
  layout.Set("UPGRADABLE", RwLockWords::kUpgradable);
  layout.Set("UPGRADING", RwLockWords::kUpgrading);
  layout.Set("READER_SHIFT", RwLockWords::kReaderShift);
  layout.Set("ONE_READER", RwLockWords::kOneReader);
  layout.Set("MAX_READERS", RwLockWords::kMaxReaders);
  // What inspect() reports as a waiter's request.
  layout.Set("SHARED_REQUEST", static_cast<double>(RwLockWords::kSharedRequest));
  layout.Set("UPGRADE_REQUEST", static_cast<double>(RwLockWords::kUpgradeRequest));
  exports.Set("rwlockLayout", layout);
});

}  // namespace

}  // namespace parklock::binding
