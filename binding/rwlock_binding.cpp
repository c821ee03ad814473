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

// rwlockLockSlow(handle, timeoutMs) and rwlockLockSharedSlow(...) -> ACQUIRED | OWNER_DIED |
// TIMED_OUT | ALREADY_HELD | CORRUPT; block this thread.
template <bool kExclusive>
struct LockSlow {
  static constexpr std::size_t kTimeoutArg = 1;
  LockSlow(const Napi::CallbackInfo& info, ThreadId)
      : lock(words_of(info, 0, RwLockWords::kWordCount)) {}
  RwLockWords::LockStatus run(BlockingWait& wait) {
    return kExclusive ? lock.lock_slow(wait.self, wait.deadline, &wait.ended)
                      : lock.lock_shared_slow(wait.self, wait.deadline, &wait.ended);
  }
  RwLockWords lock;
};

// rwlockLockAsync(handle, record) and rwlockLockSharedAsync(...) -> ACQUIRED, OWNER_DIED, CORRUPT,
// or the queued wait's handle.
template <bool kExclusive>
class LockAsync final : public AsyncOperation {
 public:
  static constexpr std::size_t kRecordArg = 1;
  LockAsync(const Napi::CallbackInfo& info, ThreadId self)
      : words_(words_of(info, 0, RwLockWords::kWordCount)), self_(self) {}

  std::int64_t request() const override {
    return kExclusive ? RwLockWords::exclusive_request(self_) : RwLockWords::kSharedRequest;
  }

  Settlement start(AsyncWaiter& waiter) override {
    ThreadId ended = kNoThread;
    const Settlement settlement =
        settlement_of(RwLockWords(words_).lock_or_enqueue(waiter, &ended));
    waiter.set_ended_owner(ended);
    return settlement;
  }

  // The only wake-up is a grant: the lock is this wait's, unless it was cancelled meanwhile. The
  // grant may carry the writer that ended holding the lock.
  Settlement resume(AsyncWaiter& waiter, WakeToken token) override {
    if (waiter.cancel_requested()) {
      abandon(waiter, token);
      return settled::kCancelled;
    }
    waiter.set_ended_owner(ended_owner_of(token));
    return waiter.ended_owner() == kNoThread ? settled::kAcquired : settled::kOwnerDied;
  }

  void abandon(AsyncWaiter& waiter, WakeToken token) noexcept override {
    RwLockWords(words_).abandon_wake(waiter.thread(), token);
  }

  // Leaving without a grant may unblock the waiters queued behind this one.
  bool remove(AsyncWaiter& waiter, parking_lot::Wakeups* deferred) noexcept override {
    return RwLockWords(words_).cancel(waiter, deferred);
  }

 private:
  // Kept valid by the handle, which the pending wait's record holds through the RWLock.
  std::int32_t* const words_;
  const ThreadId self_;
};

// rwlockTakeOver(handle, exclusive) -> OWNER_DIED if the write lock was held by a thread that has
// ended and is now this thread's in the requested mode, else 0. For a try-lock whose fast path
// found the lock taken.
Napi::Value take_over(const Napi::CallbackInfo& info) {
  RwLockWords lock(words_of(info, 0, RwLockWords::kWordCount));
  const RwLockWords::Mode mode =
      info[1].ToBoolean() ? RwLockWords::Mode::kExclusive : RwLockWords::Mode::kShared;
  ThreadContext& context = ThreadContext::of(info.Env());
  ThreadId ended = kNoThread;
  if (!lock.take_from_ended_owner(mode, context.thread(), &ended)) {
    return Napi::Number::New(info.Env(), 0);
  }
  return context.settled_value(info.Env(), settled::kOwnerDied, ended);
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

// rwlockUnlockSharedSlow(handle) -> true, or false if no reader holds the lock; throws if the
// state is corrupt.
Napi::Value unlock_shared_slow(const Napi::CallbackInfo& info) {
  RwLockWords lock(words_of(info, 0, RwLockWords::kWordCount));
  return released(info.Env(), lock.unlock_shared_slow());
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("rwlockLockSlow",
              Napi::Function::New(env, blocking_call<LockSlow<true>>, "rwlockLockSlow"));
  exports.Set("rwlockLockSharedSlow",
              Napi::Function::New(env, blocking_call<LockSlow<false>>, "rwlockLockSharedSlow"));
  exports.Set("rwlockReleaseWriteSlow",
              Napi::Function::New(env, release_write_slow, "rwlockReleaseWriteSlow"));
  exports.Set("rwlockUnlockSharedSlow",
              Napi::Function::New(env, unlock_shared_slow, "rwlockUnlockSharedSlow"));
  exports.Set("rwlockLockAsync",
              Napi::Function::New(env, start_async<LockAsync<true>>, "rwlockLockAsync"));
  exports.Set("rwlockLockSharedAsync",
              Napi::Function::New(env, start_async<LockAsync<false>>, "rwlockLockSharedAsync"));
  exports.Set("rwlockTakeOver", Napi::Function::New(env, take_over, "rwlockTakeOver"));
  exports.Set("rwlockDowngrade", Napi::Function::New(env, downgrade, "rwlockDowngrade"));

  Napi::Object layout = new_layout<RwLockWords>(env);
  layout.Set("STATE_INDEX", static_cast<double>(RwLockWords::kStateIndex));
  layout.Set("OWNER_INDEX", static_cast<double>(RwLockWords::kOwnerIndex));
  layout.Set("WRITER", RwLockWords::kWriter);
  layout.Set("PARKED", RwLockWords::kParked);
  layout.Set("READER_SHIFT", RwLockWords::kReaderShift);
  layout.Set("ONE_READER", RwLockWords::kOneReader);
  layout.Set("MAX_READERS", RwLockWords::kMaxReaders);
  exports.Set("rwlockLayout", layout);
});

}  // namespace

}  // namespace parklock::binding
