// The native half of lib/latch.js: the count-down that may open the latch (so that the
// compare-and-swap and the notify of every waiter happen in one call) and the waits.
// Count-downs that leave the count above 0 run in JavaScript.
#include <string>

#include "errors.h"
#include "exports.h"
#include "futex.h"
#include "handle.h"
#include "latch.h"
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

// latchWait(handle, timeoutMs) -> ACQUIRED (open) | TIMED_OUT | CORRUPT; blocks.
struct Wait {
  static constexpr std::size_t kTimeoutArg = 1;
  Wait(const Napi::CallbackInfo& info, ThreadId)
      : latch(words_of(info, 0, LatchWord::kWordCount)) {}
  LatchWord::WaitStatus run(BlockingWait& wait) { return latch.wait(wait.deadline); }
  LatchWord latch;
};

// latchWaitAsync(handle, record) -> ACQUIRED, CORRUPT, or the queued wait's handle:
// LatchWord::wait's loop, one futex wait per step, each queued on the count it last saw.
class WaitAsync final : public WaitStep {
 public:
  static constexpr std::size_t kRecordArg = 1;
  WaitAsync(const Napi::CallbackInfo& info, ThreadId)
      : words_(words_of(info, 0, LatchWord::kWordCount)) {}

  Settlement start(Waiter& waiter) override { return step(waiter); }

  // Woken: by the release, by a count-down's change of the word, or by a futex.notify from
  // elsewhere; the count decides. A cancel that lost the race is still a cancel, unless the
  // latch opened: as for a timed wait, the count is checked last.
  Settlement resume(Waiter& waiter, WakeToken) override { return step(waiter); }

  // A cancel that lost the race with a wake-up is still a cancel, unless the wait is over.
  Settlement resume_cancelled(Waiter& waiter, WakeToken) override { return on_cancelled(waiter); }

  Settlement on_cancelled(Waiter&) override {
    const std::int32_t count = LatchWord(words_).count();
    if (count < 0) return settled::kCorrupt;
    return count == 0 ? settled::kAcquired : settled::kCancelled;
  }

  // The notification may have been meant for one waiter (futex.notify): it goes to the next.
  void abandon(Waiter&, WakeToken) noexcept override { futex::notify(count_word(), 1); }

 private:
  const std::int32_t* count_word() const { return words_ + LatchWord::kCountIndex; }

  Settlement step(Waiter& waiter) {
    for (;;) {
      const std::int32_t count = LatchWord(words_).count();
      if (count < 0) return settled::kCorrupt;
      if (count == 0) return settled::kAcquired;
      // Queued only while the word still holds `count`: the release, which notifies after the
      // word became 0, finds it queued or it finds 0.
      if (futex::enqueue_if_equal(count_word(), count, waiter, &LatchWord::kWaitSite))
        return settled::kPending;
    }
  }

  // Kept valid by the handle, which the pending wait's record holds through the Latch.
  std::int32_t* const words_;
};

const Exports registered([](Napi::Env env, Napi::Object exports) {
  exports.Set("latchCountDown", Napi::Function::New(env, count_down, "latchCountDown"));
  exports.Set("latchWait", Napi::Function::New(env, blocking_call<Wait>, "latchWait"));
  exports.Set("latchWaitAsync", Napi::Function::New(env, start_async<WaitAsync>, "latchWaitAsync"));

  Napi::Object layout = new_layout<LatchWord>(env);
  layout.Set("COUNT_INDEX", static_cast<double>(LatchWord::kCountIndex));
  layout.Set("MAX_COUNT", static_cast<double>(LatchWord::kMaxCount));
  exports.Set("latchLayout", layout);
});

}  // namespace

}  // namespace parklock::binding
