// The native half of lib/futex.js.
#include "futex_binding.h"

#include <cmath>
#include <limits>

#include "errors.h"
#include "futex.h"
#include "settlement.h"
#include "shared_words.h"
#include "thread_context.h"

namespace parklock::binding {

namespace {

class FutexAsyncWaiter final : public AsyncWaiter {
 public:
  FutexAsyncWaiter(std::shared_ptr<ThreadContext> context, double id, const std::int32_t* word)
      : AsyncWaiter(std::move(context), id), word_(word) {}

  // A notification is the whole wait; nothing to do but report it (also when a cancel lost the
  // race: the waiter was woken first, and says so).
  std::optional<Settlement> resume(WakeToken) override { return settled::kAcquired; }

  // Nobody takes this notification any more: it goes to the next waiter, as a sync waiter's would.
  void abandon(WakeToken) noexcept override { futex::notify(word_, 1); }

 private:
  // Kept valid by JavaScript: the pending wait's record holds the buffer.
  const std::int32_t* const word_;
};

std::int32_t expected_value(const Napi::CallbackInfo& info, std::size_t arg) {
  if (!info[arg].IsNumber()) {
    throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "expected value must be a number");
  }
  return info[arg].As<Napi::Number>().Int32Value();
}

// futexWait(int32Array, index, expected, timeoutMs) -> ACQUIRED | NOT_EQUAL | TIMED_OUT.
Napi::Value wait(const Napi::CallbackInfo& info) {
  const std::int32_t* word = shared_words(info, 0, 1);
  const std::int32_t expected = expected_value(info, 2);
  const Deadline deadline = Deadline::after_ms(timeout_ms(info, 3));
  ThreadContext::of(info.Env());  // this thread's interrupt is installed
  switch (futex::wait(word, expected, deadline)) {
    case futex::WaitStatus::kWoken:
      return Napi::Number::New(info.Env(), settled::kAcquired);
    case futex::WaitStatus::kNotEqual:
      return Napi::Number::New(info.Env(), settled::kNotEqual);
    case futex::WaitStatus::kTimedOut:
      return Napi::Number::New(info.Env(), settled::kTimedOut);
    case futex::WaitStatus::kInterrupted:
      break;
  }
  return info.Env().Undefined();  // terminating: the pending exception unwinds the caller
}

// futexWaitAsync(int32Array, index, expected, id) -> NOT_EQUAL or PENDING.
Napi::Value wait_async(const Napi::CallbackInfo& info) {
  const std::int32_t* word = shared_words(info, 0, 1);
  const std::int32_t expected = expected_value(info, 2);
  if (!info[3].IsNumber()) throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "bad wait id");
  ThreadContext& context = ThreadContext::of(info.Env());
  auto waiter = std::make_shared<FutexAsyncWaiter>(context.shared_from_this(),
                                                   info[3].As<Napi::Number>().DoubleValue(), word);
  std::optional<Settlement> now = context.begin(waiter, [&]() -> std::optional<Settlement> {
    if (futex::enqueue_if_equal(word, expected, *waiter)) return std::nullopt;
    return settled::kNotEqual;
  });
  return Napi::Number::New(info.Env(), now.value_or(settled::kPending));
}

// futexNotify(int32Array, index, count) -> number woken; count may be Infinity.
Napi::Value notify(const Napi::CallbackInfo& info) {
  const std::int32_t* word = shared_words(info, 0, 1);
  if (!info[2].IsNumber())
    throw_type_error(info.Env(), "ERR_INVALID_ARG_TYPE", "count must be a number");
  const double count = info[2].As<Napi::Number>().DoubleValue();
  if (!(count >= 0)) throw_range_error(info.Env(), "ERR_OUT_OF_RANGE", "count must be >= 0");
  const auto limit = static_cast<double>(std::numeric_limits<std::size_t>::max());
  const std::size_t n = count >= limit ? std::numeric_limits<std::size_t>::max()
                                       : static_cast<std::size_t>(std::floor(count));
  return Napi::Number::New(info.Env(), static_cast<double>(futex::notify(word, n)));
}

}  // namespace

void export_futex(Napi::Env env, Napi::Object exports) {
  exports.Set("futexWait", Napi::Function::New(env, wait, "futexWait"));
  exports.Set("futexWaitAsync", Napi::Function::New(env, wait_async, "futexWaitAsync"));
  exports.Set("futexNotify", Napi::Function::New(env, notify, "futexNotify"));
}

}  // namespace parklock::binding
