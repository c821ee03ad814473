// The native half of lib/semaphore.js: only the contended paths. JavaScript takes free permits
// itself, with Atomics on the same word, unless they are set aside for the waiters, and returns
// them itself while nobody is queued.
#include <cmath>
#include <string>

#include "errors.h"
#include "exports.h"
#include "handle.h"
#include "primitives/semaphore.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

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

// semaphoreAcquireSlow(handle, n, timeoutMs) -> ACQUIRED | TIMED_OUT | CORRUPT, blocking this
// thread; semaphoreAcquireAsync(handle, n, record) -> ACQUIRED, CORRUPT, or the queued wait's
// handle.
struct Acquire {
  using Step = SemaphoreWord::AcquireStep;
  static constexpr std::size_t kLastArg = 2;
  // The handle, which the pending wait's record holds through the Semaphore, keeps the word valid.
  static auto arguments(const Napi::CallbackInfo& info, ThreadId /*self*/) {
    // Read in this order, so that the first bad argument is the one reported.
    const SemaphoreWord semaphore(words_of(info, 0, SemaphoreWord::kWordCount));
    return std::make_tuple(semaphore, permit_count(info, 1));
  }
};

// semaphoreReleaseSlow(handle, n) -> true, or false if the permits would exceed kMaxPermits
// (nothing was released); throws if the word is corrupt.
Napi::Value release_slow(const Napi::CallbackInfo& info) {
  SemaphoreWord semaphore(words_of(info, 0, SemaphoreWord::kWordCount));
  const std::int32_t n = permit_count(info, 1);
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

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("semaphoreAcquireSlow",
              Napi::Function::New(env, blocking_wait<Acquire>, "semaphoreAcquireSlow"));
  exports.Set("semaphoreReleaseSlow",
              Napi::Function::New(env, release_slow, "semaphoreReleaseSlow"));
  exports.Set("semaphoreAcquireAsync",
              Napi::Function::New(env, promise_wait<Acquire>, "semaphoreAcquireAsync"));

  const LayoutConstant own[] = {
      {"PERMITS_MASK", SemaphoreWord::kPermitsMask},
      {"WAITERS_BIT", SemaphoreWord::kWaitersBit},
      {"HAND_OFF_BIT", SemaphoreWord::kHandOffBit},
      {"MAX_PERMITS", SemaphoreWord::kMaxPermits},
  };
  exports.Set("semaphoreLayout", new_layout<SemaphoreWord>(env, own));
});

}  // namespace

}  // namespace parklock::binding
