// The native half of lib/futex.js. Its calls name a word per call, as (Int32Array, index), like
// Atomics.wait: there is no instance to keep a handle on.
#include <cmath>
#include <limits>

#include "across_processes/cross_process.h"
#include "errors.h"
#include "exports.h"
#include "primitives/futex.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

// The word of a futex call: not one in sharedMemory(), whose other processes a notify(count)
// could not reach without waking more than `count` (addon/primitives/futex.h).
const std::int32_t* futex_word(const Napi::CallbackInfo& info) {
  const std::int32_t* word = shared_words(info, 0, 1);
  if (cross_process::is_shared(word)) {
    throw_error(info.Env(), "ERR_PARKLOCK_UNSUPPORTED",
                "futex does not wait across processes: its words cannot lie in sharedMemory()");
  }
  return word;
}

std::int32_t expected_value(const Napi::CallbackInfo& info, std::size_t arg) {
  if (!info[arg].IsNumber()) {
    throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "expected value must be a number");
  }
  return info[arg].As<Napi::Number>().Int32Value();
}

// futexWait(int32Array, index, expected, timeoutMs) -> ACQUIRED | NOT_EQUAL | TIMED_OUT, blocking
// this thread; futexWaitAsync(int32Array, index, expected, record) -> NOT_EQUAL or the queued
// wait's handle.
struct Wait {
  using Step = futex::AwaitStep;
  static constexpr std::size_t kLastArg = 3;
  // JavaScript keeps the word valid: the pending wait's record holds the Int32Array.
  static auto arguments(const Napi::CallbackInfo& info, ThreadId /*self*/) {
    const std::int32_t* word = futex_word(info);
    return std::make_tuple(word, expected_value(info, 2));
  }
};

// futexNotify(int32Array, index, count) -> number woken; count may be Infinity.
Napi::Value notify(const Napi::CallbackInfo& info) {
  const std::int32_t* word = futex_word(info);
  if (!info[2].IsNumber()) {
    throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "count must be a number");
  }
  const double count = info[2].As<Napi::Number>().DoubleValue();
  if (!(count >= 0)) throw_range_error(info.Env(), "ERR_OUT_OF_RANGE", "count must be >= 0");
  const auto limit = static_cast<double>(std::numeric_limits<std::size_t>::max());
  const std::size_t n = count >= limit ? std::numeric_limits<std::size_t>::max()
                                       : static_cast<std::size_t>(std::floor(count));
  return Napi::Number::New(info.Env(), static_cast<double>(futex::notify(word, n)));
}

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("futexWait", Napi::Function::New(env, blocking_wait<Wait>, "futexWait"));
  exports.Set("futexWaitAsync", Napi::Function::New(env, promise_wait<Wait>, "futexWaitAsync"));
  exports.Set("futexNotify", Napi::Function::New(env, notify, "futexNotify"));
});

}  // namespace

}  // namespace parklock::binding
