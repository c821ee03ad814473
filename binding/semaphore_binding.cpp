// The native half of lib/semaphore.js: only the contended paths. JavaScript takes and returns
// permits itself, with Atomics on the same word, while nobody is queued.
#include "semaphore_binding.h"

#include <cmath>
#include <string>

#include "errors.h"
#include "semaphore.h"
#include "settlement.h"
#include "shared_words.h"
#include "thread_context.h"

namespace parklock::binding {

namespace {

class SemaphoreAsyncWaiter final : public AsyncWaiter {
 public:
  SemaphoreAsyncWaiter(std::shared_ptr<ThreadContext> context, double id, std::int32_t* words,
                       std::int32_t permits)
      : AsyncWaiter(std::move(context), id, permits), words_(words) {}

  // JS thread: takes the permits now, or queues this waiter (returning nothing).
  std::optional<Settlement> first_step() {
    const SemaphoreWord::AsyncStep step = SemaphoreWord(words_).acquire_or_enqueue(*this);
    if (step == SemaphoreWord::AsyncStep::kQueued) return std::nullopt;
    return step == SemaphoreWord::AsyncStep::kAcquired ? settled::kAcquired : settled::kCorrupt;
  }

  // The only wake-up is a grant: the permits are this wait's, unless it was cancelled meanwhile.
  std::optional<Settlement> resume(WakeToken token) override {
    if (cancel_requested()) {
      SemaphoreWord(words_).abandon_wake(request(), token);
      return settled::kCancelled;
    }
    return settled::kAcquired;
  }

  void abandon(WakeToken token) noexcept override {
    SemaphoreWord(words_).abandon_wake(request(), token);
  }

  // Leaving without a grant may unblock the waiters queued behind this one.
  bool remove() noexcept override { return SemaphoreWord(words_).cancel(*this); }

 private:
  // Kept valid by JavaScript: the pending wait's record holds the Semaphore and so its buffer.
  std::int32_t* const words_;
};

// info[arg] as a number of permits: an integer from 1 to kMaxPermits.
std::int32_t permit_count(const Napi::CallbackInfo& info, std::size_t arg) {
  if (!info[arg].IsNumber()) {
    throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "permits must be a number");
  }
  const double n = info[arg].As<Napi::Number>().DoubleValue();
  // Compared as a double first: NaN and huge values must not reach the integer conversion.
  if (!(n >= 1 && n <= SemaphoreWord::kMaxPermits) || std::floor(n) != n) {
    throw_range_error(
        info.Env(), "ERR_OUT_OF_RANGE",
        "permits must be an integer from 1 to " + std::to_string(SemaphoreWord::kMaxPermits));
  }
  return static_cast<std::int32_t>(n);
}

// semaphoreAcquireSlow(int32Array, index, n, timeoutMs) -> ACQUIRED | TIMED_OUT | CORRUPT;
// blocks this thread.
Napi::Value acquire_slow(const Napi::CallbackInfo& info) {
  SemaphoreWord semaphore(shared_words(info, 0, SemaphoreWord::kWordCount));
  const std::int32_t n = permit_count(info, 2);
  const Deadline deadline = Deadline::after_ms(timeout_ms(info, 3));
  ThreadContext::of(info.Env());  // this thread's interrupt is installed
  switch (semaphore.acquire_slow(n, deadline)) {
    case SemaphoreWord::AcquireStatus::kAcquired:
      return Napi::Number::New(info.Env(), settled::kAcquired);
    case SemaphoreWord::AcquireStatus::kTimedOut:
      return Napi::Number::New(info.Env(), settled::kTimedOut);
    case SemaphoreWord::AcquireStatus::kInterrupted:
      // Terminating: the pending termination exception unwinds the caller.
      return info.Env().Undefined();
    case SemaphoreWord::AcquireStatus::kCorrupt:
    case SemaphoreWord::AcquireStatus::kBadCount:  // permit_count() has ruled it out
      break;
  }
  return Napi::Number::New(info.Env(), settled::kCorrupt);
}

// semaphoreReleaseSlow(int32Array, index, n) -> true, or false if the permits would exceed
// kMaxPermits (nothing was released); throws if the word is corrupt.
Napi::Value release_slow(const Napi::CallbackInfo& info) {
  SemaphoreWord semaphore(shared_words(info, 0, SemaphoreWord::kWordCount));
  const std::int32_t n = permit_count(info, 2);
  switch (semaphore.release_slow(n)) {
    case SemaphoreWord::ReleaseStatus::kReleased:
      return Napi::Boolean::New(info.Env(), true);
    case SemaphoreWord::ReleaseStatus::kOverflow:
      return Napi::Boolean::New(info.Env(), false);
    case SemaphoreWord::ReleaseStatus::kCorrupt:
    case SemaphoreWord::ReleaseStatus::kBadCount:  // permit_count() has ruled it out
      break;
  }
  throw_corrupt(info.Env(), "semaphore");
}

// semaphoreAcquireAsync(int32Array, index, n, id) -> ACQUIRED, CORRUPT, or PENDING (then the wait
// `id` settles through the thread's on_settle callback).
Napi::Value acquire_async(const Napi::CallbackInfo& info) {
  std::int32_t* words = shared_words(info, 0, SemaphoreWord::kWordCount);
  const std::int32_t n = permit_count(info, 2);
  if (!info[3].IsNumber()) throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "bad wait id");
  ThreadContext& context = ThreadContext::of(info.Env());
  auto waiter = std::make_shared<SemaphoreAsyncWaiter>(
      context.shared_from_this(), info[3].As<Napi::Number>().DoubleValue(), words, n);
  std::optional<Settlement> now = context.begin(waiter, [&] { return waiter->first_step(); });
  return Napi::Number::New(info.Env(), now.value_or(settled::kPending));
}

}  // namespace

void export_semaphore(Napi::Env env, Napi::Object exports) {
  exports.Set("semaphoreAcquireSlow",
              Napi::Function::New(env, acquire_slow, "semaphoreAcquireSlow"));
  exports.Set("semaphoreReleaseSlow",
              Napi::Function::New(env, release_slow, "semaphoreReleaseSlow"));
  exports.Set("semaphoreAcquireAsync",
              Napi::Function::New(env, acquire_async, "semaphoreAcquireAsync"));

  Napi::Object layout = new_layout<SemaphoreWord>(env);
  layout.Set("PERMITS_MASK", SemaphoreWord::kPermitsMask);
  layout.Set("WAITERS_BIT", SemaphoreWord::kWaitersBit);
  layout.Set("RESERVED_BIT", SemaphoreWord::kReservedBit);
  layout.Set("MAX_PERMITS", SemaphoreWord::kMaxPermits);
  exports.Set("semaphoreLayout", layout);
}

}  // namespace parklock::binding
