// The native half of lib/latch.js: the count-down that may open the latch (so that the
// compare-and-swap and the notify of every waiter happen in one call) and the waits.
// Count-downs that leave the count above 0 run in JavaScript.
#include <string>

#include "errors.h"
#include "exports.h"
#include "handle.h"
#include "primitives/latch.h"
#include "wait_calls.h"

namespace parklock::binding {

namespace {

// latchCountDown(handle, n) -> the count left (0 once this call opened the latch).
// JavaScript has already checked n and the count it saw; the checks here catch a count that
// dropped in between.
Napi::Value count_down(const Napi::CallbackInfo& info) {
  LatchWord latch(words_of(info, 0, LatchWord::kWordCount));
  if (!info[1].IsNumber()) {
    throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "n must be a number");
  }
  const double n = info[1].As<Napi::Number>().DoubleValue();
  if (!(n >= 1 && n <= LatchWord::kMaxCount) || static_cast<std::int32_t>(n) != n) {
    throw_range_error(info.Env(), "ERR_OUT_OF_RANGE", "n must be a positive integer");
  }
  const LatchWord::CountDownResult result = latch.count_down(static_cast<std::int32_t>(n));
  switch (result.status) {
    case LatchWord::CountDownStatus::kCounted:
    case LatchWord::CountDownStatus::kReleased:
      return Napi::Number::New(info.Env(), result.count);
    case LatchWord::CountDownStatus::kNotPositive:
    case LatchWord::CountDownStatus::kExceedsCount:
      throw_range_error(info.Env(), "ERR_OUT_OF_RANGE",
                        "The value of \"n\" is out of range. It must be a positive integer at most "
                        "the remaining count (" +
                            std::to_string(result.count) + "). Received " +
                            std::to_string(static_cast<std::int32_t>(n)));
    case LatchWord::CountDownStatus::kCorrupt:
      break;
  }
  throw_corrupt(info.Env(), "latch");
}

// latchWait(handle, timeoutMs) -> ACQUIRED (open) | TIMED_OUT | CORRUPT, blocking this thread;
// latchWaitAsync(handle, record) -> ACQUIRED, CORRUPT, or the queued wait's handle.
struct Wait {
  using Step = LatchWord::AwaitStep;
  static constexpr std::size_t kLastArg = 1;
  // The handle, which the pending wait's record holds through the Latch, keeps the word valid.
  static auto arguments(const Napi::CallbackInfo& info, ThreadId /*self*/) {
    return std::make_tuple(LatchWord(words_of(info, 0, LatchWord::kWordCount)));
  }
};

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("latchCountDown", Napi::Function::New(env, count_down, "latchCountDown"));
  exports.Set("latchWait", Napi::Function::New(env, blocking_wait<Wait>, "latchWait"));
  exports.Set("latchWaitAsync", Napi::Function::New(env, promise_wait<Wait>, "latchWaitAsync"));

  const LayoutConstant own[] = {
      {"COUNT_INDEX", LatchWord::kCountIndex},
      {"MAX_COUNT", LatchWord::kMaxCount},
  };
  exports.Set("latchLayout", new_layout<LatchWord>(env, own));
});

}  // namespace

}  // namespace parklock::binding
