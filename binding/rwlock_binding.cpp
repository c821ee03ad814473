// The native half of lib/rwlock.js: only the contended paths. JavaScript takes and releases the
// lock itself, with Atomics on the same words, while nobody is parked.
#include "rwlock_binding.h"

#include "errors.h"
#include "owner_death.h"
#include "rwlock.h"
#include "settlement.h"
#include "shared_words.h"
#include "thread_context.h"

namespace parklock::binding {

namespace {

class RwLockAsyncWaiter final : public AsyncWaiter {
 public:
  RwLockAsyncWaiter(std::shared_ptr<ThreadContext> context, double id, std::int32_t* words,
                    bool exclusive)
      : AsyncWaiter(context, id,
                    exclusive ? RwLockWords::exclusive_request(context->thread())
                              : RwLockWords::kSharedRequest),
        words_(words) {}

  // JS thread: takes the lock now, or queues this waiter (returning nothing).
  std::optional<Settlement> first_step() {
    ThreadId ended = kNoThread;
    switch (RwLockWords(words_).lock_or_enqueue(*this, &ended)) {
      case RwLockWords::AsyncStep::kAcquired:
        return settled::kAcquired;
      case RwLockWords::AsyncStep::kOwnerDied:
        return owner_died(ended);
      case RwLockWords::AsyncStep::kCorrupt:
        return settled::kCorrupt;
      case RwLockWords::AsyncStep::kQueued:
        break;
    }
    return std::nullopt;
  }

  // The only wake-up is a grant: the lock is this wait's, unless it was cancelled meanwhile. The
  // grant may carry the writer that ended holding the lock.
  std::optional<Settlement> resume(WakeToken token) override {
    if (cancel_requested()) {
      RwLockWords(words_).abandon_wake(thread(), token);
      return settled::kCancelled;
    }
    const ThreadId ended = ended_owner_of(token);
    return ended == kNoThread ? settled::kAcquired : owner_died(ended);
  }

  void abandon(WakeToken token) noexcept override {
    RwLockWords(words_).abandon_wake(thread(), token);
  }

  // Leaving without a grant may unblock the waiters queued behind this one.
  bool remove() noexcept override { return RwLockWords(words_).cancel(*this); }

