// The native half of lib/mutex.js: only the contended paths. JavaScript runs the uncontended lock
// and unlock itself, on the same words, with Atomics.
#include "mutex_binding.h"

#include "errors.h"
#include "mutex.h"
#include "owner_death.h"
#include "settlement.h"
#include "shared_words.h"
#include "thread_context.h"

namespace parklock::binding {

namespace {

class MutexAsyncWaiter final : public AsyncWaiter {
 public:
  MutexAsyncWaiter(std::shared_ptr<ThreadContext> context, double id, std::int32_t* words)
      : AsyncWaiter(std::move(context), id), words_(words) {}

  std::optional<Settlement> resume(WakeToken token) override {
    MutexWord mutex(words_);
    if (cancel_requested()) {
      mutex.abandon_wake(thread(), token);
      return settled::kCancelled;
    }
    if (grant_of(token) == MutexWord::kHandedOff) {
      const ThreadId ended = ended_owner_of(token);
      return ended == kNoThread ? settled::kAcquired : owner_died(ended);
    }
    return step(token == MutexWord::kReleasedWithMoreWaiters);
  }

  void abandon(WakeToken token) noexcept override {
    MutexWord(words_).abandon_wake(thread(), token);
  }

  bool remove() noexcept override { return MutexWord(words_).cancel(*this); }

  // Acquires now, or queues this waiter (returning nothing).
  std::optional<Settlement> step(bool must_mark_parked) {
    ThreadId ended = kNoThread;
    switch (MutexWord(words_).lock_or_enqueue(thread(), *this, must_mark_parked, &ended)) {
      case MutexWord::AsyncStep::kAcquired:
        return settled::kAcquired;
      case MutexWord::AsyncStep::kOwnerDied:
        return owner_died(ended);
      case MutexWord::AsyncStep::kCorrupt:
        return settled::kCorrupt;
      case MutexWord::AsyncStep::kQueued:
        break;
    }
    return std::nullopt;
  }

 private:
  // Kept valid by JavaScript: the pending wait's record holds the Mutex and so its buffer.
  std::int32_t* const words_;
};

Settlement from_lock_status(MutexWord::LockStatus status, ThreadContext& context, ThreadId ended) {
  switch (status) {
    case MutexWord::LockStatus::kAcquired:
      return settled::kAcquired;
    case MutexWord::LockStatus::kOwnerDied:
      return context.report_ended_owner(ended);
    case MutexWord::LockStatus::kTimedOut:
    case MutexWord::LockStatus::kInterrupted:
      return settled::kTimedOut;
    case MutexWord::LockStatus::kAlreadyHeld:
      return settled::kAlreadyHeld;
    case MutexWord::LockStatus::kCorrupt:
      break;
  }
  return settled::kCorrupt;
}

// mutexLockSlow(int32Array, index, timeoutMs) -> settlement; blocks this thread.
Napi::Value lock_slow(const Napi::CallbackInfo& info) {
  MutexWord mutex(shared_words(info, 0, MutexWord::kWordCount));
  const Deadline deadline = Deadline::after_ms(timeout_ms(info, 2));
  ThreadContext& context = ThreadContext::of(info.Env());
  ThreadId ended = kNoThread;
  MutexWord::LockStatus status = mutex.lock_slow(context.thread(), deadline, &ended);
  // Terminating: the pending termination exception unwinds the caller; the value is ignored.
  if (status == MutexWord::LockStatus::kInterrupted) return info.Env().Undefined();
  return Napi::Number::New(info.Env(), from_lock_status(status, context, ended));
}

// mutexTakeOver(int32Array, index) -> OWNER_DIED if the mutex was held by a thread that has
// ended and is now this thread's, else 0. For a try-lock whose fast path found the mutex taken.
Napi::Value take_over(const Napi::CallbackInfo& info) {
  MutexWord mutex(shared_words(info, 0, MutexWord::kWordCount));
  ThreadContext& context = ThreadContext::of(info.Env());
  ThreadId ended = kNoThread;
  if (!mutex.take_from_ended_owner(context.thread(), &ended))
    return Napi::Number::New(info.Env(), 0);
  return Napi::Number::New(info.Env(), context.report_ended_owner(ended));
}

// mutexUnlockSlow(int32Array, index) -> true, or false if this thread does not hold the lock;
// throws if the word is corrupt. JavaScript comes here when its fast-path CAS failed.
Napi::Value unlock_slow(const Napi::CallbackInfo& info) {
  MutexWord mutex(shared_words(info, 0, MutexWord::kWordCount));
  switch (mutex.unlock_slow(ThreadContext::of(info.Env()).thread())) {
    case MutexWord::UnlockStatus::kUnlocked:
      return Napi::Boolean::New(info.Env(), true);
    case MutexWord::UnlockStatus::kNotOwner:
      return Napi::Boolean::New(info.Env(), false);
    case MutexWord::UnlockStatus::kCorrupt:
      break;
  }
  throw_corrupt(info.Env(), "mutex");
}

// mutexLockAsync(int32Array, index, id) -> kAcquired, kCorrupt, or kPending (then the wait `id`
// settles through the thread's on_settle callback).
Napi::Value lock_async(const Napi::CallbackInfo& info) {
  std::int32_t* words = shared_words(info, 0, MutexWord::kWordCount);
  if (!info[2].IsNumber()) throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "bad wait id");
  ThreadContext& context = ThreadContext::of(info.Env());
  auto waiter = std::make_shared<MutexAsyncWaiter>(context.shared_from_this(),
                                                   info[2].As<Napi::Number>().DoubleValue(), words);
  std::optional<Settlement> now = context.begin(waiter, [&] { return waiter->step(false); });
  return Napi::Number::New(info.Env(), now.value_or(settled::kPending));
}

}  // namespace

void export_mutex(Napi::Env env, Napi::Object exports) {
  exports.Set("mutexLockSlow", Napi::Function::New(env, lock_slow, "mutexLockSlow"));
  exports.Set("mutexUnlockSlow", Napi::Function::New(env, unlock_slow, "mutexUnlockSlow"));
  exports.Set("mutexLockAsync", Napi::Function::New(env, lock_async, "mutexLockAsync"));
  exports.Set("mutexTakeOver", Napi::Function::New(env, take_over, "mutexTakeOver"));

  Napi::Object layout = new_layout<MutexWord>(env);
  layout.Set("UNLOCKED", static_cast<double>(MutexWord::kUnlocked));
  layout.Set("LOCKED", static_cast<double>(MutexWord::kLocked));
  layout.Set("LOCKED_PARKED", static_cast<double>(MutexWord::kLockedParked));
  layout.Set("STATE_MASK", MutexWord::kStateMask);
  layout.Set("OWNER_SHIFT", MutexWord::kOwnerShift);
  exports.Set("mutexLayout", layout);
}

}  // namespace parklock::binding