 private:
  // Kept valid by JavaScript: the pending wait's record holds the RWLock and so its buffer.
  std::int32_t* const words_;
};

Settlement from_lock_status(RwLockWords::LockStatus status, ThreadContext& context,
                            ThreadId ended) {
  switch (status) {
    case RwLockWords::LockStatus::kAcquired:
      return settled::kAcquired;
    case RwLockWords::LockStatus::kOwnerDied:
      return context.report_ended_owner(ended);
    case RwLockWords::LockStatus::kTimedOut:
    case RwLockWords::LockStatus::kInterrupted:
      return settled::kTimedOut;
    case RwLockWords::LockStatus::kAlreadyHeld:
      return settled::kAlreadyHeld;
    case RwLockWords::LockStatus::kCorrupt:
      break;
  }
  return settled::kCorrupt;
}

// rwlockLockSlow(int32Array, index, timeoutMs) and rwlockLockSharedSlow(...) -> ACQUIRED |
// OWNER_DIED | TIMED_OUT | ALREADY_HELD | CORRUPT; block this thread.
template <bool kExclusive>
Napi::Value lock_slow(const Napi::CallbackInfo& info) {
  RwLockWords lock(shared_words(info, 0, RwLockWords::kWordCount));
  const Deadline deadline = Deadline::after_ms(timeout_ms(info, 2));
  ThreadContext& context = ThreadContext::of(info.Env());
  ThreadId ended = kNoThread;
  const RwLockWords::LockStatus status =
      kExclusive ? lock.lock_slow(context.thread(), deadline, &ended)
                 : lock.lock_shared_slow(context.thread(), deadline, &ended);
  // Terminating: the pending termination exception unwinds the caller; the value is ignored.
  if (status == RwLockWords::LockStatus::kInterrupted) return info.Env().Undefined();
  return Napi::Number::New(info.Env(), from_lock_status(status, context, ended));
}

// rwlockTakeOver(int32Array, index, exclusive) -> OWNER_DIED if the write lock was held by a
// thread that has ended and is now this thread's in the requested mode, else 0. For a try-lock
// whose fast path found the lock taken.
Napi::Value take_over(const Napi::CallbackInfo& info) {
  RwLockWords lock(shared_words(info, 0, RwLockWords::kWordCount));
  const RwLockWords::Mode mode =
      info[2].ToBoolean() ? RwLockWords::Mode::kExclusive : RwLockWords::Mode::kShared;
  ThreadContext& context = ThreadContext::of(info.Env());
  ThreadId ended = kNoThread;
  if (!lock.take_from_ended_owner(mode, context.thread(), &ended)) {
    return Napi::Number::New(info.Env(), 0);
  }
  return Napi::Number::New(info.Env(), context.report_ended_owner(ended));
}

// rwlockReleaseWriteSlow(int32Array, index) -> true; throws if the state is corrupt. JavaScript
// comes here after it checked and cleared the owner word and its CAS writer -> 0 failed.
Napi::Value release_write_slow(const Napi::CallbackInfo& info) {
  RwLockWords lock(shared_words(info, 0, RwLockWords::kWordCount));
  if (lock.release_exclusive_slow() == RwLockWords::UnlockStatus::kUnlocked) {
    return Napi::Boolean::New(info.Env(), true);
  }
  throw_corrupt(info.Env(), "rwlock");
}

// rwlockUnlockSharedSlow(int32Array, index) -> true, or false if no reader holds the lock;
// throws if the state is corrupt.
Napi::Value unlock_shared_slow(const Napi::CallbackInfo& info) {
  RwLockWords lock(shared_words(info, 0, RwLockWords::kWordCount));
  switch (lock.unlock_shared_slow()) {
    case RwLockWords::UnlockStatus::kUnlocked:
      return Napi::Boolean::New(info.Env(), true);
    case RwLockWords::UnlockStatus::kNotOwner:
      return Napi::Boolean::New(info.Env(), false);
    case RwLockWords::UnlockStatus::kCorrupt:
      break;
  }
  throw_corrupt(info.Env(), "rwlock");
}

// rwlockLockAsync(int32Array, index, id) and rwlockLockSharedAsync(...) -> ACQUIRED, CORRUPT, or
// PENDING (then the wait `id` settles through the thread's on_settle callback).
template <bool kExclusive>
Napi::Value lock_async(const Napi::CallbackInfo& info) {
  std::int32_t* words = shared_words(info, 0, RwLockWords::kWordCount);
  if (!info[2].IsNumber()) throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "bad wait id");
  ThreadContext& context = ThreadContext::of(info.Env());
  auto waiter = std::make_shared<RwLockAsyncWaiter>(
      context.shared_from_this(), info[2].As<Napi::Number>().DoubleValue(), words, kExclusive);
  std::optional<Settlement> now = context.begin(waiter, [&] { return waiter->first_step(); });
  return Napi::Number::New(info.Env(), now.value_or(settled::kPending));
}

}  // namespace

void export_rwlock(Napi::Env env, Napi::Object exports) {
  exports.Set("rwlockLockSlow", Napi::Function::New(env, lock_slow<true>, "rwlockLockSlow"));
  exports.Set("rwlockLockSharedSlow",
              Napi::Function::New(env, lock_slow<false>, "rwlockLockSharedSlow"));
  exports.Set("rwlockReleaseWriteSlow",
              Napi::Function::New(env, release_write_slow, "rwlockReleaseWriteSlow"));
  exports.Set("rwlockUnlockSharedSlow",
              Napi::Function::New(env, unlock_shared_slow, "rwlockUnlockSharedSlow"));
  exports.Set("rwlockLockAsync", Napi::Function::New(env, lock_async<true>, "rwlockLockAsync"));
  exports.Set("rwlockLockSharedAsync",
              Napi::Function::New(env, lock_async<false>, "rwlockLockSharedAsync"));
  exports.Set("rwlockTakeOver", Napi::Function::New(env, take_over, "rwlockTakeOver"));

  Napi::Object layout = new_layout<RwLockWords>(env);
  layout.Set("STATE_INDEX", static_cast<double>(RwLockWords::kStateIndex));
  layout.Set("OWNER_INDEX", static_cast<double>(RwLockWords::kOwnerIndex));
  layout.Set("WRITER", RwLockWords::kWriter);
  layout.Set("PARKED", RwLockWords::kParked);
  layout.Set("READER_SHIFT", RwLockWords::kReaderShift);
  layout.Set("ONE_READER", RwLockWords::kOneReader);
  layout.Set("MAX_READERS", RwLockWords::kMaxReaders);
  exports.Set("rwlockLayout", layout);
}

}  // namespace parklock::binding
